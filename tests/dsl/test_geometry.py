import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dsl.geometry import (
    Piece,
    is_mirror_symmetric,
    is_point_symmetric,
    meeting_points,
    neck_pinch,
    polygon_area,
    principal_angle,
    shape_pieces,
    width_and_length,
)
from dsl.stroke_graph import StrokeGraph
from dsl.types import Action, Shape

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
HOURGLASS = np.array([[0.0, 0.0], [2.0, 0.0], [1.2, 1.0], [2.0, 2.0], [0.0, 2.0], [0.8, 1.0]])


def rigid(points: np.ndarray, angle: float, shift: tuple[float, float], scale: float = 1.0) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return scale * points @ np.array([[c, s], [-s, c]]) + np.array(shift)


def test_area_width_and_length_of_a_square():
    assert polygon_area(SQUARE) == pytest.approx(1.0)
    assert polygon_area(SQUARE[::-1]) == pytest.approx(-1.0)
    width, length = width_and_length(SQUARE)
    assert width == pytest.approx(1.0) and length == pytest.approx(math.sqrt(2))


def test_two_lines_cross_once_and_a_tangent_line_touches_a_circle():
    a = Piece(np.array([0.0, 0.0]), np.array([2.0, 0.0]))
    b = Piece(np.array([1.0, -1.0]), np.array([1.0, 1.0]))
    hits = meeting_points(a, b, 1e-3)
    assert len(hits) == 1 and hits[0][0] == pytest.approx(0.5) and hits[0][1] == pytest.approx(0.5)
    circle = Piece(np.array([1.0, 1e-4]), np.array([1.0, 1e-4]), np.array([1.0, 1.0]), 1.0 - 1e-4, 2 * math.pi)
    touching = meeting_points(a, circle, 1e-3)
    assert touching and np.allclose(touching[0][2], [1.0, 0.0], atol=1e-3)


def test_arc_pieces_follow_the_turtle():
    (arc,) = shape_pieces(Shape((Action.arc(1.0, 90.0),)))
    assert np.allclose(arc.centre, [0.0, 1.0]) and np.allclose(arc.end, [1.0, 1.0])
    assert math.degrees(arc.direction(0.0)) == pytest.approx(0.0)
    assert math.degrees(arc.direction(1.0)) == pytest.approx(90.0)
    (backwards,) = shape_pieces(Shape((Action.arc(1.0, -90.0),)))
    assert np.allclose(backwards.end, [-1.0, 1.0])  # travels backwards around the left-hand centre
    assert math.degrees(backwards.direction(0.0)) % 360 == pytest.approx(180.0)


def dense(poly: np.ndarray, per_side: int = 40) -> np.ndarray:
    return np.concatenate([np.linspace(p, q, per_side, endpoint=False) for p, q in zip(poly, np.roll(poly, -1, 0))])


def test_symmetries():
    isosceles = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0]])
    scalene = np.array([[0.0, 0.0], [2.0, 0.0], [0.4, 3.0]])
    parallelogram = np.array([[0.0, 0.0], [2.0, 0.0], [2.6, 1.0], [0.6, 1.0]])
    assert is_mirror_symmetric(dense(isosceles), isosceles, 0.02)
    assert not is_mirror_symmetric(dense(scalene), scalene, 0.02)
    assert not is_mirror_symmetric(dense(parallelogram), parallelogram, 0.02)
    assert is_point_symmetric(dense(parallelogram), 0.02)
    assert not is_point_symmetric(dense(isosceles), 0.02)


def test_an_hourglass_has_a_neck_and_a_square_has_none():
    assert neck_pinch(HOURGLASS, 0.15) > 0.3
    assert neck_pinch(SQUARE, 0.15) == 0.0


def test_a_bow_tie_has_one_crossing_and_two_faces():
    d = math.sqrt(8.0)  # (0,0) -> (2,2) -> (2,0) -> (0,2) -> (0,0)
    shape = Shape((Action.line(d, 45.0), Action.line(2.0, -135.0), Action.line(d, -135.0), Action.line(2.0, 135.0)))
    graph = StrokeGraph(shape_pieces(shape), 0.02)
    assert len(graph.crossings) == 1 and np.allclose(graph.nodes[graph.crossings[0]], [1.0, 1.0])
    assert sorted(round(f.area, 6) for f in graph.faces) == [1.0, 1.0]
    assert all(len(f.sides) == 3 for f in graph.faces)


coordinates = st.floats(-5.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(angle=st.floats(0.0, 2 * math.pi), dx=coordinates, dy=coordinates, scale=st.floats(0.2, 5.0))
def test_measures_follow_rigid_motions_and_scaling(angle, dx, dy, scale):
    moved = rigid(HOURGLASS, angle, (dx, dy), scale)
    assert polygon_area(moved) == pytest.approx(polygon_area(HOURGLASS) * scale**2, rel=1e-6)
    width, length = width_and_length(moved)
    assert width == pytest.approx(2.0 * scale, rel=1e-6) and length == pytest.approx(math.sqrt(8) * scale, rel=1e-6)
    assert neck_pinch(moved, 0.15) == pytest.approx(neck_pinch(HOURGLASS, 0.15), rel=0.05)


@settings(max_examples=60, deadline=None)
@given(angle=st.floats(0.0, 2 * math.pi), stretch=st.floats(1.5, 4.0))
def test_principal_axis_turns_with_the_polygon(angle, stretch):
    rectangle = SQUARE * np.array([stretch, 1.0])
    turned = (principal_angle(rigid(rectangle, angle, (1.0, 2.0))) - angle) % math.pi
    assert min(turned, math.pi - turned) < 1e-6


@settings(max_examples=40, deadline=None)
@given(sides=st.integers(3, 9), angle=st.floats(0.0, 2 * math.pi), dx=coordinates)
def test_regular_polygons_are_symmetric_both_ways_when_even(sides, angle, dx):
    corners = np.array([[math.cos(2 * math.pi * k / sides), math.sin(2 * math.pi * k / sides)] for k in range(sides)])
    corners = rigid(corners, angle, (dx, 0.0))
    outline = dense(corners, 30)
    assert is_mirror_symmetric(outline, corners, 0.02)
    assert is_point_symmetric(outline, 0.02) == (sides % 2 == 0)
