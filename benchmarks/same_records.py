"""Two eval runs compared problem for problem: labels, rules and confidences, accuracy, problems per second.

    bongard-solver bench same_records RUN_A.json RUN_B.json [--json OUT]

Each RUN is an `eval` summary (`--json OUT` of `eval --split NAME`) or the OUT.json of `eval --split all`
(its splits are read from their own files). Seconds are the summaries' (`evaluate`'s wall clock of each
split, the command's start-up left out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load_run(path: Path) -> tuple[dict[str, dict], float]:
    """(problem name -> record, seconds) of an eval summary or of an `--split all` result."""
    data = json.loads(path.read_text())
    summaries = [json.loads(Path(split["file"]).read_text()) for split in data["splits"].values()] if "splits" in data else [data]
    problems = {p["name"]: p for summary in summaries for p in summary["problems"]}
    return problems, sum(summary["seconds"] for summary in summaries)


def compare(a: Path, b: Path) -> dict:
    first, first_seconds = load_run(a)
    second, second_seconds = load_run(b)

    def accuracy(run: dict) -> float:
        return sum(p["correct"] for p in run.values()) / (2 * len(run)) if run else 0.0

    shared = sorted(set(first) & set(second))
    return {
        "problems": [len(first), len(second)], "only_in_one": sorted(set(first) ^ set(second)),
        "labels_differ": [n for n in shared if first[n]["predicted"] != second[n]["predicted"]],
        "rules_differ": [n for n in shared if first[n]["rule"] != second[n]["rule"]],
        "confidences_differ": [n for n in shared if first[n].get("confidence") != second[n].get("confidence")],
        "errors": [sum(p["error"] is not None for p in run.values()) for run in (first, second)],
        "accuracy": [round(accuracy(first), 4), round(accuracy(second), 4)],
        "seconds": [round(first_seconds, 1), round(second_seconds, 1)],
        "problems_per_second": [round(len(first) / first_seconds, 4) if first_seconds else None,
                                round(len(second) / second_seconds, 4) if second_seconds else None],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench same_records", description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs=2, metavar="RUN")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    for run in args.runs:
        if not run.is_file():
            raise SystemExit(f"bench same_records: {run}: no such file")
    result = {"runs": [str(run) for run in args.runs], **compare(*args.runs)}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"written_by": "bongard-solver", **result}, indent=1))
    same = not (result["only_in_one"] or result["labels_differ"] or result["rules_differ"]
                or result["confidences_differ"])
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
