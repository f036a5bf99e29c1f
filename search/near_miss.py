"""A free-form hypothesis checked on an image by render-and-compare: the hypothesis against its one-action
neighbours.

A free-form problem's set-A images draw one program; its set-B images and the negative query draw that
program with one action changed (spec §3.2: a line made an arc or back, a turn changed, or a stroke type
changed). So an image is checked against the hypothesis H and H's one-action neighbours:

  geometry   the centreline fit (`search.pose.fit`, mean distance in px, strokes drawn normal) of H and of
             its nearest geometric neighbour (`geometric_neighbours`: each action's kind swapped, each turn after
             the first moved by more than 45 degrees to a value of the generator's turn set), found by a screen
             of all of them (`nearest_neighbour`);
  strokes    H's poses for judging its strokes (`stroke_placements`): a symmetric shape fits its ink as well
             turned round, and two shapes of one walk each fit the other's ink part as well (`_one_walk`): only
             the strokes tell which way it lies and which shape is which (the caller judges the strokes there:
             `perception.decode.read_strokes`).

`check` returns the evidence (`Check`); the caller decides what it means with the noise the set-A images
show (`solver.reading.pipeline`).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial import cKDTree

from dsl.canonical import normalise_angle, reversed_shape, same_shape, shape_key
from dsl.types import Action, ActionKind, ImageProgram, Shape, StrokeType
from search.ink import ink_parts
from search.neighbourhood import forward_free_form, free_form_action
from search.pose import (FIT_EVALS, Placement, SparseProblem, fit, guesses, ink_groups, pixel_cost, polish, refine,
                         shape_window, stray_share, turned, turned_to)
from search.settings import (EXPLAINED_PX, EXPLAINED_ROUNDS, FIT_GUESSES, HEADINGS, MIN_LEFT_SHARE,
                             NEAR_MISS_TURN_CHANGE, NEAR_MISS_TURNS, RETRY_GUESSES,
                             SCREEN_EVALS, SCREEN_KEEP, SCREEN_REFINED, STROKE_POLISH_EVALS, SYMMETRY_EVALS,
                             SYMMETRY_JUDGED, SYMMETRY_TURNS, SYMMETRY_TOLERANCE)
from search.template import Target, resample, template


@dataclass(frozen=True, slots=True)
class Change:
    """Where a neighbour departs from the hypothesis: shape and action index (0-based) and what changed."""

    shape: int
    action: int
    what: str  # "kind", "turn" or "stroke"


@dataclass(frozen=True)
class Check:
    """The evidence of one image about a hypothesis program."""

    fit: float  # centreline fit of the hypothesis, px
    neighbour_fit: float  # best geometric neighbour's centreline fit, px (inf: none)
    neighbour: ImageProgram | None  # that neighbour (in the hypothesis's strokes)
    change: Change | None  # where it departs from the hypothesis
    poses: tuple  # the hypothesis's poses in the image
    neighbour_poses: tuple  # the best neighbour's (centreline fit)
    placements: tuple = ()  # the hypothesis's fitted placements (`search.pose.Placement`), for `stroke_placements_many`
    parts: int = 1  # the image's ink parts (`search.ink.ink_parts`) where the hypothesis has two shapes, else 1
    stray: float = 0.0  # share of the image's ink the hypothesis, where placed, does not draw (`search.pose.stray_share`)

    @property
    def geometric_margin(self) -> float:
        """px by which the hypothesis's centreline fits better than its best geometric neighbour's."""
        return self.neighbour_fit - self.fit


def _with_action(program: ImageProgram, s: int, i: int, action: Action) -> ImageProgram:
    return _with_shape(program, s, Shape(program.shapes[s].actions[:i] + (action,) + program.shapes[s].actions[i + 1:]))


def _with_shape(program: ImageProgram, s: int, shape: Shape) -> ImageProgram:
    return ImageProgram(program.shapes[:s] + (shape,) + program.shapes[s + 1:])


def geometric_neighbours(program: ImageProgram) -> list[tuple[Change, ImageProgram]]:
    """The programs one geometric action change away from `program` (each shape in the free-form
    generator's direction of travel, `forward_free_form`, so that a new arc turns left as the generator's
    do; a shape of lines only tells no direction, and its lines are swapped for arcs in both directions of travel,
    `reversed_shape`): every action's kind swapped (line <-> free-form arc, turn and stroke kept), every turn before
    action i >= 1 set to each value of the generator's turn set that departs from it by more than
    NEAR_MISS_TURN_CHANGE (spec 3.2, direct_angle: a near miss never turns an action by 30 degrees only). A
    change whose shape draws the same centreline as the program's, up to pose and direction (an L of two equal
    arms turned the other way is the same L), is no geometric neighbour: the centreline fit cannot tell it from
    the program (where it departs, only in its strokes, the strokes judged along the program tell)."""
    forward = ImageProgram(tuple(forward_free_form(shape) for shape in program.shapes))
    out = []
    for s, shape in enumerate(forward.shapes):
        changes = []
        for i, action in enumerate(shape.actions):
            other = ActionKind.ARC if action.kind is ActionKind.LINE else ActionKind.LINE
            changes.append((Change(s, i, "kind"), free_form_action(other, action.turn, action.stroke)))
            if i == 0:
                continue  # the first turn only rotates the shape
            changes += [(Change(s, i, "turn"), action.with_turn(turn)) for turn in NEAR_MISS_TURNS
                        if abs(turn - normalise_angle(action.turn)) > NEAR_MISS_TURN_CHANGE]
        for change, new in changes:
            neighbour = _with_action(forward, s, change.action, new)
            if not same_shape(neighbour.shapes[s], shape, ignore_strokes=True):
                out.append((change, neighbour))
        if all(action.kind is ActionKind.LINE for action in shape.actions):  # no arc tells which way it was walked
            back = _with_shape(forward, s, reversed_shape(shape))
            last = len(shape.actions) - 1
            out += [(Change(s, last - i, "kind"), _with_action(back, s, i, free_form_action(ActionKind.ARC, action.turn,
                                                                                         action.stroke)))
                    for i, action in enumerate(back.shapes[s].actions)]
    return out


def centreline_templates(program: ImageProgram) -> list:
    """The templates of `program`'s shapes drawn with normal strokes (what the centreline fit scores)."""
    return [template(shape.with_strokes(StrokeType.NORMAL)) for shape in program.shapes]


@functools.lru_cache(maxsize=64)
def neighbours_drawn(program: ImageProgram) -> tuple:
    """`geometric_neighbours` of `program`, each with its `centreline_templates` -> ((change, neighbour,
    templates), ...): the same for every image checked against the hypothesis, so made once."""
    return tuple((change, neighbour, centreline_templates(neighbour)) for change, neighbour in geometric_neighbours(program))


def centreline_fit(program: ImageProgram, target: Target, max_evals: int = FIT_EVALS,
                   templates: list | None = None, regroup: bool = False,
                   keep: int = FIT_GUESSES) -> tuple[float, list]:
    """Mean centreline distance (px) of `program` drawn with normal strokes, its pose fitted -> (fit, placements).
    `templates`: its `centreline_templates`, when already made; `regroup`: `program` is the hypothesis checked on
    the image; `keep`: heading guesses refined per shape (`search.pose.fit`)."""
    placements, value = fit(centreline_templates(program) if templates is None else templates, target, max_evals,
                            regroup, keep)
    return value, placements


def retried(program: ImageProgram, target: Target, fit_px: float, placements: list,
            regroup: bool = False, apart: bool = False) -> tuple[float, list]:
    """`program`'s centreline fit (`fit_px`, at `placements`; none given: only the fit is known) and its fit from
    RETRY_GUESSES heading guesses per shape -> the better (fit, placements). For a hypothesis about to lose an image it
    may draw: the best FIT_GUESSES headings by the coarse score may all miss the basin of an open or S-like shape. On
    the image's ink groups as they stand, or, with `regroup` (a two-shape hypothesis whose shapes lie apart where they
    are known to be drawn), the ink split as the hypothesis explains it best (`search.pose.fit`'s regroup, once an
    image: the split found is the image's for every candidate fitted after). With `apart` (a hypothesis whose shapes
    are known, and the rivals it is weighed against), the better then has each shape fitted again on the ink the other
    leaves (`explained_apart`; the retry's placements where none are given): where two shapes cross, the ink's moments
    miss both."""
    again, found = centreline_fit(program, target, keep=RETRY_GUESSES, regroup=regroup)
    if not apart:
        return (again, found) if again < fit_px else (fit_px, placements)
    start = (again, found) if again < fit_px or len(placements) != len(found) else (fit_px, placements)
    return min((fit_px, placements), explained_apart(program, target, *start), key=lambda option: option[0])


def explained_apart(program: ImageProgram, target: Target, fit_px: float, placements: list,
                    max_evals: int = FIT_EVALS) -> tuple[float, list]:
    """A two-shape program's centreline fit (`fit_px`, at `placements`) and its fit with each shape in turn fitted
    again from scratch on the ink the other shape leaves (ink farther than EXPLAINED_PX from its drawn centreline;
    RETRY_GUESSES heading guesses from that ink's moments, the pair refined on all the ink), EXPLAINED_ROUNDS times
    -> the best (fit, placements); a one-shape program's as given. Where two shapes touch or cross, the ink is one
    part and every split of it by place (`search.ink`) cuts through both shapes: the moments of a split miss both,
    while one shape fitted well says which ink is the other's (generated seed 89111,
    bd_open_band_three_arcs6-necked_six_lines7_0000, a positive query whose shapes cross: H 6.28 px with the band
    misplaced, 2.04 px so)."""
    templates = centreline_templates(program)
    if len(templates) != 2 or len(placements) != 2:
        return fit_px, placements
    best = (fit_px, list(placements))
    ink = target.ink_points
    for _ in range(EXPLAINED_ROUNDS):
        for s in (0, 1):
            other = _drawn_centreline(templates[1 - s], best[1][1 - s])
            left = np.ascontiguousarray(ink[cKDTree(other).query(ink)[0] > EXPLAINED_PX])
            if len(left) == 0 or len(left) < MIN_LEFT_SHARE * len(ink):
                continue
            for start in guesses(templates[s], left, target, keep=RETRY_GUESSES):
                placed, value = refine(templates, [start if k == s else best[1][k] for k in (0, 1)], target, max_evals)
                if value < best[0]:
                    best = (value, placed)
    return best


def _drawn_centreline(tpl, place: Placement, step_px: float = 2.0) -> np.ndarray:
    """Points every `step_px` or closer along `tpl`'s marks (a normal stroke's centreline, `search.template.resample`)
    drawn at `place`, in the crop frame of `Target.ink_points` (column, row)."""
    unit = step_px / max(place.s, 1e-6)
    x, y = np.concatenate([resample(tpl.mark_points[tpl.mark_offsets[k]:tpl.mark_offsets[k + 1]], unit)
                           for k in range(len(tpl.mark_offsets) - 1)]).T
    cx, cy, a, b = place.affine()
    return np.column_stack([cx + a * x - b * y, cy - (b * x + a * y)])


def centreline_refit(program: ImageProgram, target: Target, placements: list[Placement],
                     max_evals: int = FIT_EVALS) -> tuple[float, list]:
    """`centreline_fit` of `program` started from another program's fitted `placements` (as many shapes; each way of
    giving them to the program's shapes) instead of from scratch -> the best (fit, placements). A look-alike drawn where
    the other program's shape lies starts near its own pose, which a fit from scratch may miss."""
    templates = centreline_templates(program)
    if len(placements) != len(templates):
        return float("inf"), []
    tried = (refine(templates, [placements[k] for k in order], target, max_evals)
             for order in itertools.permutations(range(len(templates))))
    placed, value = min(tried, key=lambda found: found[1])
    return value, placed


def centreline_laid_on(program: ImageProgram, other: ImageProgram, target: Target, placements: list[Placement],
                       max_evals: int = FIT_EVALS) -> tuple[float, list]:
    """`centreline_fit` of `program` with each shape laid on a shape of `other` (as many shapes, fitted at
    `placements`; each way of pairing them): its drawn centroid where that shape's lies, its drawn size (`rms`) that
    shape's, at the one of HEADINGS whose centreline fits the ink best (`search.pose.turned_to`), refined jointly
    -> the best (fit, placements). Where `centreline_refit` starts the program at the other's placements, a shape's
    start point and heading, which mean another point of the picture in another shape, this one starts it on the
    same ink whichever way round it is written (generated seed 85111, bd_rec_symm_arc180-bird4_0000: a positive query's
    rectangle with a half circle, read as a hexagon fitted at 2.06 px, from scratch 4.24, from the hexagon's start
    4.58, laid on the hexagon's ink 2.0)."""
    templates, others = centreline_templates(program), centreline_templates(other)
    if len(placements) != len(templates) or len(others) != len(templates):
        return float("inf"), []
    best = (float("inf"), [])
    for order in itertools.permutations(range(len(templates))):
        starts = [turned_to(tpl, others[k], replace(placements[k], s=placements[k].s * others[k].rms / tpl.rms),
                            target, HEADINGS) for tpl, k in zip(templates, order)]
        placed, value = refine(templates, starts, target, max_evals)
        if value < best[0]:
            best = (value, placed)
    return best


def _screen_start(tpl, group: int, n_groups: int, target: Target):
    """The best heading guess of a template on an ink group, memoised per image (a shape the neighbour left
    unchanged is screened with every neighbour of the other shape); the template is kept with it, so its id is
    not reused."""
    key = ("screen start", id(tpl), group, n_groups)
    if key not in target.memo:
        target.memo[key] = (tpl, guesses(tpl, ink_groups(target, n_groups)[group], target, keep=1)[0])
    return target.memo[key][1]


def _screen_starts(templates: list, target: Target) -> list:
    """Where a quick centreline fit of a program (its `centreline_templates`) starts: each shape at its best
    heading guess (two shapes: on the ink groups in the order a full fit of the hypothesis chose, `search.pose.fit`'s
    memo)."""
    n = len(templates)
    order = target.memo.get(("order", n), ((0, 1),))[0] if n == 2 else (0,)
    return [_screen_start(tpl, g, n, target) for tpl, g in zip(templates, order)]


def _distinct(options: list[Placement]) -> list[Placement]:
    out: list[Placement] = []
    for place in options:
        if all(abs(place.cx - o.cx) > 2.0 or abs(place.cy - o.cy) > 2.0
               or abs((place.theta - o.theta + 180.0) % 360.0 - 180.0) > 8.0 for o in out):
            out.append(place)
    return out


def stroke_placements(program: ImageProgram, target: Target, judge=None) -> list[Placement]:
    """The program's placements for judging its strokes: the centreline fit, then for each shape every pose
    its centreline fits about as well (SYMMETRY_TOLERANCE: a symmetric shape turned about its centroid,
    `search.pose.turned`) tried with the strokes drawn, the best kept, and polished on the pixel score. The
    best: by `judge` (placement lists -> a score each, higher better: e.g. how likely the decoder finds the
    program's strokes there), else by the pixel score."""
    many = None if judge is None else (lambda asked: [judge(candidates) for _, candidates in asked])
    return stroke_placements_many(program, [target], many)[0]


def stroke_placements_many(program: ImageProgram, targets: list[Target], judge=None,
                           polish_evals: int = STROKE_POLISH_EVALS, fitted: list | None = None,
                           enough: float | None = None) -> list[list[Placement]]:
    """`stroke_placements` of one program in several images, their symmetric poses judged together: `judge`
    takes a list of (image index, placement lists), one entry per image with poses to tell apart, and gives
    their scores, a list per entry (one batch of the decoder for all images, where it is the judge); the first
    best score wins. The SYMMETRY_JUDGED poses best by the pixel score are judged; where none of them scores
    `enough` (when given), every pose is judged (one more batch for those images): the pixel score may rank the
    right pose of a circle with one stamped arc below others. `polish_evals=0`: the placements as judged, not
    polished. `fitted`: per image, the program's centreline placements when already fitted (`Check.placements`, the
    same as fitting them here, or a fit from more headings, `retried`), else empty."""
    normal = [template(shape.with_strokes(StrokeType.NORMAL)) for shape in program.shapes]
    drawn = [template(shape) for shape in program.shapes]
    fitted = fitted if fitted is not None else [()] * len(targets)
    placements = [list(known) if known else fit(normal, target)[0] for known, target in zip(fitted, targets)]
    if judge is not None and _one_walk(program):  # each shape drawn where the other lies fits the ink as well
        swapped = [list(_swapped(program, normal, found, target)) for found, target in zip(placements, targets)]
        for assigned in (placements, swapped):  # each assignment judged at its shapes' best poses
            _posed(normal, drawn, assigned, targets, judge, enough)
        asked = [(k, list(options)) for k, options in enumerate(zip(placements, swapped))]
        placements = [list(_first_best(options, found)) for (_, options), found in zip(asked, judge(asked))]
    else:
        _posed(normal, drawn, placements, targets, judge, enough)
    if not polish_evals:
        return placements
    return [polish(drawn, found, target, polish_evals) for found, target in zip(placements, targets)]


def _posed(normal: list, drawn: list, placements: list, targets: list[Target], judge, enough: float | None) -> None:
    """Each shape of `placements` (per image, changed in place) moved to its symmetric pose (`_symmetric_options`)
    the judge finds best (the pixel score's best without a judge), shape after shape (`stroke_placements_many`)."""
    for s in range(len(drawn)):
        asked, every = {}, {}
        for k, target in enumerate(targets):
            options = _symmetric_options(normal, drawn, placements[k], target, s)
            if judge is not None and len(options) > 1:
                asked[k], every[k] = options[:SYMMETRY_JUDGED], options
            placements[k][s] = options[0]
        while asked:
            scores = judge([(k, [placements[k][:s] + [o] + placements[k][s + 1:] for o in options])
                            for k, options in asked.items()])
            again = {}
            for (k, options), found in zip(asked.items(), scores):
                placements[k][s] = _first_best(options, found)
                if enough is not None and max(found) < enough and len(every[k]) > len(options):
                    again[k] = every[k]
            asked = again


def _first_best(options: list, scores: list):
    """The option of the highest score, the first of a tie (the judge's choice)."""
    return options[max(range(len(options)), key=lambda j: (scores[j], -j))]


def _one_walk(program: ImageProgram) -> bool:
    """Whether the program's two shapes draw one centreline (the same picture, strokes aside, as written or written
    otherwise: the free-form generator may draw a shape's moves twice, spec 3.2, a triangle or three quarter arcs
    beside another, and H read from set A may write one of them from its other end): their centreline fit cannot
    tell which shape lies on which ink part, only their strokes can (`stroke_placements_many` judges the two
    assignments, each at the poses judged best for its shapes: two circles of four quarter arcs fit any turn, and
    at the turns the centreline fit gives them neither assignment reads their strokes, generated seed 61101,
    ff_nact4_4_0037)."""
    return len(program.shapes) == 2 and len({shape_key(shape, ignore_strokes=True) for shape in program.shapes}) == 1


def _swapped(program: ImageProgram, normal: list, placements: list, target: Target) -> list[Placement]:
    """Two shapes of one walk (`_one_walk`) each placed where the other lies: the other's placement when they are
    written alike, else each turned about the other's centroid to the heading its centreline fits best there
    (`search.pose.turned_to`) and the pair refined (a shape written from its other end starts elsewhere)."""
    if len({shape.with_strokes(StrokeType.NORMAL) for shape in program.shapes}) == 1:
        return placements[::-1]
    moved = [turned_to(normal[s], normal[1 - s], placements[1 - s], target, HEADINGS) for s in range(2)]
    return refine(normal, moved, target, SYMMETRY_EVALS)[0]


def _symmetric_options(normal: list, drawn: list, placements: list, target: Target, s: int) -> list[Placement]:
    """Shape s's poses its centreline fits about as well as its fitted one (`placements[s]` first when it is
    alone), best by the pixel score with its strokes drawn first."""
    fits = [refine(normal, placements[:s] + [start] + placements[s + 1:], target, SYMMETRY_EVALS, movable=(s,))
            for start in turned(normal[s], placements[s], target, len(SYMMETRY_TURNS), SYMMETRY_TURNS)]
    own = SparseProblem(normal, target).cost(placements)
    best = min([own] + [value for _, value in fits])
    options = _distinct([placements[s]] + [p[s] for p, value in fits if value <= best + SYMMETRY_TOLERANCE])
    if len(options) > 1:
        window = shape_window(drawn[s], placements[s], target)
        options = sorted(options, key=lambda o: pixel_cost(drawn, placements[:s] + [o] + placements[s + 1:], target, window))
    return options


def check(program: ImageProgram, target: Target, neighbours: bool = True) -> Check:
    """The hypothesis `program` checked on the image `target`: its centreline fit and, with `neighbours`,
    its best geometric neighbour's; the poses are the centreline fits' (where the strokes of an image that draws
    the hypothesis are judged is the caller's: `stroke_placements_many`)."""
    own, placements = centreline_fit(program, target)
    parts = ink_parts(target) if len(program.shapes) == 2 else 1
    stray = stray_share(centreline_templates(program), placements, target)
    best = nearest_neighbour(neighbours_drawn(program), target) if neighbours else None
    if best is None:
        return Check(own, float("inf"), None, None, tuple(p.pose(target) for p in placements), (), tuple(placements),
                     parts, stray)
    (change, neighbour, *_), value, found = best
    return Check(own, value, neighbour, change, tuple(p.pose(target) for p in placements),
                 tuple(p.pose(target) for p in found), tuple(placements), parts, stray)


def nearest_neighbour(candidates, target: Target) -> tuple | None:
    """Of `candidates` ((change, neighbour, its `centreline_templates`, ...), ...) the one whose centreline fits the
    image best -> (that candidate, its fit, its placements), or None when there are none: `screened` from their best
    heading guesses (`_screen_starts`), the kept ones fitted in full from scratch (`centreline_fit`)."""
    starts = [_screen_starts(item[2], target) for item in candidates]
    return screened(candidates, starts, target,
                    lambda item, _: centreline_fit(item[1], target, templates=item[2])[::-1])


def screened(candidates, starts: list, target: Target, final) -> tuple | None:
    """The screen in two tiers of `candidates` ((change, neighbour, its `centreline_templates`, ...), ...), each from
    its `starts` (placements): all ranked by the sparse score there, the best SCREEN_REFINED of them (all when it is
    0) by a quick fit from there (SCREEN_EVALS), and the SCREEN_KEEP best of those fitted by `final(candidate, the
    quick fit's placements) -> (placements, fit)` -> (the candidate that fits best, its fit, its placements), or None
    when there are none."""
    ranked = range(len(candidates))
    if SCREEN_REFINED:  # the best SCREEN_REFINED by the sparse score at their starts go on
        ranked = sorted(ranked, key=lambda j: SparseProblem(candidates[j][2], target).cost(starts[j]))[:SCREEN_REFINED]
    quick = {j: refine(candidates[j][2], starts[j], target, SCREEN_EVALS) for j in ranked}
    ranked = sorted(ranked, key=lambda j: quick[j][1])
    best = None
    for j in ranked[:SCREEN_KEEP]:
        found, value = final(candidates[j], quick[j][0])
        if best is None or value < best[1]:
            best = (candidates[j], value, found)
    return best
