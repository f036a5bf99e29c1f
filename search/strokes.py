"""The stroke stage of the refinement: stroke types chosen by the pixel score of rendered candidates.

The sparse chamfer score of the structure search sees only centrelines; stroke types (normal, zigzag and
the three stamps) are decided here, once the structure and its poses are known: the poses are polished on
the pixel score of the rendered candidate (`search.pose.polish`), then for each action every stroke type
is rendered and compared with the image in a window around that action (`pixel_kernels.window_l1_shifted`,
which tolerates a residual misalignment of WINDOW_SHIFT = 2 pixels), with a small preference for the
decoder's stroke. Actions that draw over each other (OVERLAP_PX, OVERLAP_SHARE) have their strokes chosen
together.
Library shapes that the generators always draw with normal strokes (`if stamp` = 0, spec §3.3) keep them.

Stamps and zigzags show which way a shape was traced (a triangle stamp points along the travel, a zigzag
starts to one side), and canonical forms forget it. `assign_strokes_either_way` chooses strokes for each
shape traced both ways and keeps the way the pixel score prefers: on official dev_ff, with each image's
true structure and no preference, the strokes chosen are all right for 85 % of the images traced the way
the generator drew them and for 47 % traced the other way.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dsl.canonical import reversed_shape
from dsl.types import Action, ImageProgram, Shape, StrokeType
from search import pixel_kernels, pose
from search.neighbourhood import normal_strokes_only, stroke_variants
from search.settings import (EITHER_WAY_ROUNDS, MIN_POLISH_EVALS, OVERLAP_PX, OVERLAP_SHARE, POLISH_EVALS,
                             STROKE_PASSES, STROKE_PRIOR, TRACED_STROKE_PRIOR, WINDOW_MARGIN, WINDOW_SHIFT)
from search.template import Target, template, with_action_marks


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


def _window_cost(templates: list, placements: list, target: Target, window) -> float:
    """Least sum of |grey difference| / 255 over the window, the render shifted by up to WINDOW_SHIFT pixels
    (`pixel_kernels.window_l1_shifted` of `pose.render_window`, rendered in place)."""
    r0, c0, size = window
    key = ("integral", r0, c0, size)  # the window's darkness, the same for every stroke option tried in it
    integral = target.memo.get(key)
    if integral is None:
        padded = size + 2 * WINDOW_SHIFT
        integral = target.memo[key] = pixel_kernels.darkness_integral(
            target.image, r0 - WINDOW_SHIFT, c0 - WINDOW_SHIFT, padded, padded)
    points, offsets, kinds = pose.posed_window_marks(templates, placements, target, r0, c0, size)
    return pixel_kernels.rendered_l1_shifted(points, offsets, kinds, size, pose.RENDER_PEN_RADIUS,
                                             pose.RENDER_OUTLINE_RADIUS, target.image, r0, c0, WINDOW_SHIFT,
                                             integral) / 255.0


def _stroked_templates(templates: list, program: ImageProgram, s: int, changes: tuple) -> list:
    """`templates` (of `program`) with the actions of shape s given other strokes ((index, action), ...):
    the shape's template with those actions' marks swapped (`search.template.with_action_marks`)."""
    templates = list(templates)
    shape = program.shapes[s]
    for i, action in changes:
        if action != shape.actions[i]:
            templates[s] = _stroke_variant(shape, i, action)
            shape = Shape(shape.actions[:i] + (action,) + shape.actions[i + 1:])
    return templates


@functools.lru_cache(maxsize=2048)
def _stroke_variant(shape: Shape, index: int, action: Action):
    """The template of `shape` with action `index` drawn as `action` (memoised: the images of a problem draw
    the same shapes, and a second round of stroke choice tries the same variants)."""
    return with_action_marks(template(shape), shape, index, action)


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


def assign_strokes(
    program: ImageProgram, placements: list, target: Target, source: ImageProgram | None,
    polish_evals: int = POLISH_EVALS, passes: int = STROKE_PASSES, prior: list | None = None,
):
    """Polish the poses on the pixel score, then choose each action's stroke; if strokes changed, polish
    again with them and choose once more (`passes` rounds at most) -> (program, placements). The decoder's
    strokes are preferred where `source` lines up with `program`, or as `prior` gives them (a list per
    shape, None: no preference); with a `prior` the program is free-form: library shapes the generators
    draw only with normal strokes are not looked for."""
    weight = STROKE_PRIOR
    if prior is not None:
        decoder, fixed, weight = prior, [False] * len(program.shapes), TRACED_STROKE_PRIOR
    else:
        decoder = _decoder_strokes(program, source)
        fixed = [normal_strokes_only(shape) for shape in program.shapes]
        program = ImageProgram(tuple(
            shape.with_strokes(StrokeType.NORMAL) if normal else shape for shape, normal in zip(program.shapes, fixed)
        ))
    evals = polish_evals
    for _ in range(passes):
        placements = pose.polish([template(x) for x in program.shapes], list(placements), target, evals)
        program, changed = _choose_strokes(program, placements, target, decoder, fixed, weight)
        if not changed:
            break
        evals = max(polish_evals // 3, MIN_POLISH_EVALS)
    return program, placements


def assign_strokes_either_way(program: ImageProgram, placements: list, target: Target, prior: list):
    """`assign_strokes` with a `prior`, then again with each shape traced the other way in turn
    (`dsl.canonical.reversed_shape`, drawn over the same centreline: `search.pose.reversed_placement`);
    the reading with the lower pixel score is kept -> (program, placements). A shape turned round is also
    turned back from where its own polish left it: the polish of either way can stop short of the pose
    (a scale 1 % off), and the better pose is then given to both; when turning back won, the shape is
    turned round once more from there (EITHER_WAY_ROUNDS)."""

    def scored(candidate: ImageProgram, moved: list, preference: list) -> tuple:
        chosen, chosen_placements = assign_strokes(candidate, moved, target, None, prior=preference)
        cost = pose.pixel_cost([template(x) for x in chosen.shapes], chosen_placements, target)
        return cost, chosen, chosen_placements, preference

    best = scored(program, placements, prior)
    for s in range(len(program.shapes)):
        for _ in range(EITHER_WAY_ROUNDS):
            before = best
            _, current, current_placements, preference = best
            shape = current.shapes[s]
            backwards = reversed_shape(shape)
            flipped = [list(p) for p in preference]
            flipped[s] = flipped[s][::-1]
            moved = list(current_placements)
            moved[s] = pose.reversed_placement(shape, current_placements[s], backwards)
            turned = scored(ImageProgram(current.shapes[:s] + (backwards,) + current.shapes[s + 1:]), moved, flipped)
            moved = list(turned[2])
            moved[s] = pose.reversed_placement(turned[1].shapes[s], turned[2][s], shape)
            returned = scored(current, moved, preference)
            best = min((best, turned, returned), key=lambda option: option[0])
            if best is before or best is turned:
                break
    _, chosen, chosen_placements, _ = best
    return chosen, chosen_placements


def stroke_margins(program: ImageProgram, target: Target, polish_evals: int = POLISH_EVALS):
    """How firmly an image holds each action's stroke type in `program`: the poses fitted and polished on
    the pixel score, then per action the window pixel score of every other stroke type minus that of the
    action's own (negative: another stroke draws the image better there) -> (margins, alternatives,
    placements), margins and alternatives (the best other action) as one list per shape."""
    templates, placements = pose.fit_polished(program, target, polish_evals)
    margins, alternatives = [], []
    for s, shape in enumerate(program.shapes):
        margins.append([])
        alternatives.append([])
        for i in range(len(shape)):
            options, costs = _stroke_costs(program, placements, target, templates[s], s, i)
            best = 1 + int(np.argmin(costs[1:]))
            margins[-1].append(float(costs[best] - costs[0]))
            alternatives[-1].append(options[best])
    return margins, alternatives, placements


def _stroke_costs(program: ImageProgram, placements: list, target: Target, tpl, s: int, i: int):
    """Action i of shape s with its own stroke and every other -> (actions, window pixel scores), own first."""
    window = _action_window(tpl, placements[s], target, i)
    current = program.shapes[s].actions[i]
    options = [current] + list(stroke_variants(current))
    templates = [template(x) for x in program.shapes]
    costs = [_window_cost(_stroked_templates(templates, program, s, ((i, option),)), placements, target, window)
             for option in options]
    return options, costs


def _choose_strokes(
    program: ImageProgram, placements: list, target: Target, decoder, fixed: list[bool], weight: float = STROKE_PRIOR
) -> tuple[ImageProgram, bool]:
    """Each action's stroke type by the pixel score in a window around it (plus `weight` for leaving the
    decoder's stroke), except in the shapes whose strokes are `fixed`."""
    changed = False
    for s, shape in enumerate(program.shapes):
        if fixed[s]:
            continue
        tpl = template(shape)
        for i in range(len(shape)):
            current = program.shapes[s].actions[i]
            options, costs = _stroke_costs(program, placements, target, tpl, s, i)
            costs = [
                cost + (weight if decoder[s][i] is not None and option.stroke is not decoder[s][i] else 0.0)
                for option, cost in zip(options, costs)
            ]
            choice = options[int(np.argmin(costs))]
            if choice != current:
                program, changed = _with_action(program, s, i, choice), True
        for i, j in _overlapping_actions(tpl, placements[s]):
            program, pair_changed = _choose_pair(program, placements, target, decoder, s, i, j, weight)
            changed |= pair_changed
    return program, changed


def _overlapping_actions(tpl, place: pose.Placement) -> list[tuple[int, int]]:
    """Pairs of actions of a shape that draw over each other (most of the shorter one's centreline lies
    within OVERLAP_PX of the other's): their strokes are only seen together (the later one is on top)."""
    points = tpl.coarse * place.s
    owner = tpl.coarse_action
    n = int(owner.max()) + 1 if len(owner) else 0
    pairs = []
    for i in range(n):
        a = points[owner == i]
        for j in range(i + 1, n):
            b = points[owner == j]
            if len(a) == 0 or len(b) == 0:
                continue
            d = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
            if min((d.min(axis=1) < OVERLAP_PX).mean(), (d.min(axis=0) < OVERLAP_PX).mean()) >= OVERLAP_SHARE:
                pairs.append((i, j))
    return pairs


def _choose_pair(
    program: ImageProgram, placements: list, target: Target, decoder, s: int, i: int, j: int,
    weight: float = STROKE_PRIOR,
):
    """The strokes of two overlapping actions chosen jointly (every combination) in a window around both."""
    tpl = template(program.shapes[s])
    wi, wj = _action_window(tpl, placements[s], target, i), _action_window(tpl, placements[s], target, j)
    r0, c0 = min(wi[0], wj[0]), min(wi[1], wj[1])
    window = (r0, c0, max(wi[0] + wi[2] - r0, wj[0] + wj[2] - r0, wi[1] + wi[2] - c0, wj[1] + wj[2] - c0))
    a, b = program.shapes[s].actions[i], program.shapes[s].actions[j]
    best, best_cost = (a, b), np.inf
    base = [template(x) for x in program.shapes]
    for x in [a] + list(stroke_variants(a)):
        for y in [b] + list(stroke_variants(b)):
            templates = _stroked_templates(base, program, s, ((i, x), (j, y)))
            cost = _window_cost(templates, placements, target, window) + sum(
                weight for k, option in ((i, x), (j, y))
                if decoder[s][k] is not None and option.stroke is not decoder[s][k]
            )
            if cost < best_cost - 1e-9:
                best, best_cost = (x, y), cost
    if best == (a, b):
        return program, False
    return _with_action(_with_action(program, s, i, best[0]), s, j, best[1]), True
