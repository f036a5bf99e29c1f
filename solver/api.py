"""`solve_problem`: a Bongard problem in, the induced rule, the query labels and an explanation out.

A problem is given as
  * a problem folder of the released layout (`<root>/<type>/images/<problem>`), its programs read from
    `<root>/<type>/<type>_action_programs.json` when they are used;
  * a `dsl.dataset.Problem` (images, with programs when loaded with them);
  * a `dsl.dataset.ProblemPrograms`, or the JSON entry of a problem ([positives, negatives], 7 each);
  * a `ProblemInput` of context and query images given as programs or as pixel arrays.
Images 0-5 of each side are context, image 6 of each side a query (positive first).

Where the programs come from: a folder or a `Problem` is perceived from its pixels by the `perception`
callable (pixel arrays -> programs; by default the shipped decoder and refinement); with `oracle=True`
its ground-truth programs are read instead (an error if there are none). Programs given directly are used
as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dsl.dataset import (CONTEXT_PER_SIDE, IMAGES_PER_SIDE, DatasetError, Problem, ProblemPrograms, load_problem,
                         read_programs)
from dsl.limits import check_program
from dsl.syntax import parse_image
from dsl.types import ImageProgram
from solver.classify import classify
from solver.evidence import gather, unreadable_reason
from solver.explain import Explanation, explain
from solver.facts import CategorySource, problem_facts
from solver.induce import (ABSTRACT_ENCODINGS, DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT, Induction, induce,
                            query_images)
from solver.posterior import rank
from solver.rules import Family
from solver.rules import Rule
from solver.settings import ALL_FITTING_RULES, EXTRA_CATEGORY_ERRORS, EXTRA_ERRORS

Perception = Callable[[list[np.ndarray]], list[ImageProgram]]
MAX_IMAGES_PER_SIDE = 64  # a problem has 6 context images a side; more is a mistake, not a problem


class SolverError(ValueError):
    """A problem the solver cannot work on (no programs and no perception, malformed input)."""


@dataclass(frozen=True, slots=True)
class ProblemInput:
    """A problem given directly: each image an ImageProgram, a JSON program or a greyscale array."""

    context_a: Sequence
    context_b: Sequence
    queries: Sequence = ()
    notes: Sequence[str] = ()  # why images given as None could not be read (`solver.evidence`)


@dataclass(frozen=True, slots=True)
class Solution:
    rule: Rule | None  # the preferred optimal rule (None if no rule was found in time)
    labels: tuple[bool, ...]  # per query: True = belongs to A
    confidence: tuple[float, ...]  # per query: share of the optimal rules that agree with the label
    explanation: Explanation
    induction: Induction | None = None
    warnings: tuple[str, ...] = ()  # images left out as unreadable, and what that did to the confidence

    def to_dict(self) -> dict:
        return {
            "rule": self.rule.asp if self.rule else None,
            "labels": list(self.labels),
            "confidence": [round(c, 4) for c in self.confidence],
            "explanation": self.explanation.to_dict(),
            "warnings": list(self.warnings),
        }


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


def _split_sides(positives: Sequence, negatives: Sequence, notes: Sequence[str] = ()) -> ProblemInput:
    if len(positives) != IMAGES_PER_SIDE or len(negatives) != IMAGES_PER_SIDE:
        raise SolverError(f"expected {IMAGES_PER_SIDE} positive and {IMAGES_PER_SIDE} negative images, "
                          f"got {len(positives)} and {len(negatives)}")
    return ProblemInput(positives[:CONTEXT_PER_SIDE], negatives[:CONTEXT_PER_SIDE],
                        (positives[CONTEXT_PER_SIDE], negatives[CONTEXT_PER_SIDE]), notes)


def _checked_input(given: ProblemInput) -> ProblemInput:
    """A ProblemInput given directly: each side a sequence of at most MAX_IMAGES_PER_SIDE images, the
    context sides not empty."""
    for side, images in (("set A", given.context_a), ("set B", given.context_b), ("queries", given.queries)):
        if isinstance(images, (str, bytes, np.ndarray)) or not isinstance(images, Sequence):
            raise SolverError(f"{side}: expected a sequence of images, got {type(images).__name__}")
        if len(images) > MAX_IMAGES_PER_SIDE:
            raise SolverError(f"{side}: {len(images)} images, over the limit of {MAX_IMAGES_PER_SIDE}")
        if side != "queries" and not images:
            raise SolverError(f"{side}: no images")
    return given


def _folder_problem(folder: Path, oracle: bool) -> Problem:
    folder = folder.resolve()  # `.`, `name`, `.../1/..`: the dataset root is two levels up the real path
    if not oracle:
        return load_problem(folder)
    return load_problem(folder, read_programs(folder.parent.parent))


def _problem_images(problem: Problem, oracle: bool) -> ProblemInput:
    images = problem.positives + problem.negatives
    if oracle:
        if not problem.has_programs:
            raise SolverError(f"{problem.name}: oracle perception asked for, but the problem has no programs")
        return _split_sides([i.program for i in problem.positives], [i.program for i in problem.negatives])
    pixels, notes = [], []
    for image in images:
        try:
            pixels.append(image.load())
        except DatasetError as error:  # that image is left out (`solver.evidence`), the problem goes on
            pixels.append(None)
            notes.append(str(error))
    return _split_sides(pixels[:len(problem.positives)], pixels[len(problem.positives):], notes)


def as_input(problem, oracle: bool = False) -> ProblemInput:
    """Any accepted problem form as a ProblemInput (programs or pixel arrays): a folder or a `Problem` as
    its pixels, or with `oracle` as its ground-truth programs."""
    if isinstance(problem, (str, Path)):
        problem = _folder_problem(Path(problem), oracle)
    if isinstance(problem, Problem):
        return _problem_images(problem, oracle)
    if isinstance(problem, ProblemPrograms):
        return _split_sides(problem.positives, problem.negatives)
    if isinstance(problem, ProblemInput):
        return _checked_input(problem)
    if isinstance(problem, (list, tuple)) and len(problem) == 2:
        if not all(isinstance(side, (list, tuple)) for side in problem):
            raise SolverError("a problem given as a pair must be (positives, negatives), two lists of 7 images")
        return _split_sides(problem[0], problem[1])
    raise SolverError(f"cannot read a problem from {type(problem).__name__}")


@functools.cache
def _default_perception() -> Perception:
    """The shipped decoder + refinement, built once per process (the checkpoint loads on first use)."""
    from solver.perceive import PixelPerception

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
    perception = perception or _default_perception()
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


ABSTRACT_FAMILIES = {Family.ATTRIBUTE, Family.COUNT}
CATEGORY_FAMILIES = {Family.CATEGORY, Family.CATEGORIES}
CATEGORY_ENCODINGS = ("rule.lp", "category.lp")


def weighed(induction: Induction) -> bool:
    """The winner is a rule the posterior weighs: attributes or counts, possibly with categories (a
    conjunction of both is no generator's concept; the posterior ranks the pure rules instead)."""
    families = induction.rules[0].rule.families() if induction.rules else set()
    return bool(families & ABSTRACT_FAMILIES) and families <= ABSTRACT_FAMILIES | CATEGORY_FAMILIES


def size_principle(induction: Induction, facts, time_limit: float, extra_errors: int = EXTRA_ERRORS) -> Induction:
    """An abstract rule won: weigh every attribute and count rule that fits the context as well, or with
    at most `extra_errors` more misclassified context images, and every rule of shape categories with at
    most EXTRA_CATEGORY_ERRORS more, by its posterior under the generators (`solver.posterior`, where a
    misclassified image is noise: a context image whose attribute the features read otherwise than the
    concept's labels, or whose shape perception misread); the first rule is then the most probable one.
    A winner that mixes categories with attributes is replaced by the most probable pure rule."""
    remaining = max(0.5, time_limit - induction.seconds)
    errors = induction.cost[0] if induction.cost else None
    fitting = induce(facts, time_limit=remaining, max_rules=ALL_FITTING_RULES, encodings=ABSTRACT_ENCODINGS,
                     all_fitting=True, max_errors=None if errors is None else errors + extra_errors)
    pure = induction.rules[0].rule.families() <= ABSTRACT_FAMILIES
    if pure and fitting.cost[:1] != induction.cost[:1]:
        return induction
    shapes = induce(facts, time_limit=remaining, max_rules=ALL_FITTING_RULES, encodings=CATEGORY_ENCODINGS,
                    all_fitting=True, max_errors=None if errors is None else errors + EXTRA_CATEGORY_ERRORS)
    candidates = replace(fitting, rules=fitting.rules + shapes.rules)
    ranked = rank(candidates, facts) if candidates.rules else None
    if ranked is None:
        return induction
    return replace(ranked, seconds=induction.seconds + fitting.seconds + shapes.seconds)


def solve_problem(
    problem,
    oracle: bool = False,
    perception: Perception | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_rules: int = DEFAULT_MAX_RULES,
    decoded: bool = False,
) -> Solution:
    """Induce the rule separating A from B, label the queries by the optimal rules, explain. When an
    attribute or count rule wins, every rule that fits the context as well is weighed by its posterior
    under the size principle (`solver.posterior`): the first rule is the most probable one, and the
    queries are labelled by the posterior-weighted vote.

    `problem`: a problem folder (released layout), a loaded `Problem`, its programs (`ProblemPrograms`, a
    JSON entry, a (positives, negatives) pair) or a `ProblemInput` of pixel arrays and/or programs. A folder
    or a `Problem` is solved from its pixels unless `oracle=True`, which reads the ground-truth programs of
    the dataset's action-program JSON instead (an error if it has none); programs given directly are used
    as they are. `perception`: images -> programs (default: the shipped decoder and refinement).

    `decoded=True` says that programs given directly were decoded from pixels (not ground truth), so
    categories are matched with tolerance (`solver.categories`) and stroke sequences may be matched within
    a tolerance (near facts, `solver.facts`); pixels decoded here imply it."""
    given = as_input(problem, oracle)
    decoded = decoded or any(isinstance(item, np.ndarray)
                             for side in (given.context_a, given.context_b, given.queries) for item in side)
    sides = (("set A", given.context_a), ("set B", given.context_b), ("queries", given.queries))
    (context_a, context_b, queries), notes = _programs(sides, oracle, perception)
    evidence = gather(context_a, context_b, queries, [*given.notes, *notes])
    categories = CategorySource.MATCHED if decoded else CategorySource.EXACT
    facts = problem_facts(evidence.context_a, evidence.context_b, evidence.readable_queries, categories,
                          tolerant=decoded)
    induction = induce(facts, time_limit=time_limit, max_rules=max_rules)
    if weighed(induction):
        induction = size_principle(induction, facts, time_limit)
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
