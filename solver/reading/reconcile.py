"""Problem-level perception (`reconcile_with_context`, when the caller says which images are set A and set B).

The A images of a free-form problem draw one program; the reading that draws most of them at least as well
as their own readings is drawn into the queries (and into the A images read otherwise), which take it if it
draws them at least as well as their own readings (generated free-form problems, seed 4242: 75 % -> 83 %
of queries; seed 8080: 75 % -> 92 %). Set B keeps its readings. An image outside A that reads as the
consensus is then checked for a free-form near miss in one action's stroke type, against the stroke
margins the A images show.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsl.types import ImageProgram, Pose, Shape
from solver.reading.readings import Perceived, pixel_fit
from solver.settings import CONSENSUS_MARGIN, CONSENSUS_MIN, STROKE_SLACK
from solver.reading.traced import free_form_reading


def _pixel_fit_job(job: tuple) -> tuple[float, tuple[Pose, ...]]:
    return pixel_fit(*job)


def _margins_job(job: tuple) -> tuple[list, list, tuple[Pose, ...]]:
    """(image, program) -> `search.strokes.stroke_margins` of the program in the image, poses as Poses."""
    from search.strokes import stroke_margins
    from search.template import make_target

    image, program = job
    target = make_target(image)
    margins, alternatives, placements = stroke_margins(program, target)
    return margins, alternatives, tuple(p.pose(target) for p in placements)


def reconcile_with_context(
    images: list[np.ndarray], results: list[Perceived], positives: int, map_=map, negatives: int = 0
) -> list[Perceived]:
    """Problem-level perception for free-form problems: the images of set A (the first `positives`) draw
    one program.
    1. Consensus. Every distinct free-form reading of an A image is drawn into every A image; the reading
       that draws the most A images at least as well as their own readings (`pixel_fit`, within
       CONSENSUS_MARGIN; ties: the lower total) is the consensus if it draws at least CONSENSUS_MIN of
       them. When all A images read alike, nothing is changed.
    2. Misreadings. Every image read otherwise takes the consensus if it draws the image at least as well
       as its own reading, except the `negatives` images that follow A (set B: they violate A's concept, so
       A's program is never forced on them; a reading that overlays two shapes can draw a near miss as
       well as its own reading does).
    3. Stroke near misses (`_stroke_near_misses`): an image outside A that reads as the consensus may
       differ from it in one action's stroke type (spec §3.2).
    Library readings are left alone. `map_`: a map to run the fits with (e.g. a process pool's)."""
    from dsl.canonical import image_key

    free = [k for k, r in enumerate(results) if r.program is not None and free_form_reading(r.program) is not None]
    a_free = [k for k in free if k < positives]
    candidates: dict[tuple, ImageProgram] = {}
    for k in a_free:
        candidates.setdefault(image_key(results[k].program), results[k].program)
    if len(a_free) < CONSENSUS_MIN or len(candidates) < 2 and len(a_free) == positives:
        return results  # too few free-form readings, or all of A already agree (checking the strokes of the
        # other images then too made one more query wrong on the tuning problems and none right)
    keys = {k: image_key(results[k].program) for k in free}
    jobs = [(images[k], results[k].program) for k in a_free]  # the A images' own readings
    jobs += [(images[k], c) for key, c in candidates.items() for k in a_free if keys[k] != key]
    values = [value for value, _ in map_(_pixel_fit_job, jobs)]
    own = dict(zip(a_free, values[: len(a_free)]))
    fits = iter(values[len(a_free):])
    ranked = []
    for key, c in candidates.items():
        drawn = {k: (next(fits) if keys[k] != key else own[k]) for k in a_free}
        explained = sum(drawn[k] <= own[k] + CONSENSUS_MARGIN for k in a_free)
        ranked.append((-explained, sum(drawn.values()), key))
    explained, _, best = min(ranked)
    if -explained < CONSENSUS_MIN:
        return results
    consensus = candidates[best]
    others = [k for k in free if keys[k] != best and not positives <= k < positives + negatives]
    unseen = [k for k in others if k not in own]  # queries (and B when not named): their own readings fitted now
    jobs = [(images[k], results[k].program) for k in unseen] + [(images[k], consensus) for k in others]
    done = list(map_(_pixel_fit_job, jobs))
    own.update((k, value) for k, (value, _) in zip(unseen, done))
    fitted = done[len(unseen):]
    out = list(results)
    for k, (value, poses) in zip(others, fitted):
        if value <= own[k] + CONSENSUS_MARGIN:
            out[k] = replace(results[k], program=consensus, poses=poses, score=None)
    return _stroke_near_misses(images, out, positives, best, consensus, map_)


def _stroke_near_misses(
    images: list[np.ndarray], out: list[Perceived], positives: int, best: tuple, consensus: ImageProgram, map_
) -> list[Perceived]:
    """Images outside A that read as the consensus, checked for a near miss in one action's stroke: each
    action's stroke margin in the image (`search.strokes.stroke_margins`) against the A images' margins for
    that action (drawn by the consensus by definition, they show the stroke test's noise there): below the
    least of them by their spread (at least STROKE_SLACK), the action takes its best other stroke."""
    from dsl.canonical import image_key

    drawn = [k for k in range(positives, len(out)) if out[k].program is not None and image_key(out[k].program) == best]
    if not drawn:
        return out
    checked = list(map_(_margins_job, [(images[k], consensus) for k in list(range(positives)) + drawn]))

    def floor(values: list[float]) -> float:
        return min(0.0, min(values)) - max(STROKE_SLACK, max(values) - min(values))

    noise = [[floor([checked[a][0][s][i] for a in range(positives)]) for i in range(len(shape))]
             for s, shape in enumerate(consensus.shapes)]
    for k, (margins, alternatives, poses) in zip(drawn, checked[positives:]):
        worst, s, i = min((m - noise[s][i], s, i) for s, row in enumerate(margins) for i, m in enumerate(row))
        if worst < 0.0:
            shapes = list(consensus.shapes)
            shapes[s] = Shape(shapes[s].actions[:i] + (alternatives[s][i],) + shapes[s].actions[i + 1:])
            out[k] = replace(out[k], program=ImageProgram(tuple(shapes)), poses=poses, score=None)
    return out
