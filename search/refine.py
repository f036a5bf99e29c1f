"""Refinement: given an image and the decoder's proposals, find the program that draws it.

    refine_image(image, proposals, budget_ms=...) -> Refinement(program, score, poses, alternatives)

1. Starts. Every proposal with its values snapped to the free-form grid when most of them are near it (a
   free-form shape read backwards is first turned to the generator's direction), else to the library's
   values (a library shape, as the shape classifier proposes, is kept as it is), and also snapped to the
   library's values alone when that differs; and the proposals' majority
   programs (`consensus`: moves and strokes voted separately, votes weighted by the decoder's probability
   and unweighted).
2. Structure. Best-first search (`search.enumerate`) over the typed neighbourhoods of the starts
   (`search.neighbourhood`): each candidate's poses are fitted (`search.pose`: near the parent's poses and
   the pose that keeps the part after the edit in place, or from scratch after a split, merge or library
   shape) and scored by the sparse chamfer distance of its centreline to the ink plus the prior: the
   decoder's log-probability of the proposal it came from (or, with `shape_logp`, the shape classifier's
   of the library shapes it draws), a cost per edit and per off-grid action. Neighbours wait in the
   queue under an estimate (parent score minus how badly the edited actions miss the ink) and are scored
   when they reach its front.
3. Rescoring. The best structure's non-free-form shapes are also replaced by their nearest library
   shapes; the best few distinct structures are fitted again from scratch and ranked. A one-shape
   candidate that is never expanded (the projections, and the starts when only they are scored) is not
   fitted when its prior costs alone rule it out of the stroke stage (`_StructureSearch`).
4. Strokes. For the best structure (the best LIBRARY_STRUCTURES within STRUCTURE_MARGIN when it has a
   library shape: look-alike library shapes are told apart by the pixel score, which then ranks them):
   poses polished on the pixel score of the rendered candidate, then
   each action's stroke type chosen by the pixel score in a window around it, with a small preference for
   the decoder's stroke; repeated once if a stroke changed. Library shapes whose table entry says
   `if stamp` = 0 are drawn with normal strokes only (spec §3.3).
5. Output: the best program, its score, its poses, and the runners-up (next best distinct structures).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from dsl.canonical import image_key, same_shape
from dsl.types import ImageProgram, Pose, Shape, StrokeType
from search import enumerate as enumeration
from search import pose, strokes
from search.neighbourhood import (
    Edit, forward_free_form, free_form_share, is_library_or_free_form, is_library_shape, library_edits, off_grid_count,
    on_free_form_grid, snap_free_form, snap_library, structural_neighbours,
)
from search.settings import (CONSENSUS_TEMPERATURES, FINAL_STRUCTURE_WEIGHT, FREE_FORM_SHARE, INSERT_GAIN,
                             LIBRARY_STRUCTURES, LIBRARY_TOP, LOGP_WEIGHT, NON_LIBRARY_COST, OFF_GRID_COST, OVERRUN_MS,
                             PIXEL_WEIGHT, POLISH_MS, PROJECTED_STRUCTURES, PROJECTIONS, QUICK_EVALS, RESCORE,
                             STROKE_RESERVE_MS, STRUCTURE_MARGIN)
from search.template import Target, make_target, template

NEW_POSE_EDITS = ("split", "merge", "library")  # edits after which poses are fitted from scratch


@dataclass(frozen=True, slots=True)
class Proposal:
    """A program proposed by the decoder with its log-probability (perception's Proposal has the same
    two fields; any object with `program` and `logp` works)."""

    program: ImageProgram
    logp: float = 0.0


@dataclass(frozen=True, slots=True)
class Alternative:
    program: ImageProgram
    score: float
    poses: tuple[Pose, ...]


@dataclass(frozen=True, slots=True)
class Refinement:
    program: ImageProgram  # best program (shapes in the order the poses follow)
    score: float  # its score: sparse chamfer (px) of its centreline + prior costs; lower is better
    poses: tuple[Pose, ...]  # fitted pose of every shape (turtle units, official view)
    alternatives: tuple[Alternative, ...]  # the next best distinct structures (same score), best first
    candidates: int = 0  # structural candidates scored
    milliseconds: float = 0.0
    pixel_score: float = 0.0  # PIXEL_WEIGHT x mean |grey difference| of its render, strokes and poses polished
    timings: dict = field(default_factory=dict)  # milliseconds per stage: search, rescore, strokes


@dataclass(frozen=True, slots=True)
class _Context:
    prior: float  # accumulated prior cost
    strokes_from: ImageProgram  # the proposal whose strokes the candidate carries
    parent: ImageProgram | None = None  # the program this one is an edit of
    placements: tuple = ()  # the parent's placements
    edit: Edit | None = None
    classifier: float = 0.0  # the part of `prior` that comes from a log-probability (replaced by `shape_logp`'s)


@functools.lru_cache(maxsize=16384)
def _structure_key(program: ImageProgram) -> tuple:
    """The canonical key of a program without its strokes (memoised: every candidate is keyed more than once)."""
    return image_key(program, ignore_strokes=True)


def _grid_prior(program: ImageProgram) -> float:
    """Costs for values off the free-form and library grids, and for shapes that are neither free-form
    nor library shapes (every dataset shape is one or the other)."""
    return OFF_GRID_COST * off_grid_count(program) + NON_LIBRARY_COST * sum(
        not is_library_or_free_form(shape) for shape in program.shapes
    )


def _anchor_joints(edit: Edit) -> tuple[int, int] | None:
    """(parent joint, child joint) that an edit leaves in place after the edited action."""
    if edit.kind in ("turn", "kind"):
        return edit.where[1] + 1, edit.where[1] + 1
    if edit.kind == "delete":
        return edit.where[1] + 1, edit.where[1]
    if edit.kind == "insert":
        return edit.where[1], edit.where[1] + 1
    return None


class _StructureSearch:
    """Scores candidates. With `prune`, a one-shape candidate whose prior costs alone put it more than
    STRUCTURE_MARGIN above the best score found so far is not fitted (its score is inf, its info None): the
    fit cannot lower a score below its prior costs, so it could never be chosen for the stroke stage (only
    candidates within STRUCTURE_MARGIN of the best are), and a one-shape fit leaves nothing behind for other
    candidates (a two-shape fit records its ink assignment). Only for candidates never expanded: an edit
    can price a child below its parent."""

    def __init__(self, target: Target, shape_logp=None, best_logp: float = 0.0) -> None:
        self.target = target
        self.shape_logp = shape_logp
        self.best_logp = best_logp
        self.prune = False
        self.best = math.inf  # the best score found so far

    def _priced(self, program: ImageProgram, context: _Context) -> _Context:
        """`context` with its log-probability cost taken from `shape_logp` when every shape of `program`
        has one (a library shape reached by an edit pays the classifier's belief in it, not its parent's)."""
        if self.shape_logp is None:
            return context
        logps = [self.shape_logp(shape) for shape in program.shapes]
        if any(logp is None for logp in logps):
            return context
        cost = LOGP_WEIGHT * max(self.best_logp - sum(logps), 0.0)
        return replace(context, prior=context.prior - context.classifier + cost, classifier=cost)

    def score(self, program: ImageProgram, context: _Context) -> tuple[float, tuple | None]:
        context = self._priced(program, context)
        grid = _grid_prior(program)
        if self.prune and len(program.shapes) == 1 and context.prior + grid > self.best + STRUCTURE_MARGIN:
            return math.inf, None
        value, placements = self._fitted(program, context)
        total = value + context.prior + grid
        self.best = min(self.best, total)
        return total, (tuple(placements), context)

    def _fitted(self, program: ImageProgram, context: _Context) -> tuple[float, list]:
        """The sparse chamfer score of `program` and its fitted placements."""
        # the sparse score sees only centrelines: fit the stroke-free shapes (more memo hits)
        templates = [template(s.with_strokes(StrokeType.NORMAL)) for s in program.shapes]
        if context.parent is None or context.edit.kind in NEW_POSE_EDITS:
            placements, value = pose.fit(templates, self.target)
        else:
            s = context.edit.where[0] if context.edit.where else 0
            extra = []
            joints = _anchor_joints(context.edit)
            if joints is not None:
                parent = template(context.parent.shapes[s].with_strokes(StrokeType.NORMAL))
                extra.append(pose.anchored(parent, context.placements[s], templates[s], *joints))
            placements, value = pose.refit_near(templates, list(context.placements), self.target, s, extra, QUICK_EVALS)
        return value, placements

    def expand(self, scored: enumeration.Scored):
        placements, context = scored.info
        templates = [template(s.with_strokes(StrokeType.NORMAL)) for s in scored.program.shapes]
        residuals = pose.action_residuals(templates, list(placements), self.target)
        reverse = pose.SparseProblem(templates, self.target).terms(list(placements))[1]
        lost = pose.unexplained_near_joints(templates, list(placements), self.target)
        library_top = LIBRARY_TOP if scored.depth == 0 and not _free_form_like(scored.program) else 0
        for edit, program in structural_neighbours(scored.program, None, library_top):
            gain = _expected_gain(edit, residuals, reverse, lost)
            child = _Context(
                context.prior + edit.cost, context.strokes_from, scored.program, placements, edit, context.classifier
            )
            yield program, child, scored.score + edit.cost - gain


def _expected_gain(edit: Edit, residuals: list[np.ndarray], reverse: float, lost: list[np.ndarray]) -> float:
    """How much an edit may lower the score, from where the parent's centreline misses the ink (and, for
    an insertion, how much unexplained ink lies near the joint where it goes)."""
    if edit.kind in ("turn", "kind"):
        return float(residuals[edit.where[0]][edit.where[1]:].mean())
    if edit.kind == "delete":
        return float(residuals[edit.where[0]][edit.where[1]])
    if edit.kind == "insert":
        return reverse * float(lost[edit.where[0]][edit.where[1]]) * INSERT_GAIN
    if edit.kind == "library":
        return reverse
    if edit.kind == "snap":
        return 0.1
    return 0.0


def _snap_shape(shape: Shape) -> Shape:
    if is_library_shape(shape):  # the shape classifier's proposals: a library shape stays one (see `snapped`)
        return shape
    if free_form_share(shape) >= FREE_FORM_SHARE or _free_form_like(ImageProgram((shape,))):
        return snap_free_form(forward_free_form(shape))
    return snap_library(shape)


def snapped(program: ImageProgram) -> ImageProgram:
    """Every shape's values snapped to the free-form grid if most of them are near it (a free-form shape
    read backwards is turned to the generator's direction first), else to library values; a library shape is
    kept as it is. (31 of the 627 library shapes, e.g. parallel_bridge, open_s_new1/2, the arc cups and
    bands, have every value within the loose free-form tolerances: the classifier's proposal of one was
    snapped to a free-form look-alike that then beat it; on generated basic problems, seed 4141, the 6
    misread parallel bridges were all read so.)"""
    return ImageProgram(tuple(_snap_shape(shape) for shape in program.shapes))


def _library_snapped(program: ImageProgram) -> ImageProgram:
    return ImageProgram(tuple(snap_library(shape) for shape in program.shapes))


def _free_form_program(program: ImageProgram) -> bool:
    """True if every action of the program has free-form values."""
    return all(on_free_form_grid(a, i == 0) for shape in program.shapes for i, a in enumerate(shape.actions))


def _free_form_like(program: ImageProgram) -> bool:
    """True if every value is near the free-form grid (then library shapes are not proposed)."""
    return all(
        same_shape(shape, snap_free_form(shape), length_tol=0.12, angle_tol=20.0, ignore_strokes=True)
        for shape in program.shapes
    )


def _action_vote_key(action) -> tuple:
    """What an action's vote is about: its kind and values (strokes are voted on separately, so that a
    wrong stroke does not split the vote on the move)."""
    return (action.kind, round(action.turn / 10.0), round(action.length * 5.0),
            round(action.radius * 5.0), round(action.angle / 10.0))


def consensus(proposals, temperature: float = 1.0) -> ImageProgram | None:
    """The proposals' majority program: the commonest shape count, per shape the commonest action count,
    per action the commonest move (kind and values) and, separately, the commonest stroke among the
    proposals that agree on those counts (weights exp(temperature * logp); 0 = one vote each)."""
    top = max(p.logp for p in proposals)
    weights = {id(p): math.exp(temperature * (p.logp - top)) for p in proposals}
    counts: dict[int, float] = {}
    for p in proposals:
        counts[len(p.program.shapes)] = counts.get(len(p.program.shapes), 0.0) + weights[id(p)]
    n = max(sorted(counts), key=counts.get)
    voters = [p for p in proposals if len(p.program.shapes) == n]
    shapes = []
    for s in range(n):
        lengths: dict[int, float] = {}
        for p in voters:
            lengths[len(p.program.shapes[s])] = lengths.get(len(p.program.shapes[s]), 0.0) + weights[id(p)]
        k = max(sorted(lengths), key=lengths.get)
        agreeing = [p for p in voters if len(p.program.shapes[s]) == k]
        actions = []
        for i in range(k):
            groups: dict[tuple, dict] = {}
            for p in agreeing:
                action = p.program.shapes[s].actions[i]
                group = groups.setdefault(_action_vote_key(action), {})
                group[action] = group.get(action, 0.0) + weights[id(p)]
            group = max(groups.values(), key=lambda g: sum(g.values()))
            move = max(group, key=group.get)  # the commonest exact action of the winning group
            stroke_votes: dict = {}
            for p in agreeing:
                stroke = p.program.shapes[s].actions[i].stroke
                stroke_votes[stroke] = stroke_votes.get(stroke, 0.0) + weights[id(p)]
            actions.append(move.with_stroke(max(stroke_votes, key=stroke_votes.get)))
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))


def _distinct_best(ranked: list, count: int) -> list:
    distinct, keys = [], set()
    for scored in sorted(ranked):
        key = _structure_key(scored.program)
        if key not in keys:
            keys.add(key)
            distinct.append(scored)
        if len(distinct) == count:
            break
    return distinct


def _library_projections(search: _StructureSearch, best: enumeration.Scored) -> list:
    """The best structure with each of its non-free-form shapes replaced by its nearest library shapes
    (basic-shape images draw library shapes), scored with poses fitted from scratch."""
    out = []
    placements, context = best.info
    for s, shape in enumerate(best.program.shapes):
        if _free_form_like(ImageProgram((shape,))):
            continue
        for edit, candidate in library_edits(shape, PROJECTIONS):
            shapes = list(best.program.shapes)
            shapes[s] = candidate
            program = ImageProgram(tuple(shapes))
            child = _Context(context.prior + edit.cost, context.strokes_from, classifier=context.classifier)
            value, info = search.score(program, child)
            out.append(enumeration.Scored(value, -1 - len(out), program, info, best.depth + 1))
    return out


def _rescored(search: _StructureSearch, ranked: list, count: int) -> list:
    """The best `count` distinct structures scored again with poses fitted from scratch (a candidate's
    score depends on the path that reached it: its pose was refitted from its parent's), best first."""
    out = []
    for scored in _distinct_best(ranked, count):
        if scored.info is None:  # not fitted (`_StructureSearch`): it stays unchosen
            out.append(scored)
            continue
        placements, context = scored.info
        again = _Context(context.prior, context.strokes_from, classifier=context.classifier)
        value, info = search.score(scored.program, again)
        best = (scored.score, placements) if info is None else min(
            (scored.score, placements), (value, info[0]), key=lambda f: f[0])
        out.append(enumeration.Scored(best[0], scored.order, scored.program, (best[1], context), scored.depth))
    return sorted(out)


def _elapsed(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def refine_image(
    image: np.ndarray,
    proposals,
    budget_ms: float | None = 140.0,
    max_candidates: int = 150,
    structures: int | None = None,
    shape_logp=None,
    polish_evals: int = strokes.POLISH_EVALS,
    stroke_types: bool = True,
) -> Refinement:
    """The program that draws `image`, searched near `proposals` (objects with `program` and `logp`).

    `budget_ms` is the time for the whole refinement: the structure search stops STROKE_RESERVE_MS before
    it, and the pose polishing of the stroke stage gets fewer evaluations when time is short (the stroke
    choice itself always runs). `max_candidates` bounds the structures scored (the starting ones are
    always scored, and count); `polish_evals` bounds the pose-polishing evaluations of the stroke stage
    (shared by the structures ranked; the winner's stroke choice gets as many again). With `budget_ms=None` the
    run is deterministic: every chosen structure is ranked. `structures`: at most this many structures, within
    STRUCTURE_MARGIN of the best, are polished and ranked by their pixel score (default: 1 when the best structure
    is free-form, LIBRARY_STRUCTURES otherwise); several are drawn as they are (the library's normal strokes) and
    the winner's strokes are chosen after, a lone one gets its strokes at once.
    `shape_logp(shape)`: a log-probability (the proposals' units) of a library shape, None for other shapes; a
    candidate made of shapes that all have one pays it in place of its proposal's (library shapes reached by edits
    pay their own). `stroke_types=False`: no stroke is chosen, every action is drawn normal (the poses polished so),
    for an image whose stroke types nothing asks of (a library problem's, outside set A: `solver.reading.pipeline`)."""
    started = time.perf_counter()
    proposals = list(proposals)
    if not proposals:
        raise ValueError("refine_image needs at least one proposal")
    target = make_target(image)
    best_logp = max(p.logp for p in proposals)
    search = _StructureSearch(target, shape_logp, best_logp)
    search.prune = max_candidates <= 0  # only the starts are scored: none is expanded
    starts = []
    for p in proposals:
        cost = LOGP_WEIGHT * (best_logp - p.logp)
        context = _Context(cost, p.program, classifier=cost)
        starts.append((snapped(p.program), context))
        if _library_snapped(p.program) != starts[-1][0]:  # the library reading too, when it differs
            starts.append((_library_snapped(p.program), context))
    if len(proposals) > 2:
        for temperature in CONSENSUS_TEMPERATURES[::-1]:
            majority = snapped(consensus(proposals, temperature))
            starts.insert(0, (majority, _Context(0.0, majority)))
    generator = enumeration.best_first(
        starts, search.score, search.expand, _structure_key,
        enumeration.Budget(
            candidates=max_candidates,
            milliseconds=None if budget_ms is None else max(budget_ms - STROKE_RESERVE_MS - _elapsed(started), 1.0),
        ),
    )
    ranked = list(generator)
    timings = {"search": _elapsed(started)}
    search.prune = True  # the projections and the rescored are not expanded
    for best in _distinct_best(ranked, PROJECTED_STRUCTURES):
        ranked += _library_projections(search, best)
    rescored = _rescored(search, ranked, RESCORE)
    timings["rescore"] = _elapsed(started) - timings["search"]
    if structures is None:  # library shapes look alike: let the pixel score decide among the best few
        structures = 1 if _free_form_program(rescored[0].program) else LIBRARY_STRUCTURES
    chosen = [c for c in rescored[:structures] if c.score <= rescored[0].score + STRUCTURE_MARGIN]
    finals = []
    stage_ms = 0.0
    for scored in chosen:
        if finals and budget_ms is not None and _elapsed(started) + stage_ms > budget_ms + OVERRUN_MS:
            break  # out of time: the structures not ranked are left to the runners-up
        stage_started = time.perf_counter()
        placements, context = scored.info
        evals = polish_evals / len(chosen)
        if budget_ms is not None:
            share = (budget_ms - _elapsed(started)) / POLISH_MS
            evals = min(polish_evals * share / (len(chosen) - len(finals)), evals)
        evals = int(max(evals, strokes.MIN_POLISH_EVALS))
        if len(chosen) > 1 or not stroke_types:  # look-alikes ranked as they are drawn (strokes let one draw ink
            # it has no geometry for)
            program = scored.program if stroke_types else scored.program.with_strokes(StrokeType.NORMAL)
            placements = pose.polish([template(x) for x in program.shapes], list(placements), target, evals)
        else:
            program, placements = strokes.assign_strokes(
                scored.program, list(placements), target, context.strokes_from, evals, strokes.STROKE_PASSES
            )
        templates = [template(s) for s in program.shapes]
        pixel = PIXEL_WEIGHT * pose.pixel_cost(templates, placements, target)
        finals.append((pixel + FINAL_STRUCTURE_WEIGHT * scored.score, len(finals), program,
                       tuple(p.pose(target) for p in placements), scored, pixel, placements))
        stage_ms = _elapsed(stage_started)
    finals.sort(key=lambda f: (f[0], f[1]))
    if len(chosen) > 1 and stroke_types:  # the winner's strokes
        first = finals[0]
        evals = max(polish_evals // len(chosen), strokes.MIN_POLISH_EVALS)
        program, placements = strokes.assign_strokes(
            first[2], list(first[6]), target, first[4].info[1].strokes_from, evals, strokes.STROKE_PASSES
        )
        pixel = PIXEL_WEIGHT * pose.pixel_cost([template(s) for s in program.shapes], placements, target)
        finals[0] = (first[0] - first[5] + pixel, first[1], program, tuple(p.pose(target) for p in placements),
                     first[4], pixel, placements)
    timings["strokes"] = _elapsed(started) - timings["search"] - timings["rescore"]
    best = finals[0]
    others = [Alternative(f[2], f[4].score, f[3]) for f in finals[1:]]
    others += [
        Alternative(c.program, c.score, tuple(p.pose(target) for p in c.info[0]))
        for c in rescored[len(finals):] if c.info is not None
    ]
    return Refinement(
        program=best[2],
        score=best[4].score,
        poses=best[3],
        alternatives=tuple(sorted(others, key=lambda a: a.score)),
        candidates=len(ranked),
        milliseconds=_elapsed(started),
        pixel_score=best[5],
        timings=timings,
    )
