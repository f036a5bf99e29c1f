import numpy as np

from dsl.types import Action, ImageProgram, Shape, StrokeType
from search.repair import repairs, without_action
from search.retrace import action_paths

LINE, TURNED = Action.line(1.0), Action.line(1.0, 90.0, StrokeType.ZIGZAG)
ARC = Action.arc(0.5, -90.0, 30.0, StrokeType.CIRCLE)


def test_removing_an_action_keeps_the_rest_drawn_in_the_same_directions():
    def direction(path):
        return (path[-1] - path[0]) / np.linalg.norm(path[-1] - path[0])

    for arc in (ARC, Action.arc(0.5, 90.0, -60.0)):  # travelled backwards and forwards
        shape = Shape((LINE, arc, TURNED))
        rest = without_action(shape, 1)
        assert rest.actions == (LINE, TURNED.with_turn(TURNED.turn + arc.turn + arc.angle))
        assert np.allclose(direction(action_paths(shape)[-1]), direction(action_paths(rest)[-1]), atol=1e-6)
    assert without_action(shape, 0).actions[0].turn == 0.0  # the first action removed: the next one starts
    assert without_action(Shape((LINE,)), 0) is None


def test_a_short_line_is_removed_and_its_turn_carried():
    split = Shape((LINE, Action.line(1.0, 180.0), Action.line(0.29, 0.0), ARC))
    repaired = repairs(ImageProgram((split,)))[0]
    assert repaired.shapes[0] == Shape((LINE, Action.line(1.0, 180.0), ARC))


def test_each_shape_is_removed_once():
    a, b = Shape((LINE, ARC, TURNED)), Shape((LINE, TURNED))
    assert repairs(ImageProgram((a, b))) == [ImageProgram((b,)), ImageProgram((a,))]  # nothing short
    assert repairs(ImageProgram((a,))) == []
