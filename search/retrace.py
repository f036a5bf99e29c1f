"""Retraced actions: an action drawn entirely over the shape's other actions.

    retraced(shape, index) -> bool
    without_retraced_ends(program) -> ImageProgram

A decoder reading a closed outline often goes round once more: a triangle read as four lines, the fourth
over the first, or a circle as five quarter arcs. The extra action adds no ink, and because the stamps of
its stroke type land on ink that is already there, the render-and-compare score does not object to it
(on official dev_ff, 10 % of the decoder's top readings retrace; dropping their retraced first and last
actions makes 4 % more of the top readings exact). The official generator retraces too, but rarely at an
end of a shape that is not also read wrongly otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from dsl.types import ImageProgram, Shape
from search.settings import RETRACE_TOLERANCE
from search.template import piece


def action_paths(shape: Shape) -> list[np.ndarray]:
    """Each action's centreline at scale 1 (start at the origin, heading 0), in the shape's frame."""
    position, heading, paths = np.zeros(2), 0.0, []
    for action in shape.actions:
        heading += action.turn
        p = piece(action)
        c, s = math.cos(math.radians(heading)), math.sin(math.radians(heading))
        rotation = np.array([[c, -s], [s, c]])
        paths.append(position + p.centreline @ rotation.T)
        position = position + rotation @ p.end
        heading += p.heading
    return paths


def retraced(shape: Shape, index: int, tolerance: float = RETRACE_TOLERANCE) -> bool:
    """Does action `index` of `shape` run entirely over the shape's other actions (within `tolerance`)?"""
    paths = action_paths(shape)
    others = [path for k, path in enumerate(paths) if k != index]
    if not others:
        return False
    rest = np.concatenate(others)
    gaps = np.sqrt(((paths[index][:, None, :] - rest[None, :, :]) ** 2).sum(-1)).min(axis=1)
    return bool(gaps.max() < tolerance)


def without_retraced_ends(program: ImageProgram) -> ImageProgram:
    """`program` with every shape's retraced last and first actions dropped, repeatedly (a shape keeps at
    least one action; a new first action's turn becomes 0, the pose fixes the heading)."""
    shapes = []
    for shape in program.shapes:
        actions = list(shape.actions)
        while len(actions) > 1:
            current = Shape(tuple(actions))
            if retraced(current, len(actions) - 1):
                actions = actions[:-1]
            elif retraced(current, 0):
                actions = [actions[1].with_turn(0.0)] + actions[2:]
            else:
                break
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))
