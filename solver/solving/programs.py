"""A problem whose images are programs (or pixel arrays for a perception callable) solved: facts, the rule
chosen, the queries labelled by the rules' vote, the explanation.

    solution = solve_programs(given, oracle, perception, decoded, time_limit, max_rules[, posterior])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from dsl.limits import check_program
from dsl.syntax import parse_image
from dsl.types import ImageProgram
from solver.explaining import explain
from solver.induction import CategorySource, chosen_rules, classify, problem_facts, query_images
from solver.reading import gather, unreadable_reason
from solver.solving.types import ProblemInput, Solution, SolverError

Perception = Callable[[list[np.ndarray]], list[ImageProgram]]


def _as_program(item, where: str) -> ImageProgram | np.ndarray | None:
    if item is None or isinstance(item, np.ndarray):
        return item  # None: an image that could not be read (see ProblemInput.notes)
    if isinstance(item, ImageProgram):
        try:
            check_program(item)
        except ValueError as error:
            raise SolverError(f"{where}: {error}") from None
        return item
    if isinstance(item, (list, tuple)):
        try:
            return parse_image(item)
        except ValueError as error:
            raise SolverError(f"{where}: {error}") from None
    kind = type(item).__name__
    raise SolverError(f"{where}: expected an ImageProgram, a JSON program or an image array, got {kind}")


@functools.cache
def default_perception():
    """The shipped decoder + refinement, built once per process (the checkpoint loads on first use)."""
    from solver.reading import PixelPerception

    return PixelPerception()


def _programs(
    sides: Sequence[tuple[str, Sequence]], oracle: bool, perception: Perception | None
) -> tuple[list[list[ImageProgram | None]], list[str]]:
    """Every side's images as programs, and why those left as None could not be read; pixel images of
    all sides go to perception in one batch, after `unreadable_reason` has turned away those that
    cannot be drawings."""
    items = [[_as_program(item, f"{side} image {k}") for k, item in enumerate(images)] for side, images in sides]
    arrays = [(s, k) for s, side in enumerate(items) for k, item in enumerate(side) if isinstance(item, np.ndarray)]
    if arrays and oracle:
        where = ", ".join(f"{sides[s][0]} image {k}" for s, k in arrays)
        raise SolverError(f"oracle perception asked for, but these images have no program: {where}")
    notes = []
    for s, side in enumerate(items):
        for k, item in enumerate(side):
            if isinstance(item, np.ndarray) and (reason := unreadable_reason(item)) is not None:
                side[k] = None
                notes.append(f"{sides[s][0]} image {k}: {reason}")
    arrays = [(s, k) for s, side in enumerate(items) for k, item in enumerate(side) if isinstance(item, np.ndarray)]
    if not arrays:
        return items, notes
    perception = perception or default_perception()
    pixels = [items[s][k] for s, k in arrays]
    a_images = sum(s == 0 for s, _ in arrays)
    b_images = sum(s == 1 for s, _ in arrays)
    read_a = sum(item is not None for item in items[0])
    if getattr(perception, "reconciles", False) and a_images == read_a:  # set A perceived here: reconcile
        decoded = perception(pixels, positives=a_images, negatives=b_images)
    else:
        decoded = perception(pixels)
    if len(decoded) != len(arrays):
        raise SolverError(f"perception returned {len(decoded)} programs for {len(arrays)} images")
    for (s, k), program in zip(arrays, decoded):
        items[s][k] = program
    return items, notes


def solve_programs(given: ProblemInput, oracle: bool, perception: Perception | None, decoded: bool,
                   time_limit: float, max_rules: int, posterior: bool = True) -> Solution:
    """Induce the rule separating A from B, label the queries by the optimal rules' vote, explain (the confidence:
    the vote's share). Pixel arrays among the images are read by `perception` (images -> programs, one batch).
    `decoded`: the programs were decoded from pixels, so categories are matched with tolerance and stroke sequences
    may be matched within a tolerance (`solver.induction.facts`); pixels read here imply it. `posterior=False`: the
    rule chosen without the posterior (`solver.induction.chosen_rules`; the ablation `Switches.posterior`)."""
    decoded = decoded or any(isinstance(item, np.ndarray)
                             for side in (given.context_a, given.context_b, given.queries) for item in side)
    sides = (("set A", given.context_a), ("set B", given.context_b), ("queries", given.queries))
    (context_a, context_b, queries), notes = _programs(sides, oracle, perception)
    evidence = gather(context_a, context_b, queries, [*given.notes, *notes])
    categories = CategorySource.MATCHED if decoded else CategorySource.EXACT
    facts = problem_facts(evidence.context_a, evidence.context_b, evidence.readable_queries, categories,
                          tolerant=decoded)
    induction = chosen_rules(facts, time_limit, max_rules, posterior=posterior)
    votes = classify(induction, query_images(facts))
    labels, confidence = evidence.labels([v.in_a for v in votes], [v.confidence for v in votes])
    return Solution(
        rule=induction.rules[0].rule if induction.rules else None,
        labels=labels,
        confidence=confidence,
        explanation=explain(induction, facts),
        induction=induction,
        warnings=tuple(evidence.warnings),
    )
