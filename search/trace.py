"""The free-form tracer: follow the ink with the free-form generator's moves, one action at a time.

    trace_free_form(target, programs) -> Traced | None

Every action of a free-form positive is a line of length 1 or a quarter arc of radius 0.5, after a turn
from the turn set (spec §3.2); a negative changes one action within the same grid. So once the turtle's
start, travel direction and unit are known, reading a free-form image is a walk: from where the turtle
is, only 11 turns x 3 moves (a line, an arc to the left, an arc to the right when the shape is traced
backwards) can be next, and the right one runs along the ink. The decoder's own readings go wrong on
whole stretches (an action too many or too few, often with another error), but their start points,
directions and units are nearly always right; the tracer starts from them.

Per start (the forward and the backward start of every shape of the decoder's best readings,
`dsl.walk.variant_starts`, with their poses fitted): a beam search over the moves
(`trace_kernels.trace_beam`). A move is allowed only if it runs along ink (mean distance to the ink at most
MAX_FORWARD units); a partial trace is scored by

    J = FORWARD_WEIGHT x sum of its moves' mean distances to the ink (units) + ACTION_COST x actions
        + DEVIATION_COST x moves off the grammar of positive shapes - share of ink covered

(an ink sample is covered when a move passes within TRACE_REACH units of it). Every partial trace is a
candidate shape. The image's reading is the candidate, or the pair of candidates from different shapes,
with the least J (SHAPE_COST per shape, OVERLAP_COST x the share of ink both cover), where the decoder's
own top reading walked from its start competes as a candidate too. Extra actions over ink already
drawn cover nothing and cost ACTION_COST each, so the tracer prefers the shortest walk that draws the
image: the failure of the pixel score, which does not object to retracing, does not arise. A positive
shape is a chain of the generator's moves, so its travel-form turns are 0, 90 or 120, all to one side,
and its arcs turn to that side with no turn before them (`_grammar`); a negative breaks this once, but
never turns an arc the other way: a walk's arcs all turn to one side (ARCS_AGREE; the off-grid gate's quick
first trace, `solver.reading.traced`, walks both ways).

When no reading covers FULL_COVERAGE of the ink (the decoder read the unit wrongly), the first reading's
starts and both ends of every ink part (`search.paths.ink_ends`) are traced again at the painter's units
(UNITS); then the poses of the best readings are fitted and traced once more, since a pose fitted to a
wrong reading is a little off and a walk drifts off the ink by its end.

A shape of a few actions read at the wrong unit can still cover its ink: a right angle read as a line, a
quarter arc and a line at two thirds of its unit cuts the corner but covers 98 % of it. So every traced
shape of up to MULTIPLE_MAX_ACTIONS actions is traced again from its start at 1.5 and 2/3 of its unit. A
reading found so replaces the first only if its centrelines lie closer to the ink (`search.paths.chamfer`)
and do not draw the same path (`search.paths.path_gap`): three lines in a row are also two lines at 1.5
times the unit, which the tracer, blind to strokes, would prefer for having fewer actions (on generated
free-form problems, seed 4242, the decoder's cut was right in 4 of 5 such images).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dsl.canonical import Segment, from_travel_form, same_image, shape_key
from dsl.types import ActionKind, ImageProgram, StrokeType
from dsl.walk import State, variant_starts, walk
from search import trace_kernels
from search.paths import centrelines, chamfer, ink_ends, path_gap
from search.pose import fit
from search.settings import (ACTION_COST, ARCS_AGREE, BEAM, DECODER_BONUS, DEVIATION_COST, FORWARD_WEIGHT,
                             FREE_FORM_UNITS, FULL_COVERAGE, GRID_TOLERANCE, MAX_ACTIONS, MAX_FORWARD, MAX_SAMPLES,
                             MULTIPLE_MAX_ACTIONS, OVERLAP_COST, RANKED, READINGS, REFITTED, SAME_PATH, SHAPE_COST,
                             START_TURNS, TRACE_CAP, TRACE_POINTS, TRACE_REACH, UNITS, UNIT_MULTIPLES)
from search.template import Target, resample, template

TURNS = (0.0, 30.0, -30.0, 60.0, -60.0, 90.0, -90.0, 120.0, -120.0, 150.0, -150.0)  # spec §3.2
MOVES = ((ActionKind.LINE, 1.0, 0.0, 0.0), (ActionKind.ARC, 0.0, 0.5, 90.0), (ActionKind.ARC, 0.0, 0.5, -90.0))


def _moves() -> tuple[list[Segment], np.ndarray, np.ndarray]:
    segments, points, ends = [], [], []
    for turn in TURNS + START_TURNS:
        for kind, length, radius, curvature in MOVES:
            path, end = walk(State(0.0, 0.0, 0.0, 1.0), kind, turn, length, radius, curvature)
            points.append(resample(path, count=TRACE_POINTS))
            segments.append(Segment(kind, StrokeType.NORMAL, length, radius, curvature, turn))
            ends.append((end.x, end.y, end.theta))
    return segments, np.ascontiguousarray(points), np.array(ends)


SEGMENTS, LOCAL, ENDS = _moves()


def _grammar(seg: Segment) -> tuple[int, bool]:
    """(orientation the move implies: +1 left, -1 right, 0 either; whether it is off the positives' grammar).
    A positive shape is a chain of the generator's moves, each starting without a turn: its travel-form
    turns are 0, 90 (squares, right angles) or 120 (triangles), all to one side, and its arcs turn to
    that side without a turn before them; traced backwards, everything turns to the other side."""
    if seg.kind is ActionKind.LINE:
        if seg.turn == 0.0:
            return 0, False
        return int(math.copysign(1, seg.turn)), abs(seg.turn) not in (90.0, 120.0)
    return int(math.copysign(1, seg.curvature)), seg.turn != 0.0


GRID = len(TURNS) * len(MOVES)  # SEGMENTS[:GRID] are the grid moves, the rest first moves from an ink end
GRAMMAR = [_grammar(seg if k < GRID else seg.with_turn(0.0)) for k, seg in enumerate(SEGMENTS)]
GRAMMAR_SIDE = np.array([side for side, _ in GRAMMAR])
GRAMMAR_OFF = np.array([int(off) for _, off in GRAMMAR])
ARC_SIDE = np.array([int(math.copysign(1, seg.curvature)) if seg.kind is ActionKind.ARC else 0 for seg in SEGMENTS])
FIRST = np.array([k for k, s in enumerate(SEGMENTS[:GRID]) if s.turn == 0.0])
FIRST_FROM_END = np.concatenate([FIRST, np.arange(GRID, len(SEGMENTS))])
ALL = np.arange(GRID)
LOCAL_FIRST, LOCAL_FIRST_FROM_END, LOCAL_ALL = (np.ascontiguousarray(LOCAL[m]) for m in (FIRST, FIRST_FROM_END, ALL))
MOVE_TABLE = np.column_stack([GRAMMAR_SIDE, GRAMMAR_OFF, ENDS]).astype(np.float64)  # per move: side, off, end
COSTS = np.array([FORWARD_WEIGHT, ACTION_COST, DEVIATION_COST])  # the weights of J (`_cost`)


def _cost(forward, actions, deviations):
    """A walk's cost before the ink it covers is subtracted (numbers or arrays)."""
    return FORWARD_WEIGHT * forward + ACTION_COST * actions + DEVIATION_COST * deviations


@dataclass(frozen=True, slots=True)
class Walk:
    """A partial trace: its moves (indices into SEGMENTS), the turtle after them, the summed forward
    distances and the ink samples covered."""

    moves: tuple[int, ...]
    x: float
    y: float
    theta: float
    forward: float
    covered: np.ndarray
    side: int = 0  # the orientation its moves so far imply (0: none yet)
    deviations: int = 0  # moves off the positives' grammar (a negative has one)
    decoded: bool = False  # the decoder's own reading, walked
    arc_side: int = 0  # the side its arcs turn to (0: no arc yet; ARCS_AGREE)

    def cost(self) -> float:
        return _cost(self.forward, len(self.moves), self.deviations) - (DECODER_BONUS if self.decoded else 0.0)

    def segments(self) -> list[Segment]:
        return [SEGMENTS[m] for m in self.moves]


@dataclass(frozen=True, slots=True)
class Traced:
    """The tracer's reading: the program (normal strokes), its score J and the share of ink it covers,
    the starts (crop frame) of its shapes, and the next best readings."""

    program: ImageProgram
    score: float
    coverage: float
    starts: tuple[State, ...]
    alternatives: tuple[tuple[ImageProgram, float], ...]
    decoded: bool = False  # the decoder's own reading, walked, is the best


class _Ink:
    """The image as the tracer sees it: distance transform and coverage samples, crop frame."""

    def __init__(self, target: Target, arcs_agree: bool) -> None:
        self.target = target
        self.arcs_agree = arcs_agree  # walks' arcs all turn one way (ARCS_AGREE)
        self.dt = np.ascontiguousarray(target.dt)
        points = target.ink_points
        self.samples = np.ascontiguousarray(points[:: max(1, int(math.ceil(len(points) / MAX_SAMPLES)))])


def _advance(w: Walk, move: int, u: float, forward: float, new: np.ndarray) -> Walk:
    ex, ey, etheta = ENDS[move]
    c, s = math.cos(w.theta), math.sin(w.theta)
    side, off = GRAMMAR[move]
    deviations = w.deviations + int(off) + int(side != 0 and w.side != 0 and side != w.side)
    return Walk(
        w.moves + (move,), w.x + u * (c * ex - s * ey), w.y + u * (s * ex + c * ey), w.theta + etheta,
        w.forward + forward, w.covered | new, w.side or side, deviations, w.decoded, w.arc_side or int(ARC_SIDE[move]),
    )


def trace_shape(ink: _Ink, start: State, beam: int = BEAM, from_end: bool = False,
                top: int | None = None) -> list[Walk]:
    """Beam search from `start` (crop frame): every partial trace kept on the way, best first (the `top` best). Per
    step every allowed move of every walk of the frontier is scored (J, the module docstring) and the `beam` best
    whose ends differ (3 px, 10 degrees, 3 ink samples covered) are kept (`trace_kernels.trace_beam`, compiled whole).
    `from_end`: the start's heading is only estimated, the first move may turn up to 30 degrees."""
    local_first, first = (LOCAL_FIRST_FROM_END, FIRST_FROM_END) if from_end else (LOCAL_FIRST, FIRST)
    score, moves, counts, states, covered, ints = trace_kernels.trace_beam(
        local_first, first, LOCAL_ALL, ALL, np.array([start.x, start.y, start.theta]), start.u, ink.dt, ink.samples,
        TRACE_CAP, MAX_FORWARD, TRACE_REACH, MOVE_TABLE, ARC_SIDE, COSTS, ink.arcs_agree, beam, MAX_ACTIONS,
    )
    order = np.argsort(score, kind="stable")[:top]  # by score, ties in the order kept
    return [Walk(tuple(moves[r, :counts[r]].tolist()), float(states[r, 0]), float(states[r, 1]), float(states[r, 2]),
                 float(states[r, 3]), covered[r], int(ints[r, 0]), int(ints[r, 1]), False, int(ints[r, 2]))
            for r in order.tolist()]


def follow(ink: _Ink, start: State, segments: list[Segment], decoded: bool = True) -> Walk | None:
    """The walk of a given grid reading from `start` (None if a segment is not a grid move, or if an arc turns
    the other way from the reading's arcs where the walks' arcs must agree)."""
    w = Walk((), start.x, start.y, start.theta, 0.0, np.zeros(len(ink.samples), dtype=np.bool_), decoded=decoded)
    for i, seg in enumerate(segments):
        move = _move_index(seg, first=i == 0)
        if move is None or (ink.arcs_agree and w.arc_side * ARC_SIDE[move] < 0):  # not a grid move; an arc turning
            # the other way from the reading's arcs (ARCS_AGREE: the reading is no free-form program)
            return None
        forward, new = trace_kernels.trace_step(
            LOCAL[move:move + 1], w.x, w.y, w.theta, start.u, ink.dt, ink.samples, w.covered, TRACE_CAP, np.inf,
            TRACE_REACH,
        )
        w = _advance(w, move, start.u, float(forward[0]), new[0])
    return w


def _move_index(seg: Segment, first: bool) -> int | None:
    length_tol, angle_tol = GRID_TOLERANCE
    for k, move in enumerate(SEGMENTS[:GRID]):
        if move.kind is not seg.kind or abs(move.turn - (0.0 if first else seg.turn)) > angle_tol:
            continue
        if seg.kind is ActionKind.LINE and abs(seg.length - move.length) <= length_tol:
            return k
        if (seg.kind is ActionKind.ARC and abs(seg.radius - move.radius) <= length_tol
                and abs(seg.curvature - move.curvature) <= angle_tol):
            return k
    return None


def _turned(start: State, w: Walk) -> State:
    """The state a walk's program starts from: `start` turned by its first move (a first move from an end of
    the ink may turn; the program's first action does not)."""
    return State(start.x, start.y, start.theta - math.radians(SEGMENTS[w.moves[0]].turn), start.u)


def _crop_state(state: State, target: Target) -> State:
    r0, c0 = target.origin
    return State(state.x - c0, state.y - r0, state.theta, state.u)


def starts(program: ImageProgram, target: Target) -> list[list[tuple[list[Segment], State]]]:
    """Per shape of `program`, its forward and backward travel forms with their start states (crop frame),
    the poses fitted to the image (once per image and program: the tracer and
    `search.trace_readout.with_decoded_strokes` both ask for the decoded reading's)."""
    key = ("trace starts", program)
    if key not in target.memo:
        placements, _ = fit([template(s) for s in program.shapes], target)
        out = []
        for shape, place in zip(program.shapes, placements):
            variants = variant_starts(shape, place.pose(target))[:2]
            out.append([(segments, _crop_state(state, target)) for segments, state in variants])
        target.memo[key] = out
    return target.memo[key]


def _distinct(programs: list[ImageProgram], limit: int) -> list[ImageProgram]:
    out: list[ImageProgram] = []
    for p in programs:
        if all(not same_image(p, q, 0.05, 5.0) for q in out):
            out.append(p)
        if len(out) >= limit:
            break
    return out


def arcs_agree(program: ImageProgram) -> bool:
    """Whether every shape's arcs turn to one side, as every free-form shape's do (ARCS_AGREE)."""
    return all(len({a.angle > 0 for a in shape.actions if a.kind is ActionKind.ARC}) <= 1 for shape in program.shapes)


def trace_free_form(
    target: Target, programs: list[ImageProgram], readings: int = READINGS, retry_from: float = 0.0,
    multiples: bool = True, units: tuple[float, float] | None = None, arcs_agree: bool | None = None,
) -> Traced | None:
    """The free-form program that draws `target`, traced from the starts of the decoder's best distinct
    `programs` (best first; the first also competes as it is); with `multiples`, every traced shape of up to
    MULTIPLE_MAX_ACTIONS actions is traced again from its start at UNIT_MULTIPLES of its unit. `units`
    (pixels per unit, low and high): only walks at units in this range are read, if there are any.
    `arcs_agree` (default ARCS_AGREE): the walks' arcs all turn one way. None if nothing can be traced."""
    ink = _Ink(target, ARCS_AGREE if arcs_agree is None else arcs_agree)
    if len(ink.samples) == 0 or not programs:
        return None
    traced, walks, origin = _trace(ink, target, programs, readings, retry_from, units)
    if traced is None or not (multiples and UNIT_MULTIPLES):
        return traced
    for shape, state in zip(traced.program.shapes, traced.starts):  # a shape of few actions read at the wrong
        # unit still covers its ink: it is traced again from its start at other units
        if len(shape.actions) > MULTIPLE_MAX_ACTIONS:
            continue
        for m in UNIT_MULTIPLES:
            seed = State(state.x, state.y, state.theta, state.u * m)
            if FREE_FORM_UNITS[0] <= seed.u <= FREE_FORM_UNITS[1]:
                found = trace_shape(ink, seed, top=15)
                walks += found
                origin += [seed] * len(found)
    other = _best(walks, origin, ink, units)
    if same_image(other.program, traced.program, 0.02, 2.0):
        return traced
    ours, theirs = centrelines(traced.program, traced.starts), centrelines(other.program, other.starts)
    if path_gap(ours, theirs) <= SAME_PATH:  # the same path cut into other actions: the tracer, blind to
        # strokes, prefers fewer; the reading at the decoder's units is kept
        return traced
    return other if chamfer(theirs, target) < chamfer(ours, target) else traced


def _trace(
    ink: _Ink, target: Target, programs: list[ImageProgram], readings: int, retry_from: float, units: tuple | None
) -> tuple:
    """`trace_free_form`'s reading at the units of the decoder's readings (and of the painter, when they do
    not cover the ink), with the walks ranked for it and their origins."""
    walks: list[Walk] = []
    origin: list[State] = []
    seeds: list[State] = []
    first_seeds = 0
    for r, program in enumerate(_distinct(programs, readings)):
        for shape_starts in starts(program, target):
            for v, (segments, state) in enumerate(shape_starts):
                if r == 0 and v == 0:
                    walked = follow(ink, state, segments)
                    if walked is not None:
                        walks.append(walked)
                        origin.append(state)
                if any(math.hypot(state.x - q.x, state.y - q.y) < 3.0 and math.cos(state.theta - q.theta) > 0.95
                       for q in seeds):
                    continue
                seeds.append(state)
                found = trace_shape(ink, state, top=15)
                walks += found
                origin += [state] * len(found)
        first_seeds = first_seeds or len(seeds)
    if not walks:
        return None, walks, origin
    best = first = _best(walks, origin, ink, units)
    if retry_from <= best.coverage < FULL_COVERAGE:  # the unit read wrongly: the first reading's starts and the ends of
        # the ink traced again at the painter's units
        ends = ink_ends(target)
        for state in seeds[:first_seeds] + ends:
            for u in UNITS:
                found = trace_shape(ink, State(state.x, state.y, state.theta, u), from_end=state in ends, top=15)
                walks += found
                origin += [_turned(State(state.x, state.y, state.theta, u), w) for w in found]
        best = _best(walks, origin, ink, units)
    # the poses of the best readings fitted to the image, and traced again from there: a seed's pose fitted
    # to a wrong reading is a little off, and a walk drifts off the ink by its end
    if best.decoded:  # the decoder's reading walked from its own fitted pose is the best: nothing to refit
        return best, walks, origin
    best_readings = [best.program] + [p for p, _ in best.alternatives[:REFITTED - 1]] + [first.program]
    refitted = _distinct(best_readings, REFITTED + 1)
    for program in refitted:  # (the first round's best too: it may only have drifted)
        for shape_starts in starts(program, target):
            for segments, state in shape_starts:
                found = [w for w in [follow(ink, state, segments, decoded=False)] if w is not None]
                found += trace_shape(ink, state, top=15)
                walks += found
                origin += [state] * len(found)
    return _best(walks, origin, ink, units), walks, origin


def _best(walks: list[Walk], origin: list[State], ink: _Ink, units: tuple | None = None) -> Traced:
    if units is not None:
        within = [k for k, state in enumerate(origin) if units[0] <= state.u <= units[1]]
        if within:
            walks, origin = [walks[k] for k in within], [origin[k] for k in within]
    covered = np.array([w.covered for w in walks], dtype=float)
    k = covered.shape[1]
    base = np.array([w.cost() + SHAPE_COST for w in walks])
    share = covered.sum(1) / k
    both = covered @ covered.T / k
    single = base - share
    pair = base[:, None] + base[None, :] - (share[:, None] + share[None, :] - both) + OVERLAP_COST * both
    np.fill_diagonal(pair, np.inf)
    n = len(walks)
    scores = np.concatenate([single, pair.ravel()])
    head = min(len(scores), RANKED)  # only the best few are ever looked at
    order = np.argpartition(scores, head - 1)[:head]
    order = order[np.lexsort((order, scores[order]))]  # by score, ties by position (deterministic)
    readings: list[tuple[ImageProgram, float, tuple[int, ...]]] = []
    shapes: dict[int, tuple] = {}  # walk -> (its shape, the shape's canonical key), made once per walk
    seen: set[tuple] = set()  # the canonical keys of the readings kept (walks lie on the grid: equal keys are
    # equal drawings)
    for flat in order:
        score = float(scores[flat])
        members = (int(flat),) if flat < n else divmod(int(flat) - n, n)
        for m in members:
            if m not in shapes:
                shape = from_travel_form(walks[m].segments())
                shapes[m] = (shape, shape_key(shape))
        key = tuple(sorted(shapes[m][1] for m in members))
        if key in seen:
            continue
        seen.add(key)
        readings.append((ImageProgram(tuple(shapes[m][0] for m in members)), score, members))
        if len(readings) > 3:
            break
    program, score, members = readings[0]
    coverage = float(np.any(covered[list(members)] > 0, axis=0).mean())
    return Traced(
        program, score, coverage, tuple(origin[m] for m in members), tuple((p, s) for p, s, _ in readings[1:]),
        all(walks[m].decoded for m in members),
    )
