"""`solve_problem`: a Bongard problem in, the induced rule, the query labels and an explanation out.

A problem is given as
  * a problem folder of the released layout (`<root>/<type>/images/<problem>`), its programs read from
    `<root>/<type>/<type>_action_programs.json` when they are used;
  * a `dsl.dataset.Problem` (images, with programs when loaded with them);
  * a `dsl.dataset.ProblemPrograms`, or the JSON entry of a problem ([positives, negatives], 7 each);
  * a `ProblemInput` of context and query images given as programs or as pixel arrays.
Images 0-5 of each side are context, image 6 of each side a query (positive first).

Where the programs come from: a folder or a `Problem` is perceived from its pixels; with `oracle=True` its
ground-truth programs are read instead (an error if there are none). Programs given directly are used as they are.
Pixels go the way the commands take them (`solver.solving.folder.solve_images`: the problem perceived as a whole,
each label's confidence calibrated from what perception saw) unless `perception` is a plain callable
(pixel arrays -> programs), whose programs are solved as given ones are (the confidence: the rules' vote share).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dsl.dataset import CONTEXT_PER_SIDE, IMAGES_PER_SIDE, DatasetError, Problem, ProblemPrograms
from dsl.limits import LimitError, check_count, check_flag, check_seconds
from dsl.types import ImageProgram
from solver.induction import DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT
from solver.solving import programs as _solving
from solver.solving.folder import load_folder, readable_pixels, solve_folder, solve_images
from solver.solving.programs import Perception, solve_programs
from solver.solving.types import ProblemInput, Solution, SolverError

__all__ = ["ProblemInput", "Solution", "SolverError", "as_input", "solve_problem"]

MAX_IMAGES_PER_SIDE = 64  # a problem has 6 context images a side; more is a mistake, not a problem
MAX_RULES_LIMIT = 100_000  # optimal rules enumerated at most (the default is DEFAULT_MAX_RULES)


def checked_option(name: str, check, value, *bounds):
    """`check(value, *bounds)` (a check of `dsl.limits`, the command line's too), its LimitError a SolverError
    naming the argument."""
    try:
        return check(value, *bounds)
    except LimitError as error:
        raise SolverError(f"{name}: {error}") from None


def _checked_options(oracle, perception, time_limit, max_rules, decoded) -> tuple[bool, float, int, bool]:
    if perception is not None and not callable(perception):
        raise SolverError("perception: expected a callable (images -> programs) or None, "
                          f"got {type(perception).__name__}")
    return (checked_option("oracle", check_flag, oracle), checked_option("time_limit", check_seconds, time_limit),
            checked_option("max_rules", check_count, max_rules, 1, MAX_RULES_LIMIT),
            checked_option("decoded", check_flag, decoded))


def _checked_perception(perception):
    """A plain callable perception whose answers are checked: a sequence of one ImageProgram (or None: unread) per
    image it was given, else a SolverError (not an exception from deep inside induction)."""
    if perception is None or _perceived_whole(perception):
        return perception

    def perceive(images, **options):
        found = perception(images, **options)
        if isinstance(found, (str, bytes)) or not isinstance(found, Sequence) or len(found) != len(images):
            size = f"{len(found)} items" if isinstance(found, Sequence) else type(found).__name__
            raise SolverError(f"perception: expected one program per image ({len(images)}), got {size}")
        wrong = next((k for k, program in enumerate(found)
                      if program is not None and not isinstance(program, ImageProgram)), None)
        if wrong is not None:
            raise SolverError(f"perception: image {wrong} read as {type(found[wrong]).__name__}, not an ImageProgram")
        return list(found)

    perceive.reconciles = getattr(perception, "reconciles", False)
    return perceive


def _split_sides(positives: Sequence, negatives: Sequence, notes: Sequence[str] = ()) -> ProblemInput:
    if len(positives) != IMAGES_PER_SIDE or len(negatives) != IMAGES_PER_SIDE:
        raise SolverError(f"expected {IMAGES_PER_SIDE} positive and {IMAGES_PER_SIDE} negative images, "
                          f"got {len(positives)} and {len(negatives)}")
    return ProblemInput(positives[:CONTEXT_PER_SIDE], negatives[:CONTEXT_PER_SIDE],
                        (positives[CONTEXT_PER_SIDE], negatives[CONTEXT_PER_SIDE]), notes)


def _checked_input(given: ProblemInput) -> ProblemInput:
    """A ProblemInput given directly: each side a sequence of at most MAX_IMAGES_PER_SIDE images, the
    context sides not empty; an image given as None (one that could not be read) only with a note per such
    image saying why (`ProblemInput.notes`, as the tool's own readers leave them)."""
    missing = []
    for side, images in (("set A", given.context_a), ("set B", given.context_b), ("queries", given.queries)):
        if isinstance(images, (str, bytes, np.ndarray)) or not isinstance(images, Sequence):
            raise SolverError(f"{side}: expected a sequence of images, got {type(images).__name__}")
        if len(images) > MAX_IMAGES_PER_SIDE:
            raise SolverError(f"{side}: {len(images)} images, over the limit of {MAX_IMAGES_PER_SIDE}")
        if side != "queries" and not images:
            raise SolverError(f"{side}: no images")
        missing += [f"{side} image {k}" for k, image in enumerate(images) if image is None]
    notes = given.notes
    if isinstance(notes, (str, bytes)) or not isinstance(notes, Sequence) or not all(isinstance(n, str) for n in notes):
        raise SolverError(f"notes: expected a sequence of strings, got {type(notes).__name__}")
    if len(missing) > len(notes):
        raise SolverError(f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}: None where an image must be "
                          "(an ImageProgram, a JSON program or a greyscale array); an image that could not be read "
                          "is given as None with a note in ProblemInput.notes saying why")
    return given


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
        except DatasetError as error:  # that image is left out (`solver.reading.evidence`), the problem goes on
            pixels.append(None)
            notes.append(str(error))
    return _split_sides(pixels[:len(problem.positives)], pixels[len(problem.positives):], notes)


def as_input(problem, oracle: bool = False) -> ProblemInput:
    """Any accepted problem form as a ProblemInput (programs or pixel arrays): a folder or a `Problem` as
    its pixels, or with `oracle` as its ground-truth programs."""
    if isinstance(problem, (str, Path)):
        problem = load_folder(Path(problem), oracle)
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


def _perceived_whole(perception) -> bool:
    """Whether `perception` perceives a problem as a whole (`solver.reading.PixelPerception` and the like), so that
    pixels go the commands' way; a plain callable (pixel arrays -> programs) does not."""
    return hasattr(perception, "perceive")


def _all_pixels(given: ProblemInput) -> bool:
    items = [*given.context_a, *given.context_b, *given.queries]
    return any(isinstance(item, np.ndarray) for item in items) and all(
        item is None or isinstance(item, np.ndarray) for item in items)


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
    under the size principle (`solver.induction.posterior`): the first rule is the most probable one, and the
    queries are labelled by the posterior-weighted vote.

    `problem`: a problem folder (released layout), a loaded `Problem`, its programs (`ProblemPrograms`, a
    JSON entry, a (positives, negatives) pair) or a `ProblemInput` of pixel arrays and/or programs. A folder
    or a `Problem` is solved from its pixels unless `oracle=True`, which reads the ground-truth programs of
    the dataset's action-program JSON instead (an error if it has none); programs given directly are used
    as they are. `perception`: the problem's pixels perceived (default: the shipped decoder and refinement,
    `solver.reading.PixelPerception`, the problem perceived as a whole and each label's confidence calibrated,
    as `bongard-solver solve` and `eval` do), or a plain callable, images -> programs.

    `decoded=True` says that programs given directly were decoded from pixels (not ground truth), so
    categories are matched with tolerance (`search.categories`) and stroke sequences may be matched within
    a tolerance (near facts, `solver.induction.facts`); pixels decoded here imply it.

    Every argument is checked first (`dsl.limits`, as the command line's options are): `time_limit` a finite
    number of seconds in (0, 86400], `max_rules` a whole number from 1 to MAX_RULES_LIMIT, `oracle` and
    `decoded` True or False; a bad one is a SolverError naming it."""
    oracle, time_limit, max_rules, decoded = _checked_options(oracle, perception, time_limit, max_rules, decoded)
    perception = _checked_perception(perception)
    if not oracle and isinstance(problem, (str, Path, Problem)):
        perception = perception or _solving.default_perception()
        if _perceived_whole(perception):
            loaded = problem if isinstance(problem, Problem) else load_folder(Path(problem), False)
            return solve_folder(None, perception, time_limit=time_limit, problem=loaded, max_rules=max_rules).solution
    given = as_input(problem, oracle)
    if not oracle and _all_pixels(given):
        perception = perception or _solving.default_perception()
        if _perceived_whole(perception):
            return _solved_from_pixels(given, perception, time_limit, max_rules)
    return solve_programs(given, oracle, perception, decoded, time_limit, max_rules)


def _solved_from_pixels(given: ProblemInput, perception, time_limit: float, max_rules: int) -> Solution:
    """A ProblemInput of pixel arrays (None where an image could not be read) the commands' way."""
    names, loaded = [], []
    for side, images in (("set A", given.context_a), ("set B", given.context_b), ("queries", given.queries)):
        for k, item in enumerate(images):
            names.append(f"{side} image {k}")
            loaded.append((None, None) if item is None else readable_pixels(item, names[-1]))
    solved = solve_images(loaded, names, perception, len(given.context_a), len(given.context_b), time_limit,
                          max_rules, notes=list(given.notes))
    return solved.solution
