"""Free-form readings checked and mended by the free-form tracer (`search.trace`).

  * a decoded top proposal that lies on the free-form grid (snapped, retraced end actions dropped:
    `search.retrace`) is checked by the tracer, seeded by the starts of the decoder's best readings
    (`traced_reading`): the tracer follows the ink with the generator's moves and prefers the shortest walk
    that covers it, so it mends readings with an action too many or too few or a wrong unit; the
    decoder's reading is kept when the tracer's best walk draws the same picture, else the traced program
    takes the decoder's strokes where its actions lie, chosen again by the pixel score with each shape's
    direction of travel (`with_strokes`, `search.strokes.assign_strokes_either_way`). Free-form searches by
    `search.refine` lost to the decoder's top-1 (72.3 % vs 67.3 % exact on official dev_ff) because the
    pixel score does not object to extra actions over drawn ink;
  * an image whose top reading is off the grid (and that the shape classifier is unsure of: the caller,
    `solver.reading.workers.refine_perceived`, decides) is traced too, from the decoder's snapped readings
    (`traced_off_grid`): a free-form image read wrongly has its trace cover the ink at the free-form
    painter's units (FREE_FORM_UNITS); basic and abstract shapes, painted larger, do not (official dev: 34
    of the 54 off-grid free-form images then have the right structure; no basic or abstract image is taken
    for free-form). A first trace from the top reading's starts gates the full one (it is slow on large
    shapes); an image it stops, read as library shapes that draw its ink poorly, is traced in full after
    all when enough of the decoder's reading lies on the free-form grid (`second_trace`). An image the
    trace reads nothing from is traced again, seeded first by the top reading without a stray part
    (`search.repair`: a short action, a shape drawn over the other's ink).
"""

from __future__ import annotations

import numpy as np

from dsl.types import ActionKind, ImageProgram, StrokeType
from search.trace import FREE_FORM_UNITS  # the free-form painter's scales, px per unit
from solver.reading.readings import Perceived
from solver.settings import (ARCS_AGREE_RETRY, FIRST_UNIT_SLACK, FREE_FORM_MIN_ACTIONS, GRID_SHARE, OFF_GRID_FULL_FROM,
                             POOR_FIT, REPAIR, REPAIR_FIT, SECOND_TRACE, TRACE, UNITS_WITHIN)


def free_form_reading(program: ImageProgram) -> ImageProgram | None:
    """The program snapped to the free-form grid if it already lies on it (every line of length 1, every
    arc a quarter circle of radius 0.5, turns multiples of 30 degrees, within 0.05 / 5 degrees), its
    retraced end actions dropped (`search.retrace`: a closed outline read as going round once more), else
    None."""
    from dsl.canonical import same_image
    from perception.decode import snap_free_form
    from search.retrace import without_retraced_ends

    snapped = snap_free_form(program)
    return without_retraced_ends(snapped) if same_image(program, snapped, length_tol=0.05, angle_tol=5.0) else None


def traced_reading(image: np.ndarray, free_form: ImageProgram, proposals: tuple, trace: bool = True) -> Perceived:
    """A free-form reading checked by the tracer (`search.trace`), seeded by the decoder's readings: kept
    (poses fitted) when the tracer's best walk draws the same picture, else the traced program
    (`with_strokes`). `trace=False` (the ablation `Switches.tracer`): kept as decoded, its poses fitted."""
    from dsl.canonical import same_image
    from perception.decode import snap_free_form
    from search.pose import fit_poses
    from search.template import make_target

    target = make_target(image)
    readings = [free_form] + [snap_free_form(p.program) for p in proposals[1:]]
    units = FREE_FORM_UNITS if UNITS_WITHIN and _at_free_form_units(free_form, target) else None
    traced = _full_trace(target, readings, units=units) if TRACE and trace else None
    if traced is None or same_image(traced.program, free_form, 0.02, 2.0, ignore_strokes=True):
        return Perceived(free_form, fit_poses(free_form, target), None, proposals)
    return with_strokes(traced, free_form, target, proposals)


def _full_trace(target, programs: list[ImageProgram], units: tuple | None, retry: bool = True):
    """`search.trace.trace_free_form` (its walks' arcs turning one way), and when that does not cover the ink
    (FULL_COVERAGE) the trace with walks free to turn their arcs both ways, taken if it covers more and its
    arcs turn one way after all (ARCS_AGREE_RETRY; `retry=False`: not tried, as after the ungated second trace,
    which takes seconds on the large library shapes it mostly sees)."""
    from search.trace import FULL_COVERAGE, arcs_agree, trace_free_form

    traced = trace_free_form(target, programs, units=units)
    if retry and ARCS_AGREE_RETRY and (traced is None or traced.coverage < FULL_COVERAGE):
        loose = trace_free_form(target, programs, units=units, arcs_agree=False)
        if loose is not None and arcs_agree(loose.program) and (traced is None or loose.coverage > traced.coverage):
            return loose
    return traced


def _at_free_form_units(program: ImageProgram, target) -> bool:
    """Whether every shape of `program`, fitted to the image, is drawn at the free-form painter's units."""
    from search.trace import starts

    low, high = FREE_FORM_UNITS
    return all(low <= state.u <= high for shape_starts in starts(program, target) for _, state in shape_starts)


def traced_off_grid(image: np.ndarray, proposals: tuple, gate: bool = True) -> tuple[Perceived | None, bool]:
    """An image whose decoded top reading is off the free-form grid, traced from the decoder's snapped
    readings -> (reading, stopped by the gate). The reading is the traced program if it covers the ink
    (`search.trace.FULL_COVERAGE`) at the free-form painter's units (FREE_FORM_UNITS) with as many actions
    as the generator draws (FREE_FORM_MIN_ACTIONS), else None (the image is read as library shapes).
    The gate (`gate=True`): a first trace from the top reading's starts alone must cover
    OFF_GRID_FULL_FROM of the ink at about the free-form units (FIRST_UNIT_SLACK) before the full one runs.
    The full trace reads only walks at the free-form units, if it has any (UNITS_WITHIN). When this finds
    no reading, the top reading repaired (`repaired_reading`) seeds the tracer first, and the trace runs
    again (REPAIR; with the gate only: the ungated full trace of a large shape takes seconds)."""
    from perception.decode import snap_free_form
    from search.retrace import without_retraced_ends
    from search.template import make_target

    target = make_target(image)
    programs = [without_retraced_ends(snap_free_form(p.program)) for p in proposals]
    traced, gated = _traced(target, programs, proposals, gate)
    if traced is None and REPAIR and gate and proposals:  # not after an ungated trace (`second_trace`): slow
        repaired = repaired_reading(proposals[0].program, programs[0], target)
        if repaired is not None:
            traced, _ = _traced(target, [repaired] + programs, proposals, gate)
    return traced, gated


def repaired_reading(decoded: ImageProgram, snapped: ImageProgram, target) -> ImageProgram | None:
    """The `decoded` top reading's repair (`search.repair.repairs`, snapped to the free-form grid) with the
    fewest actions among those whose centrelines fit the image about as well as the `snapped` reading's
    (REPAIR_FIT; ties to the better fit), or None."""
    from perception.decode import snap_free_form
    from search.repair import repairs
    from search.retrace import without_retraced_ends

    limit = centreline_fit(target, snapped) * REPAIR_FIT
    best = None
    for repair in repairs(decoded):
        program = without_retraced_ends(snap_free_form(repair))
        fit = centreline_fit(target, program)
        key = (sum(len(shape.actions) for shape in program.shapes), fit)
        if fit <= limit and (best is None or key < best[0]):
            best = (key, program)
    return None if best is None else best[1]


def _traced(target, programs: list[ImageProgram], proposals: tuple, gate: bool) -> tuple[Perceived | None, bool]:
    """`traced_off_grid` from these snapped readings (the first the top one)."""
    from search.trace import FULL_COVERAGE, trace_free_form

    low, high = FREE_FORM_UNITS
    if gate:
        # (the first trace walks arcs turning both ways too, as the gate was set: it asks whether the ink is
        # walked at the free-form units at all; the full trace's walks keep search.trace.ARCS_AGREE)
        first = trace_free_form(target, programs, readings=1, retry_from=2.0, multiples=False, arcs_agree=False)
        if first is None or first.coverage < OFF_GRID_FULL_FROM or not all(
            low * (1 - FIRST_UNIT_SLACK) <= s.u <= high * (1 + FIRST_UNIT_SLACK) for s in first.starts
        ):
            return None, True
    traced = _full_trace(target, programs, units=FREE_FORM_UNITS if UNITS_WITHIN else None, retry=gate)
    if traced is None or traced.coverage < FULL_COVERAGE or not all(low <= s.u <= high for s in traced.starts):
        return None, False
    counts = [len(shape) for shape in traced.program.shapes]
    if min(counts) < FREE_FORM_MIN_ACTIONS[len(counts)]:  # the generator draws no such free-form image
        return None, False
    return with_strokes(traced, programs[0], target, proposals), False


def grid_share(program: ImageProgram) -> float:
    """Share of the program's actions on the free-form grid, roughly: lines of length 1 (+- 0.1), quarter
    arcs (+- 15 degrees) of radius 0.5 (+- 0.1)."""
    from perception.decode import FREE_FORM_ARC_STEP, FREE_FORM_LENGTH, FREE_FORM_RADIUS

    actions = [a for shape in program.shapes for a in shape.actions]
    on = [
        abs(a.length - FREE_FORM_LENGTH) <= 0.1 if a.kind is ActionKind.LINE
        else abs(a.radius - FREE_FORM_RADIUS) <= 0.1 and abs(abs(a.angle) - FREE_FORM_ARC_STEP) <= 15.0
        for a in actions
    ]
    return float(np.mean(on)) if on else 0.0


def centreline_fit(target, program: ImageProgram) -> float:
    """Mean centreline distance (px, `search.pose.fit`) of the program drawn with normal strokes."""
    from search.pose import fit
    from search.template import template

    return fit([template(shape.with_strokes(StrokeType.NORMAL)) for shape in program.shapes], target)[1]


def second_trace(image: np.ndarray, reading: Perceived, proposals: tuple) -> Perceived:
    """A library `reading` of an off-grid image whose first trace failed its gate: when the reading draws
    the ink poorly (centreline fit over POOR_FIT px), the full trace runs without the gate, and its reading
    is kept if it draws the centrelines closer. (Two free-form shapes far apart of which the decoder saw one,
    or one whose decoded unit is far off, fail the gate: on generated free-form tuning problems, seed 4242,
    80.1 -> 82.1 % of images exact; official dev_ff 83.3 -> 84.8 %.)"""
    from search.template import make_target

    target = make_target(image)
    own = centreline_fit(target, reading.program)
    if own <= POOR_FIT:
        return reading
    traced, _ = traced_off_grid(image, proposals, gate=False)
    if traced is None or centreline_fit(target, traced.program) >= own:
        return reading
    return traced


def with_strokes(traced, decoded: ImageProgram, target, proposals: tuple) -> Perceived:
    """The traced program, each action with the stroke of the `decoded` action drawn where it lies as the
    decoder's preference, the strokes then chosen by the pixel score with each shape traced either way
    (`search.strokes.assign_strokes_either_way`), poses where the tracer walked (polished). (Keeping the
    decoded strokes as they are instead made 2 fewer official dev_ff images exact; choosing the direction
    of travel too, with the preference for the decoded strokes 4 instead of 32: free-form tuning set, seed
    4242, 82.1 -> 84.2 % exact, official dev_ff 84.8 -> 85.7 %. Checking the strokes of kept decoder
    readings the same way lost: 79.5 and 82.1 %.)"""
    from search.strokes import assign_strokes_either_way
    from search.trace_readout import traced_placements, with_decoded_strokes

    program, decoded_strokes = with_decoded_strokes(traced, decoded, target)
    placements = traced_placements(traced)
    program, placements = assign_strokes_either_way(program, placements, target, decoded_strokes)
    return Perceived(program, tuple(p.pose(target) for p in placements), traced.score, proposals)
