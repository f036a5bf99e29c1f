import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dsl.canonical import (
    canonical_image,
    canonical_shape,
    from_travel_form,
    image_key,
    is_closed,
    loop_reversals,
    reversed_shape,
    same_image,
    shape_key,
    travel_variants,
)
from dsl.library import load_library
from dsl.syntax import parse_shape
from dsl.turtle import arc_point
from dsl.types import Action, ImageProgram, Shape, StrokeType


def landmarks(shape: Shape) -> np.ndarray:
    """Action end points and arc mid points, drawn from the origin at scale 1."""
    position, heading, points = np.zeros(2), 0.0, [np.zeros(2)]
    for action in shape.actions:
        heading += action.turn
        if action.is_line:
            h = math.radians(heading)
            position = position + action.length * np.array([math.cos(h), math.sin(h)])
        else:
            points.append(arc_point(position, heading, action.radius, action.angle / 2)[0])
            position, heading = arc_point(position, heading, action.radius, action.angle)
        points.append(position)
    return np.array(points)


def rigid_signature(points: np.ndarray) -> np.ndarray:
    """Sorted pairwise distances of a multiset of points: equal for congruent multisets."""
    d = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    return np.sort(d.ravel())


def assert_congruent(a: Shape, b: Shape) -> None:
    """Same landmarks up to a rigid motion. A closed shape's end point repeats its start and is dropped;
    its closing gap (up to CLOSED_TOLERANCE, e.g. 3-decimal library values) may move to another joint."""
    la, lb = landmarks(a), landmarks(b)
    gap = 0.0
    if is_closed(a):
        gap = float(np.hypot(*la[-1]))
        la, lb = la[:-1], lb[:-1]
    np.testing.assert_allclose(rigid_signature(la), rigid_signature(lb), atol=4 * gap + 1e-6)


@pytest.mark.parametrize("variants", [travel_variants, loop_reversals])  # other starts and ways; a loop the other
# way round
@pytest.mark.parametrize("name", list(load_library())[::7])
def test_every_variant_of_a_library_shape_draws_the_same_figure(name, variants):
    shape = load_library()[name].shape
    for variant in variants(shape):
        assert_congruent(shape, from_travel_form(variant))


def test_canonical_form_is_shared_by_rotations_and_reversal_of_a_square():
    square = parse_shape(["line_normal_1.000-0.500", "line_zigzag_0.500-0.750", "line_normal_1.000-0.750",
                          "line_circle_0.500-0.750"])
    assert is_closed(square)
    keys = {shape_key(from_travel_form(v)) for v in travel_variants(square)}
    assert len(keys) == 1
    canonical = canonical_shape(square)
    assert canonical.actions[0].turn == 0.0
    assert_congruent(square, canonical)


def test_open_shape_has_two_variants_and_negative_arcs_reverse_correctly():
    shape = Shape((Action.line(1.0), Action.arc(0.5, -90.0, 30.0), Action.line(0.4, -60.0)))
    variants = travel_variants(shape)
    assert len(variants) == 2
    back = from_travel_form(variants[1])
    assert back.actions[0].length == pytest.approx(0.4)
    assert back.actions[1].angle == pytest.approx(90.0)
    assert_congruent(shape, back)


def test_first_turn_and_shape_order_do_not_matter():
    a = Shape((Action.line(1.0, 0.0), Action.line(0.5, 90.0)))
    b = Shape((Action.line(1.0, 77.0), Action.line(0.5, 90.0)))
    c = Shape((Action.arc(0.5, 180.0),))
    assert image_key(ImageProgram((a, c))) == image_key(ImageProgram((c, b)))
    assert canonical_image(ImageProgram((a, c))) == canonical_image(ImageProgram((c, b)))


def test_strokes_matter_unless_ignored():
    a = Shape((Action.line(1.0, 0.0, StrokeType.ZIGZAG), Action.line(1.0, 90.0)))
    b = a.with_strokes(StrokeType.NORMAL)
    assert not same_image(ImageProgram((a,)), ImageProgram((b,)))
    assert same_image(ImageProgram((a,)), ImageProgram((b,)), ignore_strokes=True)


def test_same_image_tolerates_small_value_noise_but_not_a_different_turn():
    a = Shape((Action.line(1.0), Action.line(1.0, 120.0), Action.line(1.0, 120.0)))
    noisy = Shape((Action.line(0.99), Action.line(1.0, 119.0), Action.line(1.01, 121.0)))
    other = Shape((Action.line(1.0), Action.line(1.0, 90.0), Action.line(1.0, 120.0)))
    assert same_image(ImageProgram((a,)), ImageProgram((noisy,)))
    assert not same_image(ImageProgram((a,)), ImageProgram((other,)))


actions = st.one_of(
    st.builds(Action.line, st.sampled_from([0.3, 0.5, 1.0]), st.sampled_from([0, 30, -60, 90, 120, -150, 180]),
              st.sampled_from(list(StrokeType)[:5])),
    st.builds(Action.arc, st.just(0.5), st.sampled_from([90.0, -90.0, 45.0, 180.0]),
              st.sampled_from([0, 30, -60, 90, 120, -150]), st.sampled_from(list(StrokeType)[:5])),
)
shapes = st.lists(actions, min_size=1, max_size=7).map(lambda drawn: Shape(tuple(drawn)))


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_canonical_form_is_congruent_and_idempotent(shape):
    canonical = canonical_shape(shape)
    assert_congruent(shape, canonical)
    assert shape_key(canonical) == shape_key(shape)
    assert canonical_shape(canonical) == canonical


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_every_variant_has_the_same_key(shape):
    keys = {shape_key(from_travel_form(v)) for v in travel_variants(shape)}
    assert len(keys) == 1


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_a_reversed_shape_draws_the_same_picture_backwards(shape):
    backwards = reversed_shape(shape)
    assert_congruent(shape, backwards)
    assert shape_key(backwards) == shape_key(shape)
    assert [a.stroke for a in backwards.actions] == [a.stroke for a in shape.actions][::-1]
    assert same_image(ImageProgram((reversed_shape(backwards),)), ImageProgram((shape,)), 1e-6, 1e-6)


def test_a_loop_before_a_tail_is_walked_either_way_round():
    # a triangle and then a tail from the joint where it closes: started there, the triangle goes round either way
    way = parse_shape(["line_triangle_1.000-0.500", "line_square_1.000-0.833", "line_square_1.000-0.833",
                       "line_triangle_1.000-0.500"])
    other_way = parse_shape(["line_square_1.000-0.500", "line_square_1.000-0.167", "line_triangle_1.000-0.167",
                             "line_triangle_1.000-0.667"])
    found = [from_travel_form(v) for v in loop_reversals(other_way)]
    assert len(found) == 1 and shape_key(found[0]) == shape_key(way)
    assert [a.stroke for a in found[0].actions] == [a.stroke for a in way.actions]
    assert same_image(ImageProgram((found[0],)), ImageProgram((way,)))
    assert loop_reversals(parse_shape(["line_normal_1.000-0.500", "line_normal_1.000-0.750"])) == []  # no loop
