"""From pixels to programs: the decoder and the shape classifier propose, the enumerator refines.

`PixelPerception` is the perception `solve_problem` takes: it decodes all images of a problem in one
batch (`perception.decode`), names the library shapes of every image that does not read as free-form
(`perception.shapes`), then refines every image's proposals by render-and-compare (`search.refine`), in
parallel across processes when `workers` > 1. A failure on one image is recorded on that image (and the
best program found so far is used) — it never stops the problem.

Modes (for the ablations, `bongard-solver bench ablations`): `switches` (`solver.reading.switches.Switches`) turn
parts off: `search=False` (or `refine=False`) keeps the decoder's top proposal ("decoder without search");
`hypotheses=False` (or `per_problem=False`) reads every image in full and reconciles; `tracer=False` and
`near_misses=False` go to the worker processes in their jobs. `use_decoder=False` starts the enumerator from generic
seed programs instead of the decoder's and the classifier's proposals ("search without the decoder": library shapes
and grid values only).

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

import multiprocessing
import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

from dsl.processes import worker_setup
from dsl.types import ImageProgram
from solver.reading.jobs import Stages
from solver.reading.pipeline import perceive_free_form, perceive_problem
from solver.reading.plans import LibraryPlan, LibraryRead, decoded_plan, seed_proposals
from solver.reading.readings import Perceived, PerceptionError, require_programs
from solver.reading.reconcile import reconcile_with_context
from solver.reading.switches import PRODUCT, Switches
from solver.reading.traced import free_form_reading
from solver.reading.workers import (
    decode_chunk,
    decoded_in_batches,
    guesses_chunk,
    library_one,
    refine_one,
    worker_classifier,
)
from solver.settings import BEAM, CLASSIFY_BATCH, DECODE_BATCH, REFINE_BUDGET_MS, TOP_K


def perception_worker_setup(parent: int) -> None:
    """A perception worker's start: `dsl.processes.worker_setup`, then torch on one thread for the worker's life. Its
    torch work runs on one thread anyway (`solver.reading.workers.one_thread`, `decode_chunk`); but a worker forked
    from a process whose torch had started its OpenMP threads hung in its first torch call that would use several
    (loading the shape classifier): the second split of `eval --split all` from pixels, or of `bench latency`, forked
    its pool after the first split had run torch in the parent, and waited for ever."""
    import torch

    worker_setup(parent)
    torch.set_num_threads(1)


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
        switches: Switches = PRODUCT,
    ) -> None:
        from perception.device import resolve_device

        self.device = resolve_device(device)  # the decoder's; on a GPU a problem's images are decoded in one batch
        self.checkpoint = checkpoint
        self.beam = beam
        self.top_k = top_k
        self.budget_ms = budget_ms
        self.workers = max(1, int(workers))
        self.refine = refine and switches.search
        self.use_decoder = use_decoder
        self.shapes_checkpoint = shapes_checkpoint
        self.use_classifier = use_classifier and use_decoder
        self.per_problem = per_problem and switches.hypotheses  # the problem perceived as a whole (`.pipeline`)
        self.switches = replace(switches, search=self.refine, hypotheses=self.per_problem)  # which parts run
        self.stage_seconds: dict[str, float] = {}  # the last `perceive` call's seconds per stage
        self._classifier = None
        self._model = None
        self._pool = None
        self._memory: dict | None = None  # work done once in a `remembering` block (one problem)

    @contextmanager
    def remembering(self):
        """Within the block (one problem: `solver.solving.folder.solve_images`), an image decoded alone at a beam width
        (`decode_each`, `decode_job`) and a list of images classified (`guesses`) are worked out once. A problem looked
        at again as free-form (`perceive_free_form`) decodes set A at the beam width the first look decoded some of it
        at, and classifies set A again. Exact: each is the same job whichever process runs it (an image decoded in a
        batch of its own, a list classified in the same batches), so what is remembered is what working it out again
        gives. Outside a block nothing is kept; a block inside another shares the outer one's work."""
        outer = self._memory
        if outer is None:
            self._memory = {}
        try:
            yield
        finally:
            self._memory = outer

    def _decoded_key(self, image: np.ndarray, beam: int | None = None) -> tuple:
        from perception.beam import pixels_key

        return "decoded", pixels_key(image, self._memory), self.beam if beam is None else beam, self.top_k

    def remember_decoded(self, image: np.ndarray, beam: int, proposals: tuple) -> None:
        """Keep, in a `remembering` block, `proposals`: what `decode_job(image, beam)`'s job gave."""
        if self._memory is not None and self.use_decoder:
            self._memory[self._decoded_key(image, beam)] = proposals

    def decoder(self):
        """The decoder model, loaded on first use."""
        if self._model is None:
            from perception.decode import load_decoder

            self._model = load_decoder(self.checkpoint, self.device)
        return self._model

    def classifier(self):
        """The library-shape classifier, loaded on first use."""
        if self._classifier is None:
            self._classifier = worker_classifier(self.shapes_checkpoint)
        return self._classifier

    def guesses(self, images: list[np.ndarray]) -> list[dict]:
        """The shape classifier's guesses per image (`perception.shapes.library_guesses`, every group),
        CLASSIFY_BATCH images per job across the worker processes."""
        if self._memory is not None:
            from perception.beam import pixels_key

            key = ("guesses", tuple(pixels_key(image, self._memory) for image in images))
            if key not in self._memory:
                with self.forgetting():
                    found = self.guesses(images)
                self._memory[key] = found
            return list(self._memory[key])
        jobs = [(self.shapes_checkpoint, images[k:k + CLASSIFY_BATCH]) for k in range(0, len(images), CLASSIFY_BATCH)]
        return [found for done in self.map(guesses_chunk, jobs) for found in done]

    @contextmanager
    def forgetting(self):
        """The block's work not remembered (`remembering`): what a remembered result is made by."""
        memory, self._memory = self._memory, None
        try:
            yield
        finally:
            self._memory = memory

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
        jobs = [(image, props, self.budget_ms, lib, self.use_decoder, self.switches.tracer)
                for image, props, lib in zip(images, proposals, library)]
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
        if self._memory is not None and self.use_decoder:
            keys = [self._decoded_key(image) for image in images]
            missing = {key: image for key, image in zip(keys, images) if key not in self._memory}
            if missing:
                with self.forgetting():
                    found = self.decode_each(list(missing.values()))
                self._memory.update(zip(missing, found))
            return [self._memory[key] for key in keys]
        if not self.use_decoder or self.device != "cpu" or self._pool is None or len(images) < 2:
            return [props for image in images for props in self.decode([image])]
        try:
            jobs = [(self.checkpoint, self.top_k, self.beam, [image]) for image in images]
            return [done[0] for done in self._pool.map(decode_chunk, jobs, chunksize=1)]
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
        if self._memory is not None and self._decoded_key(image, beam) in self._memory:
            return None, None  # decoded already in this `remembering` block: `decode_each` gives it here
        return decode_chunk, (self.checkpoint, self.top_k, beam, [image])

    def library_reads(self, images: list[np.ndarray], guesses: list, free_form_seen: bool,
                      stroke_types: list[bool] | None = None) -> list[LibraryRead]:
        """`library_one` of each image (its classifier's `guesses`, None where not made yet), one image per job
        across the worker processes: classified, planned and read in the same job. `stroke_types`: per image,
        whether its actions' stroke types are chosen (default: every image's)."""
        from dsl.features import remember_features

        split = (self.checkpoint, self.top_k) if self.use_decoder and self.device == "cpu" else None
        stroke_types = [True] * len(images) if stroke_types is None else stroke_types
        done = self.map(library_one, [(self.shapes_checkpoint, image, found, free_form_seen, self.budget_ms, split, chosen)
                                       for image, found, chosen in zip(images, guesses, stroke_types)])
        for read in done:
            remember_features(read.features)
        return done

    def read_as_library(self, images: list[np.ndarray], plans: list[LibraryPlan]) -> list[Perceived]:
        """Images the classifier is sure of, read as library shapes from its plans, without the decoder."""
        return self._refine_all([(image, (), self.budget_ms, plan, True, self.switches.tracer)
                                 for image, plan in zip(images, plans)])

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
            return [props for done in self._pool.map(decode_chunk, jobs) for props in done]
        return decoded_in_batches(self.decoder(), images, self.top_k, self.beam)

    def _refine_all(self, jobs: list) -> list[Perceived]:
        return self.map(refine_one, jobs)

    def _start_workers(self) -> None:
        if self.workers > 1 and self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(
                self.workers, initializer=perception_worker_setup, initargs=(os.getpid(),))  # workers leave Ctrl-C to us

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

    def perceive_free_form(self, images: list[np.ndarray], positives: int, negatives: int = 0,
                           besides: ImageProgram | None = None) -> list[Perceived] | None:
        """The problem's images perceived as one free-form program and its near misses, every set-A image decoded
        to form it (`solver.reading.pipeline.perceive_free_form`); None when set A draws no one free-form program,
        or only `besides` (the H `perceive` formed already). For a problem whose rule from `perceive`'s readings
        misclassifies context images. The stage seconds are left in `stage_seconds`."""

        if not self._as_problems:
            return None
        images = [np.asarray(image) for image in images]
        self._start_workers()
        stages = Stages()
        try:
            return perceive_free_form(self, images, positives, negatives, stages, besides)
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
