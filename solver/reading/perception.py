"""From pixels to programs: the decoder and the shape classifier propose, the enumerator refines.

`PixelPerception` is the perception `solve_problem` takes: it decodes all images of a problem in one
batch (`perception.decode`), names the library shapes of every image that does not read as free-form
(`perception.shapes`), then refines every image's proposals by render-and-compare (`search.refine`), in
parallel across processes when `workers` > 1. A failure on one image is recorded on that image (and the
best program found so far is used) — it never stops the problem.

Modes (for the ablations): `refine=False` keeps the decoder's top proposal ("decoder without search");
`use_decoder=False` starts the enumerator from generic seed programs instead of the decoder's and the
classifier's proposals ("search without the decoder": library shapes and grid values only).

Per problem: `solver.reading.reconcile.reconcile_with_context`.

Per image (`refine_perceived`):
  * a decoded top proposal that lies on the free-form grid is checked by the free-form tracer, and an
    image whose top reading is off the grid and that the shape classifier is unsure of (top probability
    under TRACE_BELOW_CONFIDENCE) is traced too (`solver.reading.traced`);
  * any other image (basic and abstract shapes) is searched from the classifier's library shapes
    (`library_plan`: an image of two separate ink parts part by part, each part from its own best
    groups; else the whole image's best groups, and their pairs when the decoder reads two shapes), or
    from the generic seed programs when there is no classifier. The
    decoder's own readings of library shapes are rough (continuous values) and led the search astray, so
    they are not searched from (LIBRARY_DECODED = 0). Every library shape the search reaches, by an edit
    too, pays the classifier's log-probability of it (`ClassifierPrior`): the search's library edits had
    let look-alikes the classifier rules out win by a fraction of a pixel (category top-1 per shape on
    generated basic problems, seeds 5555 / 6161 / 7272: 95.7 / 93.3 / 91.6 % -> 96.7 / 95.9 / 93.3 %).
    Touching shapes make one ink blob that the classifier is unsure of: when the decoder reads two shapes
    there, the ink is split among them (`search.split`) and the parts are searched alone too; the reading
    that draws the image better is kept (same seeds: 97.0 / 96.8 / 93.2 %).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dsl.library import load_library
from dsl.processes import worker_setup
from dsl.types import Action, ImageProgram, Shape
import solver.reading.traced as tracing
from search.refine import Proposal, refine_image
from solver.reading.readings import PerceptionError, Perceived, pixel_fit, require_programs
from solver.reading.reconcile import reconcile_with_context
from solver.settings import (BEAM, CLASSIFIER_PRIOR, CLASSIFY_BATCH, DECODE_BATCH, LIBRARY_DECODED, LIBRARY_LOGP_SCALE,
                             LIBRARY_TOP, PAIR_TOP, PART_BUDGET_SHARE, REFINE_BUDGET_MS, REFINE_CANDIDATES,
                             REFINE_POLISH_EVALS, SEED_LIBRARY_SHAPES, SPLIT_BEAM, SPLIT_BELOW_CONFIDENCE, SPLIT_READINGS,
                             SPLIT_TOUCHING, TOP_K, TRACE_BELOW_CONFIDENCE)
from solver.reading.traced import free_form_reading, grid_share

__all__ = [
    "PerceptionError", "Perceived", "PixelPerception", "free_form_reading", "grid_share", "library_plan",
    "library_proposals", "pixel_fit", "reconcile_with_context", "refine_perceived", "require_programs",
    "seed_proposals",
]


def seed_proposals() -> list[Proposal]:
    """Generic starting points for the enumerator when no decoder is used."""
    library = load_library()
    seeds = [Shape((Action.line(1.0),)), Shape((Action.arc(0.5, 90.0),))]
    seeds += [library[name].shape for name in SEED_LIBRARY_SHAPES if name in library]
    singles = [Proposal(ImageProgram((s,)), 0.0) for s in seeds]
    pairs = [Proposal(ImageProgram((seeds[0], s)), 0.0) for s in seeds[:4]]
    return singles + pairs


def _scaled_logp(p: float) -> float:
    return LIBRARY_LOGP_SCALE * math.log(max(p, 1e-9))


def library_proposals(guesses: list, pair_guesses: list | None = None) -> list[Proposal]:
    """Programs of library shapes from the shape classifier's guesses ([(group names, probability), ...],
    best first, from `perception.shapes.library_guesses`): one shape per top group; and with
    `pair_guesses` (when the decoder reads two touching shapes), pairs of their top groups. Log-probabilities
    are the classifier's (summed over a pair) times LIBRARY_LOGP_SCALE, most probable first."""
    library = load_library()

    def shape(group) -> Shape:
        return library[group[0]].shape

    def logp(*ps: float) -> float:
        return float(sum(_scaled_logp(p) for p in ps))

    out = [Proposal(ImageProgram((shape(g),)), logp(p)) for g, p in guesses[:LIBRARY_TOP]]
    if pair_guesses:
        pairs = itertools.combinations(pair_guesses[:PAIR_TOP], 2)
        out += [Proposal(ImageProgram((shape(a), shape(b))), logp(pa, pb)) for (a, pa), (b, pb) in pairs]
    return sorted(out, key=lambda p: -p.logp)


@dataclass(frozen=True)
class ClassifierPrior:
    """The shape classifier's log-probability (times LIBRARY_LOGP_SCALE, as its proposals carry) of the
    library shape a shape draws, None for a shape that is no library shape: `refine_image`'s `shape_logp`,
    so that a library shape the search reaches by an edit pays what the classifier thinks of it."""

    logp: dict  # library name -> LIBRARY_LOGP_SCALE x log-probability of its group

    @classmethod
    def from_guesses(cls, ranked: list) -> "ClassifierPrior":
        logp: dict = {}
        for group, p in ranked:
            logp |= dict.fromkeys(group, _scaled_logp(p))
        return cls(logp)

    def __call__(self, shape: Shape) -> float | None:
        from dsl.categories import exact_shape_categories# memoised; the classifier's groups are its names

        names = exact_shape_categories(shape)
        return self.logp.get(names[0], _scaled_logp(0.0)) if names else None


@dataclass(frozen=True)
class LibraryPlan:
    """The classifier's proposals for one image: programs for the whole image or, when the image has two
    separate ink parts, one-shape programs for each part (each part is then searched alone, on an image
    holding only its ink, and the two programs are joined). Both for touching shapes split by the
    decoder's reading (`_split_plan`): the reading that draws the image better is kept."""

    whole: tuple = ()
    parts: tuple = ()  # ((part image, proposals), (part image, proposals))
    confidence: float = 1.0  # the classifier's top probability for the whole image, or for its less sure part
    whole_prior: ClassifierPrior | None = None  # the classifier's belief in each library shape, whole image
    part_priors: tuple = ()  # ... per part


def classifier_confidence(guesses: dict) -> float:
    """The classifier's top probability for the whole image, or for its less sure part when the image has two
    separate ink parts and that is higher (`LibraryPlan.confidence`, without making the plan)."""
    whole = guesses["whole"][0][1] if guesses["whole"] else 0.0
    if len(guesses["parts"]) == 2:
        return max(whole, min(part[0][1] if part else 0.0 for part in guesses["parts"]))
    return whole


def library_plan(guesses: dict, shapes_read: int) -> LibraryPlan:
    """A `LibraryPlan` from `perception.shapes.library_guesses` (with part images) and the number of
    shapes the decoder reads."""
    confidence = classifier_confidence(guesses)
    if len(guesses["parts"]) == 2:
        parts = tuple((image, tuple(library_proposals(part))) for image, part in zip(guesses["part_images"], guesses["parts"]))
        priors = tuple(ClassifierPrior.from_guesses(part) for part in guesses["parts"])
        return LibraryPlan(parts=parts, confidence=confidence, part_priors=priors)
    pairs = guesses["whole"] if shapes_read == 2 else None
    return LibraryPlan(
        tuple(library_proposals(guesses["whole"], pairs)), confidence=confidence,
        whole_prior=ClassifierPrior.from_guesses(guesses["whole"]),
    )


def _split_plan(plan: LibraryPlan, guesses: dict, model, image: np.ndarray, readings: list) -> LibraryPlan:
    """`plan` with parts from the ink split among the two shapes of the decoder's best reading of two
    shapes that splits it (`search.split`): touching shapes, which the classifier is unsure of together.
    The whole image's proposals stay: both are searched and the reading that draws the image better is
    kept (`refine_perceived`). `guesses`: the classifier's on the whole image (`plan` came from them)."""
    from perception.shapes import ranked_groups
    from search.split import touching_parts

    parts = next((found for found in (touching_parts(image, reading) for reading in readings) if found), None)
    if not parts:
        return plan
    ranked = ranked_groups(model, parts, top=model.classes)
    split = library_plan(dict(guesses, parts=ranked, part_images=parts), shapes_read=2)
    return replace(split, whole=plan.whole, whole_prior=plan.whole_prior, confidence=plan.confidence)


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


def _worker_classifier(checkpoint):
    """The shape classifier of `checkpoint`, loaded once per process."""
    from perception.shapes import load_classifier

    return _loaded_once(load_classifier, checkpoint)


def _guesses_one(job: tuple) -> dict:
    """The shape classifier's guesses for one image (every group), on one thread: the same in any process."""
    checkpoint, image = job
    return _guesses_chunk((checkpoint, [image]))[0]


def _guesses_chunk(job: tuple) -> list[dict]:
    """The shape classifier's guesses for a few images in one batch (`perception.shapes.library_guesses_many`),
    on one thread; the batches are CLASSIFY_BATCH images whatever the number of workers."""
    from perception.shapes import library_guesses_many

    checkpoint, images = job
    model = _worker_classifier(checkpoint)
    with one_thread():
        return library_guesses_many(model, images, top=model.classes)


def _decode_chunk(job: tuple) -> list[tuple]:
    """Decode some images in a worker process (its own copy of the model, loaded once per process)."""
    checkpoint, top_k, beam, images = job
    import torch

    torch.set_num_threads(1)  # the worker's other torch work too (two workers share the two cores)
    return decoded_in_batches(_worker_decoder(checkpoint), images, top_k, beam)


def _worker_decoder(checkpoint):
    """The decoder of `checkpoint`, loaded once per process."""
    from perception.decode import load_decoder

    return _loaded_once(load_decoder, checkpoint)


def _strokes_chunk(job: tuple) -> list:
    """`perception.decode.read_strokes` of some images on one thread (the decoder loaded once per process)."""
    from perception.decode import read_strokes

    checkpoint, images, program, poses = job
    with one_thread():
        return read_strokes(_worker_decoder(checkpoint), images, program, poses)


def _refine_one(job: tuple) -> Perceived:
    return refine_perceived(*job)


@dataclass(frozen=True)
class LibraryRead:
    """One image of a library problem as `_library_one` left it: read as library shapes (`reading`), or not
    read, with what the caller needs to go on: the classifier's `guesses` and why (`unsure`: the classifier is
    unsure of it in a problem where free-form programs were seen, it is read in full; `touching`: one ink blob
    the classifier is unsure of, decoded first so that its plan can split the ink)."""

    plan: LibraryPlan
    reading: Perceived | None = None
    guesses: dict | None = None
    unsure: bool = False
    touching: bool = False
    features: tuple = ()  # the reading's shapes' features, computed in the job (`dsl.features.shape_features`)


def may_be_touching(plan: LibraryPlan) -> bool:
    """One ink blob the classifier is unsure of (under SPLIT_BELOW_CONFIDENCE): touching shapes, maybe, whose
    plan the decoder's reading of two shapes can split (`PixelPerception.plan`)."""
    return SPLIT_TOUCHING and not plan.parts and plan.confidence < SPLIT_BELOW_CONFIDENCE


def _library_one(job: tuple) -> LibraryRead:
    """One image of a library problem in one job: classified (unless its `guesses` are given), planned and,
    when the classifier is sure of it (or no free-form program was seen in the problem), read as library shapes
    (`refine_perceived` from the plan, without the decoder). One ink blob the classifier is unsure of
    (`may_be_touching`) is decoded first in the same job when `split` (the decoder's checkpoint and top_k) is
    given, so that its plan splits the ink among the decoder's two shapes (`decoded_plan`); without `split` it is
    left unread (`touching`) for the caller. In one job, a touching pair waits for no other image: decoded in a
    second round of jobs after all images' reads, it had kept one worker idle while the other decoded."""
    checkpoint, image, guesses, free_form_seen, budget_ms, split, stroke_types = job
    if guesses is None:
        guesses = _guesses_one((checkpoint, image))
    plan = library_plan(guesses, shapes_read=1)
    if plan.confidence < TRACE_BELOW_CONFIDENCE and free_form_seen:
        return LibraryRead(plan, guesses=guesses, unsure=True)
    if may_be_touching(plan):
        if split is None:
            return LibraryRead(plan, guesses=guesses, touching=True)
        decoder_checkpoint, top_k = split
        props = decoded_in_batches(_worker_decoder(decoder_checkpoint), [image], top_k, SPLIT_BEAM)[0]
        with one_thread():
            plan = decoded_plan(image, guesses, props, _worker_classifier(checkpoint))
        return _read(plan, refine_perceived(image, (), budget_ms, plan, True, stroke_types), guesses=guesses, touching=True)
    return _read(plan, refine_perceived(image, (), budget_ms, plan, True, stroke_types))


def _read(plan: LibraryPlan, reading: Perceived, **fields) -> LibraryRead:
    """A `LibraryRead` with its reading's shape features computed here, in the job, not later in the process that
    induces the rule (`dsl.features.remember_features`): that process had computed them one image after another."""
    from dsl.features import shape_features

    return LibraryRead(plan, reading, features=shape_features(reading.program), **fields)


def decoded_plan(image: np.ndarray, guesses: dict, props: tuple, classifier) -> LibraryPlan:
    """One image's `LibraryPlan` from the classifier's `guesses` and the decoder's proposals `props` (none: the
    image was not decoded, and is taken for one shape); one ink blob the classifier is unsure of is split among
    the two shapes of the decoder's readings (`_split_plan`)."""
    shapes_read = len(props[0].program.shapes) if props else 1
    plan = library_plan(guesses, shapes_read)
    if props and may_be_touching(plan):
        readings = [p.program for p in props if len(p.program.shapes) == 2][:SPLIT_READINGS]
        plan = _split_plan(plan, guesses, classifier, image, readings)
    return plan


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
    stroke_types: bool = True,
) -> Perceived:
    """One image's program from the decoder's `proposals` and the classifier's `library` plan (see the
    module docstring); `decoded=False`: `proposals` are seed programs, searched as they are. `stroke_types=False`:
    a library shape's actions are all drawn normal, no stroke chosen (`search.refine.refine_image`)."""
    try:
        free_form = free_form_reading(proposals[0].program) if decoded and proposals else None
        if free_form is not None:  # the decoder reads free-form programs better than refinement does
            return tracing.traced_reading(image, free_form, proposals)
        unsure = library is None or library.confidence < TRACE_BELOW_CONFIDENCE
        second = False  # the library reading is checked by a second, ungated trace (`second_trace`)
        if decoded and proposals and tracing.TRACE and unsure:  # off the grid: a free-form image read wrongly?
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


class PixelPerception:
    """Callable images -> programs for `solve_problem`; `perceive` keeps poses, scores and errors."""

    reconciles = True  # takes `positives=` and `negatives=` (set A first, then set B): see `reconcile_with_context`

    def __init__(
        self,
        checkpoint: Path | str | None = None,
        top_k: int = TOP_K,
        budget_ms: float | None = REFINE_BUDGET_MS,
        workers: int = 1,
        refine: bool = True,
        use_decoder: bool = True,
        beam: int = BEAM,
        shapes_checkpoint: Path | str | None = None,
        use_classifier: bool = True,
        per_problem: bool = True,
        device: str = "auto",
    ) -> None:
        from perception.device import resolve_device

        self.device = resolve_device(device)  # the decoder's; on a GPU a problem's images are decoded in one batch
        self.checkpoint = checkpoint
        self.beam = beam
        self.top_k = top_k
        self.budget_ms = budget_ms
        self.workers = max(1, int(workers))
        self.refine = refine
        self.use_decoder = use_decoder
        self.shapes_checkpoint = shapes_checkpoint
        self.use_classifier = use_classifier and use_decoder
        self.per_problem = per_problem  # the problem perceived as a whole (`solver.reading.pipeline`)
        self.stage_seconds: dict[str, float] = {}  # the last `perceive` call's seconds per stage
        self._classifier = None
        self._model = None
        self._pool = None

    def decoder(self):
        """The decoder model, loaded on first use."""
        if self._model is None:
            from perception.decode import load_decoder

            self._model = load_decoder(self.checkpoint, self.device)
        return self._model

    def classifier(self):
        """The library-shape classifier, loaded on first use."""
        if self._classifier is None:
            self._classifier = _worker_classifier(self.shapes_checkpoint)
        return self._classifier

    def guesses(self, images: list[np.ndarray]) -> list[dict]:
        """The shape classifier's guesses per image (`perception.shapes.library_guesses`, every group),
        CLASSIFY_BATCH images per job across the worker processes."""
        jobs = [(self.shapes_checkpoint, images[k:k + CLASSIFY_BATCH]) for k in range(0, len(images), CLASSIFY_BATCH)]
        return [found for done in self.map(_guesses_chunk, jobs) for found in done]

    def plan(self, image: np.ndarray, guesses: dict, props: tuple) -> LibraryPlan:
        """One image's `LibraryPlan` from the classifier's `guesses` and the decoder's proposals `props`
        (none: the image was not decoded, and is taken for one shape)."""
        return decoded_plan(image, guesses, props, self.classifier())

    def library(self, images: list[np.ndarray], proposals: list[tuple], guesses: list | None = None) -> list[LibraryPlan | None]:
        """The shape classifier's `LibraryPlan` per image (None for an image whose decoded top reading is
        free-form: it is kept as decoded). `guesses`: the classifier's guesses per image where already made."""
        if not self.use_classifier:
            return [None] * len(images)
        out = []
        for k, (image, props) in enumerate(zip(images, proposals)):
            if props and free_form_reading(props[0].program) is not None:
                out.append(None)
                continue
            found = guesses[k] if guesses is not None and guesses[k] is not None else self.guesses([image])[0]
            out.append(self.plan(image, found, props))
        return out

    def read_in_full(self, images: list[np.ndarray], guesses: list | None = None, proposals: list | None = None) -> list[Perceived]:
        """Every image read on its own: decoded (unless its `proposals` are given), named by the classifier,
        refined (traced when free-form)."""
        if not images:
            return []
        if proposals is None:
            proposals = self.decode(images)
        if not self.refine:
            return [
                Perceived(p[0].program if p else None, proposals=p, error=None if p else "no proposal decoded")
                for p in proposals
            ]
        try:
            library = self.library(images, proposals, guesses)
        except Exception as error:
            raise PerceptionError(f"shape classification failed: {error}") from error
        jobs = [(image, props, self.budget_ms, lib, self.use_decoder) for image, props, lib in zip(images, proposals, library)]
        return self._refine_all(jobs)

    def decode(self, images: list[np.ndarray]) -> list[tuple]:
        """`proposals`, a failure raised as a PerceptionError."""
        try:
            return self.proposals(images)
        except Exception as error:
            raise PerceptionError(f"decoding failed: {error}") from error

    def decode_each(self, images: list[np.ndarray], beam: int | None = None) -> list[tuple]:
        """`decode`, each image alone (a batch of one, whatever the number of workers), the images shared out
        across the worker processes: a few images decoded side by side. `beam`: the beam width, if not the
        perception's."""
        if beam is not None and beam != self.beam:
            wide, self.beam = self.beam, beam
            try:
                return self.decode_each(images)
            finally:
                self.beam = wide
        if not self.use_decoder or self.device != "cpu" or self._pool is None or len(images) < 2:
            return [props for image in images for props in self.decode([image])]
        try:
            jobs = [(self.checkpoint, self.top_k, self.beam, [image]) for image in images]
            return [done[0] for done in self._pool.map(_decode_chunk, jobs, chunksize=1)]
        except Exception as error:
            raise PerceptionError(f"decoding failed: {error}") from error

    @property
    def pool(self):
        """The worker processes' pool (`multiprocessing.pool.Pool`), or None when this process does all the work."""
        return self._pool

    def decode_job(self, image: np.ndarray, beam: int) -> tuple:
        """(function, job) decoding one image in a worker process as `decode_each([image], beam)` does, or (None,
        None) when `decode_each` decodes in this process (no workers, not on the CPU, no decoder)."""
        if not self.use_decoder or self.device != "cpu" or self._pool is None:
            return None, None
        return _decode_chunk, (self.checkpoint, self.top_k, beam, [image])

    def library_reads(self, images: list[np.ndarray], guesses: list, free_form_seen: bool,
                      stroke_types: list[bool] | None = None) -> list[LibraryRead]:
        """`_library_one` of each image (its classifier's `guesses`, None where not made yet), one image per job
        across the worker processes: classified, planned and read in the same job. `stroke_types`: per image,
        whether its actions' stroke types are chosen (default: every image's)."""
        from dsl.features import remember_features

        split = (self.checkpoint, self.top_k) if self.use_decoder and self.device == "cpu" else None
        stroke_types = [True] * len(images) if stroke_types is None else stroke_types
        done = self.map(_library_one, [(self.shapes_checkpoint, image, found, free_form_seen, self.budget_ms, split, chosen)
                                       for image, found, chosen in zip(images, guesses, stroke_types)])
        for read in done:
            remember_features(read.features)
        return done

    def read_as_library(self, images: list[np.ndarray], plans: list[LibraryPlan]) -> list[Perceived]:
        """Images the classifier is sure of, read as library shapes from its plans, without the decoder."""
        return self._refine_all([(image, (), self.budget_ms, plan, True) for image, plan in zip(images, plans)])

    def imap(self, function, jobs: list):
        """`map`, the results as they come, in order (this process can work while the workers go on)."""
        if self._pool is None or len(jobs) < 2:
            return (function(job) for job in jobs)
        return self._pool.imap(function, jobs, chunksize=1)

    def map(self, function, jobs: list) -> list:
        """`function` over `jobs`, across the worker processes when there are several jobs."""
        if self._pool is None or len(jobs) < 2:
            return [function(job) for job in jobs]
        return self._pool.map(function, jobs, chunksize=1)  # one job at a time: the jobs' costs differ widely

    def proposals(self, images: list[np.ndarray]) -> list[tuple]:
        """The decoder's proposals per image, decoded DECODE_BATCH images at a time (the worker processes
        share the batches out): an image's readings depend on the images it is decoded with, so the
        batches are the same whatever the number of workers."""
        if not self.use_decoder:
            return [tuple(seed_proposals())] * len(images)
        if self.device != "cpu":
            return decoded_in_batches(self.decoder(), images, self.top_k, self.beam, batch=max(1, len(images)))
        jobs = [(self.checkpoint, self.top_k, self.beam, images[k : k + DECODE_BATCH])
                for k in range(0, len(images), DECODE_BATCH)]
        if self._pool is not None and len(jobs) > 1:
            return [props for done in self._pool.map(_decode_chunk, jobs) for props in done]
        return decoded_in_batches(self.decoder(), images, self.top_k, self.beam)

    def _refine_all(self, jobs: list) -> list[Perceived]:
        return self.map(_refine_one, jobs)

    def _start_workers(self) -> None:
        if self.workers > 1 and self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(  # before torch starts threads
                self.workers, initializer=worker_setup, initargs=(os.getpid(),))  # workers leave Ctrl-C to us

    @property
    def _as_problems(self) -> bool:
        """Whether problems are perceived as a whole (`solver.reading.pipeline`): the ablations that turn off per-problem
        perception, refinement, the decoder or the classifier read every image in full instead."""
        return self.per_problem and self.refine and self.use_decoder and self.use_classifier

    def perceive(self, images: list[np.ndarray], positives: int | None = None, negatives: int = 0) -> list[Perceived]:
        """Every image's program. `positives`: the first this many images are set A of one problem, the next
        `negatives` set B: the problem is perceived as a whole (`solver.reading.pipeline.perceive_problem`, with
        `per_problem`; else every image is read in full and the readings are reconciled with the context,
        `reconcile_with_context`). Without `positives` every image is read on its own. The seconds each
        stage took are left in `stage_seconds`."""
        from solver.reading.pipeline import Stages, perceive_problem

        images = [np.asarray(image) for image in images]
        self._start_workers()
        stages = Stages()
        try:
            if positives and self._as_problems:
                return perceive_problem(self, images, positives, negatives, stages)
            with stages("read"):
                results = self.read_in_full(images)
            if positives and self.refine:
                with stages("reconcile"):
                    results = reconcile_with_context(images, results, positives, self.map, negatives)
            return results
        finally:
            self.stage_seconds, self.stage_cpu_seconds = stages.seconds, stages.cpu_seconds

    def perceive_free_form(self, images: list[np.ndarray], positives: int, negatives: int = 0) -> list[Perceived] | None:
        """The problem's images perceived as one free-form program and its near misses, every set-A image decoded
        to form it (`solver.reading.pipeline.perceive_free_form`); None when set A draws no one free-form program. For
        a problem `perceive` read as library shapes whose rule then misclassifies context images. The stage
        seconds are left in `stage_seconds`."""
        from solver.reading.pipeline import Stages, perceive_free_form

        if not self._as_problems:
            return None
        images = [np.asarray(image) for image in images]
        self._start_workers()
        stages = Stages()
        try:
            return perceive_free_form(self, images, positives, negatives, stages)
        finally:
            self.stage_seconds, self.stage_cpu_seconds = stages.seconds, stages.cpu_seconds

    def __call__(self, images: list[np.ndarray], positives: int | None = None, negatives: int = 0) -> list[ImageProgram]:
        return require_programs(self.perceive(images, positives, negatives), [f"image {k}" for k in range(len(images))])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None

    def __enter__(self) -> "PixelPerception":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
