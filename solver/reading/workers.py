"""The jobs of perception's worker processes (each loads the models once): classify, decode, read strokes along a
program, read an image as library shapes from its plan, refine a reading (`refine_perceived`: the tracer for
free-form readings, the search from the classifier's library shapes otherwise)."""

from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import replace

import numpy as np

import solver.reading.traced as tracing
from dsl.types import ImageProgram
from search.refine import Proposal, refine_image
from solver.reading.plans import LibraryPlan, LibraryRead, decoded_plan, library_plan, may_be_touching, seed_proposals
from solver.reading.readings import Perceived, pixel_fit
from solver.reading.traced import free_form_reading, grid_share
from solver.settings import (
    CLASSIFIER_PRIOR,
    DECODE_BATCH,
    LIBRARY_DECODED,
    PART_BUDGET_SHARE,
    REFINE_CANDIDATES,
    REFINE_POLISH_EVALS,
    SPLIT_BEAM,
    TRACE_BELOW_CONFIDENCE,
)


@contextmanager
def one_thread():
    """torch on one thread for the block: the decoder's readings depend a little on the thread count, and on a
    busy machine two threads wait on each other (the shape classifier: 16.9 s against 2.5 s for 14 images)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def decoded_in_batches(model, images: list[np.ndarray], top_k: int, beam: int, batch: int = DECODE_BATCH) -> list[tuple]:
    """The decoder's proposals per image, `batch` images at a time on one thread, as `PixelPerception`
    and its workers decode (the floating-point sums, and so the beam's choices, depend a little on the
    batch and on the number of threads)."""
    from perception.decode import decode_images

    with one_thread():
        out = []
        for k in range(0, len(images), batch):
            decoded = decode_images(model, images[k : k + batch], top_k=top_k, beam_width=beam, batch_size=batch)
            out += [tuple(Proposal(p.program, p.logp) for p in props) for props in decoded]
        return out


_WORKER_MODELS: dict = {}  # (loader, checkpoint) -> model, one per process


def _loaded_once(load, checkpoint):
    """`load(checkpoint)` (a decoder's or the shape classifier's), loaded once per process."""
    key = (load.__module__, load.__qualname__, str(checkpoint))
    if key not in _WORKER_MODELS:
        _WORKER_MODELS[key] = load(checkpoint)
    return _WORKER_MODELS[key]


def worker_classifier(checkpoint):
    """The shape classifier of `checkpoint`, loaded once per process."""
    from perception.shapes import load_classifier

    return _loaded_once(load_classifier, checkpoint)


def guesses_one(job: tuple) -> dict:
    """The shape classifier's guesses for one image (every group), on one thread: the same in any process."""
    checkpoint, image = job
    return guesses_chunk((checkpoint, [image]))[0]


def guesses_chunk(job: tuple) -> list[dict]:
    """The shape classifier's guesses for a few images in one batch (`perception.shapes.library_guesses_many`),
    on one thread; the batches are CLASSIFY_BATCH images whatever the number of workers."""
    from perception.shapes import library_guesses_many

    checkpoint, images = job
    model = worker_classifier(checkpoint)
    with one_thread():
        return library_guesses_many(model, images, top=model.classes)


def decode_chunk(job: tuple) -> list[tuple]:
    """Decode some images in a worker process (its own copy of the model, loaded once per process)."""
    checkpoint, top_k, beam, images = job
    import torch

    torch.set_num_threads(1)  # the worker's other torch work too (two workers share the two cores)
    return decoded_in_batches(worker_decoder(checkpoint), images, top_k, beam)


def worker_decoder(checkpoint):
    """The decoder of `checkpoint`, loaded once per process."""
    from perception.decode import load_decoder

    return _loaded_once(load_decoder, checkpoint)


def remembering(function):
    """`function` with the decoder's work on an image done once within each call (`perception.beam.work_remembered`:
    inputs prepared once, a walk along a tracing read once; a call made inside another such call shares its work).
    Per call, not per problem: a job's outputs are the same whether it runs in this process or in a worker's, and
    whatever ran there before."""

    @functools.wraps(function)
    def remembered(*args, **kwargs):
        from perception.beam import work_remembered

        with work_remembered():
            return function(*args, **kwargs)

    return remembered


def strokes_chunk(job: tuple) -> list:
    """`perception.decode.read_strokes` of some images on one thread (the decoder loaded once per process)."""
    from perception.decode import read_strokes

    checkpoint, images, program, poses = job
    with one_thread():
        return read_strokes(worker_decoder(checkpoint), images, program, poses)


def refine_one(job: tuple) -> Perceived:
    """`refine_perceived` of (image, proposals, budget_ms, library plan, decoded, tracer) in a worker process."""
    image, proposals, budget_ms, library, decoded, tracer = job
    return refine_perceived(image, proposals, budget_ms, library, decoded, tracer=tracer)


def library_one(job: tuple) -> LibraryRead:
    """One image of a library problem in one job: classified (unless its `guesses` are given), planned and,
    when the classifier is sure of it (or no free-form program was seen in the problem), read as library shapes
    (`refine_perceived` from the plan, without the decoder). One ink blob the classifier is unsure of
    (`may_be_touching`) is decoded first in the same job when `split` (the decoder's checkpoint and top_k) is
    given, so that its plan splits the ink among the decoder's two shapes (`decoded_plan`); without `split` it is
    left unread (`touching`) for the caller. In one job, a touching pair waits for no other image: decoded in a
    second round of jobs after all images' reads, it had kept one worker idle while the other decoded."""
    checkpoint, image, guesses, free_form_seen, budget_ms, split, stroke_types = job
    if guesses is None:
        guesses = guesses_one((checkpoint, image))
    plan = library_plan(guesses, shapes_read=1)
    if plan.confidence < TRACE_BELOW_CONFIDENCE and free_form_seen:
        return LibraryRead(plan, guesses=guesses, unsure=True)
    if may_be_touching(plan):
        if split is None:
            return LibraryRead(plan, guesses=guesses, touching=True)
        decoder_checkpoint, top_k = split
        props = decoded_in_batches(worker_decoder(decoder_checkpoint), [image], top_k, SPLIT_BEAM)[0]
        with one_thread():
            plan = decoded_plan(image, guesses, props, worker_classifier(checkpoint))
        return _read(plan, refine_perceived(image, (), budget_ms, plan, True, stroke_types), guesses=guesses, touching=True)
    return _read(plan, refine_perceived(image, (), budget_ms, plan, True, stroke_types))


def _read(plan: LibraryPlan, reading: Perceived, **fields) -> LibraryRead:
    """A `LibraryRead` with its reading's shape features computed here, in the job, not later in the process that
    induces the rule (`dsl.features.remember_features`): that process had computed them one image after another."""
    from dsl.features import shape_features

    return LibraryRead(plan, reading, features=shape_features(reading.program), **fields)


def _budget(budget_ms: float | None, share: float = 1.0) -> dict:
    """`refine_image`'s budget: `budget_ms` (times `share`) of time, or with `budget_ms=None` the counted
    budget (REFINE_CANDIDATES structures, `share` of REFINE_POLISH_EVALS): the same image and proposals
    then always give the same program, whatever else the machine is doing."""
    if budget_ms is not None:
        return {"budget_ms": budget_ms * share}
    return {"budget_ms": None, "max_candidates": REFINE_CANDIDATES, "polish_evals": round(REFINE_POLISH_EVALS * share)}


def _refine_parts(plan: LibraryPlan, budget_ms: float | None, stroke_types: bool = True) -> Perceived:
    """Each ink part searched alone (PART_BUDGET_SHARE of the budget each); the programs, poses and scores joined."""
    priors = plan.part_priors if CLASSIFIER_PRIOR and plan.part_priors else (None,) * len(plan.parts)
    results = [
        refine_image(image, list(props), shape_logp=prior, stroke_types=stroke_types, **_budget(budget_ms, PART_BUDGET_SHARE))
        for (image, props), prior in zip(plan.parts, priors)
    ]
    program = ImageProgram(tuple(shape for r in results for shape in r.program.shapes))
    poses = tuple(pose for r in results for pose in r.poses)
    return Perceived(program, poses, float(sum(r.score for r in results)))


def refine_perceived(
    image: np.ndarray, proposals: tuple, budget_ms: float | None, library: LibraryPlan | None = None, decoded: bool = True,
    stroke_types: bool = True, tracer: bool = True,
) -> Perceived:
    """One image's program from the decoder's `proposals` and the classifier's `library` plan (see the
    module docstring); `decoded=False`: `proposals` are seed programs, searched as they are. `stroke_types=False`:
    a library shape's actions are all drawn normal, no stroke chosen (`search.refine.refine_image`). `tracer=False`
    (the ablation `Switches.tracer`): a free-form reading is kept as decoded, no off-grid image is traced."""
    try:
        free_form = free_form_reading(proposals[0].program) if decoded and proposals else None
        if free_form is not None:  # the decoder reads free-form programs better than refinement does
            return tracing.traced_reading(image, free_form, proposals, trace=tracer)
        unsure = library is None or library.confidence < TRACE_BELOW_CONFIDENCE
        second = False  # the library reading is checked by a second, ungated trace (`second_trace`)
        if decoded and proposals and tracer and tracing.TRACE and unsure:  # off the grid: a free-form image misread?
            traced, gated = tracing.traced_off_grid(image, proposals)
            if traced is not None:
                return traced
            second = tracing.SECOND_TRACE and gated and grid_share(proposals[0].program) >= tracing.GRID_SHARE
        starts, parted = proposals, None
        if decoded and library is not None and library.parts:  # two separate shapes: each searched alone
            parted = replace(_refine_parts(library, budget_ms, stroke_types), proposals=proposals)
            if not library.whole:
                return tracing.second_trace(image, parted, proposals) if second else parted
        if decoded:  # library-like: searched from the classifier's library shapes, else the generic seeds
            floor = min(p.logp for p in proposals) if proposals else 0.0
            whole = library.whole if library is not None else ()
            starts = tuple(proposals[:LIBRARY_DECODED]) + (
                tuple(whole) if whole else tuple(Proposal(s.program, floor) for s in seed_proposals())
            )
        prior = library.whole_prior if decoded and CLASSIFIER_PRIOR and library is not None and library.whole else None
        result = refine_image(image, list(starts), shape_logp=prior, stroke_types=stroke_types, **_budget(budget_ms))
        searched = Perceived(result.program, result.poses, result.score, proposals)
        if parted is not None:  # touching shapes split by the decoder's reading, and the whole blob searched
            searched = min((searched, parted), key=lambda reading: pixel_fit(image, reading.program)[0])
        if second:
            return tracing.second_trace(image, searched, proposals)
    except Exception as error:  # one image's failure is recorded (the decoder's best reading kept), the problem goes on
        fallback = proposals[0].program if proposals else None
        return Perceived(fallback, proposals=proposals, error=f"refinement failed: {error!r}")
    return searched
