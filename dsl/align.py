"""Aligning two one-stroke shapes action by action, modulo what an image cannot show.

An image does not show where a one-stroke shape starts or which way it was traced (`dsl.canonical`), so
"action 3 of this shape is action 5 of that one" depends on how the two are laid side by side. The
alignment keeps the reference as it is written (its action i stays action i) and tries the other shape
traced forwards and backwards; when one of them is closed, every start on its loop as well. Actions are
compared in travel form (`dsl.canonical.to_travel_form`): kind, stroke type, length, radius and sweep,
and the turn before the action. The turn into a shape's first action is known only for a closed shape
(the closing junction); otherwise it is not compared. Shapes with different numbers of actions are
aligned with gaps (an action one of them lacks), by edit distance.

The alignment with the fewest differences wins; ties go to the other shape as it is traced (forwards,
from its own start), then backwards, then later starts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from dsl.canonical import Segment, closing_turn, normalise_angle, to_travel_form
from dsl.settings import GAP_COST
from dsl.types import ActionKind, Shape

FIELDS = ("kind", "stroke", "length", "radius", "sweep", "turn")
_closing_turn = functools.lru_cache(maxsize=8192)(closing_turn)  # shapes are laid side by side many times


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How close two actions must be to count as the same."""

    length: float = 0.02  # line length and arc radius, shape units
    angle: float = 2.0  # turn and arc sweep, degrees
    strokes: bool = True  # compare stroke types


@dataclass(frozen=True, slots=True)
class Position:
    """One action of a shape as an alignment traces it."""

    index: int  # the action's index in its shape as written
    segment: Segment  # in travel form, as traced here (curvature negated when traced backwards)
    turn: float | None  # the turn before it, None where the picture does not show one


@dataclass(frozen=True, slots=True)
class Step:
    """One aligned pair: an action of the reference and its counterpart (None on either side: a gap)."""

    reference: Position | None
    other: Position | None
    differences: tuple[str, ...]  # of FIELDS; ("missing",) or ("extra",) for a gap

    @property
    def differs(self) -> bool:
        return bool(self.differences)


@dataclass(frozen=True, slots=True)
class Alignment:
    steps: tuple[Step, ...]
    backwards: bool  # the other shape is traced from its end back to its start
    cost: float

    @property
    def differing(self) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.differs)


def positions(shape: Shape, backwards: bool = False) -> list[Position]:
    """The shape's actions in travel form, traced forwards or backwards, each with the turn before it."""
    segments = to_travel_form(shape)
    closing = _closing_turn(shape)
    turns = [closing] + [s.turn for s in segments[1:]]
    if not backwards:
        return [Position(i, s, t) for i, (s, t) in enumerate(zip(segments, turns))]
    n = len(segments)
    after = turns[1:] + [closing]  # the turn after each action, read backwards it is the turn before
    return [Position(i, segments[i].reversed(0.0), None if after[i] is None else normalise_angle(-after[i]))
            for i in range(n - 1, -1, -1)]


def differences(a: Position, b: Position, tolerance: Tolerance) -> tuple[str, ...]:
    """The fields in which two aligned actions differ beyond the tolerance."""
    x, y = a.segment, b.segment
    found = []
    if x.kind is not y.kind:
        found.append("kind")
    if tolerance.strokes and x.stroke is not y.stroke:
        found.append("stroke")
    if x.kind is y.kind and x.kind is ActionKind.LINE and abs(x.length - y.length) > tolerance.length:
        found.append("length")
    if x.kind is y.kind and x.kind is ActionKind.ARC:
        if abs(x.radius - y.radius) > tolerance.length:
            found.append("radius")
        if abs(x.curvature - y.curvature) > tolerance.angle:
            found.append("sweep")
    if a.turn is not None and b.turn is not None and abs(normalise_angle(a.turn - b.turn)) > tolerance.angle:
        found.append("turn")
    return tuple(found)


def _edit_alignment(reference: list[Position], other: list[Position], tolerance: Tolerance) -> tuple[float, list[Step]]:
    """Needleman-Wunsch: the cheapest pairing of the two sequences in order, gaps allowed. Sequences of one
    length are paired action for action when that costs no more than two gaps (the least any alignment
    with gaps costs them), which skips the table for nearly every pair."""
    n, m = len(reference), len(other)
    if n == m:
        steps = [Step(a, b, differences(a, b, tolerance)) for a, b in zip(reference, other)]
        cost = float(sum(len(s.differences) for s in steps))
        if cost <= 2 * GAP_COST:
            return cost, steps
    cost = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0] = i * GAP_COST
    for j in range(1, m + 1):
        cost[0][j] = j * GAP_COST
    found: dict[tuple[int, int], tuple[str, ...]] = {}
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            found[i, j] = differences(reference[i - 1], other[j - 1], tolerance)
            cost[i][j] = min(cost[i - 1][j - 1] + len(found[i, j]), cost[i - 1][j] + GAP_COST,
                             cost[i][j - 1] + GAP_COST)
    steps, i, j = [], n, m
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + len(found[i, j]):
            steps.append(Step(reference[i - 1], other[j - 1], found[i, j]))
            i, j = i - 1, j - 1
        elif i and cost[i][j] == cost[i - 1][j] + GAP_COST:
            steps.append(Step(reference[i - 1], None, ("missing",)))
            i -= 1
        else:
            steps.append(Step(None, other[j - 1], ("extra",)))
            j -= 1
    return cost[n][m], steps[::-1]


def _rotations(items: list[Position], closed: bool) -> list[list[Position]]:
    return [items[j:] + items[:j] for j in range(len(items))] if closed and items else [items]


def _each_alignment(reference: Shape, other: Shape, tolerance: Tolerance):
    """Every way of laying `other` beside `reference`, in the order of the module docstring."""
    ref_closed, other_closed = _closing_turn(reference) is not None, _closing_turn(other) is not None
    rotate_reference = ref_closed  # both closed: turning the reference round covers every start
    ref_positions = positions(reference)
    for backwards in (False, True):
        traced = positions(other, backwards)
        for ref_items in _rotations(ref_positions, rotate_reference):
            for other_items in _rotations(traced, other_closed and not rotate_reference):
                cost, steps = _edit_alignment(ref_items, other_items, tolerance)
                yield Alignment(_in_reference_order(steps), backwards, cost)


def alignments(reference: Shape, other: Shape, tolerance: Tolerance = Tolerance()) -> list[Alignment]:
    """Every way of laying `other` beside `reference`, cheapest first (ties in the order of the module
    docstring). Steps follow the reference's own order of actions, from its first."""
    return sorted(_each_alignment(reference, other, tolerance), key=lambda a: a.cost)


def _in_reference_order(steps: list[Step]) -> tuple[Step, ...]:
    """The steps starting from the reference's first action (a rotated reference is turned back)."""
    first = next((k for k, s in enumerate(steps) if s.reference is not None and s.reference.index == 0), 0)
    return tuple(steps[first:] + steps[:first])


def align(reference: Shape, other: Shape, tolerance: Tolerance = Tolerance()) -> Alignment:
    """The cheapest alignment of `other` with `reference` (the first found without differences, if any)."""
    best = None
    for alignment in _each_alignment(reference, other, tolerance):
        if best is None or alignment.cost < best.cost:
            best = alignment
        if best.cost == 0:
            break
    return best
