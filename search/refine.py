"""Refinement: given an image and the decoder's proposals, find the program that draws it.

    refine_image(image, proposals, budget_ms=...) -> Refinement(program, score, poses, alternatives)

1. Structure. Best-first search (`search.enumerate`) over the typed neighbourhoods of the proposals
   (`search.neighbourhood`): each candidate's poses are fitted (`search.pose`: from the parent's poses when
   the edit kept the shape count, from scratch otherwise) and scored by the sparse chamfer distance of its
   centreline to the ink, plus the prior: the decoder's log-probability of the proposal it came from and
   a cost per edit.
2. Strokes. For the best few structures: the poses are polished on the pixel score of the rendered
   candidate, then each action's stroke type is chosen by the pixel score in a window around that action
   (two passes), with a small preference for the decoder's stroke.
3. The best program by the final pixel score (plus prior), its poses, and the runners-up.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from dsl.canonical import image_key, same_shape
from dsl.types import ImageProgram, Pose, Shape, StrokeType
from search import enumerate as enumeration
from search import kernels, pose
from search.neighbourhood import Edit, off_grid_count, snap_free_form, stroke_variants, structural_neighbours
from search.template import Target, make_target, template

LOGP_WEIGHT = 0.02  # chamfer pixels per nat of decoder log-probability below the best proposal
OFF_GRID_COST = 0.15  # per action whose values are neither free-form nor library values
QUICK_EVALS = 20  # sparse-score evaluations refining a neighbour's pose from its parent's
NEW_POSE_EDITS = ("split", "merge", "library")  # edits after which poses are fitted from scratch
STRUCTURES = 2  # structures whose strokes are assigned and whose pixel score decides
STRUCTURE_MARGIN = 0.3  # ... if their structure score is within this of the best
STROKE_PRIOR = 4.0  # window pixel-score units (ink pixels) for leaving the decoder's stroke
STROKE_PASSES = 2
PIXEL_WEIGHT = 100.0  # final score = PIXEL_WEIGHT * mean |grey difference| (0-1) + prior
LIBRARY_TOP = 3  # library shapes proposed per shape of a starting proposal
WINDOW_MARGIN = 6
POLISH_EVALS = 16


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
    score: float  # final score (lower is better)
    poses: tuple[Pose, ...]  # fitted pose of every shape (turtle units, official view)
    alternatives: tuple[Alternative, ...]  # runners-up, best first
    candidates: int = 0  # structural candidates scored
    milliseconds: float = 0.0
    structure_scores: tuple[float, ...] = field(default=())  # sparse scores of the refined structures


@dataclass(frozen=True, slots=True)
class _Context:
    prior: float  # accumulated prior cost
    strokes_from: ImageProgram  # the proposal whose strokes the candidate carries
    parent: ImageProgram | None = None  # the program this one is an edit of
    placements: tuple = ()  # the parent's placements
    edit: Edit | None = None


def _structure_key(program: ImageProgram) -> tuple:
    return image_key(program, ignore_strokes=True)


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
    def __init__(self, target: Target) -> None:
        self.target = target

    def score(self, program: ImageProgram, context: _Context) -> tuple[float, tuple]:
        templates = [template(s) for s in program.shapes]
        if context.parent is None or context.edit.kind in NEW_POSE_EDITS:
            placements, value = pose.fit(templates, self.target)
        else:
            s = context.edit.where[0] if context.edit.where else 0
            extra = []
            joints = _anchor_joints(context.edit)
            if joints is not None:
                extra.append(pose.anchored(
                    template(context.parent.shapes[s]), context.placements[s], templates[s], *joints
                ))
            placements, value = pose.refit_near(templates, list(context.placements), self.target, s, extra, QUICK_EVALS)
        return value + context.prior + OFF_GRID_COST * off_grid_count(program), (tuple(placements), context)

    def expand(self, scored: enumeration.Scored):
        placements, context = scored.info
        templates = [template(s) for s in scored.program.shapes]
        residuals = pose.action_residuals(templates, list(placements), self.target)
        reverse = pose.SparseProblem(templates, self.target).terms(list(placements))[1]
        library_top = LIBRARY_TOP if scored.depth == 0 and not _free_form_like(scored.program) else 0
        for edit, program in structural_neighbours(scored.program, None, library_top):
            gain = _expected_gain(edit, residuals, reverse)
            child = _Context(context.prior + edit.cost, context.strokes_from, scored.program, placements, edit)
            yield program, child, scored.score + edit.cost - gain


def _expected_gain(edit: Edit, residuals: list[np.ndarray], reverse: float) -> float:
    """How much an edit may lower the score, from where the parent's centreline misses the ink."""
    if edit.kind in ("turn", "kind"):
        return float(residuals[edit.where[0]][edit.where[1]:].mean())
    if edit.kind == "delete":
        return float(residuals[edit.where[0]][edit.where[1]])
    if edit.kind == "insert":
        return reverse
    if edit.kind == "snap":
        return 0.1
    return 0.0


def _free_form_like(program: ImageProgram) -> bool:
    """True if every value is near the free-form grid (then library shapes are not proposed)."""
    return all(
        same_shape(shape, snap_free_form(shape), length_tol=0.12, angle_tol=20.0, ignore_strokes=True)
        for shape in program.shapes
    )


def _action_window(tpl, place: pose.Placement, target: Target, action: int) -> tuple[int, int, int]:
    cx, cy, a, b = place.affine()
    marks = np.nonzero(tpl.mark_action == action)[0]
    if len(marks) == 0:
        return pose.crop_window(target)
    pts = np.concatenate([tpl.mark_points[tpl.mark_offsets[k]:tpl.mark_offsets[k + 1]] for k in marks])
    cols = cx + a * pts[:, 0] - b * pts[:, 1] + target.origin[1]
    rows = cy - (b * pts[:, 0] + a * pts[:, 1]) + target.origin[0]
    r0, c0 = int(math.floor(rows.min())) - WINDOW_MARGIN, int(math.floor(cols.min())) - WINDOW_MARGIN
    size = int(math.ceil(max(rows.max() - rows.min(), cols.max() - cols.min()))) + 2 * WINDOW_MARGIN + 1
    return r0, c0, size


def _window_cost(program: ImageProgram, placements: list, target: Target, window) -> float:
    """Least sum of |grey difference| / 255 over the window, the render shifted by up to one pixel."""
    r0, c0, size = window
    rendered = pose.render_window([template(s) for s in program.shapes], placements, target, r0, c0, size)
    return kernels.window_l1_shifted(rendered, target.image, r0, c0, 1) / 255.0


def _with_action(program: ImageProgram, s: int, i: int, action) -> ImageProgram:
    shapes = list(program.shapes)
    actions = list(shapes[s].actions)
    actions[i] = action
    shapes[s] = Shape(tuple(actions))
    return ImageProgram(tuple(shapes))


def _decoder_strokes(program: ImageProgram, source: ImageProgram) -> list[list[StrokeType | None]]:
    """The stroke the decoder gave each action, where the candidate still lines up with its proposal."""
    out = []
    for s, shape in enumerate(program.shapes):
        same = s < len(source.shapes) and len(source.shapes[s]) == len(shape)
        out.append([source.shapes[s].actions[i].stroke if same else None for i in range(len(shape))])
    return out


def assign_strokes(program: ImageProgram, placements: list, target: Target, source: ImageProgram):
    """Polish the poses on the pixel score, then choose each action's stroke -> (program, placements)."""
    placements = pose.polish([template(x) for x in program.shapes], placements, target, POLISH_EVALS)
    decoder = _decoder_strokes(program, source)
    for _ in range(STROKE_PASSES):
        changed = False
        for s, shape in enumerate(program.shapes):
            tpl = template(shape)
            for i, action in enumerate(program.shapes[s].actions):
                window = _action_window(tpl, placements[s], target, i)
                current = program.shapes[s].actions[i]
                options = [current] + list(stroke_variants(current))
                costs = [
                    _window_cost(_with_action(program, s, i, option), placements, target, window)
                    + (STROKE_PRIOR if decoder[s][i] is not None and option.stroke is not decoder[s][i] else 0.0)
                    for option in options
                ]
                choice = options[int(np.argmin(costs))]
                if choice != current:
                    program, changed = _with_action(program, s, i, choice), True
        if not changed:
            break
    return program, placements


def refine_image(
    image: np.ndarray,
    proposals,
    budget_ms: float | None = 80.0,
    max_candidates: int = 150,
    structures: int = STRUCTURES,
) -> Refinement:
    """The program that draws `image`, searched near `proposals` (objects with `program` and `logp`).

    `budget_ms` and `max_candidates` bound the structure search (candidates scored); with
    `budget_ms=None` the run is deterministic. The stroke stage after it takes about 20-40 ms more.
    `structures`: at most this many structures, within STRUCTURE_MARGIN of the best, get strokes."""
    started = time.perf_counter()
    proposals = list(proposals)
    if not proposals:
        raise ValueError("refine_image needs at least one proposal")
    target = make_target(image)
    search = _StructureSearch(target)
    best_logp = max(p.logp for p in proposals)
    starts = [(p.program, _Context(LOGP_WEIGHT * (best_logp - p.logp), p.program)) for p in proposals]
    generator = enumeration.best_first(
        starts, search.score, search.expand, _structure_key,
        enumeration.Budget(candidates=max_candidates, milliseconds=budget_ms),
    )
    ranked = list(generator)
    chosen, keys = [], set()
    for scored in sorted(ranked):
        key = _structure_key(scored.program)
        if chosen and scored.score > chosen[0].score + STRUCTURE_MARGIN:
            break
        if key not in keys:
            keys.add(key)
            chosen.append(scored)
        if len(chosen) == structures:
            break
    finals = []
    for scored in chosen:
        placements, context = scored.info
        program, placements = assign_strokes(scored.program, list(placements), target, context.strokes_from)
        templates = [template(s) for s in program.shapes]
        value = (
            PIXEL_WEIGHT * pose.pixel_cost(templates, placements, target)
            + context.prior
            + OFF_GRID_COST * off_grid_count(program)
        )
        finals.append((value, len(finals), program, tuple(p.pose(target) for p in placements), scored.score))
    finals.sort(key=lambda f: (f[0], f[1]))
    best = finals[0]
    return Refinement(
        program=best[2],
        score=best[0],
        poses=best[3],
        alternatives=tuple(Alternative(f[2], f[0], f[3]) for f in finals[1:]),
        candidates=len(ranked),
        milliseconds=(time.perf_counter() - started) * 1000.0,
        structure_scores=tuple(f[4] for f in finals),
    )
