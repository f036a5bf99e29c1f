"""Figures of the refinement stage (`search.refine`), shared by `bench decoder --refine` and `bench refine`.

    measure(items, basic=False, budget_ms=..., max_candidates=..., progress=True) -> dict

Inputs: `items`, a list of (image, true program, proposals): image a uint8 greyscale (or RGB) array,
true program an `ImageProgram`, proposals a list of objects with `program` and `logp` (the decoder's
`Proposal`, or `synthetic_proposals(...)`). `basic=True` also scores library categories (basic-shape
images). Output dict:
  n                                    images measured
  exact_refined                        share of images whose refined program is the true one, by
                                       `dsl.canonical.same_image` with stroke types (the decoder
                                       benchmark's definition of exact: lengths 0.02 and angles 2 degrees,
                                       or 0.05 and 5 degrees with basic=True)
  exact_structure                      the same with stroke types ignored
  inexact_refined                      the images (index in the split's order, 14 per problem) not exact
  refine_ms_median, refine_ms_p90      wall time of `refine_image` per image (one core)
  kernel_candidates_per_second_numba   candidates scored per second by `kernels.sparse_score` (the score
                                       of the search's inner loop) on poses of these images
  kernel_candidates_per_second_reference   the same with its plain-Python twin
  kernel_speedup                       their ratio
  category_top1_basic                  basic=True only: share of shapes whose refined shape's top-1
                                       library match (`search.matching.match_shape`) shares a name with
                                       the true shape's top-1 match (a geometric twin counts); else None
  category_top1_basic_images           the same per image (every shape right)
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from tqdm import tqdm

from dsl.canonical import same_image
from dsl.types import Action, ActionKind, DATASET_STROKE_TYPES, ImageProgram, Shape
from search import kernel_twins, kernels, pose
from search.refine import Proposal, refine_image
from search.template import make_target, template

CORRUPTIONS = ("stroke", "turn", "kind", "drop", "jitter")
# the decoder benchmark's tolerances of "exact": snapped free-form programs / raw programs
FREE_FORM_TOLERANCE = {"length_tol": 0.02, "angle_tol": 2.0}
BASIC_TOLERANCE = {"length_tol": 0.05, "angle_tol": 5.0}


def corrupt(program: ImageProgram, rng: np.random.Generator) -> ImageProgram:
    """One error a noisy decoder makes: a wrong stroke type on an action, a turn off by 30 degrees, a
    line/arc swapped, an action dropped, or every value of a shape jittered (8 % and 4 degrees)."""
    shapes = list(program.shapes)
    s = int(rng.integers(len(shapes)))
    actions = list(shapes[s].actions)
    i = int(rng.integers(len(actions)))
    way = CORRUPTIONS[int(rng.integers(len(CORRUPTIONS)))]
    a = actions[i]
    if way == "stroke":
        others = [t for t in DATASET_STROKE_TYPES if t is not a.stroke]
        actions[i] = a.with_stroke(others[int(rng.integers(len(others)))])
    elif way == "turn" and len(actions) > 1:
        j = int(rng.integers(1, len(actions)))
        actions[j] = actions[j].with_turn(actions[j].turn + float(rng.choice([-30.0, 30.0])))
    elif way == "kind":
        actions[i] = (
            Action.arc(0.5, 90.0, a.turn, a.stroke) if a.kind is ActionKind.LINE else Action.line(1.0, a.turn, a.stroke)
        )
    elif way == "drop" and len(actions) > 1:
        del actions[i]
        actions[0] = actions[0].with_turn(0.0)
    else:
        def jitter(v: float) -> float:
            return v * (1.0 + rng.normal(0.0, 0.08))

        actions = [
            Action(x.kind, x.stroke, x.turn + (rng.normal(0.0, 4.0) if k else 0.0), jitter(x.length), jitter(x.radius),
                   jitter(x.angle))
            for k, x in enumerate(actions)
        ]
    shapes[s] = Shape(tuple(actions))
    return ImageProgram(tuple(shapes))


def synthetic_proposals(program: ImageProgram, rng: np.random.Generator, k: int = 5) -> list[Proposal]:
    """A noisy decoder's top-k imitated: k copies of the true program, each with one or two `corrupt`
    errors (so none is the true program unless the errors cancel), log-probabilities 0, -0.5, -1, ..."""
    proposals = []
    for rank in range(k):
        p = program
        for _ in range(int(rng.integers(1, 3))):
            p = corrupt(p, rng)
        proposals.append(Proposal(p, -0.5 * rank))
    return proposals


def _top_names(shape: Shape) -> set[str]:
    from search.matching import match_shape

    matches = match_shape(shape, top=1)
    return set(matches[0].names) if matches else set()


def category_hits(refined: ImageProgram, truth: ImageProgram) -> list[bool]:
    """Per true shape: does the refined shape assigned to it have the same top-1 library match?"""
    true_names = [_top_names(s) for s in truth.shapes]
    got_names = [_top_names(s) for s in refined.shapes]
    best: list[bool] = [False] * len(true_names)
    for order in itertools.permutations(range(len(got_names)), min(len(got_names), len(true_names))):
        hits = [bool(true_names[t] & got_names[g]) for t, g in enumerate(order)]
        hits += [False] * (len(true_names) - len(hits))
        if sum(hits) > sum(best):
            best = hits
    return best


def kernel_speed(items, evaluations: int = 2000, reference_evaluations: int = 20) -> dict:
    """Candidates scored per second by `kernels.sparse_score` and by its twin, on the items' images
    with their true programs fitted."""
    cases = []
    for image, truth, _ in items[: min(len(items), 5)]:
        target = make_target(image)
        templates = [template(s) for s in truth.shapes]
        placements, _ = pose.fit(templates, target)
        problem = pose.SparseProblem(templates, target)
        poses = np.array([p.affine() for p in placements])
        cases.append((problem.points, problem.radii, problem.owner, poses, target.dt, target.samples))
    args = (pose.CAP, pose.REACH)
    kernels.sparse_score(*cases[0], *args)
    start = time.perf_counter()
    for k in range(evaluations):
        kernels.sparse_score(*cases[k % len(cases)], *args)
    numba_rate = evaluations / (time.perf_counter() - start)
    start = time.perf_counter()
    for k in range(reference_evaluations):
        kernel_twins.sparse_score_reference(*cases[k % len(cases)], *args)
    reference_rate = reference_evaluations / (time.perf_counter() - start)
    return {
        "kernel_candidates_per_second_numba": numba_rate,
        "kernel_candidates_per_second_reference": reference_rate,
        "kernel_speedup": numba_rate / reference_rate,
    }


def measure(
    items: list[tuple[np.ndarray, ImageProgram, list]],
    basic: bool = False,
    budget_ms: float | None = None,
    max_candidates: int | None = None,
    progress: bool = True,
    results: list | None = None,
    refine=None,
) -> dict:
    """Refine every item and return the figures described in the module docstring. If `results` is a
    list, the `Refinement` of every item is appended to it (for pictures and error dumps). `refine`:
    a callable (image, proposals) -> an object with `program` used instead of `refine_image` (e.g. the
    product's perception path)."""
    options = {}
    if budget_ms is not None:
        options["budget_ms"] = budget_ms
    if max_candidates is not None:
        options["max_candidates"] = max_candidates
    if refine is None:
        def refine(image, proposals):
            return refine_image(image, proposals, **options)
    if items:
        refine(items[0][0], items[0][2])  # compile and warm the caches outside the timing
    exact, structure, times, shape_hits, image_hits = [], [], [], [], []
    for image, truth, proposals in tqdm(items, desc="refine", disable=not progress):
        started = time.perf_counter()
        refinement = refine(image, proposals)
        times.append((time.perf_counter() - started) * 1000.0)
        tolerance = BASIC_TOLERANCE if basic else FREE_FORM_TOLERANCE
        exact.append(same_image(refinement.program, truth, **tolerance))
        structure.append(same_image(refinement.program, truth, ignore_strokes=True, **tolerance))
        if basic:
            hits = category_hits(refinement.program, truth)
            shape_hits += hits
            image_hits.append(all(hits))
        if results is not None:
            results.append(refinement)
    figures = {
        "n": len(items),
        "exact_refined": float(np.mean(exact)) if items else None,
        "exact_structure": float(np.mean(structure)) if items else None,
        "inexact_refined": [k for k, hit in enumerate(exact) if not hit],
        "refine_ms_median": float(np.median(times)) if items else None,
        "refine_ms_p90": float(np.percentile(times, 90)) if items else None,
        "category_top1_basic": float(np.mean(shape_hits)) if basic and shape_hits else None,
        "category_top1_basic_images": float(np.mean(image_hits)) if basic and image_hits else None,
    }
    if items:
        figures.update(kernel_speed(items))
    return figures
