"""The free-form tracer reads rendered free-form images from wrong decoder readings."""

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose, StrokeType
from search.template import make_target
from search.trace import trace_free_form
from search.trace_readout import with_decoded_strokes

# a right angle, a semicircle and a line (the generator's moves), strokes mixed
ACTIONS = ["line_normal_1.000-0.500", "line_zigzag_1.000-0.750", "arc_circle_0.500_0.625-0.500",
           "arc_normal_0.500_0.625-0.500", "line_square_1.000-0.500"]
TRUTH = parse_image([ACTIONS])
POSES = [Pose(-60.0, 40.0, 20.0, 110.0)]


def _target(program=TRUTH, poses=POSES):
    return make_target(render_program(program, poses))


def test_a_dropped_last_action_is_traced_back():
    traced = trace_free_form(_target(), [parse_image([ACTIONS[:-1]])])
    assert same_image(traced.program, TRUTH, ignore_strokes=True)
    assert traced.coverage > 0.98


def test_a_retraced_extra_action_is_not_kept():
    # back over the last line: adds no ink
    extra = parse_image([ACTIONS + ["line_normal_1.000-0.000"]])
    traced = trace_free_form(_target(), [extra])
    assert same_image(traced.program, TRUTH, ignore_strokes=True)


def test_the_decoders_own_reading_is_kept_when_it_is_right():
    traced = trace_free_form(_target(), [TRUTH])
    assert same_image(traced.program, TRUTH, ignore_strokes=True)


def test_a_reading_at_the_wrong_scale_is_traced_at_the_painters_units():
    # the same actions read as half as long: the fitted unit is off, the tracer tries the painter's units
    halves = parse_image([["line_normal_0.500-0.500", "line_normal_0.500-0.500", "line_zigzag_1.000-0.750",
                           "arc_circle_0.500_0.625-0.500"]])
    traced = trace_free_form(_target(), [halves])
    assert same_image(traced.program, TRUTH, ignore_strokes=True)


def test_two_shapes_are_traced_separately():
    program = parse_image([ACTIONS[:3], ["arc_normal_0.500_0.625-0.500"] * 2 + ["line_triangle_1.000-0.500"]])
    poses = [Pose(-150.0, 120.0, 0.0, 100.0), Pose(120.0, -120.0, 90.0, 120.0)]
    misread = parse_image([ACTIONS[:2], ["arc_normal_0.500_0.625-0.500"] * 2])
    traced = trace_free_form(_target(program, poses), [misread])
    assert same_image(traced.program, program, ignore_strokes=True)


def test_strokes_come_from_the_decoded_actions_drawn_where_the_traced_ones_lie():
    decoded = parse_image([ACTIONS[:-1]])
    target = _target()
    traced = trace_free_form(target, [decoded])
    program, prior = with_decoded_strokes(traced, decoded, target)
    strokes = sorted(a.stroke.value for a in program.shapes[0].actions)
    # the four decoded actions keep their strokes; the traced fifth has no decoded action there: normal,
    # with no preference
    assert strokes == sorted(["normal", "zigzag", "circle", "normal", "normal"])
    assert StrokeType.SQUARE not in {a.stroke for a in program.shapes[0].actions}
    assert sorted(s.value if s else "none" for s in prior[0]) == sorted(["normal", "zigzag", "circle", "normal", "none"])


def test_traced_placements_are_where_the_shapes_are_drawn():
    from search.pose import pixel_cost
    from search.template import template
    from search.trace_readout import traced_placements

    target = _target()
    traced = trace_free_form(target, [parse_image([ACTIONS[:-1]])])
    placements = traced_placements(traced)
    drawn = pixel_cost([template(s) for s in traced.program.shapes], placements, target)
    shifted = [type(p)(p.cx + 8.0, p.cy, p.theta, p.s) for p in placements]
    assert drawn < 0.6 * pixel_cost([template(s) for s in traced.program.shapes], shifted, target)
    assert abs(placements[0].s - POSES[0].scale * 512 / 783) < 0.05 * placements[0].s


# two shapes; the first a right angle, which a line, a quarter arc and a line at two thirds of its unit
# also draw, cutting the corner
CIRCLE_ISH = ["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.500", "arc_zigzag_0.500_0.625-0.500",
              "arc_normal_0.500_0.625-0.500"]
RIGHT_ANGLE = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.750"], CIRCLE_ISH])
TWO_POSES = [Pose(-150.0, 120.0, 0.0, 100.0), Pose(120.0, -120.0, 90.0, 120.0)]


def test_a_short_shape_read_at_the_wrong_unit_is_traced_at_other_units(monkeypatch):
    import search.trace as tracing

    rounded = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.500", "line_zigzag_1.000-0.500"],
                           CIRCLE_ISH])
    target = _target(RIGHT_ANGLE, TWO_POSES)
    monkeypatch.setattr(tracing, "FULL_COVERAGE", 0.9)  # the rounded corner covers enough: no retry at the painter's units
    monkeypatch.setattr(tracing, "UNIT_MULTIPLES", ())
    assert not same_image(trace_free_form(target, [rounded]).program, RIGHT_ANGLE, ignore_strokes=True)
    monkeypatch.undo()  # the retries at other units (the painter's, multiples of the reading's) find the right angle
    traced = trace_free_form(target, [rounded])
    assert same_image(traced.program, RIGHT_ANGLE, ignore_strokes=True)
    assert traced.coverage > 0.98


def test_collinear_lines_are_not_merged_at_another_unit():
    # three lines in a row draw the same path as two lines half as long again: the decoder's cut is kept
    program = parse_image([["line_zigzag_1.000-0.500", "line_square_1.000-0.500", "line_triangle_1.000-0.500"],
                           ["line_normal_1.000-0.500", "line_triangle_1.000-0.750", "arc_normal_0.500_0.625-0.500"]])
    traced = trace_free_form(_target(program, TWO_POSES), [program])
    assert same_image(traced.program, program, ignore_strokes=True)


def test_walks_outside_the_painters_units_give_way_to_walks_within():
    # two quarter arcs meeting at a cusp: one quarter arc half as large again covers most of their ink
    # with one action fewer; the free-form painter does not draw at that unit
    first = ["arc_normal_0.500_0.375-0.500", "arc_square_0.500_0.375-0.500", "line_triangle_1.000-1.000",
             "arc_circle_0.500_0.375-1.000", "arc_square_0.500_0.375-0.500"]
    cusp = parse_image([first, ["arc_zigzag_0.500_0.375-0.500", "arc_triangle_0.500_0.375-0.917"]])
    one_arc = parse_image([first, ["arc_zigzag_0.500_0.375-0.500"]])
    units = (44.5, 100.7)  # pixels: the painter's 80-140 with some slack (`search.trace.FREE_FORM_UNITS`)
    for poses in ([Pose(-150.0, 120.0, 0.0, 110.0), Pose(120.0, -120.0, 90.0, 120.0)],
                  [Pose(-100.0, 0.0, 60.0, 100.0), Pose(150.0, 100.0, 200.0, 130.0)]):
        target = _target(cusp, poses)
        within = trace_free_form(target, [one_arc], units=units)
        assert same_image(within.program, cusp, ignore_strokes=True)
        assert all(units[0] <= s.u <= units[1] for s in within.starts)


def _arc_sides(program):
    return [{a.angle > 0 for a in shape.actions if a.kind.value == "arc"} for shape in program.shapes]


def test_no_reading_turns_its_arcs_both_ways():
    # a circle of quarter arcs whose first quarter ends in a 150-degree turn, read (as the decoder read an
    # official image) going round the circle and then back along the first quarter, curving the other way:
    # no free-form program does that (the generator's arcs all turn counter-clockwise)
    truth = parse_image([["arc_square_0.500_0.625-0.500", "arc_square_0.500_0.625-0.917",
                          "arc_zigzag_0.500_0.625-0.500", "arc_normal_0.500_0.625-0.500",
                          "arc_zigzag_0.500_0.625-0.500"]])
    misread = parse_image([["arc_square_0.500_0.625-0.500", "arc_zigzag_0.500_0.625-0.500",
                            "arc_normal_0.500_0.625-0.500", "arc_zigzag_0.500_0.625-0.500",
                            "arc_square_0.500_0.375-1.000"]])
    for pose in (Pose(-40.0, -30.0, 35.0, 115.0), Pose(50.0, 20.0, 120.0, 95.0)):
        traced = trace_free_form(_target(truth, [pose]), [misread])
        for program in [traced.program] + [p for p, _ in traced.alternatives]:
            assert all(len(sides) <= 1 for sides in _arc_sides(program)), program
