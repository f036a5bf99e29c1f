"""Decoder readings with one kind of stray part removed: the programs the free-form tracer is seeded with
when the decoder's own reading led it nowhere (`solver.reading.traced.traced_off_grid`).

    repairs(program) -> list[ImageProgram]

The decoder reading a free-form image sometimes adds a part that draws no ink of its own, and the rest of
its reading is right. Its starts then seed the tracer (`search.trace`) at a wrong unit or place, and the
trace does not cover the ink. Two kinds of stray part, each removed in one repair:

  * short actions: a line shorter than SHORT_LINE or an arc of less than SHORT_ARC degrees (the free-form
    painter draws lines of length 1 and quarter arcs) - a line read as two, one of them short;
  * a whole shape, of an image read as two or more (a shape drawn over the other's ink).

(Removing the first or the last action of a shape as well changed no official dev_ff or tuning-set image.)

The heading after a removed action is kept: its turn, and an arc's change of heading, are added to the turn
of the action after it, so the rest of the shape is drawn as before.
"""

from __future__ import annotations

from dsl.types import Action, ActionKind, ImageProgram, Shape

from search.settings import SHORT_ARC, SHORT_LINE


def without_action(shape: Shape, index: int) -> Shape | None:
    """`shape` without action `index`, the actions after it drawn in the same directions; None if it was
    the only one."""
    actions = list(shape.actions)
    removed = actions.pop(index)
    if not actions:
        return None
    if index == 0:
        actions[0] = actions[0].with_turn(0.0)
    elif index < len(actions):
        heading = removed.turn + (removed.angle if removed.kind is ActionKind.ARC else 0.0)
        actions[index] = actions[index].with_turn(actions[index].turn + heading)
    return Shape(tuple(actions))


def is_short(action: Action) -> bool:
    """A line shorter than SHORT_LINE or an arc of less than SHORT_ARC degrees."""
    if action.kind is ActionKind.LINE:
        return action.length < SHORT_LINE
    return abs(action.angle) < SHORT_ARC


def without_short_actions(shape: Shape) -> Shape:
    """`shape` without its short actions (`is_short`), one at a time, first first; never empty."""
    while len(shape.actions) > 1:
        short = [i for i, a in enumerate(shape.actions) if is_short(a)]
        if not short:
            break
        shape = without_action(shape, short[0])
    return shape


def repairs(program: ImageProgram) -> list[ImageProgram]:
    """`program` with its short actions removed (if it has any), then with each of its shapes removed (if it
    has two or more)."""
    shapes = list(program.shapes)
    out = []
    shortened = [without_short_actions(s) for s in shapes]
    if shortened != shapes:
        out.append(ImageProgram(tuple(shortened)))
    if len(shapes) > 1:
        out += [ImageProgram(tuple(shapes[:i] + shapes[i + 1:])) for i in range(len(shapes))]
    return out
