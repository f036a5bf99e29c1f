"""Checking an image against the problem's program H, in a worker process: the centreline fit of H and its
one-action neighbours (`search.near_miss`), H written otherwise, and the strokes judged by the decoder walking H at
the pose where it finds them most likely -> a `Verdict` and a stroke reading per image."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from dsl.canonical import same_image
from dsl.features import shape_features
from dsl.types import DATASET_STROKE_TYPES, ImageProgram, Shape
from search.categories import known_categories
from search.near_miss import (Check, centreline_templates, check, nearest_neighbour, neighbours_drawn, retried,
                              screened, stroke_placements_many)
from search.pose import FIT_EVALS, SparseProblem, anchored, refine, stray_share
from search.template import make_target
from solver.reading.jobs import Jobs
from solver.reading.readings import Perceived
from solver.reading.switches import PRODUCT
from solver.reading.workers import remembering, strokes_chunk
from solver.reading.writings import overdrawn_neighbours, written_otherwise_neighbours
from solver.settings import CHECK_BATCH, CONTEXT_JOBS, LEVEL_PX, STROKE_LOGP_SLACK, SURE_NEIGHBOUR_MARGIN_PX


def check_job(job: tuple) -> Check:
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
    return Verdict(hypothesis, {**evidence, "verdict": "hypothesis", "stray": round(found.stray, 4)}, found.poses)


def judged_one(job: tuple):
    """A set-A image H explains: its strokes read where they are judged (`judged_readings` of one image) ->
    StrokeReading. In a worker process."""
    checkpoint, image, hypothesis, fitted = job
    return judged_readings(checkpoint, [image], hypothesis, fitted=[fitted])[0][1]


def checked_many(job: tuple) -> list[tuple]:
    """A few images checked against H and its neighbours (`verdict`) in one job -> (Verdict, StrokeReading or
    None) each: the strokes of those whose geometry is H's read by the decoder walking H at their poses, all in one
    batch (`judged_readings`; its steps cost about half per image in a batch of three as alone). In a worker
    process. `job`: (checkpoint, images, H[, near_misses[, queries[, context_fit]]]); `near_misses=False` (the ablation
    `Switches.near_misses`): H alone is fitted, no neighbour and no other writing of it, so an image H does not explain
    is read in full; `queries`: how many of the images, the first, are queries (default all), the images H explains
    checked against H walked on round its loops too (`_overdrawn`: a query's label turns on it; a set-B image read as H
    is one more image the rule need not fit, and the screen costs 0.05-0.2 s an image); `context_fit`: H's worst fit
    on a set-A image it explains (px): a query H fits worse is checked against the neighbours of H written otherwise
    too, and against H's own neighbours screened from H's pose (`_otherwise_written`, `_anchored_own`, `_closer`;
    generated tuning seed 59001, ff_nact3_4_0014: a negative query H fitted at
    1.92 px, within LEVEL_PX, and the generator's writing of H, its triangle walked the other way round, has the near
    miss at 0.56 px); `agree`: set A's ink bears out H's shapes (`solver.reading.form.parts_agree`); else neither is
    the ink of a query H is about to lose split as H explains it (`_retried`) nor are H's own neighbours screened from
    its pose (`_anchored_own`): the near misses of a misread H fit a query as well as H.

    The strokes of an image H explains are judged at the placements of H its check found (`Check.placements`), not
    fitted again: a fit after the check's may take the assignment of shapes to ink parts that won for one of H's near
    misses (`search.pose`'s ("order", n) memo, reused within a tolerance of its cost) and lay each shape of H on the
    other's ink (generated seed 101555, ff_nact2_5_0007: a positive query's right angle laid on the other shape's two
    sides at twice its scale, its strokes read there at -13.8 nats, +7.7 where the check placed it)."""
    checkpoint, images, hypothesis, *rest = job
    near_misses = rest[0] if rest else True
    queries = rest[1] if len(rest) > 1 else len(images)
    context_fit = rest[2] if len(rest) > 2 else None
    agree = rest[3] if len(rest) > 3 else False
    targets = [make_target(image) for image in images]
    decided, fitted = [], []
    for k, target in enumerate(targets):
        checked = check(hypothesis, target, near_misses)
        if k < queries and (checked.neighbour_fit < checked.fit or checked.fit > LEVEL_PX):  # H about to lose a query
            again = _retried(checked, hypothesis, target, agree)
            if again.fit < checked.fit:  # its strokes are judged where H fits from more headings
                checked = again
        fitted.append(checked.placements)  # H's strokes are judged where its check placed it (the docstring)
        found = verdict(checked, hypothesis)
        if found.program is None and near_misses:  # no neighbour of H as written explains it: H written otherwise?
            found = _otherwise_written(hypothesis, target, found, checked)
        elif near_misses and k < queries and found.evidence["verdict"] == "hypothesis":  # or a near miss of H walked
            # on round a loop, or, where H fits worse than on any set-A image, one of H written otherwise or one of H's
            # own found from where H lies?
            found = _overdrawn(hypothesis, target, found, checked)
            if context_fit is not None and checked.fit > context_fit:
                found = _closer(found, _otherwise_written(hypothesis, target, found, checked),
                                checked.fit - SURE_NEIGHBOUR_MARGIN_PX)
                if agree:
                    found = _closer(found, _anchored_own(hypothesis, target, found, checked),
                                    checked.fit - SURE_NEIGHBOUR_MARGIN_PX)
        decided.append(replace(found, features=shape_features(found.program),  # what the problem's facts will ask
                               categories=known_categories(found.program) if found.program is not None else ()))
        # of its shapes, here in the worker
    read = [k for k, found in enumerate(decided) if found.program is not None and found.evidence["verdict"] == "hypothesis"]
    judged = dict(zip(read, judged_readings(checkpoint, [images[k] for k in read], hypothesis, [targets[k] for k in read],
                                             [fitted[k] for k in read]))) if read else {}
    return [(replace(found, poses=judged[k][0]), judged[k][1]) if k in judged else (found, None)
            for k, found in enumerate(decided)]


def _retried(checked: Check, hypothesis: ImageProgram, target, regroup: bool = False) -> Check:
    """A query's check with H fitted once more from more heading guesses (`search.near_miss.retried`) where that fits
    better: H fitted from the first headings may miss its basin and lose the query to a neighbour (generated seed
    61101, ff_nact3_5_0020: a positive query, H at 2.08 px, a neighbour at 1.40; from more headings H fits 0.42).
    Where H so overtakes the neighbour, the neighbour is fitted from as many headings, the two compared alike.
    `regroup`: H decides which ink is whose (`search.near_miss.retried`, its shapes also fitted each on the ink the
    other leaves, and the neighbour so too); where that splits the ink anew, H's neighbours are screened again on the
    new split (generated seed 70111, ff_nact3_3_0013: a positive query, its two shapes touching, H 4.83 px on the
    2-means split, 1.24 regrouped)."""
    groups = target.memo.get(("groups", 2))
    fit_px, placements = retried(hypothesis, target, checked.fit, list(checked.placements), regroup=regroup,
                                  apart=regroup)
    if fit_px >= checked.fit:
        return checked
    if checked.neighbour is not None and target.memo.get(("groups", 2)) is not groups:  # the ink split anew
        checked = replace(check(hypothesis, target), fit=checked.fit)
    out = replace(checked, fit=fit_px, poses=tuple(p.pose(target) for p in placements), placements=tuple(placements),
                  stray=stray_share(centreline_templates(hypothesis), placements, target))
    if checked.neighbour is not None and fit_px <= checked.neighbour_fit < checked.fit:  # H overtook its neighbour:
        # the neighbour is fitted from as many headings too
        again, found = retried(checked.neighbour, target, checked.neighbour_fit, [], apart=regroup)
        if again < checked.neighbour_fit:
            out = replace(out, neighbour_fit=again, neighbour_poses=tuple(p.pose(target) for p in found))
    return out


def _closer(found: Verdict, other: Verdict, within: float) -> Verdict:
    """Of two verdicts on one image, the neighbour that fits it better (a neighbour before H), `other`'s only when its
    neighbour fits within `within` px: a query H explains, fitted worse than set A, is checked against more
    neighbours (H's other writings'), one of which may fit it a little better than H by chance (generated tuning
    seed 58101, ff_nact7_0015: a positive query, H at 0.90 px, a circle started elsewhere with its tail turned at
    0.86), so one must beat H by SURE_NEIGHBOUR_MARGIN_PX, the margin that makes a neighbour verdict sure."""
    if other.evidence["verdict"] != "neighbour" or other.evidence["neighbour_fit"] > within:
        return found
    if found.evidence["verdict"] != "neighbour" or other.evidence["neighbour_fit"] < found.evidence["neighbour_fit"]:
        return other
    return found


def _otherwise_written(hypothesis: ImageProgram, target, found: Verdict, checked: Check) -> Verdict:
    """An image no neighbour of H explains, or a query H fits worse than set A (`found`, from H's check `checked`),
    checked against the neighbours of H
    written otherwise (`other_writings`) that draw a picture none of H's own neighbours draws (`image_key`, strokes
    aside: the same picture written otherwise fits the image as well), all of them screened together
    (`nearest_neighbour`): the best, when its centreline fits within LEVEL_PX and better than H, is the image's
    reading (its evidence names the writing, `written`), else `found`. Checked writing by writing (H refitted, the
    same pictures screened again for each writing), such an image took 0.22-0.23 s on generated tuning seeds 3131
    ff_nact6_0003 and 13131 ff_nact8_0004 (closed shapes of 6 and 8 actions; one process); screened together,
    0.12-0.19 s, with the same labels, rules and confidences on 200 tuning problems."""
    best = nearest_neighbour(written_otherwise_neighbours(hypothesis), target)
    return _neighbour_reading(best, hypothesis, target, found, checked, lambda candidate: candidate[3] + 1)


def _anchored_own(hypothesis: ImageProgram, target, found: Verdict, checked: Check) -> Verdict:
    """A query H fits worse than set A (`found`, from H's check `checked`), checked against H's own neighbours screened
    from where H lies (`_anchored_neighbour`): the best, when its centreline fits within LEVEL_PX and better than H, is
    the image's reading, else `found`. The screen from scratch (`search.near_miss.nearest_neighbour`) starts each
    neighbour at its best heading guess, which may lie in another basin (generated seed 71111, ff_nact2_5_0017: a
    negative query, H at 1.91 px, the near miss found from scratch at 3.36 px; from H's pose 0.85, 0.01 s)."""
    return _neighbour_reading(_anchored_neighbour(neighbours_drawn(hypothesis), hypothesis, checked, target),
                              hypothesis, target, found, checked, None)


def _neighbour_reading(best: tuple | None, hypothesis: ImageProgram, target, found: Verdict, checked: Check,
                       written) -> Verdict:
    """The verdict of a neighbour of H (`best`: (candidate, fit, placements), or None) when its centreline fits within
    LEVEL_PX and better than H, its evidence saying how H was written (`written(candidate)`, for a neighbour of H
    written otherwise; None: H as written); else `found`."""
    if best is None or best[1] > LEVEL_PX or best[1] >= checked.fit:
        return found
    candidate, fit, placements = best
    change, neighbour, *_ = candidate
    decided = verdict(replace(checked, neighbour_fit=fit, neighbour=neighbour, change=change,
                              neighbour_poses=tuple(p.pose(target) for p in placements)), hypothesis)
    return decided if written is None else replace(decided, evidence={**decided.evidence, "written": written(candidate)})


def _overdrawn(hypothesis: ImageProgram, target, found: Verdict, checked: Check) -> Verdict:
    """An image H explains (`found`, from H's check `checked`), checked against the neighbours of H walked on round
    its loops of arcs (`overdrawn_writings`): the best, when its centreline fits better than H's, is the image's
    reading (its evidence says `written: "overdrawn"`), else `found`. The generator may walk a circle on past its
    start (a circle move and an arc, spec 3.2: five quarter arcs drawing one circle); H read from set A's ink draws
    the circle once, and a near miss that turns or swaps an action of the program as the generator wrote it is then
    no neighbour of H (generated tuning seed 58101: 8 of the 11 wrong answers of its 120 two-shape problems lay in
    problems whose H draws such a circle once; 3 of them a near miss that turns off the circle or makes an arc of it a
    line, visible, the others stroke changes under another arc's ink)."""
    candidates = overdrawn_neighbours(hypothesis)
    if not candidates:
        return found
    found_by = (nearest_neighbour(candidates, target), _anchored_neighbour(candidates, hypothesis, checked, target))
    best = min([b for b in found_by if b is not None], key=lambda b: b[1])
    return _neighbour_reading(best, hypothesis, target, found, checked, lambda _: "overdrawn")


def _anchored_neighbour(candidates, hypothesis: ImageProgram, checked: Check, target) -> tuple | None:
    """Of `candidates` (`overdrawn_neighbours`) the one whose centreline fits best from where H lies: the changed
    shape started with its start, its end or the joint it changes on the start, the end or that joint of H's shape,
    either way along, the other shapes at H's placements (`search.pose.anchored`; a circle's ink does not tell a
    screen from scratch which way round it lies, and the part before the change, or the circle after it, lies where
    H's does), the best starts `screened` as `nearest_neighbour` screens them, the kept ones refined from their quick
    fit -> (candidate, fit, placements), or None. On the walked-on circles of generated seed 58101 a screen from scratch
    found the neighbour that explains a near miss at 1.2-2.2 px where it fits at 0.5-0.8 px."""
    if not checked.placements:
        return None
    own = centreline_templates(hypothesis)
    starts = []
    for change, _, templates, *_ in candidates:
        s = change.shape
        parent, child = own[s], templates[s]
        at = min(change.action, len(parent.joints) - 1)  # the part before the change lies on H's, or the part after
        options = [anchored(parent, checked.placements[s], child, j, k, flip)
                   for j in sorted({0, at, len(parent.joints) - 1})
                   for k in sorted({0, change.action, len(child.joints) - 1}) for flip in (0.0, 180.0)]
        tries = [list(checked.placements[:s]) + [o] + list(checked.placements[s + 1:]) for o in options]
        problem = SparseProblem(templates, target)
        starts.append(min(tries, key=problem.cost))
    return screened(candidates, starts, target,
                    lambda candidate, placements: refine(candidate[2], placements, target, FIT_EVALS))


@remembering
def judged_readings(checkpoint, images: list, hypothesis: ImageProgram, targets: list | None = None,
                     fitted: list | None = None) -> list[tuple]:
    """Where H lies in each of `images` that draw its geometry, and how the decoder walking H there reads its strokes
    -> (poses, `perception.decode.StrokeReading`) per image. A symmetric shape fits its ink as well turned round
    (`search.near_miss.stroke_placements_many`): its poses are told apart by the decoder, the one where it finds H's
    strokes most likely taken (log-probability summed over the actions), all images' poses judged in one batch, and
    the judge's reading of the pose it chose is the image's; where H's strokes are less likely than
    -STROKE_LOGP_SLACK at every pose judged first, every pose is judged (a circle with one stamped arc: on generated
    seed 59101, ff_nact3_4_0032, the pixel score ranked the right pose of a positive query's circle 4th of 12, and the
    three judged read a stroke near miss at -23 nats); an image with no pose to tell apart is read at its
    fitted pose (one more batch). Not polished on the pixel score: on generated tuning seeds 1212 + 5151 (24
    problems, 64 judged set-A images) the judged reading's margin lies within 0.13 nats (median; at most 1.3) of the
    polished pose's, at 40 % less time (no polish, no second reading). Judged by the pixel score instead, the pose
    turned round was taken on tuning seed 1212 for most set-A images of ff_nact2_5_0001 and ff_nact4_0001 (a straight
    two-line shape, a square), whose strokes then looked like near misses of H (-25 to -35 nats; +5 to +7 at the pose
    the decoder prefers). `targets`: the images' `make_target`s, when made; `fitted`: H's centreline placements in
    each image, when fitted (`Check.placements` of `formed_from`'s checks: set A's poses are not fitted twice; a
    query's fit from more headings, `_retried`), else empty."""
    targets = [make_target(image) for image in images] if targets is None else targets
    judged: dict = {}  # image -> the reading of the pose its judge chose (the last shape judged: at its final poses)

    def judge(asked: list) -> list[list[float]]:  # the images with symmetric poses to tell apart, in one batch
        batch, poses, sizes = [], [], []
        for k, candidates in asked:
            batch += [images[k]] * len(candidates)
            poses += [tuple(p.pose(targets[k]) for p in placements) for placements in candidates]
            sizes.append(len(candidates))
        found = iter(strokes_chunk((checkpoint, batch, hypothesis, poses)))
        scores = []
        for (k, _), size in zip(asked, sizes):
            readings = [next(found) for _ in range(size)]
            scores.append([reading.logp for reading in readings])
            judged[k] = revealed(max(readings, key=lambda reading: reading.logp), readings)  # the first best: chosen
        return scores

    placements = stroke_placements_many(hypothesis, targets, judge, polish_evals=0, fitted=fitted,
                                        enough=-STROKE_LOGP_SLACK)
    poses = [tuple(p.pose(target) for p in found) for found, target in zip(placements, targets)]
    rest = [k for k in range(len(images)) if k not in judged]
    if rest:
        judged.update(zip(rest, strokes_chunk((checkpoint, [images[k] for k in rest], hypothesis, [poses[k] for k in rest]))))
    return [(poses[k], judged[k]) for k in range(len(images))]


def revealed(chosen, readings: list):
    """The reading an image is judged by, of its readings at the poses its shape fits alike (`judged_readings`):
    `chosen`, the one where H's strokes are likeliest in sum, unless its worst action is in doubt (H's stroke
    preferred by less than STROKE_LOGP_SLACK, or another's by at most that) while at another pose the decoder, as
    sure of as many actions, prefers another stroke than H's for one by more than STROKE_LOGP_SLACK: then that one
    (the most against H). The sum favours the pose that puts a near miss's changed action where it reads in doubt:
    generated seeds 65101 + 66001 (tuning), 8 of the 16 negative queries taken as H differed in a shape's first action
    (3.0 expected at random), walked last at the pose chosen (ff_nact3_5_0001: -0.71 nats there, the positive query
    -0.73), read at -10.2 at the other pose (ff_nact9_0004). A positive query's other poses read H's strokes where
    others lie: fewer actions sure."""
    if not -STROKE_LOGP_SLACK <= chosen.margin < STROKE_LOGP_SLACK:
        return chosen

    def sure(reading) -> int:
        return sum(margin > STROKE_LOGP_SLACK for margin in reading.margins)

    against = [r for r in readings if r.margin < -STROKE_LOGP_SLACK and sure(r) >= sure(chosen)]
    return min(against, key=lambda r: r.margin) if against else chosen


def judged_chunk(job: tuple) -> list:
    """Some set-A images H explains: their strokes read where they are judged (`judged_readings`, the images
    together) -> (poses, StrokeReading) each. In a worker process."""
    checkpoint, images, hypothesis, fitted = job
    return judged_readings(checkpoint, images, hypothesis, fitted=fitted)


def set_a_readings(perception, images: list, hypothesis: ImageProgram, fitted: list | None = None) -> list:
    """(poses, stroke reading) of set-A images that draw H, each read where its pose is judged (`judged_readings`;
    `fitted`: H's placements in them, as `formed_from`'s checks fitted them), in CONTEXT_JOBS jobs of as many images
    each as can be (the same jobs whatever the number of workers): the worker processes read them as they come free
    of the check jobs, this process waits (`CONTEXT_JOBS`' comment has the measure)."""
    size = -(-len(images) // CONTEXT_JOBS)
    jobs = [(perception.checkpoint, images[k:k + size], hypothesis, fitted[k:k + size] if fitted is not None else None)
            for k in range(0, len(images), size)]
    return [found for done in perception.map(judged_chunk, jobs) for found in done]


def judged_reading(decided: Verdict, reading, hypothesis: ImageProgram, context_margin: float | None = None) -> Perceived | None:
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


def check_chunks(positives: int, negatives: int, n: int) -> list[list[int]]:
    """The images of step 3's check jobs: a job per query, the query first and CHECK_BATCH set-B images after it
    (their strokes read in one batch of the decoder: two batches a problem instead of four; CHECK_BATCH's comment
    has the measure), set B's other images in jobs of CHECK_BATCH: the same jobs whatever the number of workers."""
    queries = list(range(positives + negatives, n))
    set_b = list(range(positives, positives + negatives))
    chunks = [[q] + set_b[i * CHECK_BATCH:(i + 1) * CHECK_BATCH] for i, q in enumerate(queries)]
    rest = set_b[len(queries) * CHECK_BATCH:]
    return chunks + [rest[j:j + CHECK_BATCH] for j in range(0, len(rest), CHECK_BATCH)]


def submit_checks(jobs: Jobs, perception, images, positives: int, negatives: int, hypothesis: ImageProgram,
                  context_fit: float | None = None, agree: bool = False) -> None:
    """Step 3's check jobs (`check_chunks`, `checked_many`) against `hypothesis`, handed to `jobs` as ("check", c).
    `context_fit`: H's worst fit on a set-A image it explains (px); `agree`: set A's ink bears out H's shapes
    (`solver.reading.form.parts_agree`)."""
    for c, chunk in enumerate(check_chunks(positives, negatives, len(images))):
        jobs.submit(("check", c), checked_many, (perception.checkpoint, [images[k] for k in chunk], hypothesis,
                                                 getattr(perception, "switches", PRODUCT).near_misses,
                                                 int(chunk[0] >= positives + negatives),  # a query leads its chunk
                                                 context_fit, agree))
