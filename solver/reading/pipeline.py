"""Perceiving a problem, not 14 images: hypotheses formed once from the context, checked on every other
image by render-and-compare; the full reading (decoder, classifier, search, tracer) only where no
hypothesis explains an image.

`perceive_problem` (the problem's images in solving order: set A, set B, the queries):
  1. classify: the shape classifier names set A's images. When it is sure of nearly all of them
     (LIBRARY_SURE_A), set A is read as library shapes first (every image is, in one round of jobs): if at least
     MIN_A_EXPLAINED of its readings draw one free-form program with the same stamped strokes
     (`_shared_free_form`: a free-form program may draw a library shape, a square, a triangle; only the free-form
     generator repeats an action's stroke in every image), that program is H (step 3); when DRAWABLE_A of them are
     named as shapes a free-form program also draws (a circle of four stamped quarter arcs), set A is decoded and
     checked as in step 2 for a stamped H (`_stamped_free_form`); else the problem is read as library shapes (step 4).
     Set A's stroke types are chosen in that round only when the classifier offers, for MIN_A_EXPLAINED set-A
     images, a shape a free-form program also draws (`_free_form_offered`).
     So is a set A the classifier is less sure of, when one library program it names draws it with strokes that
     differ from image to image (`_library_drawn`: the basic generator's random strokes; the free-form generator
     repeats set A's strokes).
  2. form: otherwise the DECODE_FIRST set-A images the classifier is least sure of are decoded (beam FORM_BEAM). Their
     free-form readings are the hypotheses; each is checked on every set-A image (its centreline fit,
     `search.near_miss.check` without neighbours), and the one that explains the most of them is the
     problem's program H, if it explains at least MIN_A_EXPLAINED; H is written in the free-form generator's
     direction of travel (its arcs turn left: `search.neighbourhood.forward_free_form`), the direction the images
     were drawn in, which their stamps and zigzags show (judged along a reading traced the other way, the strokes
     of set-A images themselves looked wrong), and in quarter arcs (`quarter_arcs`: a run of them read as one long
     arc has one stroke; their own strokes are then taken from set A, `_strokes_of_set_a`). An image is explained
     when the fit is within LEVEL_PX. The decoder's top readings are tried first; when no H comes of them and the
     decoder proposed a free-form program for one of them (`_free_form_proposed`), those images are read in full
     (the tracer mends the decoder's readings) and tried again. No H: step 4, and the readings are reconciled as
     before (`solver.reading.reconcile`). The jobs of steps 2 and 3 go to the worker processes as soon as they are known
     (`_decoded_and_formed`, `Jobs`): no stage waits for the slowest job of the one before.
  3. check: every set-B image and query is checked against H and H's one-action neighbours
     (`search.near_miss`): the best of them by the centreline fit; an image whose geometry is H's has its
     strokes judged by the decoder walking H at its pose, in the same job (`_checked_many`: each query with
     CHECK_BATCH set-B images to a job, their strokes read in one batch; `_with_strokes`):
     where it prefers another stroke for an action, that action takes it. The pose: where a shape's centreline
     fits its ink equally in several poses (a symmetric shape turned), the one where the decoder finds H's strokes
     most likely, the reading made there kept (`_judged_readings`, unpolished). Set A's strokes are judged so too,
     when a query's strokes read otherwise (`_context_margin`): how far the decoder strays on images that draw H. A
     query keeps what its check found when that is H, one of H's neighbours where H does not explain it, or a
     stroke near miss beyond what set A shows (`sure_stroke`), or a neighbour where H explains it too but fits it
     worse than every set-A image while the neighbour fits it as well as H fits one (`sure_neighbour`); a stroke
     near miss within what set A shows reads as H (`_stroke_doubted`); a query whose check is in doubt (another
     such neighbour: `_in_doubt`) is read in full, and that reading is its program. The queries are checked
     first, and a doubtful one is read here while the workers check set B. An image no neighbour explains is
     checked against the neighbours of H written otherwise (`other_writings`: a closed shape started at another
     joint, a shape walked the other way; set A's ink cannot tell how the generator wrote H, and a near miss is one
     action of the generator's writing changed); one none of those explain either (and a set-A image H does not
     explain) is read in full.
  4. library: images the classifier is sure of (`solver.reading.perception.TRACE_BELOW_CONFIDENCE`) are read as
     library shapes from its plan, without the decoder; the others are read in full (decoded, classified,
     searched or traced), and free-form readings reconciled with the context (`solver.reading.reconcile`). When set A
     reads as library shapes (the classifier is sure of nearly all of it, or the decoder and the full readings
     of step 2 found no free-form program in it), every image is read as library shapes: on generated basic
     problems (tuning seed 3131, 38 images the classifier is unsure of) the full reading named the same shapes
     as the library reading (30 exact, 32 right categories, each) at 13 times the CPU time. The stroke types of
     the images outside set A are not chosen there (attributes and shape categories are blind to strokes) unless
     set A's readings share one program drawn all normal on a shape that takes stamps (`_strokes_asked`).
     One ink blob the classifier is unsure of (under SPLIT_BELOW_CONFIDENCE) may be touching shapes: it is
     decoded, so that its plan splits the ink among the decoder's two shapes (`PixelPerception.plan`); read
     without the decoder, every touching pair was read as one shape (generated basic problems, seeds 4141 /
     5151: 20 / 15 images of 840, all misread).

When a problem read as library shapes gives a rule that misclassifies context images, `solver.app.product.solve_folder`
asks for it perceived as free-form (`perceive_free_form`: every set-A image decoded to form H, then step 3) and
keeps that reading if its rule misclassifies fewer.

Each checked image's `Perceived.evidence` keeps what decided it (fits, margins, verdict): the confidence of
a query's label is computed from it (`solver.solving.confidence`).
"""

from __future__ import annotations

import functools
import math
import queue
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from dsl.canonical import image_key, same_image
from dsl.features import remember_features, shape_features, table_disagreements
from dsl.free_form import free_form_drawable
from dsl.library import load_library
from dsl.types import DATASET_STROKE_TYPES, ActionKind, ImageProgram, Shape, StrokeType
from search.near_miss import Check, check, nearest_neighbour, neighbours_drawn, stroke_placements_many
from search.neighbourhood import forward_free_form, normal_strokes_only
from search.settings import INK_THRESHOLD
from search.template import make_target, template
from search.categories import known_categories, remember_categories
from solver.reading.readings import Perceived
from solver.reading.reconcile import reconcile_with_context
from solver.settings import (CHECK_BATCH, CHECKED_READ_BEAM, CONTEXT_JOBS, DECODE_FIRST, DRAWABLE_A, DRAWABLE_TOLERANCE, FORM_BEAM,
                             FORM_GRID_SHARE, LEVEL_PX, LIBRARY_AGREE_CONFIDENCE, LIBRARY_STROKES_VARY, LIBRARY_SURE_A,
                             MIN_A_EXPLAINED, OFFERED_NAMES, SPLIT_BEAM, STROKE_LOGP_SLACK)
from solver.reading.traced import free_form_reading, grid_share


class Stages:
    """Seconds spent per stage, added up over the `with stages(name):` blocks: wall clock (`seconds`) and this
    process's CPU time (`cpu_seconds`; the worker processes' not included)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        start, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 4)
            self.cpu_seconds[name] = round(self.cpu_seconds.get(name, 0.0) + time.process_time() - cpu, 4)


class Jobs:
    """Jobs handed to the worker processes as soon as they are known, each result taken when it is asked for, and
    `first_of` a few jobs the first that is done: a stage starts on what the one before has made without waiting for
    its slowest job. Without worker processes each job runs in this process, in the order given, when a result it
    or a later job's is asked for (`here`: what runs instead of `function(job)`, when given). A job's result is the
    same whenever it runs: only the waiting changes."""

    def __init__(self, pool) -> None:
        self.pool = pool
        self.arrived: queue.Queue = queue.Queue()
        self.waiting: deque = deque()  # without workers: (tag, thunk) in the order given
        self.done: dict = {}  # tag -> (result, error)

    def submit(self, tag, function, job, here=None) -> None:
        if self.pool is None:
            self.waiting.append((tag, here if here is not None else functools.partial(function, job)))
            return
        if function is None:  # a job only this process can run: run now
            self._run(tag, here)
            return
        self.pool.apply_async(function, (job,), callback=lambda result: self.arrived.put((tag, result, None)),
                              error_callback=lambda error: self.arrived.put((tag, None, error)))

    def _run(self, tag, thunk) -> None:
        """A job run in this process, its result (or error) kept."""
        try:
            self.done[tag] = (thunk(), None)
        except Exception as error:
            self.done[tag] = (None, error)

    def _one_more(self) -> None:
        if self.pool is None:
            self._run(*self.waiting.popleft())
            return
        tag, result, error = self.arrived.get()
        self.done[tag] = (result, error)

    def first_of(self, tags: list):
        """The first of `tags` whose job is done (without workers: the one submitted first)."""
        while not any(tag in self.done for tag in tags):
            self._one_more()
        return next(tag for tag in tags if tag in self.done)

    def get(self, tag):
        """The result of job `tag` (its error raised), waited for."""
        while tag not in self.done:
            self._one_more()
        result, error = self.done.pop(tag)
        if error is not None:
            raise error
        return result


def _check_job(job: tuple) -> Check:
    image, program, neighbours = job
    return check(program, make_target(image), neighbours)


@dataclass(frozen=True)
class Verdict:
    program: ImageProgram | None  # None: nothing explains the image; it is read in full
    evidence: dict
    poses: tuple = ()
    features: tuple = ()  # the program's shapes' features, computed in the job (`dsl.features.shape_features`)
    categories: tuple = ()  # ... and their matched library categories (`search.categories.known_categories`)


def verdict(found: Check, hypothesis: ImageProgram) -> Verdict:
    """What an image's check says its geometry is: H's, one of H's neighbours', or unknown (nothing within
    LEVEL_PX). The evidence: the fits (px) and the geometric margin (px, H's best neighbour's fit less H's)."""
    known = math.isfinite(found.neighbour_fit)
    evidence = {"fit": round(found.fit, 3), "neighbour_fit": round(found.neighbour_fit, 3) if known else None,
                "geometric_margin": round(found.geometric_margin, 3) if known else None}
    if found.neighbour is not None and found.neighbour_fit < found.fit:
        if found.neighbour_fit > LEVEL_PX:
            return Verdict(None, {**evidence, "verdict": "unexplained"})
        change = found.change
        return Verdict(found.neighbour, {**evidence, "verdict": "neighbour", "change": [change.shape, change.action, change.what]},
                       found.neighbour_poses)
    if found.fit > LEVEL_PX:
        return Verdict(None, {**evidence, "verdict": "unexplained"})
    return Verdict(hypothesis, {**evidence, "verdict": "hypothesis"}, found.poses)


def _judged_one(job: tuple):
    """A set-A image H explains: its strokes read where they are judged (`_judged_readings` of one image) ->
    StrokeReading. In a worker process."""
    checkpoint, image, hypothesis, fitted = job
    return _judged_readings(checkpoint, [image], hypothesis, fitted=[fitted])[0][1]


def _checked_many(job: tuple) -> list[tuple]:
    """A few images checked against H and its neighbours (`verdict`) in one job -> (Verdict, StrokeReading or
    None) each: the strokes of those whose geometry is H's read by the decoder walking H at their poses, all in one
    batch (`_judged_readings`; its steps cost about half per image in a batch of three as alone). In a worker
    process."""
    checkpoint, images, hypothesis = job
    targets = [make_target(image) for image in images]
    decided = []
    for target in targets:
        checked = check(hypothesis, target, True)
        found = verdict(checked, hypothesis)
        if found.program is None:  # no neighbour of H as written explains it: of H written otherwise?
            found = _otherwise_written(hypothesis, target, found, checked)
        decided.append(replace(found, features=shape_features(found.program),  # what the problem's facts will ask
                               categories=known_categories(found.program) if found.program is not None else ()))
        # of its shapes, here in the worker
    read = [k for k, found in enumerate(decided) if found.program is not None and found.evidence["verdict"] == "hypothesis"]
    judged = dict(zip(read, _judged_readings(checkpoint, [images[k] for k in read], hypothesis,
                                             [targets[k] for k in read]))) if read else {}
    return [(replace(found, poses=judged[k][0]), judged[k][1]) if k in judged else (found, None)
            for k, found in enumerate(decided)]


def _otherwise_written(hypothesis: ImageProgram, target, found: Verdict, checked: Check) -> Verdict:
    """An image no neighbour of H explains (`found`, from H's check `checked`), checked against the neighbours of H
    written otherwise (`other_writings`) that draw a picture none of H's own neighbours draws (`image_key`, strokes
    aside: the same picture written otherwise fits the image as well), all of them screened together
    (`nearest_neighbour`): the best, when its centreline fits within LEVEL_PX and better than H, is the image's
    reading (its evidence names the writing, `written`), else `found`. Checked writing by writing (H refitted, the
    same pictures screened again for each writing), such an image took 0.22-0.23 s on generated tuning seeds 3131
    ff_nact6_0003 and 13131 ff_nact8_0004 (closed shapes of 6 and 8 actions; one process); screened together,
    0.12-0.19 s, with the same labels, rules and confidences on 200 tuning problems."""
    candidates = _written_otherwise_neighbours(hypothesis)
    best = nearest_neighbour(candidates, target)
    if best is None or best[1] > LEVEL_PX or best[1] >= checked.fit:
        return found
    (change, neighbour, _, k), fit, placements = best
    decided = verdict(replace(checked, neighbour_fit=fit, neighbour=neighbour, change=change,
                              neighbour_poses=tuple(p.pose(target) for p in placements)), hypothesis)
    return replace(decided, evidence={**decided.evidence, "written": k + 1})


@functools.lru_cache(maxsize=64)
def _written_otherwise_neighbours(hypothesis: ImageProgram) -> tuple:
    """The neighbours of H written otherwise (`other_writings`) that draw a picture none of H's own neighbours draws,
    each picture once (`image_key`, strokes aside) -> ((change, neighbour, its templates, the writing's index), ...):
    the same for every image `_otherwise_written` checks against H, so made once."""
    candidates = []
    seen = {image_key(neighbour, ignore_strokes=True) for _, neighbour, *_ in neighbours_drawn(hypothesis)}
    for k, other in enumerate(other_writings(hypothesis)):
        for change, neighbour, templates in neighbours_drawn(other):
            key = image_key(neighbour, ignore_strokes=True)
            if key not in seen:
                seen.add(key)
                candidates.append((change, neighbour, templates, k))
    return tuple(candidates)


def _written(program: ImageProgram) -> tuple:
    """`program` as written, action by action (values rounded to the free-form grid's quanta)."""
    return tuple(tuple((a.kind, a.stroke, round(a.turn) % 360, round(a.length, 2), round(a.radius, 2), round(a.angle))
                       for a in shape.actions) for shape in program.shapes)


@functools.lru_cache(maxsize=64)
def other_writings(hypothesis: ImageProgram) -> tuple[ImageProgram, ...]:
    """H written otherwise, drawing the same picture: one shape at a time started at another joint (a closed
    shape) or walked the other way, each in the free-form generator's direction of travel (`forward_free_form`)
    and on its grid (`free_form_reading`), the other shapes as in H. A near miss is the program as the generator
    wrote it with one action changed, and set A's ink cannot tell how it was written: H read from it may start a
    closed shape at another joint or walk an all-line shape the other way, and then the near misses are no
    neighbours of H as written (generated tuning seeds 3131 + 5151: of 22 set-B images no neighbour explained, 7
    were read wrong in full)."""
    from dsl.canonical import from_travel_form, travel_variants

    found, seen = [], {_written(hypothesis)}
    for s, shape in enumerate(hypothesis.shapes):
        for variant in travel_variants(shape):
            other = ImageProgram(hypothesis.shapes[:s] + (forward_free_form(from_travel_form(variant)),)
                                 + hypothesis.shapes[s + 1:])
            key = _written(other)
            if key not in seen and free_form_reading(other) is not None:
                seen.add(key)
                found.append(other)
    return tuple(found)


def _judged_readings(checkpoint, images: list, hypothesis: ImageProgram, targets: list | None = None,
                     fitted: list | None = None) -> list[tuple]:
    """Where H lies in each of `images` that draw its geometry, and how the decoder walking H there reads its strokes
    -> (poses, `perception.decode.StrokeReading`) per image. A symmetric shape fits its ink as well turned round
    (`search.near_miss.stroke_placements_many`): its poses are told apart by the decoder, the one where it finds H's
    strokes most likely taken (log-probability summed over the actions), all images' poses judged in one batch, and
    the judge's reading of the pose it chose is the image's; an image with no pose to tell apart is read at its
    fitted pose (one more batch). Not polished on the pixel score: on generated tuning seeds 1212 + 5151 (24
    problems, 64 judged set-A images) the judged reading's margin lies within 0.13 nats (median; at most 1.3) of the
    polished pose's, at 40 % less time (no polish, no second reading). Judged by the pixel score instead, the pose
    turned round was taken on tuning seed 1212 for most set-A images of ff_nact2_5_0001 and ff_nact4_0001 (a straight
    two-line shape, a square), whose strokes then looked like near misses of H (-25 to -35 nats; +5 to +7 at the pose
    the decoder prefers). `targets`: the images' `make_target`s, when made; `fitted`: H's centreline placements in
    each image, when fitted on a fresh target (`Check.placements` of `_formed`'s checks: set A's poses are not
    fitted twice)."""
    from solver.reading.perception import _strokes_chunk

    targets = [make_target(image) for image in images] if targets is None else targets
    judged: dict = {}  # image -> the reading of the pose its judge chose (the last shape judged: at its final poses)

    def judge(asked: list) -> list[list[float]]:  # the images with symmetric poses to tell apart, in one batch
        batch, poses, sizes = [], [], []
        for k, candidates in asked:
            batch += [images[k]] * len(candidates)
            poses += [tuple(p.pose(targets[k]) for p in placements) for placements in candidates]
            sizes.append(len(candidates))
        found = iter(_strokes_chunk((checkpoint, batch, hypothesis, poses)))
        scores = []
        for (k, _), size in zip(asked, sizes):
            readings = [next(found) for _ in range(size)]
            scores.append([reading.logp for reading in readings])
            judged[k] = max(readings, key=lambda reading: reading.logp)  # the first best: the one chosen
        return scores

    placements = stroke_placements_many(hypothesis, targets, judge, polish_evals=0, fitted=fitted)
    poses = [tuple(p.pose(target) for p in found) for found, target in zip(placements, targets)]
    rest = [k for k in range(len(images)) if k not in judged]
    if rest:
        judged.update(zip(rest, _strokes_chunk((checkpoint, [images[k] for k in rest], hypothesis, [poses[k] for k in rest]))))
    return [(poses[k], judged[k]) for k in range(len(images))]


def _judged_chunk(job: tuple) -> list:
    """Some set-A images H explains: their strokes read where they are judged (`_judged_readings`, the images
    together) -> StrokeReading each. In a worker process."""
    checkpoint, images, hypothesis, fitted = job
    return [reading for _, reading in _judged_readings(checkpoint, images, hypothesis, fitted=fitted)]


def _context_margin(perception, images: list, hypothesis: ImageProgram, fitted: list | None = None) -> float:
    """The least stroke margin of set-A images that draw H, each read where its pose is judged (`_judged_readings`;
    `fitted`: H's placements in them, as `_formed`'s checks fitted them), in CONTEXT_JOBS jobs of as many images
    each as can be (the same jobs whatever the number of workers): the worker processes read them as they come free
    of the check jobs, this process waits (`CONTEXT_JOBS`' comment has the measure)."""
    size = -(-len(images) // CONTEXT_JOBS)
    jobs = [(perception.checkpoint, images[k:k + size], hypothesis, fitted[k:k + size] if fitted is not None else None)
            for k in range(0, len(images), size)]
    return min(reading.margin for done in perception.map(_judged_chunk, jobs) for reading in done)


def _with_strokes(decided: Verdict, reading, hypothesis: ImageProgram, context_margin: float | None = None) -> Perceived | None:
    """An image's check as a reading: where the decoder prefers another stroke than H's by more than
    STROKE_LOGP_SLACK for an action, the image is H with that action's stroke changed (a stroke near miss). It is
    a sure near miss (`sure_stroke`) when its margin lies below every set-A image's (`context_margin`, the least
    stroke margin of the set-A images H explains) by more than STROKE_LOGP_SLACK too (set A shows how far the
    decoder's stroke judgement along H strays on images that draw H; not judged without it)."""
    if decided.program is None:
        return None
    evidence, program = dict(decided.evidence), decided.program
    if reading is not None:
        evidence["stroke_margin"] = round(reading.margin, 3)
        if reading.margin < -STROKE_LOGP_SLACK:
            evidence["verdict"] = "stroke"
            if context_margin is not None:
                evidence["sure_stroke"] = bool(reading.margin < min(context_margin, 0.0) - STROKE_LOGP_SLACK)
            program = in_frame_of(hypothesis, reading.program)
    return Perceived(program, decided.poses, None, evidence=evidence)


def in_frame_of(hypothesis: ImageProgram, program: ImageProgram) -> ImageProgram:
    """`program`, a stroke near miss of `hypothesis` as the decoder traced it (its own start, direction and
    order of shapes: `dsl.walk.target_tracing`), written as `hypothesis` with that action's stroke changed, so
    that the hypothesis's poses draw it (the report draws a reading at its poses); `program` itself when no
    one-stroke change of `hypothesis` draws the same image."""
    for s, shape in enumerate(hypothesis.shapes):
        for i, action in enumerate(shape.actions):
            for stroke in DATASET_STROKE_TYPES:
                if stroke is action.stroke:
                    continue
                actions = shape.actions[:i] + (action.with_stroke(stroke),) + shape.actions[i + 1:]
                candidate = ImageProgram(hypothesis.shapes[:s] + (Shape(actions),) + hypothesis.shapes[s + 1:])
                if same_image(candidate, program):
                    return candidate
    return program


def perceive_problem(perception, images: list[np.ndarray], positives: int, negatives: int, stages: Stages) -> list[Perceived]:
    """The readings of one problem's images (set A: the first `positives`, set B: the next `negatives`, then
    the queries), perceived as a whole (module docstring). `perception`: a `solver.reading.perception.PixelPerception`."""
    from solver.reading.perception import TRACE_BELOW_CONFIDENCE, classifier_confidence

    a = list(range(positives))
    guesses: list = [None] * len(images)
    with stages("classify"):
        for k, found in zip(a, perception.guesses([images[k] for k in a])):
            guesses[k] = found
        confidence = {k: classifier_confidence(guesses[k]) for k in a}  # the plans' (`perception.plan`), not made
    results: list = [None] * len(images)
    if (sum(confidence[k] >= TRACE_BELOW_CONFIDENCE for k in a) < LIBRARY_SURE_A
            and not _library_drawn(perception, images, guesses, confidence, a, stages)):
        first = sorted(a, key=lambda k: (confidence[k], k))[:DECODE_FIRST]
        decoded, formed, submitted = _decoded_and_formed(perception, images, positives, negatives, first, stages)
        if formed is not None:
            return _checked(perception, images, results, positives, negatives, formed, stages, submitted=submitted)
        if _free_form_proposed(decoded):  # the decoder's readings explain too little of set A:
            # read those images in full (the tracer mends the decoder's free-form readings)
            with stages("read"):
                for k, r in zip(first, perception.read_in_full([images[k] for k in first], [guesses[k] for k in first],
                                                               [decoded[k] for k in first])):
                    results[k] = r
            readings = {k: results[k].program for k in first if results[k].program is not None}
            formed = _formed(perception, images, positives, readings, stages)
        if formed is not None:
            return _checked(perception, images, results, positives, negatives, formed, stages)
        seen = [props[0].program for props in decoded.values() if props]
        seen += [r.program for r in results if r is not None and r.program is not None]
        free_form_seen = any(free_form_reading(program) is not None for program in seen)
    else:  # set A read as library shapes first: does it draw one free-form program, strokes and all? Every image is
        # read so in the same round of jobs (no round waits for the slowest of set A's; when set A draws a free-form
        # program, rare here, the other images' library reads go unused). The stroke types of the images outside set
        # A are not chosen (`_strokes_asked`), nor set A's unless the classifier offers a shape a free-form program
        # draws for at least MIN_A_EXPLAINED set-A images (`_free_form_offered`): a set A of fewer draws no free-form
        # program its stroke types could show (`_shared_free_form`, `_strokes_asked`), and no rule of a library problem
        # reads them. Generated tuning seeds: basic 31414 + 31515 + 31616, 97 of the 110 problems read here; abstract
        # 31414 + 31515, 76 of 79; free-form 3131 + 5151 + 12121 + 13131 + 33131, each of the 10 problems (of 22 read
        # here) whose H set A's strokes formed offers one for all six. One set-A read 29-35 -> 20 ms (basic, one
        # process); `bench paired` against the code before: the same labels, rules and confidences on every problem,
        # median s a problem x1.09-1.13 basic, x1.16 abstract, x1.02 free-form
        strokes_a = sum(_free_form_offered(guesses[k]) for k in a) >= MIN_A_EXPLAINED
        with stages("search"):
            done = dict(enumerate(perception.library_reads(images, guesses, False,
                                                           [strokes_a and k in a for k in range(len(images))])))
        formed, context = _shared_free_form(perception, images, positives, {k: done[k] for k in a}, stages), None
        if formed is None and _drawable_library_shapes(guesses[:positives]):
            formed, context = _stamped_free_form(perception, images, positives, stages)
        if formed is not None:
            return _checked(perception, images, results, positives, negatives, formed, stages, context)
        if strokes_a:
            _strokes_read(perception, images, guesses, positives, done, stages)
        return _library_problem(perception, images, results, guesses, positives, negatives, stages, False, done)
    return _library_problem(perception, images, results, guesses, positives, negatives, stages, free_form_seen)


def perceive_free_form(perception, images: list[np.ndarray], positives: int, negatives: int,
                       stages: Stages) -> list[Perceived] | None:
    """The problem perceived as free-form when `perceive_problem` read it as library shapes and the rule induced
    from those readings misclassifies context images (`solver.app.product.solve_folder` asks): every set-A image
    decoded (beam FORM_BEAM), H formed from their readings (`_formed`) and checked on the other images as in step
    3; None when no reading explains MIN_A_EXPLAINED of set A. The classifier may be sure of a free-form program's
    images (it names a library shape they resemble) or the images decoded first may be the hard ones (two shapes
    touching): on generated tuning seeds 3131 + 5151, set A's six readings formed H in each of the 80 free-form
    problems and in none of the 80 basic and 80 abstract ones. The first DECODE_FIRST images are decoded first: when
    the decoder proposes no free-form program for them (`_free_form_proposed`) the others are not decoded (a basic
    problem's six images took 0.8-1.4 s to decode, tuning seeds 3131 + 5151)."""
    a = list(range(positives))
    first = a[:DECODE_FIRST]
    with stages("decode"):
        decoded = dict(zip(first, perception.decode_each([images[k] for k in first], beam=FORM_BEAM)))
        if not _free_form_proposed(decoded):
            return None
        decoded.update(zip(a[DECODE_FIRST:], perception.decode_each([images[k] for k in a[DECODE_FIRST:]], beam=FORM_BEAM)))
    formed = _formed(perception, images, positives, {k: props[0].program for k, props in decoded.items() if props}, stages)
    if formed is None:
        return None
    return _checked(perception, images, [None] * len(images), positives, negatives, formed, stages)


def _named_parts(found: dict, image: np.ndarray | None = None) -> list[tuple]:
    """(ink image, library shape name) of each ink part the classifier names for an image (its `guesses`: the top
    group's first name), or of the whole image (`image`) when it has not two parts; [] when nothing is named."""
    if len(found["parts"]) == 2 and all(found["parts"]):
        return [(part_image, part[0][0][0]) for part_image, part in zip(found["part_images"], found["parts"])]
    return [(image, found["whole"][0][0][0])] if found["whole"] else []


def _library_key(found: dict) -> tuple:
    """The library shapes the classifier names first for an image (its `guesses`): a name per ink part (two parts:
    sorted), else the whole image's (`_named_parts`)."""
    return tuple(sorted(name for _, name in _named_parts(found)))


@functools.cache
def _length_per_spread(name: str) -> float:
    """The centreline length of a library shape (the polyline through its template's coarse points) over the rms
    distance of its centreline from its centroid: no unit, whatever the scale it is drawn at."""
    tpl = template(load_library()[name].shape.with_strokes(StrokeType.NORMAL))
    return float(np.linalg.norm(np.diff(tpl.coarse, axis=0), axis=1).sum()) / tpl.rms


def _ink_per_length(image: np.ndarray, found: dict) -> float:
    """An image's ink pixels per px of the centreline of the library shapes the classifier names first for it (its
    `guesses`, a shape per ink part), each shape's scale read from its ink's spread (the rms distance of the ink from
    its centroid, as the pose search's first guess reads it, `search.pose.guesses`): how much ink the strokes lay
    along the shape, without fitting a pose."""
    ink, length = 0, 0.0
    for part_image, name in _named_parts(found, image):
        points = np.argwhere(np.asarray(part_image) < INK_THRESHOLD)
        if len(points):
            ink += len(points)
            spread = float(np.sqrt(((points - points.mean(axis=0)) ** 2).sum(axis=1).mean()))
            length += _length_per_spread(name) * spread
    return ink / max(length, 1e-9)


def _names_offered(found: dict) -> set:
    """The library shapes the classifier offers for an image (its `guesses`): the first OFFERED_NAMES groups of
    names for the whole image and for each ink part."""
    ranked = [found["whole"], *found["parts"]]
    return {name for groups in ranked for names, _ in groups[:OFFERED_NAMES] for name in names}


def _free_form_offered(found: dict) -> bool:
    """Whether the classifier offers, for an image (its `guesses`), a library shape a free-form program also draws
    (`_names_offered`, `_drawable_names`): else the image draws no free-form program it could mistake for a library
    shape."""
    return any(name in _drawable_names() for name in _names_offered(found))


def _library_drawn(perception, images, guesses: list, confidence: dict, a: list, stages: Stages) -> bool:
    """Whether set A, which the classifier is not sure of, is drawn by the library shapes it names, with strokes that
    differ from image to image: the same first library shape (a shape per ink part, `_library_key`) for at least
    LIBRARY_SURE_A set-A images, each named with a confidence of at least LIBRARY_AGREE_CONFIDENCE; their ink per px
    of its centreline (`_ink_per_length`) varies by a coefficient of variation of at least LIBRARY_STROKES_VARY; and
    that program's centreline fits at least MIN_A_EXPLAINED set-A images within LEVEL_PX (a pose fit per image, in
    the worker processes; made only when the strokes vary). The basic generator draws each action's stroke at random
    per image (spec 3.3), the free-form generator set A's one program with the same strokes in every image (spec
    3.2), which may be a library shape. Such a problem is read as library shapes at once, without decoding set A to
    look for a free-form program. When no shape it offers for a set-A image (`_names_offered`) is one a free-form
    program draws (`_drawable_names`), strokes that do not vary are no sign of a free-form program (a basic shape that
    takes no stamps is drawn with normal strokes in every image, spec 3.3): the fit alone decides. (A circle of four
    stamped quarter arcs, a free-form program, is named `symm_trans_turtle`, which no free-form program draws, in
    most images, but `closed_circle` first or second in all but one.)"""
    keys = {k: _library_key(guesses[k]) for k in a}
    named = [k for k in a if keys[k] and confidence[k] >= LIBRARY_AGREE_CONFIDENCE]
    if not named:
        return False
    key, count = max(((keys[k], sum(keys[j] == keys[k] for j in named)) for k in named), key=lambda item: item[1])
    if count < LIBRARY_SURE_A:
        return False
    library = load_library()
    with stages("classify"):
        if any(_free_form_offered(guesses[k]) for k in a):
            density = np.array([_ink_per_length(images[k], guesses[k]) for k in named if keys[k] == key])
            if float(density.std() / density.mean()) < LIBRARY_STROKES_VARY:
                return False
        program = ImageProgram(tuple(library[name].shape for name in key))
        checks = perception.map(_check_job, [(images[k], program, False) for k in a])
    return sum(found.fit <= LEVEL_PX for found in checks) >= MIN_A_EXPLAINED


def _shared_free_form(perception, images, positives: int, done: dict, stages: Stages) -> Formed | None:
    """The free-form program H that set A's library readings (`done`: image -> `LibraryRead`) draw, strokes and all,
    when at least MIN_A_EXPLAINED of them draw the same free-form program with a stroke other than normal (checked on
    set A as a decoded hypothesis is, `_formed`); else None. The free-form generator draws set A with one program,
    the same stroke for an action in every image (spec 3.2), which may be a library shape (a square, an equilateral
    triangle) that the classifier is sure of; the basic and abstract generators draw each action's stroke at random
    per image, or normal (`if stamp` = 0), so their set-A readings share no stamped stroke sequence."""
    programs = {}
    for k, found in done.items():
        reading = found.reading.program if found.reading is not None else None
        snapped = free_form_reading(reading) if reading is not None else None
        if snapped is not None and stamped(snapped):
            programs[k] = snapped
    for k, program in programs.items():
        if sum(same_image(program, other) for other in programs.values()) >= MIN_A_EXPLAINED:
            return _formed(perception, images, positives, {k: program}, stages)
    return None


def _strokes_read(perception, images, guesses: list, positives: int, done: dict, stages: Stages) -> None:
    """The images outside set A read again as library shapes with their stroke types chosen, in `done` (image ->
    `LibraryRead`), when set A's readings ask for them (`_strokes_asked`)."""
    if not _strokes_asked({k: found for k, found in done.items() if k < positives}):
        return
    rest = [k for k in done if k >= positives and done[k].reading is not None]
    with stages("search"):
        done.update(zip(rest, perception.library_reads([images[k] for k in rest],
                                                       [done[k].guesses or guesses[k] for k in rest], False)))


def _strokes_asked(done: dict) -> bool:
    """Whether the stroke types of a library problem's other images can matter: set A's library readings (`done`)
    draw one program in at least MIN_A_EXPLAINED images, all its actions normal, on shapes that take stamps. A
    free-form problem can look so (its program's strokes all normal, `_shared_free_form` asks for a stamp) and its
    set-B images then differ from it in a stroke; the basic and abstract generators draw a shape that takes stamps
    with each action's stroke at random per image (spec 3.4), and attributes and shape categories are blind to
    strokes. Elsewhere the stroke types of the images outside set A are left unchosen (generated tuning seeds 3131 +
    1212: the search stage of basic and abstract problems 11-17 % shorter, the same labels and rules)."""
    programs = [found.reading.program for found in done.values() if found.reading is not None and found.reading.program]
    for program in programs:
        if (not stamped(program) and not all(normal_strokes_only(shape) for shape in program.shapes)
                and sum(same_image(program, other) for other in programs) >= MIN_A_EXPLAINED):
            return True
    return False


@functools.cache
def _drawable_names() -> frozenset:
    """The library shapes a free-form program also draws, or one near them (`dsl.free_form.free_form_drawable` within
    DRAWABLE_TOLERANCE): shapes whose centreline a free-form program's may fit as closely."""
    return frozenset(name for name, entry in load_library().items()
                     if free_form_drawable(entry.shape, DRAWABLE_TOLERANCE))


def _drawable_library_shapes(guesses: list) -> bool:
    """Whether the classifier names a library shape a free-form program also draws first for at least
    DRAWABLE_A of set A's images (their `guesses`, one ink part each)."""
    tops = [found["whole"][0][0] for found in guesses if found is not None and found["whole"] and len(found["parts"]) != 2]
    return sum(any(name in _drawable_names() for name in group) for group in tops) >= DRAWABLE_A


def _stamped_free_form(perception, images, positives: int, stages: Stages) -> tuple:
    """(H, set A's stroke readings along H) when set A, read as library shapes a free-form program also draws (a
    circle, which the free-form generator draws as four quarter arcs, each with its stroke), draws one free-form
    program with its strokes: DECODE_FIRST set-A images decoded and checked on set A as in step 2 (`_formed`), H
    taken when it has a stroke other than normal and no set-A image's strokes read otherwise (by more than
    STROKE_LOGP_SLACK, `_judged_one`). Else (None, None): the basic and abstract generators draw each action's
    stroke at random per image, or normal (`if stamp` = 0)."""
    first = list(range(min(DECODE_FIRST, positives)))
    with stages("decode"):
        decoded = perception.decode_each([images[k] for k in first], beam=FORM_BEAM)
    formed = _formed(perception, images, positives, {k: props[0].program for k, props in zip(first, decoded) if props}, stages)
    if formed is None or not stamped(formed.hypothesis):
        return None, None
    with stages("check"):
        context = perception.map(_judged_one, [(perception.checkpoint, images[k], formed.hypothesis,
                                                formed.checks[k].placements) for k in formed.explained])
    if min(reading.margin for reading in context) < -STROKE_LOGP_SLACK:
        return None, None
    return formed, context


def stamped(program: ImageProgram) -> bool:
    return any(action.stroke is not StrokeType.NORMAL for shape in program.shapes for action in shape.actions)


def _library_problem(perception, images, results, guesses, positives, negatives, stages,
                     free_form_seen: bool, done: dict | None = None) -> list[Perceived]:
    """Images the classifier is sure of read as library shapes without the decoder, the others in full; when
    set A reads as library shapes (`free_form_seen` False: the classifier is sure of nearly all of set A, or
    the decoder read none of the set-A images it was given as free-form), every image is read as library
    shapes from the classifier's plan, without the decoder. `done`: the images already read so (image ->
    `LibraryRead`)."""
    done = dict(done or {})
    rest = [k for k, r in enumerate(results) if r is None]
    unread = [k for k in rest if k not in done]
    if unread:  # one job per image: classified (set A's already are), planned, read as library shapes; where no
        # free-form program was seen, the stroke types of set A's only (`_strokes_asked`)
        chosen = [free_form_seen or k < positives for k in unread]
        with stages("search"):
            done.update(zip(unread, perception.library_reads([images[k] for k in unread], [guesses[k] for k in unread],
                                                             free_form_seen, chosen)))
        if not all(chosen):
            _strokes_read(perception, images, guesses, positives, done, stages)
    for k, found in done.items():
        guesses[k] = found.guesses if found.guesses is not None else guesses[k]
        if found.reading is not None:
            results[k] = replace(found.reading, evidence=_library_evidence(found.reading.program, found.plan.confidence))
    unsure = [k for k in rest if done[k].unsure]
    # one ink blob the classifier is unsure of: touching shapes? Decoded, so that the plan splits the ink among the
    # decoder's two shapes (`PixelPerception.plan`): read without, every such image read as one shape. On the CPU
    # each is decoded and read in its own job above (`solver.reading.perception._library_one`); here when it was not
    touching = [k for k in rest if done[k].touching and done[k].reading is None]
    if touching:
        plans = {}
        with stages("decode"):
            for k, props in zip(touching, perception.decode_each([images[k] for k in touching], beam=SPLIT_BEAM)):
                plans[k] = perception.plan(images[k], guesses[k], props)
        with stages("search"):
            for k, r in zip(touching, perception.read_as_library([images[k] for k in touching], [plans[k] for k in touching])):
                results[k] = replace(r, evidence=_library_evidence(r.program, plans[k].confidence))
    with stages("read"):
        for k, r in zip(unsure, perception.read_in_full([images[k] for k in unsure], [guesses[k] for k in unsure])):
            results[k] = r
    with stages("reconcile"):
        return reconcile_with_context(images, results, positives, perception.map, negatives)


def _library_evidence(program: ImageProgram | None, classifier: float) -> dict:
    """What decided an image read as library shapes: the classifier's confidence and the attributes on which the
    shape table disputes its features (`dsl.features.table_disagreements`), which `solver.solving.confidence` weighs."""
    evidence = {"verdict": "library", "classifier": round(classifier, 4)}
    disputed = table_disagreements(program) if program is not None else ()
    if disputed:
        evidence["disputed"] = list(disputed)
    return evidence


def _free_form_proposed(decoded: dict) -> bool:
    """Whether the decoder proposed a free-form program for one of the images decoded first (a proposal on the
    free-form grid, or a top reading with at least FORM_GRID_SHARE of its values on it): where it did not, reading
    them in full to form a free-form program is not tried."""
    return any(free_form_reading(proposal.program) is not None for props in decoded.values() for proposal in props) or any(
        grid_share(props[0].program) >= FORM_GRID_SHARE for props in decoded.values() if props)


@dataclass(frozen=True)
class Formed:
    """The problem's free-form program H and what set A says of it."""

    hypothesis: ImageProgram
    explained: list  # set-A images H explains
    checks: list  # H checked on each set-A image (no neighbours)
    strokes_read: tuple | None = None  # the stroke readings of the images H explains along H, at the placements of
    # their checks (`_judged_readings`), when set A's strokes were read for H (`_strokes_of_set_a`); else None


def _candidate(program: ImageProgram) -> tuple | None:
    """A decoded reading as a free-form hypothesis -> (its `image_key`, the hypothesis, how many of its quarter arcs'
    strokes are a guess), or None when it is not free-form: in quarter arcs, in the generator's direction of travel,
    as the image was drawn (its stamps show it)."""
    plain = free_form_reading(program)
    if plain is None:
        return None
    quarters = quarter_arcs(plain)
    snapped = ImageProgram(tuple(forward_free_form(shape) for shape in quarters.shapes))
    return image_key(snapped), snapped, quarters.n_actions - plain.n_actions


def _formed(perception, images, positives: int, readings: dict, stages: Stages) -> Formed | None:
    """The free-form hypothesis H among `readings` (image -> program) that explains the most set-A images
    (ties: the lower total fit), if it explains at least MIN_A_EXPLAINED; else None."""
    candidates: dict = {}  # key -> (hypothesis, its quarter arcs whose strokes are a guess: `quarter_arcs`)
    for program in readings.values():
        found = _candidate(program)
        if found is not None:
            candidates.setdefault(found[0], found[1:])
    if not candidates:
        return None
    programs = [program for program, _ in candidates.values()]
    with stages("check"):
        checks = perception.map(_check_job, [(images[k], p, False) for p in programs for k in range(positives)])
    return _chosen(perception, images, positives, [(program, split, checks[c * positives:(c + 1) * positives])
                                                   for c, (program, split) in enumerate(candidates.values())], stages)


def _chosen(perception, images, positives: int, checked: list, stages: Stages) -> Formed | None:
    """Of the candidates (hypothesis, its guessed quarter-arc strokes, its checks on set A), the one that explains
    the most set-A images (ties: the lower total fit, then the first), if it explains at least MIN_A_EXPLAINED;
    with its strokes read from set A where they are a guess (`_strokes_of_set_a`). Else None."""
    best = None
    for program, split, on_a in checked:
        explained = [k for k in range(positives) if on_a[k].fit <= LEVEL_PX]
        key = (len(explained), -sum(x.fit for x in on_a))
        if best is None or key > best[0]:
            best = (key, program, split, explained, on_a)
    _, hypothesis, split, explained, on_a = best
    if len(explained) < MIN_A_EXPLAINED:
        return None
    formed = Formed(hypothesis, explained, on_a)
    if split:
        with stages("check"):
            formed = _strokes_of_set_a(perception, images, formed, rounds=split + 1)
    return formed


def _decoded_here(perception, image: np.ndarray) -> list:
    """An image decoded as `_decode_chunk` decodes it in a worker, in this process (no workers)."""
    return perception.decode_each([image], beam=FORM_BEAM)


def _decoded_and_formed(perception, images, positives: int, negatives: int, first: list, stages: Stages) -> tuple:
    """Step 2 (`_formed` of the `first` set-A images' decoded top readings) with no stage waiting for the slowest
    job of the one before (`Jobs`): each image's reading, as it comes, gives its hypothesis, at once checked on set A
    in the worker processes while the other image is still decoded; and the check jobs of step 3 (`_checked`) go as
    soon as a hypothesis explains MIN_A_EXPLAINED of set A with no stroke to guess (they are used when it is H).
    The same jobs and choices as decoding both images, then checking, then choosing: the same H. -> (image ->
    the decoder's proposals, the Formed or None, the Jobs holding H's check jobs or None)."""
    from solver.reading.perception import PerceptionError

    jobs = Jobs(perception.pool)
    for k in first:
        jobs.submit(("decode", k), *perception.decode_job(images[k], FORM_BEAM),
                    here=functools.partial(_decoded_here, perception, images[k]))
    decoded: dict = {}
    found: dict = {}  # image decoded -> its candidate (`_candidate`) or None
    on_a: dict = {}  # image decoded -> its candidate's checks on set A (None: asked for, not back yet)
    owner: dict = {}  # image decoded -> the image whose reading's checks on set A are its own (the same program)
    ahead = None  # the candidate whose step-3 check jobs went ahead

    def arrived(tag) -> None:
        nonlocal ahead
        if tag[0] == "decode":
            k = tag[1]
            try:
                decoded[k] = jobs.get(tag)[0]
            except Exception as error:
                raise PerceptionError(f"decoding failed: {error}") from error
            found[k] = _candidate(decoded[k][0].program) if decoded[k] else None
            if found[k] is not None:
                program = found[k][1]
                same = [j for j in on_a if found[j][1] == program]
                if same:  # the other image's reading: checked already
                    owner[k] = same[0]
                    return
                owner[k] = k
                for j in range(positives):
                    jobs.submit(("a", k, j), _check_job, (images[j], program, False))
                on_a[k] = [None] * positives
        else:
            _, k, j = tag
            on_a[k][j] = jobs.get(tag)
            if (ahead is None and all(x is not None for x in on_a[k]) and not found[k][2]
                    and sum(x.fit <= LEVEL_PX for x in on_a[k]) >= MIN_A_EXPLAINED):
                ahead = found[k][1]
                _submit_checks(jobs, perception, images, positives, negatives, ahead)

    def unchecked() -> list:  # the set-A checks asked for and not back yet
        return [("a", k, j) for k in on_a for j in range(positives) if on_a[k][j] is None]

    with stages("decode"):
        while len(decoded) < len(first):
            arrived(jobs.first_of([("decode", k) for k in first if k not in decoded] + unchecked()))
    with stages("check"):
        while unchecked():
            arrived(jobs.first_of(unchecked()))
    candidates: dict = {}  # key -> (hypothesis, guessed strokes, the image decoded it was first read from), in
    # `first`'s order as `_formed` makes them
    for k in first:
        if found.get(k) is not None:
            key, program, split = found[k]
            candidates.setdefault(key, (program, split, owner[k]))
    formed = _chosen(perception, images, positives, [(program, split, on_a[k]) for program, split, k in candidates.values()],
                     stages) if candidates else None
    submitted = jobs if formed is not None and ahead is not None and formed.hypothesis == ahead else None
    return {k: decoded[k] for k in first}, formed, submitted


def quarter_arcs(program: ImageProgram) -> ImageProgram:
    """`program` with every arc of n > 1 quarter circles written as n quarter arcs in a row (no turn between them:
    the same picture). The free-form generator draws only quarter arcs, each with its own stroke (its semicircle
    and circle moves are two and four of them, spec 3.2); the decoder may read a run of them as one long arc, and
    one action has one stroke."""
    from perception.decode import FREE_FORM_ARC_STEP

    shapes = []
    for shape in program.shapes:
        actions = []
        for action in shape.actions:
            n = round(abs(action.angle) / FREE_FORM_ARC_STEP) if action.kind is ActionKind.ARC else 1
            if n > 1:
                quarter = replace(action, angle=math.copysign(FREE_FORM_ARC_STEP, action.angle))
                actions += [quarter] + [replace(quarter, turn=0.0)] * (n - 1)
            else:
                actions.append(action)
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))


def _strokes_of_set_a(perception, images, formed: Formed, rounds: int = 3) -> Formed:
    """H's strokes where set A shows them otherwise: H read from one image whose run of quarter arcs the decoder
    read as one long arc carries that arc's stroke on every quarter (`quarter_arcs`), and each quarter has its own.
    The decoder walking H at the set-A images' poses (`_judged_readings`) names, per image, the action whose stroke
    it doubts most and the stroke it prefers there (by more than STROKE_LOGP_SLACK); the change most images name
    is taken when at least half of the images H explains name it (two quarters misread split the images between
    them), and set A is read again (at most `rounds` changes). When the last reading names no change, it is set A's
    reading along the final H, kept (`Formed.strokes_read`: the context margin of `_checked` reads the same)."""
    hypothesis = formed.hypothesis
    a = formed.explained
    for _ in range(rounds):
        readings = _judged_readings(perception.checkpoint, [images[k] for k in a], hypothesis,
                                    fitted=[formed.checks[k].placements for k in a])
        changed = [in_frame_of(hypothesis, reading.program) for _, reading in readings
                   if reading.margin < -STROKE_LOGP_SLACK]
        votes = [(sum(same_image(program, other) for other in changed), program) for program in changed]
        named, best = max(votes, key=lambda vote: vote[0], default=(0, None))
        if best is None or 2 * named < len(a):
            return replace(formed, hypothesis=hypothesis, strokes_read=tuple(reading for _, reading in readings))
        hypothesis = best
    return replace(formed, hypothesis=hypothesis)


def _in_doubt(found: dict) -> bool:
    """A query's check is in doubt when it is a neighbour where H explains the image too (within LEVEL_PX: a small
    margin of fit tells them apart) not sure (`_sure_neighbour`)."""
    return found.get("verdict") == "neighbour" and found["fit"] <= LEVEL_PX and not found.get("sure_neighbour")


def _stroke_doubted(checked: Perceived, hypothesis: ImageProgram) -> Perceived:
    """A query's stroke near miss that is not sure (`sure_stroke`: the decoder strays as far from H's strokes on a
    set-A image, which draws H) read as H, its evidence kept (`stroke_doubt`, which lowers the label's confidence:
    `solver.solving.confidence`). Generated ff seeds 3131 + 5151 + 1212 + 5252 + 12121 + 13131 and
    14141 + 14242 (480 problems): 9 positive and 3 negative queries had such a near miss; read in full (as before),
    2 of the positives and all 3 negatives were labelled right; taken as H, all 9 positives and none of the
    negatives."""
    return replace(checked, program=hypothesis, evidence={**checked.evidence, "verdict": "hypothesis",
                                                          "stroke_doubt": True})


def _sure_neighbour(found: dict, context_fit: float) -> bool:
    """A query's neighbour verdict where H explains it too (within LEVEL_PX) is sure when set A says so: H fits the
    query worse than every set-A image H explains and the neighbour fits it as well as H fits one of them
    (`context_fit`: the worst fit of H on those images, px). Set A shows how well H fits an image that draws H.
    Generated tuning seeds 3131 + 5151 (80 free-form problems): 14 of the 16 negative queries in such doubt were
    sure so, and no positive query had a neighbour verdict; seeds 12121 + 13131 (120): 4 positive queries had one
    (a neighbour within 0.05 px of H's fit), none sure."""
    return found["fit"] > context_fit and found["neighbour_fit"] <= context_fit


def _check_chunks(positives: int, negatives: int, n: int) -> list[list[int]]:
    """The images of step 3's check jobs: a job per query, the query first and CHECK_BATCH set-B images after it
    (their strokes read in one batch of the decoder: two batches a problem instead of four; CHECK_BATCH's comment
    has the measure), set B's other images in jobs of CHECK_BATCH: the same jobs whatever the number of workers."""
    queries = list(range(positives + negatives, n))
    set_b = list(range(positives, positives + negatives))
    chunks = [[q] + set_b[i * CHECK_BATCH:(i + 1) * CHECK_BATCH] for i, q in enumerate(queries)]
    rest = set_b[len(queries) * CHECK_BATCH:]
    return chunks + [rest[j:j + CHECK_BATCH] for j in range(0, len(rest), CHECK_BATCH)]


def _submit_checks(jobs: Jobs, perception, images, positives: int, negatives: int, hypothesis: ImageProgram) -> None:
    """Step 3's check jobs (`_check_chunks`, `_checked_many`) against `hypothesis`, handed to `jobs` as ("check", c)."""
    for c, chunk in enumerate(_check_chunks(positives, negatives, len(images))):
        jobs.submit(("check", c), _checked_many, (perception.checkpoint, [images[k] for k in chunk], hypothesis))


def _checked(perception, images, results, positives: int, negatives: int, formed: Formed, stages: Stages,
             context: list | None = None, submitted: Jobs | None = None) -> list[Perceived]:
    """Step 3 of the module docstring: set A explained by H reads as H, every other image is checked against
    H and its neighbours (`_check_chunks`; a doubtful query is read in full here, in this process, while the
    workers check the others); what nothing explains is read in full. `context`: set A's stroke readings along H,
    when already made; `submitted`: the Jobs holding the check jobs against H, when already handed out."""
    hypothesis = formed.hypothesis
    results = list(results)
    for k in formed.explained:  # set A draws H (within the noise): the images read otherwise too
        results[k] = Perceived(hypothesis, formed.checks[k].poses, None,
                               evidence={"verdict": "hypothesis", "fit": round(formed.checks[k].fit, 3)})
    for k in range(positives):
        if k not in formed.explained:
            results[k] = None
    queries = list(range(positives + negatives, len(images)))
    if submitted is None:
        submitted = Jobs(perception.pool)
        _submit_checks(submitted, perception, images, positives, negatives, hypothesis)
    chunks = _check_chunks(positives, negatives, len(images))
    order = [k for chunk in chunks for k in chunk]
    found = (one for c in range(len(chunks)) for one in submitted.get(("check", c)))
    context_margin = min(reading.margin for reading in context) if context else None
    context_fit = max(formed.checks[k].fit for k in formed.explained)  # px: H's worst fit on a set-A image it explains
    evidence = {}
    for k in order:
        with stages("check"):
            decided, reading = next(found)
            remember_features(decided.features)
            remember_categories(decided.categories)
        if k in queries and context_margin is None and reading is not None and reading.margin < -STROKE_LOGP_SLACK:
            with stages("check"):  # a query's strokes read otherwise than H's: how far do set A's stray? (read
                # already when set A's strokes were read for H)
                context_margin = (min(found.margin for found in formed.strokes_read) if formed.strokes_read else
                                  _context_margin(perception, [images[j] for j in formed.explained],
                                                  hypothesis, [formed.checks[j].placements for j in formed.explained]))
        results[k] = _with_strokes(decided, reading, hypothesis, context_margin)
        said = results[k].evidence if results[k] is not None else {}
        if k in queries and said.get("verdict") == "neighbour" and said["fit"] <= LEVEL_PX:
            results[k] = replace(results[k], evidence={**said, "sure_neighbour": _sure_neighbour(said, context_fit)})
        if k in queries and said.get("verdict") == "stroke" and not said.get("sure_stroke"):
            results[k] = _stroke_doubted(results[k], hypothesis)
        evidence[k] = results[k].evidence if results[k] is not None else decided.evidence
        if k in queries and (results[k] is None or _in_doubt(evidence[k])):
            with stages("read"):
                results[k] = _read_instead(results[k], evidence[k], _read_checked(perception, [images[k]])[0])
    rest = [k for k, r in enumerate(results) if r is None]  # set-A and set-B images nothing explains
    with stages("read"):
        for k, r in zip(rest, _read_checked(perception, [images[k] for k in rest])):
            results[k] = _read_instead(None, evidence.get(k, {}), r)
    return results


def _read_checked(perception, images: list) -> list[Perceived]:
    """Images of a free-form problem read in full once H is known (a doubtful query, an image nothing explains):
    decoded with beam CHECKED_READ_BEAM (their top readings are what the tracer mends), then read as any image is."""
    if not images:
        return []
    return perception.read_in_full(images, None, perception.decode_each(images, beam=CHECKED_READ_BEAM))


def _read_instead(checked: Perceived | None, evidence: dict, reading: Perceived) -> Perceived:
    """An image read in full, its evidence saying what its check found (`evidence`, for a checked image), and
    whether the reading agrees with the program the check found (`checked`: a doubtful query's)."""
    found = {**evidence, "verdict": "read"}
    if "verdict" in evidence:
        found["checked"] = evidence["verdict"]
    if checked is not None and reading.program is not None:
        found["agrees"] = same_image(reading.program, checked.program)
    return replace(reading, evidence=found)
