"""`bongard-solver explain` and `bongard-solver demo`, the warm-up of `eval`, and a solved problem as an evaluation
record. A problem folder is solved by `solver.solving.solve_folder` (the path every command and the API take)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from dsl.options import count, path_text, seed, workers

# The solver's own imports are made inside the functions that use them: every command (`--help` too) builds this
# module's parser, and the libraries behind them take seconds to import (issue 53).

DEMO_SEED = 2026
WARM_UP_SEED = 20261128  # the built-in problems `warm_up` solves, one per generator


def warm_up(perception) -> float:
    """Solve one built-in problem of each generator (seed WARM_UP_SEED, rendered in memory) with `perception`, the
    results dropped, so that every worker process and this one have loaded the models and the compiled kernels that
    perception and induction need before a problem is timed: the first official basic problem solved took 1.9 s
    against 0.54 s solved again, one using a path for the first time in a worker (the check of a library program, the
    decoder) 0.1-0.2 s more. Changes no reading (the caches it fills are keyed by what they hold). Returns its
    seconds."""
    from dsl.commands import render_problem
    from dsl.generate import ProblemKind, generate_problem, plan_problems
    from dsl.raster import OFFICIAL_SIZE
    from solver.solving import readable_pixels, solve_images

    started = time.perf_counter()
    for kind in ProblemKind:
        problem = generate_problem(plan_problems(kind, 1, WARM_UP_SEED)[0], WARM_UP_SEED)
        positives, negatives = render_problem(problem, OFFICIAL_SIZE)
        images = positives[:6] + negatives[:6] + [positives[6], negatives[6]]
        names = [f"warm-up image {k}" for k in range(len(images))]
        solve_images([readable_pixels(image, name) for image, name in zip(images, names)], names, perception, 6, 6)
    return time.perf_counter() - started


def solved_record(solved) -> dict:
    """One solved problem (a `solver.solving.SolvedProblem`) as an evaluation record (what the index page lists)."""
    solution = solved.solution
    return {"name": solved.name, "kind": solved.name[:2], "english": solution.explanation.english,
            "rule": solution.rule.asp if solution.rule else None, "true": list(solved.truth),
            "predicted": list(solution.labels), "correct": solved.correct,
            "confidence": [round(c, 4) for c in solution.confidence], "seconds": round(solved.seconds, 3),
            "error": None}


def run_explain(args: argparse.Namespace) -> int:
    from dsl.dataset import DatasetError
    from dsl.owned import check_output_folder, check_replaceable
    from search import warm
    from solver.app import guard
    from solver.explaining import write_report
    from solver.app.resident import perception as command_perception
    from solver.reading import PerceptionError
    from solver.solving import solve_folder

    out = check_output_folder(args.out, "--out")
    guard.check_decoder(args.checkpoint)
    name = Path(args.problem).resolve().name
    check_replaceable(out / f"{name}.html", "--out")
    check_replaceable(out / f"{name}.json", "--out")
    if not args.oracle:
        warm.start()  # on a first run, a helper compiles kernels beside this process (search.warm)
    try:
        with (contextlib.nullcontext() if args.oracle else command_perception(args.checkpoint, args.workers)) as seen:
            solved = solve_folder(args.problem, seen, oracle=args.oracle)
    except (DatasetError, PerceptionError, ValueError) as error:
        print(f"bongard-solver explain: {error}", file=sys.stderr)
        return 1
    page = write_report(out, solved.name, solved.images, solved.solution.to_dict())
    print(solved.solution.explanation.to_text())
    for warning in solved.solution.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"report: {page} (and {page.with_suffix('.json').name})")
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from dsl.commands import write_dataset
    from dsl.dataset import DatasetError, list_problems, problem_folder
    from dsl.generate import ProblemKind
    from dsl.owned import check_output_folder, check_replaceable
    from search import warm
    from solver.app import guard
    from solver.explaining import write_index, write_report
    from solver.reading import PerceptionError, PixelPerception
    from solver.solving import solve_folder

    out = check_output_folder(args.out, "--out")
    guard.check_decoder(args.checkpoint)
    data = out / "data"
    check_replaceable(out / "reports" / "index.html", "--out")
    counts = {ProblemKind.FREE_FORM: args.n, ProblemKind.BASIC: args.n, ProblemKind.ABSTRACT: args.n}
    if not args.oracle:
        warm.start()  # on a first run, a helper compiles the solver's kernels while this process generates
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
    explain.add_argument("--out", type=path_text, required=True, help="folder for <problem>.html and <problem>.json")
    explain.add_argument("--oracle", action="store_true", help="use the dataset's programs instead of perception")
    explain.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    explain.add_argument("--workers", type=workers, default=None,
                         help="processes perceiving the problem (default 1: this process, the quickest for one problem; "
                              "the resident solver: 2)")
    explain.set_defaults(func=run_explain)

    demo = subcommands.add_parser("demo", help="generate a few problems of each type, solve them, write reports")
    demo.add_argument("--out", type=path_text, default="bongard-demo", help="output folder (default ./bongard-demo)")
    demo.add_argument("--n", type=count(1, 100), default=2, help="problems of each type (default 2)")
    demo.add_argument("--seed", type=seed, default=DEMO_SEED, help="generator seed")
    demo.add_argument("--oracle", action="store_true", help="solve from the generated programs, not from pixels")
    demo.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    demo.add_argument("--workers", type=workers, default=1,
                      help="processes for generation and perception (default 1: this process; for six problems worker "
                           "processes that each load the models again were slower: docs/latency.md)")
    demo.set_defaults(func=run_demo)
