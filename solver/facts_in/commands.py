"""`bongard-solver solve-facts`: a Bongard problem given as facts (JSON, see docs/facts.md).

    bongard-solver solve-facts FILE.json [--json OUT] [--explain DIR] [--time-limit S]

Prints the rule, the evidence per image and the label of each query; `--json OUT` writes the solution
(rule, english, labels, confidence, alternatives, ...; `-` for standard output), `--explain DIR` the
HTML + JSON report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dsl.options import seconds
from dsl.owned import check_output_file, check_output_folder, marked_json
from solver.settings import DEFAULT_TIME_LIMIT


def solve_facts_command(args: argparse.Namespace) -> int:
    """The problem of FILE solved (the inducer, clingo: imported here, not when the command line is built)."""
    from dsl.dataset import atomic_write_text
    from solver.facts_in.problem import FactsError, load_problem
    from solver.facts_in.report import report_paths, write_facts_report
    from solver.facts_in.solve import solution_record, solve_facts

    if args.json and args.json != "-":
        check_output_file(args.json, "--json")
    if args.explain:
        check_output_folder(args.explain, "--explain")
    try:
        problem = load_problem(args.file)
    except FactsError as error:
        print(f"bongard-solver solve-facts: {error}", file=sys.stderr)
        return 1
    if args.explain:
        report_paths(args.explain, problem)  # refuses a file of someone else's before any work
    solution = solve_facts(problem, time_limit=args.time_limit)
    record = solution_record(problem, solution)
    if args.json == "-":
        print(json.dumps(record, indent=1))
    else:
        print(solution.explanation.to_text())
        for k, (label, confidence) in enumerate(zip(solution.labels, solution.confidence)):
            print(f"query {k}: {'A' if label else 'B'} (confidence {confidence:.2f})")
        if args.json:
            atomic_write_text(Path(args.json), marked_json(record))
            print(f"written: {args.json}")
    if args.explain:
        page = write_facts_report(args.explain, problem, record)
        print(f"report: {page}", file=sys.stderr if args.json == "-" else sys.stdout)
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("solve-facts", help="solve a Bongard problem given as facts (JSON)")
    parser.add_argument("file", help="the problem: JSON with A, B and queries, each image a list of facts")
    parser.add_argument("--json", default=None, help="write the solution here as JSON ('-': standard output)")
    parser.add_argument("--explain", default=None, metavar="DIR", help="write the HTML + JSON report here")
    parser.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, help="seconds")
    parser.set_defaults(func=solve_facts_command)
