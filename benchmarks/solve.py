"""Solve-time benchmark: seconds per problem of `solve_problem` (facts + clingo induction + explanation).

    bongard-solver bench solve --data ROOT --split NAME --oracle [--limit N] [--repeat R] --json OUT

Problems are solved one after another in this process. Reported: median and mean total seconds per
problem, the median seconds of the clingo part alone, and the query accuracy. Facts of an image are
cached within a process (features are memoised), so `--repeat 2` also shows the warm time.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from dsl.dataset import DatasetError, atomic_write_text, load_split
from dsl.options import count, fraction, path_text, seconds
from dsl.owned import check_output_file, marked_json
from dsl.types import ImageProgram, Shape
from solver import solve_problem
from solver.solving import as_input
from solver.induction.facts import CategorySource, problem_facts
from solver.induction.optimal import DEFAULT_TIME_LIMIT


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench solve", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset root (released layout)")
    parser.add_argument("--split", required=True, help="split name")
    parser.add_argument("--oracle", action="store_true", help="ground-truth programs (the only mode for now)")
    parser.add_argument("--limit", type=count(1), default=None, help="first N problems")
    parser.add_argument("--repeat", type=count(1, 100), default=1, help="passes over the problems")
    parser.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, help="seconds per problem")
    parser.add_argument("--decoded", action="store_true", help="programs as if decoded: matched categories")
    parser.add_argument("--noise", type=fraction, default=0.0, help="with --decoded: share of actions perturbed")
    parser.add_argument("--json", type=path_text, default=None, help="write the figures here")
    return parser.parse_args(argv)


def perturbed(program: ImageProgram, rng: random.Random, share: float) -> ImageProgram:
    """Small value errors on a share of the actions, as imperfect perception makes them."""
    shapes = []
    for shape in program.shapes:
        actions = []
        for action in shape.actions:
            if rng.random() < share:
                action = replace(action, turn=action.turn + rng.uniform(-6, 6))
                action = (replace(action, length=action.length * rng.uniform(0.95, 1.05)) if action.is_line
                          else replace(action, angle=action.angle + rng.uniform(-6, 6)))
            actions.append(action)
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))


def decoded_input(problem, share: float) -> tuple[list, list]:
    given = as_input(problem, oracle=True)
    rng = random.Random(problem.name)
    positives = [perturbed(p, rng, share) for p in (*given.context_a, given.queries[0])]
    negatives = [perturbed(p, rng, share) for p in (*given.context_b, given.queries[1])]
    return positives, negatives


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    problems = load_split(args.data, args.split, programs=True)[: args.limit]
    if not problems:
        raise DatasetError(f"{args.data}: split {args.split!r} lists no problems")
    passes = []
    for repeat in range(args.repeat):
        totals, clingo_seconds, facts_seconds, images, correct = [], [], [], 0, 0
        for problem in tqdm(problems, desc=f"bench solve {args.split} pass {repeat + 1}", unit="problem"):
            given = decoded_input(problem, args.noise) if args.decoded else problem
            start = time.perf_counter()
            if args.decoded:  # the facts alone first (cached for the solve that follows)
                positives, negatives = given
                problem_facts(positives[:6], negatives[:6], [positives[6], negatives[6]], CategorySource.MATCHED)
                facts_seconds.append(time.perf_counter() - start)
                images += len(positives) + len(negatives)
            solution = solve_problem(given, oracle=True if args.oracle else None, time_limit=args.time_limit,
                                     decoded=args.decoded)
            totals.append(time.perf_counter() - start)
            clingo_seconds.append(solution.induction.seconds)
            correct += (solution.labels[0] is True) + (solution.labels[1] is False)
        passes.append({
            "pass": repeat + 1,
            "median_seconds": statistics.median(totals),
            "mean_seconds": statistics.fmean(totals),
            "max_seconds": max(totals),
            "median_clingo_seconds": statistics.median(clingo_seconds),
            "facts_ms_per_image": 1000 * sum(facts_seconds) / images if images else None,
            "accuracy": correct / (2 * len(problems)),
        })
    figures = {"split": args.split, "problems": len(problems), "oracle": args.oracle, "decoded": args.decoded,
               "noise": args.noise, **passes[0],
               "passes": passes}
    for p in passes:
        print(f"{args.split} pass {p['pass']}: median {p['median_seconds']:.3f} s, "
              f"mean {p['mean_seconds']:.3f} s, max {p['max_seconds']:.3f} s, clingo median {p['median_clingo_seconds']:.3f} s, "
              f"accuracy {p['accuracy']:.4f} ({len(problems)} problems)"
              + (f", facts {p['facts_ms_per_image']:.1f} ms/image" if p["facts_ms_per_image"] is not None else ""))
    if args.json:
        atomic_write_text(Path(args.json), marked_json(figures))
    return 0
