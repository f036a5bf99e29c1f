"""The end-to-end product: a problem folder in, a solved problem and its explanation report out.

`solve_folder` runs perception (unless oracle), induction and classification on one problem folder and
returns everything a report needs; `bongard-solver explain` and `bongard-solver demo` are built on it.

A problem perception read as library shapes (no free-form program H formed from set A) whose rule misclassifies
context images is perceived again as free-form (`PixelPerception.perceive_free_form`), and that reading kept when
its rule misclassifies fewer: the shape classifier can be sure of a free-form program's images (it names a library
shape they resemble), and then set A was never decoded. On generated tuning seeds 3131 + 5151 (80 problems a type)
this changed the rule of one free-form problem (attributes -> its stroke sequence, both queries right before and
after) and no basic or abstract problem's labels or rule; 24 of the 80 basic and 20 of the 80 abstract problems were
perceived again, each 0.2-1.2 s longer (their median 0.67 -> 0.63 s and 0.45 -> 0.44 s, run one after the other).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dsl.dataset import DatasetError, Problem, load_problem, read_programs
from dsl.owned import check_output_folder, check_replaceable
from dsl.raster import OFFICIAL_SIZE
from dsl.types import ImageProgram
from solver import guard
from solver.api import ProblemInput, solve_problem
from solver.confidence import attributes_tested, context_errors, disputed_attributes, query_confidences
from solver.induce import DEFAULT_TIME_LIMIT
from solver.evidence import readable_weighting, unreadable_reason
from solver.hypotheses import _stamped
from solver.index_page import write_index
from solver.perceive import PerceptionError, PixelPerception
from solver.report import ReportImage, write_report
from solver.settings import READ_THREADS
from solver.why_sequence import rule_shapes

DEMO_SEED = 2026
WARM_UP_SEED = 20261128  # the built-in problems `warm_up` solves, one per generator


@dataclass(slots=True)
class SolvedProblem:
    name: str
    solution: object  # solver.api.Solution
    images: list[ReportImage]  # 6 of A, 6 of B, 2 queries
    truth: tuple[bool, ...]  # positive query in A, negative query not
    seconds: float
    errors: list[str]
    stage_seconds: dict = field(default_factory=dict)  # seconds per stage: load, perception's stages, induce
    query_features: list = field(default_factory=list)  # per query, the evidence its confidence was computed from

    @property
    def correct(self) -> int:
        return sum(p == t for p, t in zip(self.solution.labels, self.truth))


def _load(folder: Path, oracle: bool) -> Problem:
    if not oracle:
        return load_problem(folder)
    return load_problem(folder, read_programs(folder.parent.parent))


def _oracle_picture(pixels, program) -> ReportImage:
    """The ground-truth program, drawn where a one-candidate refinement of it fits the image."""
    from search.refine import Proposal, refine_image

    try:
        fitted = refine_image(pixels, [Proposal(program, 0.0)], budget_ms=None, max_candidates=1, structures=1)
    except Exception:
        return ReportImage(pixels, program)
    return ReportImage(pixels, program, fitted.poses, drawn=fitted.program)


def solve_folder(
    folder: Path | str,
    perception: PixelPerception | None,
    oracle: bool = False,
    time_limit: float = DEFAULT_TIME_LIMIT,
    problem: Problem | None = None,
) -> SolvedProblem:
    """Solve one problem folder from pixels (or from its programs with `oracle`); report-ready."""
    started = time.perf_counter()
    folder = Path(folder).resolve()
    problem = problem or _load(folder, oracle)
    images = problem.in_solving_order
    evidence: list = [None] * len(images)
    if oracle:
        pixels = [image.load() for image in images]
        stages = {"load": round(time.perf_counter() - started, 4)}
        shown = [_oracle_picture(p, image.program) for p, image in zip(pixels, images)]
        programs, errors = [image.program for image in images], []
    else:
        loaded = list(_image_readers().map(_readable_pixels, images))
        stages = {"load": round(time.perf_counter() - started, 4)}
        programs, shown, errors, evidence = _perceived(images, loaded, perception, stages)
    induced = time.perf_counter()
    solution = _solved(programs, errors, oracle, time_limit)
    stages["induce"] = round(time.perf_counter() - induced, 4)
    stamped = _stamped_sequence(solution.rule)
    if not oracle and hasattr(perception, "perceive_free_form") and _read_as_library(evidence) and (
            context_errors(solution) or stamped):
        # the library readings leave context images unexplained, or their rule fixes stamped strokes (which only a
        # free-form problem's set A shares): is set A one free-form program after all?
        again = _perceived(images, loaded, perception, stages, free_form=True)
        if again is not None:
            induced = time.perf_counter()
            solved_again = _solved(again[0], again[2], oracle, time_limit)
            stages["induce"] = round(stages["induce"] + time.perf_counter() - induced, 4)
            if context_errors(solved_again) < context_errors(solution) or (
                    stamped and context_errors(solved_again) <= context_errors(solution)):
                (programs, shown, errors, evidence), solution = again, solved_again
    features: list = []
    if not oracle:  # the confidence of each label from the evidence (`solver.confidence`)
        confidence, features = query_confidences(solution, evidence[12:])
        solution = replace(solution, confidence=readable_weighting(confidence, programs[:12], programs[12:]),
                           warnings=solution.warnings + _disputed_warnings(solution, evidence[12:]))
    return SolvedProblem(problem.name, solution, shown, (True, False), time.perf_counter() - started, errors, stages,
                         features)


def warm_up(perception: PixelPerception) -> float:
    """Solve one built-in problem of each generator (seed WARM_UP_SEED, rendered in memory) with `perception`, the
    results dropped, so that every worker process and this one have loaded the models and the compiled kernels that
    perception and induction need before a problem is timed: the first official basic problem solved took 1.9 s
    against 0.54 s solved again, one using a path for the first time in a worker (the check of a library program, the
    decoder) 0.1-0.2 s more. Changes no reading (the caches it fills are keyed by what they hold). Returns its
    seconds."""
    from dsl.commands import render_problem
    from dsl.generate import ProblemKind, generate_problem, plan_problems

    started = time.perf_counter()
    for kind in ProblemKind:
        problem = generate_problem(plan_problems(kind, 1, WARM_UP_SEED)[0], WARM_UP_SEED)
        positives, negatives = render_problem(problem, OFFICIAL_SIZE)
        images = positives[:6] + negatives[:6] + [positives[6], negatives[6]]
        _solved([reading.program for reading in perception.perceive(images, positives=6, negatives=6)], [], False,
                DEFAULT_TIME_LIMIT)
    return time.perf_counter() - started


def _disputed_warnings(solution, evidence: list) -> tuple[str, ...]:
    """A warning for each query read as a library shape that the shape table labels otherwise than its computed
    features on an attribute an optimal rule tests: its label rests on a disputed fact (`solver.confidence`)."""
    tested = attributes_tested(solution.induction)
    return tuple(f"query {k}: the shape table labels the library shape it was read as otherwise on "
                 f"{', '.join(found)} (the rule reads the computed value): its label is less sure"
                 for k, found in enumerate(disputed_attributes(e, tested) for e in evidence) if found)


@functools.cache
def _image_readers() -> ThreadPoolExecutor:
    """The threads that read a problem's image files (`_readable_pixels`), kept for the process's life."""
    return ThreadPoolExecutor(READ_THREADS, thread_name_prefix="image-reader")


os.register_at_fork(after_in_child=_image_readers.cache_clear)  # a forked process has none of the threads


def _readable_pixels(image) -> tuple[np.ndarray | None, str | None]:
    """An image's pixels, or None and why it cannot be read as a drawing (the file named)."""
    try:
        pixels = image.load()
    except DatasetError as error:
        return None, str(error)
    reason = unreadable_reason(pixels)
    return (pixels, None) if reason is None else (None, f"{image.path}: {reason}")


def _solved(programs: list, errors: list[str], oracle: bool, time_limit: float):
    """`solve_problem` of a problem's programs (images 0-5 set A, 6-11 set B, then the queries)."""
    return solve_problem(ProblemInput(programs[:6], programs[6:12], programs[12:], errors), oracle=True,
                         decoded=not oracle, time_limit=time_limit)


def _stamped_sequence(rule) -> bool:
    """Whether `rule` asks for a stroke sequence (not negated) with an action stamped or zigzag: the basic and
    abstract generators draw each action's stroke at random per image (spec 3.4), so only a free-form problem's set
    A shares one; read as library shapes (a triangle the classifier is sure of, beside a second shape), such a
    problem's stroke types were chosen by the pixel score alone. Generated ff seeds 1212 + 5252 + 12121 + 13131
    (240 problems): 4 problems had such a rule from library readings, 2 of them a positive query wrong (its strokes
    read otherwise); perceived as free-form, one of those is right, and the other three keep their library readings
    (set A formed no free-form program, or that reading misclassified more context images). Basic and abstract
    tuning seeds 3131 + 5151 (160 problems): no such rule."""
    if rule is None:
        return False
    return any(_stamped(ImageProgram(rule_shapes(literal))) for literal in rule.literals
               if literal.family.is_sequence and not literal.negated)


def _read_as_library(evidence: list) -> bool:
    """Whether perception read the problem without a free-form program H (no set-A image explained by one)."""
    return not any(found and found.get("verdict") == "hypothesis" for found in evidence[:6])


def _perceived(images, loaded: list, perception, stages: dict,
               free_form: bool = False) -> tuple[list, list, list[str], list] | None:
    """Programs and report pictures of a problem's images (None where unreadable), the errors naming
    each image left out, and perception's evidence per image; only the readable images (`loaded`: pixels or
    None and why, per image) go to `perception.perceive` (`perceive_free_form` with `free_form`; the stage times
    are added to `stages`). None when perception gives none."""
    errors = [error for _, error in loaded if error]
    keep = [k for k, (p, _) in enumerate(loaded) if p is not None]
    in_a = sum(k < 6 for k in keep)
    pixels = [loaded[k][0] for k in keep]
    perceive = perception.perceive_free_form if free_form else perception.perceive
    perceived = perceive(pixels, positives=in_a, negatives=sum(6 <= k < 12 for k in keep)) if keep else []
    for name, seconds in getattr(perception, "stage_seconds", {}).items():
        stages[name] = round(stages.get(name, 0.0) + seconds, 4)
    if perceived is None:
        return None
    programs: list = [None] * len(images)
    evidence: list = [None] * len(images)
    shown = [ReportImage(p, None) for p, _ in loaded]
    for k, result in zip(keep, perceived):
        if result.program is None:
            errors.append(f"{images[k].path}: {result.error}")
            continue
        if result.error:
            errors.append(f"{images[k].path}: {result.error}")
        programs[k] = result.program
        evidence[k] = result.evidence
        shown[k] = ReportImage(loaded[k][0], result.program, result.poses)
    return programs, shown, errors, evidence


def solved_record(solved: SolvedProblem) -> dict:
    """One solved problem as an evaluation record (what the index page lists)."""
    solution = solved.solution
    return {"name": solved.name, "kind": solved.name[:2], "english": solution.explanation.english,
            "rule": solution.rule.asp if solution.rule else None, "true": list(solved.truth),
            "predicted": list(solution.labels), "correct": solved.correct,
            "confidence": [round(c, 4) for c in solution.confidence], "seconds": round(solved.seconds, 3),
            "error": None}


def run_explain(args: argparse.Namespace) -> int:
    out = check_output_folder(args.out, "--out")
    guard.check_decoder(args.checkpoint)
    name = Path(args.problem).resolve().name
    check_replaceable(out / f"{name}.html", "--out")
    check_replaceable(out / f"{name}.json", "--out")
    perception = None if args.oracle else PixelPerception(args.checkpoint, workers=args.workers)
    try:
        solved = solve_folder(args.problem, perception, oracle=args.oracle)
    except (DatasetError, PerceptionError, ValueError) as error:
        print(f"bongard-solver explain: {error}", file=sys.stderr)
        return 1
    finally:
        if perception is not None:
            perception.close()
    page = write_report(out, solved.name, solved.images, solved.solution.to_dict())
    print(solved.solution.explanation.to_text())
    for warning in solved.solution.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"report: {page} (and {page.with_suffix('.json').name})")
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from dsl.commands import write_dataset
    from dsl.dataset import list_problems, problem_folder
    from dsl.generate import ProblemKind

    out = check_output_folder(args.out, "--out")
    guard.check_decoder(args.checkpoint)
    data = out / "data"
    check_replaceable(out / "reports" / "index.html", "--out")
    counts = {ProblemKind.FREE_FORM: args.n, ProblemKind.BASIC: args.n, ProblemKind.ABSTRACT: args.n}
    print(f"generating {3 * args.n} problems (seed {args.seed}) into {data}")
    write_dataset(data, counts, seed=args.seed, workers=args.workers)
    perception = None if args.oracle else PixelPerception(args.checkpoint, workers=args.workers)
    solved = []
    try:
        for name in list_problems(data):
            try:
                result = solve_folder(problem_folder(data, name), perception, oracle=args.oracle)
            except (DatasetError, PerceptionError, ValueError) as error:
                print(f"{name}: FAILED: {error}")
                continue
            solved.append(result)
            write_report(out / "reports", name, result.images, result.solution.to_dict())
            print(f"{name}: {result.solution.explanation.english}")
            print(f"    queries {result.correct}/2 right  ({result.seconds:.1f} s)")
    finally:
        if perception is not None:
            perception.close()
    right = sum(s.correct for s in solved)
    index = write_index(out / "reports", [solved_record(s) for s in solved], title="bongard-solver demo")
    source = "ground-truth programs" if args.oracle else "pixels"
    print(f"\n{right}/{2 * len(solved)} queries right from {source}; reports: {index}")
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    explain = subcommands.add_parser("explain", help="solve one problem folder and write an HTML + JSON report")
    explain.add_argument("problem", type=Path, help="problem folder (<root>/<type>/images/<problem>)")
    explain.add_argument("--out", type=guard.path_text, required=True, help="folder for <problem>.html and <problem>.json")
    explain.add_argument("--oracle", action="store_true", help="use the dataset's programs instead of perception")
    explain.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    explain.add_argument("--workers", type=guard.workers, default=2, help="processes for refinement")
    explain.set_defaults(func=run_explain)

    demo = subcommands.add_parser("demo", help="generate a few problems of each type, solve them, write reports")
    demo.add_argument("--out", type=guard.path_text, default="bongard-demo", help="output folder (default ./bongard-demo)")
    demo.add_argument("--n", type=guard.count(1, 100), default=2, help="problems of each type (default 2)")
    demo.add_argument("--seed", type=guard.seed, default=DEMO_SEED, help="generator seed")
    demo.add_argument("--oracle", action="store_true", help="solve from the generated programs, not from pixels")
    demo.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    demo.add_argument("--workers", type=guard.workers, default=2, help="processes for generation and refinement")
    demo.set_defaults(func=run_demo)
