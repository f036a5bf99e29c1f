"""A GPU's batching of several problems, run on the CPU: what it changes in the readings, labels and rules.

    bongard-solver bench grouped --data ROOT --split NAME [--limit N] [--group 4] [--json OUT]

Solves the split's problems from pixels twice on the CPU, one process: one problem at a time (`eval`'s
path) and in groups of `--group` (`solver.reading.grouped.ProblemGroups`) whose decode requests are decoded in one
call, all their images in one batch, as `--device cuda` decodes them (on the CPU `eval` keeps each
problem's own batches instead). Counts the images read otherwise, the problems labelled or ruled otherwise,
and gives each run's accuracy and seconds (a GPU's speed is not measured here).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from perception.batching import one_call
from solver.app import execution
from solver.app.commands import evaluate_problem, plan_jobs
from solver.reading.grouped import ProblemGroups
from solver.reading.workers import decoded_in_batches


def with_readings(job, perception, dump) -> dict:
    """`evaluate_problem`, the record also holding the program read in every image (`readings`)."""
    readings = []

    def perceive_and_keep(*args, **kwargs):
        found = type(perception).perceive(perception, *args, **kwargs)
        readings.extend(str(r.program) for r in found)
        return found

    perception.perceive = perceive_and_keep
    try:
        return evaluate_problem(job, perception, dump) | {"readings": readings}
    finally:
        del perception.perceive


def in_one_call(groups: ProblemGroups) -> None:
    """Make `groups` decode every batch of requests in one call, as on a GPU."""
    perception = groups.perception
    groups.decode_requests = one_call(lambda images: decoded_in_batches(
        perception.decoder(), images, perception.top_k, perception.beam, batch=max(1, len(images))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench grouped", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--split", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--group", type=int, default=execution.GPU_BATCH_PROBLEMS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    jobs = plan_jobs(args.data, args.split, args.limit, False, 5.0)
    start = time.perf_counter()
    alone = list(execution.records(jobs, with_readings, False, 1, None, None, "cpu"))
    alone_seconds = time.perf_counter() - start
    start = time.perf_counter()
    with ProblemGroups(None, "cpu", workers=1) as groups:
        in_one_call(groups)
        grouped = [r for group in execution.groups_of(jobs, args.group) for r in groups.solve(group, with_readings, None)]
    grouped_seconds = time.perf_counter() - start
    pairs = list(zip(alone, grouped))
    result = {
        "problems": len(jobs), "group": args.group, "batches": groups.batches,
        "images": sum(len(a["readings"]) for a in alone),
        "images_read_otherwise": sum(x != y for a, b in pairs for x, y in zip(a["readings"], b["readings"])),
        "labels_differ": [a["name"] for a, b in pairs if a["predicted"] != b["predicted"]],
        "rules_differ": [a["name"] for a, b in pairs if a["rule"] != b["rule"]],
        "correct": [sum(r["correct"] for r in alone), sum(r["correct"] for r in grouped)], "queries": 2 * len(jobs),
        "seconds": [round(alone_seconds, 1), round(grouped_seconds, 1)],
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps({"written_by": "bongard-solver", **result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
