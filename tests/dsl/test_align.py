"""Aligning two shapes action by action, modulo start point and direction."""

from __future__ import annotations

from dsl.align import align
from dsl.canonical import canonical_shape, reversed_shape
from dsl.syntax import parse_shape
from dsl.types import Shape, StrokeType

OPEN = parse_shape(["line_normal_1.000-0.500", "arc_zigzag_0.500_0.750-0.750", "line_square_1.000-0.667"])
SQUARE = parse_shape(["line_normal_1.000-0.500", "line_zigzag_1.000-0.750", "line_normal_1.000-0.750",
                      "line_circle_1.000-0.750"])


def changed(shape: Shape, index: int, **fields) -> Shape:
    actions = list(shape.actions)
    action = actions[index]
    if "stroke" in fields:
        action = action.with_stroke(fields["stroke"])
    if "turn" in fields:
        action = action.with_turn(fields["turn"])
    actions[index] = action
    return Shape(tuple(actions))


def test_the_same_drawing_aligns_without_differences_however_it_is_traced():
    for shape in (OPEN, SQUARE):
        for other in (shape, reversed_shape(shape), canonical_shape(shape)):
            assert align(shape, other).cost == 0


def test_a_changed_stroke_is_found_at_its_action_in_the_reference_tracing():
    rule = canonical_shape(SQUARE)
    negative = changed(SQUARE, 1, stroke=StrokeType.TRIANGLE)  # the zigzag side becomes triangles
    [step] = align(rule, negative).differing
    assert step.differences == ("stroke",) and step.other.index == 1
    assert rule.actions[step.reference.index].stroke is StrokeType.ZIGZAG


def test_a_changed_turn_of_an_open_shape_traced_backwards():
    negative = changed(OPEN, 2, turn=-30.0)
    [step] = align(reversed_shape(OPEN), negative).differing
    assert step.differences == ("turn",)
    assert step.reference.index == 1 and step.other.index == 1  # the junction between actions 2 and 3


def test_an_extra_action_is_a_gap():
    longer = Shape(OPEN.actions + (OPEN.actions[0],))
    alignment = align(OPEN, longer)
    assert [s.differences for s in alignment.differing] == [("extra",)]
    assert alignment.differing[0].other.index == 3
