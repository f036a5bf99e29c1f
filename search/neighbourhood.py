"""Typed neighbourhoods of a candidate program: the programs one edit away that the DSL's types allow.

Structural edits (they move the centreline, so the pose is refitted):
  turn        the turn before action i >= 1 moved to a neighbouring value of the turn grid, or negated;
  kind        a line replaced by an arc or back, with the free-form values (length 1 / radius 0.5, 90 deg);
  snap        every value of a shape snapped to the free-form grid or to the library's values;
  delete      action i removed (its turn kept by the next action, or dropped);
  insert      a free-form line or arc inserted at position i with any free-form turn;
  library     a whole library shape the shape resembles (`search.matching.match_shape`);
  split/merge one shape cut in two at an action, or two shapes joined into one.
Stroke edits (the centreline stays): action i drawn with another stroke type (`stroke_variants`).

Each edit carries a prior cost in the units of the score (pixels of chamfer distance), so that an edit
is only taken when the image asks for it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from dsl.canonical import canonical_shape, from_travel_form, normalise_angle, shape_key, to_travel_form, travel_variants
from dsl.jit import stored_arrays
from dsl.library import load_library
from dsl.types import DATASET_STROKE_TYPES, Action, ActionKind, ImageProgram, Shape, StrokeType

from search.settings import EDIT_COST, MISSING_ACTION_COST

FREE_FORM_TURNS = tuple(float(t) for t in range(-150, 181, 30))
FREE_FORM_LINE = 1.0
FREE_FORM_RADIUS, FREE_FORM_ANGLE = 0.5, 90.0


@dataclass(frozen=True, slots=True)
class Edit:
    kind: str
    where: tuple[int, ...] = ()

    @property
    def cost(self) -> float:
        return EDIT_COST[self.kind]


@functools.cache
def library_grids() -> dict[str, np.ndarray]:
    """The values the human-designed shapes use: line lengths, arc angles, radii, turns."""
    lengths, angles, radii, turns = set(), set(), set(), set()
    for entry in load_library().values():
        for action in entry.shape.actions:
            turns.add(round(action.turn, 3))
            if action.kind is ActionKind.LINE:
                lengths.add(round(action.length, 4))
            else:
                radii.add(round(action.radius, 4))
                angles.add(round(action.angle, 3))
    return {name: np.array(sorted(v)) for name, v in
            (("length", lengths), ("angle", angles), ("radius", radii), ("turn", turns))}


def snap(value: float, grid: np.ndarray | tuple[float, ...]) -> float:
    grid = np.asarray(grid)
    return float(grid[int(np.argmin(np.abs(grid - value)))])


def _snap_turn(turn: float, grid) -> float:
    turn = normalise_angle(turn)
    return 180.0 if abs(abs(turn) - 180.0) < 1e-6 else snap(turn, grid)


def free_form_action(kind: ActionKind, turn: float, stroke: StrokeType, sign: float = 1.0) -> Action:
    """A free-form line or arc; `sign` -1 gives the arc traced backwards (angle -90 degrees), as free-form
    arcs read in the opposite direction appear in canonical programs."""
    if kind is ActionKind.LINE:
        return Action.line(FREE_FORM_LINE, turn, stroke)
    return Action.arc(FREE_FORM_RADIUS, math.copysign(FREE_FORM_ANGLE, sign), turn, stroke)


def forward_free_form(shape: Shape) -> Shape:
    """The shape traced the other way if most of its arcs have negative angles: a free-form shape read
    backwards (as canonical programs may read it) turned back into the generator's direction, where every
    arc turns left (+90 degrees), so that the edits' free-form arcs fit it."""
    angles = [a.angle for a in shape.actions if a.kind is ActionKind.ARC]
    if sum(1 for x in angles if x < 0) * 2 <= len(angles):
        return shape
    segments = to_travel_form(shape)
    back = [segments[-1].reversed(0.0)]
    back += [segments[i].reversed(-segments[i + 1].turn) for i in range(len(segments) - 2, -1, -1)]
    return from_travel_form(back)


def snap_free_form(shape: Shape) -> Shape:
    """Every value of `shape` snapped to the free-form grid (arcs keep the sign of their angle)."""
    actions = [free_form_action(a.kind, 0.0 if i == 0 else _snap_turn(a.turn, FREE_FORM_TURNS), a.stroke,
                                a.angle if a.kind is ActionKind.ARC else 1.0)
               for i, a in enumerate(shape.actions)]
    return Shape(tuple(actions))


def free_form_share(shape: Shape, length_tol: float = 0.3, angle_tol: float = 25.0) -> float:
    """Share of the shape's actions whose values lie near the free-form grid (loose tolerances: a
    jittered free-form action)."""
    near = 0
    for i, a in enumerate(shape.actions):
        turn = normalise_angle(a.turn)
        turn_ok = i == 0 or abs(turn - _snap_turn(turn, FREE_FORM_TURNS)) <= angle_tol or abs(abs(turn) - 180.0) <= angle_tol
        if a.kind is ActionKind.LINE:
            near += turn_ok and abs(a.length - FREE_FORM_LINE) <= length_tol
        else:
            near += turn_ok and abs(a.radius - FREE_FORM_RADIUS) <= length_tol * FREE_FORM_RADIUS and (
                abs(abs(a.angle) - FREE_FORM_ANGLE) <= angle_tol)
    return near / max(len(shape.actions), 1)


def snap_library(shape: Shape) -> Shape:
    grids = library_grids()
    actions = []
    for i, a in enumerate(shape.actions):
        turn = 0.0 if i == 0 else _snap_turn(a.turn, grids["turn"])
        if a.kind is ActionKind.LINE:
            actions.append(Action.line(snap(a.length, grids["length"]), turn, a.stroke))
        else:
            actions.append(Action.arc(snap(a.radius, grids["radius"]), snap(a.angle, grids["angle"]), turn, a.stroke))
    return Shape(tuple(actions))


def _near(value: float, grid: np.ndarray, tolerance: float) -> bool:
    return bool(np.min(np.abs(np.asarray(grid) - value)) <= tolerance)


def on_free_form_grid(action: Action, first: bool) -> bool:
    turn_ok = first or _near(normalise_angle(action.turn), np.array(FREE_FORM_TURNS + (-180.0,)), 2.0)
    if action.kind is ActionKind.LINE:
        return turn_ok and abs(action.length - FREE_FORM_LINE) <= 0.02
    return turn_ok and abs(action.radius - FREE_FORM_RADIUS) <= 0.02 and abs(abs(action.angle) - FREE_FORM_ANGLE) <= 2.0


def on_grid(action: Action, first: bool) -> bool:
    """True if the action's values are free-form values or values of the shape library."""
    if on_free_form_grid(action, first):
        return True
    grids = library_grids()
    turn_ok = first or _near(action.turn, grids["turn"], 1.0)
    if action.kind is ActionKind.LINE:
        return turn_ok and _near(action.length, grids["length"], 0.006)
    return turn_ok and _near(action.radius, grids["radius"], 0.006) and _near(action.angle, grids["angle"], 1.0)


def off_grid_count(program: ImageProgram) -> int:
    return sum(_off_grid_actions(shape) for shape in program.shapes)


@functools.lru_cache(maxsize=16384)
def _off_grid_actions(shape: Shape) -> int:
    """Actions of `shape` whose values are neither free-form nor library values (memoised: every candidate
    is priced by them)."""
    return sum(not on_grid(a, i == 0) for i, a in enumerate(shape.actions))


def _replace(program: ImageProgram, index: int, shape: Shape) -> ImageProgram:
    shapes = list(program.shapes)
    shapes[index] = shape
    return ImageProgram(tuple(shapes))


def _shape_edits(shape: Shape) -> Iterator[tuple[Edit, Shape]]:
    actions = list(shape.actions)
    n = len(actions)
    for i, a in enumerate(actions):
        if i > 0:
            base = _snap_turn(a.turn, FREE_FORM_TURNS)
            turns = {normalise_angle(base + d) for d in (-30.0, 30.0, -60.0, 60.0)} | {normalise_angle(-base)}
            for turn in sorted(turns):
                if abs(normalise_angle(turn - a.turn)) > 1.0:
                    yield Edit("turn", (i,)), Shape(tuple(actions[:i] + [a.with_turn(turn)] + actions[i + 1:]))
        other = ActionKind.ARC if a.kind is ActionKind.LINE else ActionKind.LINE
        swapped = free_form_action(other, a.turn, a.stroke)
        yield Edit("kind", (i,)), Shape(tuple(actions[:i] + [swapped] + actions[i + 1:]))
    for i in range(n if n > 1 else 0):
        rest = actions[:i] + actions[i + 1:]
        if i < n - 1:
            turn = normalise_angle(rest[i].turn + actions[i].turn) if i > 0 else 0.0
            carried = rest[i].with_turn(turn)
            yield Edit("delete", (i,)), Shape(tuple(rest[:i] + [carried] + rest[i + 1:]))
        yield Edit("delete", (i, 1)), Shape(tuple(rest))
    for i in range(n + 1):
        for kind in (ActionKind.LINE, ActionKind.ARC):
            for turn in FREE_FORM_TURNS if i > 0 else (0.0,):
                new = free_form_action(kind, turn, StrokeType.NORMAL)
                yield Edit("insert", (i,)), Shape(tuple(actions[:i] + [new] + actions[i:]))


def _travel_rows(segments) -> np.ndarray:
    """(k, 5) kind, length, radius, curvature, turn; lengths and radii relative to the path length, so
    that matching does not depend on the shape's scale."""
    rows = np.array([[0.0 if g.kind is ActionKind.LINE else 1.0, g.length, g.radius, g.curvature, g.turn]
                     for g in segments])
    path = float(np.sum(np.where(rows[:, 0] == 0.0, rows[:, 1], rows[:, 2] * np.radians(np.abs(rows[:, 3])))))
    rows[:, 1:3] /= max(path, 1e-9) / len(rows)
    return rows


@functools.cache
def _library_table() -> dict[int, tuple[list[str], np.ndarray]]:
    """Library shapes by action count: names and canonical travel forms (n, k, 5)."""
    return _by_count(_library_tables(), "whole")


@functools.cache
def _library_table_missing_one() -> dict[int, tuple[list[str], np.ndarray]]:
    """Library shapes with one action left out (as a decoder that misses an action would read them), by
    action count: names and canonical travel forms."""
    return _by_count(_library_tables(), "missing")


def _by_count(arrays: dict[str, np.ndarray], table: str) -> dict[int, tuple[list[str], np.ndarray]]:
    """One of `_library_tables`' tables by action count (in the order the library first has each count)."""
    return {k: (arrays[f"{table}_names_{k}"].tolist(), arrays[f"{table}_forms_{k}"])
            for k in arrays[f"{table}_counts"].tolist()}


@functools.cache
def _library_tables() -> dict[str, np.ndarray]:
    """The library's travel-form tables (whole, and with one action missing) and its shapes' keys, made once and kept
    in the user cache folder (`dsl.jit.stored_arrays`: 0.8 s of CPU in every process that projects onto the library)."""
    return stored_arrays("library_travel", _library_arrays)


def _library_arrays() -> dict[str, np.ndarray]:
    """`_library_tables` computed: per table, names and forms by action count and the counts in order; the
    stroke-free keys (`dsl.canonical.shape_key`) of the library shapes, by action count."""
    whole: dict[int, tuple[list[str], list[np.ndarray]]] = {}
    missing: dict[int, tuple[list[str], list[np.ndarray]]] = {}
    keys: dict[int, list[tuple]] = {}
    for name, entry in load_library().items():
        rows = _travel_rows(to_travel_form(canonical_shape(entry.shape, ignore_strokes=True)))
        names, forms = whole.setdefault(len(rows), ([], []))
        names.append(name)
        forms.append(rows)
        key = shape_key(entry.shape, ignore_strokes=True)
        keys.setdefault(len(key), []).append(key)
        actions = entry.shape.actions
        for i in range(len(actions) if len(actions) > 1 else 0):
            rest = actions[:i] + actions[i + 1:]
            rest = (rest[0].with_turn(0.0),) + rest[1:]
            rows = _travel_rows(to_travel_form(canonical_shape(Shape(rest), ignore_strokes=True)))
            names, forms = missing.setdefault(len(rows), ([], []))
            names.append(name)
            forms.append(rows)
    arrays: dict[str, np.ndarray] = {}
    for table, groups in (("whole", whole), ("missing", missing)):
        arrays[f"{table}_counts"] = np.array(list(groups), dtype=np.int64)
        for k, (names, forms) in groups.items():
            arrays[f"{table}_names_{k}"] = np.array(names)
            arrays[f"{table}_forms_{k}"] = np.array(forms)
    for k, found in keys.items():
        arrays[f"keys_{k}"] = np.array(found, dtype=np.int64)
    return arrays


def library_matches(shape: Shape, top: int, missing: bool = True) -> list[tuple[float, str]]:
    """The library shapes nearest to `shape` in travel form (any start point and direction): kind
    mismatches count 1, lengths and radii in shape units, angles / 90 degrees; shapes with the same number
    of actions, and (`missing`) shapes with one action more, one of them left out (cost + 0.5)."""
    return list(_library_matches(shape, top, missing))


@functools.lru_cache(maxsize=4096)
def _library_matches(shape: Shape, top: int, missing: bool) -> tuple[tuple[float, str], ...]:
    """`library_matches`, memoised (the images of a problem project the same shapes)."""
    variants = np.array([_travel_rows(v) for v in travel_variants(shape)])  # (V, k, 5)
    found: dict[str, float] = {}
    tables = [(_library_table(), 0.0)] + ([(_library_table_missing_one(), MISSING_ACTION_COST)] if missing else [])
    for table, extra in tables:
        if len(shape) not in table:
            continue
        names, forms = table[len(shape)]
        for cost, name in _nearest(variants, names, forms, top * 3):
            found[name] = min(found.get(name, np.inf), cost + extra)
    return tuple(sorted(((c, n) for n, c in found.items()), key=lambda x: (x[0], x[1]))[:top])


def _nearest(variants: np.ndarray, names: list[str], forms: np.ndarray, top: int) -> list[tuple[float, str]]:
    diff = np.abs(variants[:, None] - forms[None])  # (V, n, k, 5)
    diff[..., 4] = np.abs((diff[..., 4] + 180.0) % 360.0 - 180.0)
    cost = (diff[..., 0] + diff[..., 1] + diff[..., 2] + (diff[..., 3] + diff[..., 4]) / 90.0).sum(-1).min(0)
    order = np.argsort(cost, kind="stable")[:top]
    return [(float(cost[k]), names[k]) for k in order]


@functools.cache
def _library_keys() -> frozenset:
    """The stroke-free keys of the library shapes (`dsl.canonical.shape_key`; kept with `_library_tables`)."""
    arrays = _library_tables()
    return frozenset(tuple(map(tuple, found)) for name in arrays if name.startswith("keys_")
                     for found in arrays[name].tolist())


@functools.lru_cache(maxsize=16384)
def is_library_shape(shape: Shape) -> bool:
    """True if the shape draws a library shape exactly (any strokes)."""
    return shape_key(shape.with_strokes(StrokeType.NORMAL), ignore_strokes=True) in _library_keys()


@functools.lru_cache(maxsize=16384)
def is_library_or_free_form(shape: Shape) -> bool:
    """True if every action has free-form values, or the shape is a library shape (any strokes)."""
    if all(on_free_form_grid(a, i == 0) for i, a in enumerate(shape.actions)):
        return True
    return shape_key(shape.with_strokes(StrokeType.NORMAL), ignore_strokes=True) in _library_keys()


@functools.cache
def _stamp_free_library_keys() -> frozenset:
    """Stroke-free keys of the library shapes whose table says `if stamp` = 0 (always drawn normal)."""
    return frozenset(shape_key(e.shape, ignore_strokes=True) for e in load_library().values() if not e.if_stamp)


def normal_strokes_only(shape: Shape) -> bool:
    """True if `shape` is a library shape that the generators always draw with normal strokes."""
    return shape_key(shape, ignore_strokes=True) in _stamp_free_library_keys()


def library_edits(shape: Shape, top: int) -> Iterator[tuple[Edit, Shape]]:
    for _, name in library_matches(shape, top):
        candidate = _canonical_library_shape(name)
        strokes = [a.stroke for a in shape.actions] + [StrokeType.NORMAL] * len(candidate)
        yield Edit("library"), Shape(tuple(a.with_stroke(t) for a, t in zip(candidate.actions, strokes)))


def structural_neighbours(
    program: ImageProgram, n_ink_groups: int | None = None, library_top: int = 0
) -> Iterator[tuple[Edit, ImageProgram]]:
    """Every program one structural edit away (see the module docstring), in a fixed order."""
    for s, shape in enumerate(program.shapes):
        for snapped in (snap_free_form(shape), snap_library(shape)):
            if snapped != shape:
                yield Edit("snap", (s,)), _replace(program, s, snapped)
        if library_top:
            for edit, candidate in library_edits(shape, library_top):
                yield Edit(edit.kind, (s,)), _replace(program, s, candidate)
        for edit, candidate in _shape_edits(shape):
            yield Edit(edit.kind, (s,) + edit.where), _replace(program, s, candidate)
    if len(program.shapes) == 1 and n_ink_groups != 1:
        actions = program.shapes[0].actions
        for i in range(1, len(actions)):
            head, tail = actions[:i], (actions[i].with_turn(0.0),) + actions[i + 1:]
            yield Edit("split", (i,)), ImageProgram((Shape(head), Shape(tail)))
    if len(program.shapes) == 2 and n_ink_groups != 2:
        a, b = program.shapes
        yield Edit("merge"), ImageProgram((Shape(a.actions + b.actions),))


@functools.cache
def _canonical_library_shape(name: str) -> Shape:
    return canonical_shape(load_library()[name].shape)


def stroke_variants(action: Action) -> Iterator[Action]:
    """The same move drawn with each other dataset stroke type."""
    for stroke in DATASET_STROKE_TYPES:
        if stroke is not action.stroke:
            yield action.with_stroke(stroke)
