"""Solve-time benchmark: seconds per problem of `solve_problem` (facts + clingo induction + explanation).

    bongard-solver bench solve --data ROOT --split NAME --oracle [--limit N] [--repeat R] --json OUT

Problems are solved one after another in this process. Reported: median and mean total seconds per
problem, the median seconds of the clingo part alone, and the query accuracy. Facts of an image are
cached within a process (features are memoised), so `--repeat 2` also shows the warm time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from tqdm import tqdm

from dsl.dataset import atomic_write_text, load_split
from solver import solve_problem
from solver.induce import DEFAULT_TIME_LIMIT


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench solve", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="dataset root (released layout)")
    parser.add_argument("--split", required=True, help="split name")
    parser.add_argument("--oracle", action="store_true", help="ground-truth programs (the only mode for now)")
    parser.add_argument("--limit", type=int, default=None, help="first N problems")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the problems")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds per problem")
    parser.add_argument("--json", default=None, help="write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problems = load_split(args.data, args.split, programs=True)[: args.limit]
    passes = []
    for repeat in range(args.repeat):
        totals, clingo_seconds, correct = [], [], 0
        for problem in tqdm(problems, desc=f"bench solve {args.split} pass {repeat + 1}", unit="problem"):
            start = time.perf_counter()
            solution = solve_problem(problem, oracle=True if args.oracle else None, time_limit=args.time_limit)
            totals.append(time.perf_counter() - start)
            clingo_seconds.append(solution.induction.seconds)
            correct += (solution.labels[0] is True) + (solution.labels[1] is False)
        passes.append({
            "pass": repeat + 1,
            "median_seconds": statistics.median(totals),
            "mean_seconds": statistics.fmean(totals),
            "max_seconds": max(totals),
            "median_clingo_seconds": statistics.median(clingo_seconds),
            "accuracy": correct / (2 * len(problems)),
        })
    figures = {"split": args.split, "problems": len(problems), "oracle": args.oracle, **passes[0],
               "passes": passes}
    for p in passes:
        print(f"{args.split} pass {p['pass']}: median {p['median_seconds']:.3f} s, "
              f"mean {p['mean_seconds']:.3f} s, max {p['max_seconds']:.3f} s, clingo median {p['median_clingo_seconds']:.3f} s, "
              f"accuracy {p['accuracy']:.4f} ({len(problems)} problems)")
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(figures, indent=1))
    return 0
