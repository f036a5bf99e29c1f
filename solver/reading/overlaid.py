"""Strokes laid over each other: the queries taken as H checked against H with a loop of arcs walked on past its
start, the arc walked over and the one over it each given the stroke set A reads there.

The free-form generator may draw a circle of quarter arcs and walk on over its first arc (spec 3.2: five quarter
arcs drawing one circle). Set A's ink does not show the arc walked over, so H read from it draws the circle once, and
a near miss that changes the stroke of one of the two arcs laid over each other is a stroke near miss the decoder
walking H does not see: it reads two strokes at that place and doubts them in set A too (generated seeds 72111 +
73111: 12 of the 17 negative queries taken as H; where H was the generator's program, 5 of 2,050 queries were wrong,
where H had fewer actions, 14 of 208: docs/two_shapes.md). The decoder walking the generator's writing sees such a
change; which arc was walked over, and the strokes of the two, must be read from set A: the arc walked over is the
one whose stroke set A doubts most along H, and H's loop is walked on over it (`walked_on_writings`: from that arc,
either way round), read along set A's images at H's poses carried over (`writing_poses`), each action given the
stroke the set-A images find likeliest together (`overlaid_writing`). A query is a stroke near miss of that writing
where its stroke margin along it lies below set A's by more than STROKE_LOGP_SLACK, and below -STROKE_LOGP_SLACK (as
`solver.reading.verdicts.judged_reading`'s sure near miss): where no arc was walked over, set A's margins along the
writing say how far the decoder strays on it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsl.canonical import from_travel_form, travel_key, travel_variants
from dsl.types import DATASET_STROKE_TYPES, ImageProgram, Shape
from dsl.walk import state_pose, variant_action, variant_starts
from solver.reading.verdicts import in_frame_of, judged_readings
from solver.reading.workers import remembering, strokes_chunk
from solver.reading.writings import loop_start, walked_on
from solver.settings import STROKE_LOGP_SLACK


def walked_on_writings(hypothesis: ImageProgram) -> list[tuple[int, int, ImageProgram, int]]:
    """H with one shape written as one of its travel variants (`dsl.canonical.travel_variants`: another start of a
    closed shape, the other way along) walked on by one arc round the loop its last arcs close (`walked_on`) ->
    (shape index, variant index, writing, the action of H's shape the arc walked on draws over) for every variant
    that closes such a loop."""
    found = []
    for s, shape in enumerate(hypothesis.shapes):
        for v, variant in enumerate(travel_variants(shape)):
            written = from_travel_form(variant)
            start = loop_start(written)
            if start is not None:
                longer = ImageProgram(hypothesis.shapes[:s] + (walked_on(written, 1),) + hypothesis.shapes[s + 1:])
                found.append((s, v, longer, variant_action(shape, v, start)))
    return found


def writing_poses(hypothesis: ImageProgram, s: int, v: int, writing: ImageProgram, poses: tuple) -> tuple:
    """The poses that draw `writing` (`walked_on_writings`' shape `s` written as variant `v`) over H drawn at
    `poses`: shape s starts where H's variant v starts (`dsl.walk.variant_starts`), the other shapes as in H."""
    _, start = variant_starts(hypothesis.shapes[s], poses[s])[v]
    return tuple(poses[:s]) + (state_pose(start, writing.shapes[s]),) + tuple(poses[s + 1:])


def overlaid_writing(checkpoint, set_a: list, judged: list, hypothesis: ImageProgram) -> tuple | None:
    """Which of `walked_on_writings` set A shows, with its strokes -> (s, v, writing), or None when H closes no loop
    of arcs. The arc walked over is the one whose stroke set A doubts most along H (`judged`: (poses, reading) of
    each set-A image along H; the margins summed over the images): two strokes lie there. Of the writings that walk
    over it (one each way round), each action is given the stroke the set-A images find likeliest together (log-
    probabilities summed), and the writing whose strokes they so find likeliest is taken; all read in one batch
    of the decoder (the arc walked on plain, as `walked_on` gives it). Compared so, writings that walk over another
    arc won where a plain arc lay there (read twice, each time sure) and the two strokes laid over each other were read
    as one (generated seed 73111, ff_nact3_5_0029 and ff_nact5_0037)."""
    doubt: dict = {}
    for _, reading in judged:
        for where, margin in zip(reading.actions, reading.margins):
            doubt[where] = doubt.get(where, 0.0) + margin
    candidates = walked_on_writings(hypothesis)
    if not candidates or not set_a:
        return None
    least = min(doubt[(s, over)] for s, _, _, over in candidates)
    candidates = [(s, v, writing) for s, v, writing, over in candidates if doubt[(s, over)] == least]
    rows = [(writing, writing_poses(hypothesis, s, v, writing, poses), image)
            for s, v, writing in candidates for image, (poses, _) in zip(set_a, judged)]
    readings = iter(strokes_chunk((checkpoint, [image for *_, image in rows], [writing for writing, *_ in rows],
                                   [poses for _, poses, _ in rows])))
    best = None
    for s, v, writing in candidates:
        summed: dict = {}
        for _ in range(len(set_a)):
            reading = next(readings)
            for where, logp in zip(reading.actions, reading.logps):
                summed[where] = summed.get(where, 0.0) + np.asarray(logp)
        score = sum(float(logp.max()) for logp in summed.values())
        if best is None or score > best[0]:
            best = (score, s, v, _with_strokes(writing, {where: int(np.argmax(logp)) for where, logp in summed.items()}))
    return best[1:]


def _with_strokes(program: ImageProgram, strokes: dict) -> ImageProgram:
    """`program` with action (s, i) given stroke type `DATASET_STROKE_TYPES[strokes[(s, i)]]`."""
    return ImageProgram(tuple(Shape(tuple(action.with_stroke(DATASET_STROKE_TYPES[strokes[(s, i)]])
                                          for i, action in enumerate(shape.actions)))
                              for s, shape in enumerate(program.shapes)))


def overlaid_near_misses(checkpoint, set_a: list, judged: list, hypothesis: ImageProgram, queries: list,
                         q_poses: list) -> list[tuple | None]:
    """Per query (`queries`, H drawn at `q_poses` in each): (program, poses, margin) when it is a sure stroke near
    miss of H's `overlaid_writing` (its stroke margin along it below -STROKE_LOGP_SLACK and below set A's least margin
    along it by as much: the program is the writing with that action's stroke changed, drawn at `poses`), else None.
    `judged`: (poses, reading) of each set-A image along H (`judged_readings`). Set A and the queries are read along
    the writing in one batch, a query at H's pose and at every pose turned alike (`turned_alike`), the one where the
    writing's strokes are likeliest taken: H's strokes may read alike turned round (square, zigzag, square, zigzag),
    and at the turn the query's pose was judged the arc walked on may lie on another arc than in set A (generated seed
    101555, ff_nact3_5_0029: a positive query read at -19.9 nats there, as set A at the other turn). Turns whose
    strokes differ are not tried: a negative read there hides its change (102111, ff_nact3_5_0011)."""
    found = overlaid_writing(checkpoint, set_a, judged, hypothesis)
    if found is None:
        return [None] * len(queries)
    s, v, writing = found
    turns = [[writing_poses(hypothesis, s, v, writing, alike) for alike in turned_alike(hypothesis, s, p)] for p in q_poses]
    rows = [(image, writing_poses(hypothesis, s, v, writing, p)) for image, (p, _) in zip(set_a, judged)]
    rows += [(image, p) for image, options in zip(queries, turns) for p in options]
    readings = iter(strokes_chunk((checkpoint, [image for image, _ in rows], writing, [p for _, p in rows])))
    context = min(min(next(readings).margin for _ in set_a), 0.0)
    out = []
    for options in turns:
        reading, drawn = max(((next(readings), p) for p in options), key=lambda found: found[0].logp)
        sure = reading.margin < -STROKE_LOGP_SLACK and reading.margin < context - STROKE_LOGP_SLACK
        out.append((in_frame_of(writing, reading.program), drawn, reading.margin) if sure else None)
    return out


def turned_alike(hypothesis: ImageProgram, s: int, poses: tuple) -> list[tuple]:
    """H's poses in an image (`poses`) and every other pose at which H draws the same picture, strokes and all: shape s
    started where each of its travel variants with the same moves, turns and strokes as H's shape starts (a circle of
    quarter arcs stamped square, zigzag, square, zigzag, turned half round). The decoder cannot tell such poses apart
    along H; at a turn whose strokes differ it can, and a query is not read there."""
    shape = hypothesis.shapes[s]
    variants = variant_starts(shape, poses[s])
    written = travel_key(variants[0][0])
    out = [tuple(poses)]
    for v, (variant, start) in enumerate(variants):
        if v and travel_key(variant) == written:
            out.append(tuple(poses[:s]) + (state_pose(start, shape),) + tuple(poses[s + 1:]))
    return out


@remembering
def overlaid_job(job: tuple) -> list:
    """`overlaid_near_misses` in a worker process: job (checkpoint, set_a, fitted, judged, H, queries, q_poses),
    `judged` set A's (poses, reading) along H when read already, else None: judged here from H's placements in each
    set-A image (`fitted`, `judged_readings`)."""
    checkpoint, set_a, fitted, judged, hypothesis, queries, q_poses = job
    if not walked_on_writings(hypothesis):
        return [None] * len(queries)
    if judged is None:
        judged = judged_readings(checkpoint, set_a, hypothesis, fitted=fitted)
    return overlaid_near_misses(checkpoint, set_a, judged, hypothesis, queries, q_poses)


def with_overlaid(perceived, found: tuple):
    """A query's reading (`Perceived`, taken as H) as the stroke near miss `overlaid_near_misses` found."""
    program, poses, margin = found
    return replace(perceived, program=program, poses=poses,
                   evidence={**perceived.evidence, "verdict": "stroke", "written": "overlaid",
                             "stroke_margin": round(margin, 3), "sure_stroke": True})
