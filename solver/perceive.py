"""From pixels to programs: the decoder and the shape classifier propose, the enumerator refines.

`PixelPerception` is the perception `solve_problem` takes: it decodes all images of a problem in one
batch (`perception.decode`), names the library shapes of every image that does not read as free-form
(`perception.shapes`), then refines every image's proposals by render-and-compare (`search.refine`), in
parallel across processes when `workers` > 1. A failure on one image is recorded on that image (and the
best program found so far is used) — it never stops the problem.

Modes (for the ablations): `refine=False` keeps the decoder's top proposal ("decoder without search");
`use_decoder=False` starts the enumerator from generic seed programs instead of the decoder's and the
classifier's proposals ("search without the decoder": library shapes and grid values only).

Per image (`refine_perceived`):
  * a decoded top proposal that lies on the free-form grid is kept as it is (snapped) and only its poses
    are fitted: on official free-form images the decoder's top-1 is exact more often than its refinement
    (`bongard-solver bench decoder --data ../shared/data/official_dev --split dev_ff --refine`: 72.3 % vs
    67.3 %); the render-and-compare score still prefers some near misses (extra actions over drawn ink,
    stroke types under overlaps);
  * any other image (basic and abstract shapes) is searched from the classifier's library shapes
    (`library_proposals`: the whole image's best groups, and pairs when it has two ink parts or the
    decoder reads two shapes), or from the generic seed programs when there is no classifier. The
    decoder's own readings of library shapes are rough (continuous values) and led the search astray, so
    they are not searched from (LIBRARY_DECODED = 0).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dsl.library import load_library
from dsl.types import Action, ImageProgram, Pose, Shape
from search.refine import Proposal, refine_image

TOP_K = 6
LIBRARY_DECODED = 0  # decoded proposals kept beside the library proposals for library-like images (see below)
BEAM = 6
REFINE_BUDGET_MS = 80.0
LIBRARY_TOP = 5  # the classifier's best groups for the whole image, proposed as one-shape programs
PART_TOP = 3  # ... for each of two separate ink parts, combined into two-shape programs
PAIR_TOP = 4  # ... for the whole image, combined in pairs when the decoder reads two (touching) shapes
LIBRARY_LOGP_SCALE = 10.0  # the classifier's log-probabilities are given to the search times this (0.2 px per nat)
SEED_LIBRARY_SHAPES = ("equilateral_traingle", "square", "closed_circle", "regular_hexagon", "closed_semi_circle")


class PerceptionError(RuntimeError):
    """The images of a problem could not be perceived at all (e.g. no decoder checkpoint)."""


@dataclass(frozen=True, slots=True)
class Perceived:
    """What perception made of one image."""

    program: ImageProgram | None
    poses: tuple[Pose, ...] | None = None
    score: float | None = None
    proposals: tuple = ()
    error: str | None = None


def seed_proposals() -> list[Proposal]:
    """Generic starting points for the enumerator when no decoder is used."""
    library = load_library()
    seeds = [Shape((Action.line(1.0),)), Shape((Action.arc(0.5, 90.0),))]
    seeds += [library[name].shape for name in SEED_LIBRARY_SHAPES if name in library]
    singles = [Proposal(ImageProgram((s,)), 0.0) for s in seeds]
    pairs = [Proposal(ImageProgram((seeds[0], s)), 0.0) for s in seeds[:4]]
    return singles + pairs


_WORKER_DECODERS: dict = {}


def library_proposals(guesses: list, pair_guesses: list | None = None) -> list[Proposal]:
    """Programs of library shapes from the shape classifier's guesses ([(group names, probability), ...],
    best first, from `perception.shapes.library_guesses`): one shape per top group; and with
    `pair_guesses` (when the decoder reads two touching shapes), pairs of their top groups. Log-probabilities
    are the classifier's (summed over a pair) times LIBRARY_LOGP_SCALE, most probable first."""
    library = load_library()

    def shape(group) -> Shape:
        return library[group[0]].shape

    def logp(*ps: float) -> float:
        return LIBRARY_LOGP_SCALE * float(sum(math.log(max(p, 1e-9)) for p in ps))

    out = [Proposal(ImageProgram((shape(g),)), logp(p)) for g, p in guesses[:LIBRARY_TOP]]
    if pair_guesses:
        pairs = itertools.combinations(pair_guesses[:PAIR_TOP], 2)
        out += [Proposal(ImageProgram((shape(a), shape(b))), logp(pa, pb)) for (a, pa), (b, pb) in pairs]
    return sorted(out, key=lambda p: -p.logp)


@dataclass(frozen=True)
class LibraryPlan:
    """The classifier's proposals for one image: programs for the whole image, and, when the image has two
    separate ink parts, one-shape programs for each part (each part is then searched alone, on an image
    holding only its ink, and the two programs are joined)."""

    whole: tuple = ()
    parts: tuple = ()  # ((part image, proposals), (part image, proposals))


def library_plan(guesses: dict, shapes_read: int) -> LibraryPlan:
    """A `LibraryPlan` from `perception.shapes.library_guesses` (with part images) and the number of
    shapes the decoder reads."""
    if len(guesses["parts"]) == 2:
        parts = tuple((image, tuple(library_proposals(part))) for image, part in zip(guesses["part_images"], guesses["parts"]))
        return LibraryPlan(tuple(library_proposals(guesses["whole"])), parts)
    pairs = guesses["whole"] if shapes_read == 2 else None
    return LibraryPlan(tuple(library_proposals(guesses["whole"], pairs)))


def _decode_chunk(job: tuple) -> list[tuple]:
    """Decode some images in a worker process (its own copy of the model, loaded once per process)."""
    checkpoint, top_k, beam, images = job
    import torch

    from perception.decode import decode_images, load_decoder

    torch.set_num_threads(1)
    key = str(checkpoint)
    if key not in _WORKER_DECODERS:
        _WORKER_DECODERS[key] = load_decoder(checkpoint)
    decoded = decode_images(_WORKER_DECODERS[key], images, top_k=top_k, beam_width=beam)
    return [tuple(Proposal(p.program, p.logp) for p in props) for props in decoded]


def free_form_reading(program: ImageProgram) -> ImageProgram | None:
    """The program snapped to the free-form grid if it already lies on it (every line of length 1, every
    arc a quarter circle of radius 0.5, turns multiples of 30 degrees, within 0.05 / 5 degrees), else None."""
    from dsl.canonical import same_image
    from perception.decode import snap_free_form

    snapped = snap_free_form(program)
    return snapped if same_image(program, snapped, length_tol=0.05, angle_tol=5.0) else None


def _fit_only(image: np.ndarray, program: ImageProgram, proposals: tuple) -> Perceived:
    """Keep `program`; fit its poses (for the report's overlay)."""
    from search.pose import fit_poses
    from search.template import make_target

    return Perceived(program, fit_poses(program, make_target(image)), None, proposals)


def _refine_one(job: tuple) -> Perceived:
    return refine_perceived(*job)


def _refine_parts(parts: tuple, budget_ms: float) -> Perceived:
    """Each ink part searched alone (half the budget each); the programs, poses and scores joined."""
    results = [refine_image(image, list(props), budget_ms=budget_ms / len(parts)) for image, props in parts]
    program = ImageProgram(tuple(shape for r in results for shape in r.program.shapes))
    poses = tuple(pose for r in results for pose in r.poses)
    return Perceived(program, poses, float(sum(r.score for r in results)))


def refine_perceived(
    image: np.ndarray, proposals: tuple, budget_ms: float, library: LibraryPlan | None = None, decoded: bool = True
) -> Perceived:
    """One image's program from the decoder's `proposals` and the classifier's `library` plan (see the
    module docstring); `decoded=False`: `proposals` are seed programs, searched as they are."""
    try:
        free_form = free_form_reading(proposals[0].program) if decoded and proposals else None
        if free_form is not None:  # the decoder reads free-form programs better than refinement does
            return _fit_only(image, free_form, proposals)
        starts = proposals
        if decoded and library is not None and library.parts:  # two separate shapes: each searched alone
            return replace(_refine_parts(library.parts, budget_ms), proposals=proposals)
        if decoded:  # library-like: searched from the classifier's library shapes, else the generic seeds
            floor = min(p.logp for p in proposals) if proposals else 0.0
            whole = library.whole if library is not None else ()
            starts = tuple(proposals[:LIBRARY_DECODED]) + (
                tuple(whole) if whole else tuple(Proposal(s.program, floor) for s in seed_proposals())
            )
        result = refine_image(image, list(starts), budget_ms=budget_ms)
    except Exception as error:  # one image's failure is recorded (the decoder's best reading kept), the problem goes on
        fallback = proposals[0].program if proposals else None
        return Perceived(fallback, proposals=proposals, error=f"refinement failed: {error!r}")
    return Perceived(result.program, result.poses, result.score, proposals)


def require_programs(results: list[Perceived], names: list[str]) -> list[ImageProgram]:
    """The programs of `results`; a PerceptionError naming the first image that has none."""
    missing = [k for k, r in enumerate(results) if r.program is None]
    if missing:
        first = missing[0]
        raise PerceptionError(f"no program for {len(missing)} images, first {names[first]}: {results[first].error}")
    return [r.program for r in results]


class PixelPerception:
    """Callable images -> programs for `solve_problem`; `perceive` keeps poses, scores and errors."""

    def __init__(
        self,
        checkpoint: Path | str | None = None,
        top_k: int = TOP_K,
        budget_ms: float = REFINE_BUDGET_MS,
        workers: int = 1,
        refine: bool = True,
        use_decoder: bool = True,
        beam: int = BEAM,
        shapes_checkpoint: Path | str | None = None,
        use_classifier: bool = True,
    ) -> None:
        self.checkpoint = checkpoint
        self.beam = beam
        self.top_k = top_k
        self.budget_ms = budget_ms
        self.workers = max(1, int(workers))
        self.refine = refine
        self.use_decoder = use_decoder
        self.shapes_checkpoint = shapes_checkpoint
        self.use_classifier = use_classifier and use_decoder
        self._classifier = None
        self._model = None
        self._pool = None

    def decoder(self):
        """The decoder model, loaded on first use."""
        if self._model is None:
            from perception.decode import load_decoder

            self._model = load_decoder(self.checkpoint)
        return self._model

    def classifier(self):
        """The library-shape classifier, loaded on first use."""
        if self._classifier is None:
            from perception.shapes import load_classifier

            self._classifier = load_classifier(self.shapes_checkpoint)
        return self._classifier

    def library(self, images: list[np.ndarray], proposals: list[tuple]) -> list[LibraryPlan | None]:
        """The shape classifier's `LibraryPlan` per image (None for an image whose decoded top reading is
        free-form: it is kept as decoded)."""
        if not self.use_classifier:
            return [None] * len(images)
        from perception.shapes import library_guesses

        out = []
        for image, props in zip(images, proposals):
            if props and free_form_reading(props[0].program) is not None:
                out.append(None)
                continue
            shapes_read = len(props[0].program.shapes) if props else 1
            out.append(library_plan(library_guesses(self.classifier(), image), shapes_read))
        return out

    def proposals(self, images: list[np.ndarray]) -> list[tuple]:
        if not self.use_decoder:
            return [tuple(seed_proposals())] * len(images)
        if self._pool is not None and len(images) > 1:  # the images split across the worker processes
            chunks = [images[k :: self.workers] for k in range(self.workers)]
            done = self._pool.map(_decode_chunk, [(self.checkpoint, self.top_k, self.beam, c) for c in chunks if c])
            out: list = [None] * len(images)
            for k, props in enumerate(done):
                out[k :: self.workers] = props
            return out
        from perception.decode import decode_images

        decoded = decode_images(self.decoder(), images, top_k=self.top_k, beam_width=self.beam)
        return [tuple(Proposal(p.program, p.logp) for p in props) for props in decoded]

    def _refine_all(self, jobs: list) -> list[Perceived]:
        if self._pool is None or len(jobs) == 1:
            return [_refine_one(job) for job in jobs]
        return self._pool.map(_refine_one, jobs)

    def perceive(self, images: list[np.ndarray]) -> list[Perceived]:
        images = [np.asarray(image) for image in images]
        if self.workers > 1 and self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(self.workers)  # before torch starts threads
        try:
            proposals = self.proposals(images)
        except Exception as error:
            raise PerceptionError(f"decoding failed: {error}") from error
        try:
            library = self.library(images, proposals) if self.refine else [None] * len(images)
        except Exception as error:
            raise PerceptionError(f"shape classification failed: {error}") from error
        if not self.refine:
            return [
                Perceived(p[0].program if p else None, proposals=p, error=None if p else "no proposal decoded")
                for p in proposals
            ]
        jobs = [(image, props, self.budget_ms, lib, self.use_decoder) for image, props, lib in zip(images, proposals, library)]
        return self._refine_all(jobs)

    def __call__(self, images: list[np.ndarray]) -> list[ImageProgram]:
        return require_programs(self.perceive(images), [f"image {k}" for k in range(len(images))])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None

    def __enter__(self) -> "PixelPerception":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
