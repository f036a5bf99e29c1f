"""A free-form hypothesis completed on set A: one action added, dropped or changed at a time where the set-A
images, fitted together, say H lacks it (render-and-compare of the centreline).

    completed(program, targets, placements, fits) -> Completion(program, fits, placements, added)

H is one set-A image's reading, taken because it explains the most of set A (`solver.reading.form`). The decoder
can miss an action and its reading still explain every set-A image within the noise: most often a shape's first or
last action (a line leaving a circle where the loop's start is not where the decoder began it, the last line of a
zigzag run), or a turn. Every set-B image and query is then checked against a program the generator did not draw,
and its near misses are the wrong ones (generated ff seed 66101, 600 problems: 16 of the 20 wrong answers were in
the 76 problems whose H was not the true program; 4 in the other 524). What the set-A images share tells: the
missing ink lies beside H in each of them. Tried where H fits set A worse than COMPLETION_ABOVE_PX on average.

1. Candidates (`_edits`): every one-action edit of each of H's shapes, in the generator's direction of travel (its
   arcs turn left; a shape of lines only tells no direction, and takes arcs either way): a turn set to another of the
   generator's turns, a line made an arc or back, the first or the last action dropped, an action put in between two
   (a line or an arc after each of the generator's turns), or added before the first (which then turns by each turn)
   or after the last. A closed shape also has its action added where its loop is started at the joints set A's
   unexplained ink lies nearest (`search.pose.unexplained_near_joints`): the loop's start is the decoder's choice.
2. Screen: each candidate drawn at H's fitted pose in each image, the part the edit leaves alone kept in place
   (`search.pose.anchored`); a closed shape's also turned about its centre by COMPLETION_TURNS (a loop of quarter
   arcs fits its ink at any turn, so its joints are where the decoder put them, not where the missing action
   leaves it); the sparse score summed over set A ranks them, and the COMPLETION_KEEP best go on.
3. Fit: each one's pose refined in each image from the screen's (`search.pose.refit_near`), and fitted from scratch
   where that leaves it behind H; where it beats H, H is fitted as hard (from more heading guesses, and from the
   candidate's pose: `search.near_miss.retried`, `centreline_refit`). A candidate that fits better than H on every
   set-A image but one, and by COMPLETION_GAIN_PX on average, replaces H; then once more (COMPLETION_ROUNDS).

An edit whose centreline draws what H draws (a loop walked on over itself) changes no fit and is never taken here:
only the strokes can tell it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsl.canonical import from_travel_form, is_closed, normalise_angle, travel_variants
from dsl.free_form import FREE_FORM_TURNS
from dsl.types import ActionKind, ImageProgram, Shape, StrokeType
from search import pose
from search.near_miss import centreline_fit, centreline_refit, centreline_templates, retried
from search.neighbourhood import forward_free_form, free_form_action
from search.settings import (COMPLETION_ABOVE_PX, COMPLETION_GAIN_PX, COMPLETION_KEEP, COMPLETION_LOOP_STARTS,
                             COMPLETION_ROUNDS, COMPLETION_TURNS, FIT_EVALS)
from search.template import Target


@dataclass(frozen=True)
class Completion:
    """H after completion, its centreline fits and placements on set A, how many edits were taken, and how many
    actions they added (their strokes are normal: a guess the caller reads from set A)."""

    program: ImageProgram
    fits: list
    placements: list
    edits: int = 0
    added: int = 0


@dataclass(frozen=True)
class _Edit:
    shape: Shape  # the shape edited
    anchors: tuple  # (H's joint, the edited shape's joint) pairs drawn at the same place
    loop: bool  # the edited shape is a closed loop with an action added: turned about its centre too
    added: int  # actions added (+1), dropped (-1) or changed (0)


def _edits(shape: Shape, lost: np.ndarray) -> list[_Edit]:
    """The one-action edits of `shape` (module docstring, 1), `lost`: the share of set A's ink unexplained near each
    of its joints, summed over the images."""
    acts = list(shape.actions)
    n = len(acts)
    kinds = [(ActionKind.LINE, 1.0), (ActionKind.ARC, 1.0)]
    if all(a.kind is ActionKind.LINE for a in acts):
        kinds.append((ActionKind.ARC, -1.0))
    out = []
    for i, a in enumerate(acts):
        both = ((0, 0), (i + 1, i + 1))
        if i > 0:
            out += [_Edit(Shape(tuple(acts[:i] + [a.with_turn(t)] + acts[i + 1:])), both, False, 0)
                    for t in FREE_FORM_TURNS if abs(normalise_angle(t - a.turn)) > 1.0]
        for kind, sign in kinds:
            if kind is a.kind and (kind is ActionKind.LINE or np.sign(a.angle) == sign):
                continue
            swapped = free_form_action(kind, a.turn, a.stroke, sign)
            out.append(_Edit(Shape(tuple(acts[:i] + [swapped] + acts[i + 1:])), both, False, 0))
    if n > 1:
        out.append(_Edit(Shape((acts[1].with_turn(0.0),) + tuple(acts[2:])), ((2, 1),), False, -1))
        out.append(_Edit(Shape(tuple(acts[:-1])), ((0, 0),), False, -1))
    for i in range(1, n):
        out += [_Edit(Shape(tuple(acts[:i] + [free_form_action(kind, t, StrokeType.NORMAL, sign)] + acts[i:])),
                      ((0, 0), (i, i + 1)), False, 1) for kind, sign in kinds for t in FREE_FORM_TURNS]
    loop = n > 1 and is_closed(shape)
    starts = [(acts, 0)]
    if loop:
        variants = travel_variants(shape)
        for j in np.argsort(-lost[:n], kind="stable")[:COMPLETION_LOOP_STARTS]:
            if j > 0 and lost[j] > 0:
                starts.append((list(from_travel_form(variants[2 * j]).actions), int(j)))
    for base, j in starts:
        after, before = ((j + 1) % n, 1) if j else (0, 0), ((j + 1) % n, 2) if j else (1, 2)
        for kind, sign in kinds:
            for t in FREE_FORM_TURNS:
                new = free_form_action(kind, t, StrokeType.NORMAL, sign)
                out.append(_Edit(Shape(tuple(base + [new])), (after,), loop, 1))
                first = free_form_action(kind, 0.0, StrokeType.NORMAL, sign)
                out.append(_Edit(Shape(tuple([first, base[0].with_turn(t)] + base[1:])), (before,), loop, 1))
    return out


def _screened(program: ImageProgram, targets: list[Target], placements: list) -> list[tuple]:
    """Every edit of every shape scored at H's poses (module docstring, 2) -> [(summed score, shape index, edit, the
    edited program, the best start placement per image)], best first, COMPLETION_KEEP of them."""
    plain = centreline_templates(program)
    lost = [pose.unexplained_near_joints(plain, places, target) for target, places in zip(targets, placements)]
    scored = []
    for s, shape in enumerate(program.shapes):
        for edit in _edits(shape, sum(found[s] for found in lost)):
            edited = ImageProgram(program.shapes[:s] + (edit.shape,) + program.shapes[s + 1:])
            templates = centreline_templates(edited)
            tpl = templates[s]
            total, starts = 0.0, []
            for target, places in zip(targets, placements):
                problem = pose.SparseProblem(templates, target)
                centre = pose.drawn_centroid(plain[s], places[s])
                best, start = np.inf, places[s]
                for joint, own in edit.anchors:
                    if joint >= len(plain[s].joints) or own >= len(tpl.joints):
                        continue
                    anchored = pose.anchored(plain[s], places[s], tpl, joint, own)
                    for turn in (COMPLETION_TURNS if edit.loop else (0.0,)):
                        trial = pose.turned_about(anchored, centre, turn)
                        cost = problem.cost(places[:s] + [trial] + places[s + 1:])
                        if cost < best:
                            best, start = cost, trial
                total += best
                starts.append(start)
            scored.append((total, s, edit, edited, starts))
    scored.sort(key=lambda item: item[0])
    return scored[:COMPLETION_KEEP]


def _fitted(edited: ImageProgram, s: int, targets: list[Target], placements: list, starts: list,
            fits: list) -> tuple[list, list] | None:
    """The edited program's (shape `s` edited) fits and placements on set A (module docstring, 3), or None when its
    first refinement is nowhere near COMPLETION_GAIN_PX better than H's on average."""
    templates = centreline_templates(edited)
    found = [pose.refit_near(templates, list(places), target, s, [start], FIT_EVALS)
             for target, places, start in zip(targets, placements, starts)]
    new_fits, new_placements = [value for _, value in found], [list(places) for places, _ in found]
    if np.mean(fits) - np.mean(new_fits) < COMPLETION_GAIN_PX / 2:
        return None
    for k, target in enumerate(targets):
        if new_fits[k] >= fits[k]:
            value, places = centreline_fit(edited, target, templates=templates)
            if value < new_fits[k]:
                new_fits[k], new_placements[k] = value, places
    return new_fits, new_placements


def worth_trying(fits: list) -> bool:
    """Whether a hypothesis fitting the set-A images at `fits` (px) is worth completing (COMPLETION_ABOVE_PX)."""
    return bool(np.mean(fits) >= COMPLETION_ABOVE_PX)


def completed(program: ImageProgram, targets: list[Target], placements: list, fits: list) -> Completion:
    """`program` (a free-form hypothesis H), completed on the set-A images `targets`, where its centreline was fitted
    at `placements` (a list per image) with `fits` (px): the module docstring."""
    program = ImageProgram(tuple(forward_free_form(shape) for shape in program.shapes))
    fits, placements, edits, added = list(fits), [list(places) for places in placements], 0, 0
    if not worth_trying(fits):
        return Completion(program, fits, placements)
    for _ in range(COMPLETION_ROUNDS):
        best = None
        for _, s, edit, edited, starts in _screened(program, targets, placements):
            found = _fitted(edited, s, targets, placements, starts, fits)
            if found is None:
                continue
            new_fits, new_placements = found
            own = list(fits)  # H fitted as hard where the edit beats it
            for k, target in enumerate(targets):
                if new_fits[k] < own[k]:
                    own[k] = min(own[k], retried(program, target, own[k], placements[k])[0],
                                 centreline_refit(program, target, new_placements[k])[0])
            gain = float(np.mean(own) - np.mean(new_fits))
            better = sum(new < old for new, old in zip(new_fits, own))
            if gain >= COMPLETION_GAIN_PX and better >= len(targets) - 1 and (best is None or gain > best[0]):
                best = (gain, edited, new_fits, new_placements, edit.added)
        if best is None:
            break
        _, program, fits, placements, more = best
        edits, added = edits + 1, added + max(more, 0)
    return Completion(program, fits, placements, edits, added)
