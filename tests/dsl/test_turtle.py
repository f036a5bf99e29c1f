"""The spec's worked examples (§2.3–2.5, Appendix B) pinned."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dsl.syntax import denormalise_arc_angle, denormalise_turn, normalise_arc_angle, normalise_turn, parse_shape
from dsl.turtle import MarkKind, execute_image, execute_shape, round_half, split_arc
from dsl.types import Action, ImageProgram, Pose, Shape, StrokeType


@pytest.mark.parametrize(
    "angle, end, heading",
    [(90, (100, 100), 90), (-90, (-100, 100), -90), (180, (0, 200), 180), (-270, (100, 100), -270)],
)
def test_arc_end_points_and_headings_of_spec_2_4(angle, end, heading):
    geometry = execute_shape(Shape((Action.arc(0.5, angle),)), Pose(0, 0, 0, 200))
    np.testing.assert_allclose(geometry.end_points[-1], end, atol=1e-9)
    assert geometry.headings[-1] == pytest.approx(heading)


def test_turn_comes_before_the_move():
    geometry = execute_shape(Shape((Action.line(1.0, 90.0),)), Pose(0, 0, 0, 100))
    np.testing.assert_allclose(geometry.end_points[-1], (0, 100), atol=1e-9)


def test_arc_split_into_pieces_of_at_most_90_degrees():
    assert split_arc(200) == [90, 90, pytest.approx(20)]
    assert split_arc(-180) == [-90, -90]
    assert split_arc(0) == []


@pytest.mark.parametrize("q, n", [(0.2, 1), (1.49, 1), (1.5, 2), (9.0, 9), (10.588, 11)])
def test_painter_rounding(q, n):
    assert round_half(q) == n


def zigzag_units(action, scale):
    pen = execute_shape(Shape((action,)), Pose(0, 0, 0, scale)).marks
    assert len(pen) == 1 and pen[0].kind is MarkKind.PEN
    return (len(pen[0].points) - 1) // (3 if action.is_line else 4)


def stamp_calls(action, scale):
    marks = execute_shape(Shape((action,)), Pose(0, 0, 0, scale)).marks
    assert all(m.kind is MarkKind.STAMP for m in marks)
    return len(marks)


@pytest.mark.parametrize("scale", [80, 140, 200, 320])
def test_counts_per_length_do_not_depend_on_scale_with_the_magnifier(scale):
    assert zigzag_units(Action.line(1.0, 0, StrokeType.ZIGZAG), scale) == 11
    assert stamp_calls(Action.line(1.0, 0, StrokeType.SQUARE), scale) == 11  # 9 intervals + both ends + repeat
    assert stamp_calls(Action.line(0.5, 0, StrokeType.CIRCLE), scale) == 7  # round½(4.5) = 5 intervals
    assert stamp_calls(Action.arc(0.5, 90, 0, StrokeType.TRIANGLE), scale) == 9  # 7 intervals
    assert zigzag_units(Action.arc(0.5, 90, 0, StrokeType.ZIGZAG), scale) == 8


def test_zigzag_line_first_peak_is_to_the_left_with_amplitude_sqrt3_over_4():
    pen = execute_shape(Shape((Action.line(1.0, 0, StrokeType.ZIGZAG),)), Pose(0, 0, 0, 187)).marks[0].points
    u = 187 / 11
    np.testing.assert_allclose(pen[1], (u / 4, math.sqrt(3) * u / 4), atol=1e-9)
    np.testing.assert_allclose(pen[2], (3 * u / 4, -math.sqrt(3) * u / 4), atol=1e-9)
    np.testing.assert_allclose(pen[-1], (187, 0), atol=1e-9)


def test_zigzag_arcs_end_where_normal_arcs_end():
    for angle in (90.0, -90.0, 135.0, -200.0):
        zig = execute_shape(Shape((Action.arc(0.5, angle, 0, StrokeType.ZIGZAG),)), Pose(5, 7, 30, 150))
        plain = execute_shape(Shape((Action.arc(0.5, angle),)), Pose(5, 7, 30, 150))
        np.testing.assert_allclose(zig.marks[-1].points[-1], plain.end_points[-1], atol=1e-6)


def test_stamp_size_follows_the_magnifier():
    marks = execute_shape(Shape((Action.line(1.0, 0, StrokeType.SQUARE),)), Pose(0, 0, 0, 180)).marks
    side = np.ptp(marks[0].points[:, 0])
    assert side == pytest.approx(13.0)  # 20 * 0.65 at s = 180


def test_normal_arc_uses_the_turtle_chord_rule():
    geometry = execute_shape(Shape((Action.arc(0.5, 90),)), Pose(0, 0, 0, 200))
    radius = 100
    chords = 1 + int(min(11 + radius / 6, 59) * 90 / 360)
    assert len(geometry.marks[0].points) == chords + 1


def test_appendix_b_equilateral_triangle():
    shape = parse_shape(["line_triangle_1.000-0.500", "line_square_1.000-0.833", "line_circle_1.000-0.833"])
    geometry = execute_shape(shape, Pose(0, 0, 0, 200))
    np.testing.assert_allclose(geometry.end_points[1], (200, 0), atol=1e-9)
    np.testing.assert_allclose(geometry.end_points[2], (100, 173.2), atol=0.5)  # 0.833 -> L119.88
    exact = execute_shape(shape_with_turns(shape, [0, 120, 120]), Pose(0, 0, 0, 200))
    np.testing.assert_allclose(exact.end_points[2], (100, 173.205), atol=1e-3)
    np.testing.assert_allclose(exact.end_points[3], (0, 0), atol=1e-9)


def shape_with_turns(shape, turns):
    return Shape(tuple(a.with_turn(t) for a, t in zip(shape.actions, turns)))


@pytest.mark.parametrize(
    "code, turn", [(0.5, 0), (0.583, 29.88), (0.417, -29.88), (0.75, 90), (0.25, -90), (1.0, 180), (0.0, -180)]
)
def test_turn_normalisation_table(code, turn):
    assert denormalise_turn(code) == pytest.approx(turn)
    assert normalise_turn(turn) == pytest.approx(code)


@pytest.mark.parametrize("code, angle", [(0.625, 90), (0.75, 180), (0.875, 270), (1.0, 360), (0.375, -90)])
def test_arc_angle_normalisation_table(code, angle):
    assert denormalise_arc_angle(code) == pytest.approx(angle)
    assert normalise_arc_angle(angle) == pytest.approx(code)


def test_validity_checks_end_points_only():
    inside = execute_shape(Shape((Action.line(1.0),)), Pose(0, 0, 0, 300))
    outside = execute_shape(Shape((Action.line(1.0),)), Pose(100, 0, 0, 300))
    assert inside.valid and not outside.valid


@settings(max_examples=40, deadline=None)
@given(st.floats(-300, 300), st.floats(-300, 300), st.floats(0, 360), st.floats(50, 300))
def test_pose_moves_the_geometry_rigidly(x, y, heading, scale):
    shape = parse_shape(["line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.750", "line_square_0.500-0.333"])
    base = execute_shape(shape, Pose(0, 0, 0, scale))
    moved = execute_image(ImageProgram((shape,)), [Pose(x, y, heading, scale)]).shapes[0]
    h = math.radians(heading)
    rotation = np.array([[math.cos(h), -math.sin(h)], [math.sin(h), math.cos(h)]])
    expected = base.end_points @ rotation.T + (x, y)
    np.testing.assert_allclose(moved.end_points, expected, atol=1e-6)
    assert len(moved.marks) == len(base.marks)
