"""Accuracy per problem setting from `eval` records: each free-form program-length setting (`nact4`, `nact3_3`, ...),
basic problems of one shape and of two, abstract problems of one attribute and of two, each with its Wilson 95 %
interval, rule match and the wrong answers at confidence >= 0.99.

    bongard-solver bench settings RECORDS.json [RECORDS.json ...] [--json OUT] [--markdown OUT.md]

RECORDS: an `eval --json OUT` file (a split's summary, or the OUT.json of `--split all`) or a journal (OUT.jsonl, as
a run still going leaves it). A problem's setting is read from its name as the generators write it
(spec 3.1: `ff_nact2_5_0000`, `bd_<shape>-<shape>_0000`, `hd_<attribute>-<attribute>_0000`): the name says which
generator setting drew the problem, never used to solve it. Two-shape free-form settings are those whose name holds
two action counts.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from benchmarks.same_records import load_run
from dsl.owned import check_output_file
from solver.app.scoring import accuracy_interval


def setting(name: str, kind: str) -> str:
    """The generator setting of a problem from its name: ff `nact3_3` (`two shapes` when two counts), bd / hd
    `one` or `two` shapes / attributes."""
    body = re.sub(r"_\d{4}$", "", name.split("_", 1)[1] if "_" in name else name)
    if kind == "ff":
        return body
    two = "-" in body
    return ("two " if two else "one ") + ("shape" if kind == "bd" else "attribute") + ("s" if two else "")


def _records(path: Path) -> list[dict]:
    """The problem records of an eval run (`benchmarks.same_records.load_run`: a split's summary, or an `--split all`
    result and its splits' files), or of a journal (.jsonl: a run still going or cut short), each marked with `path`."""
    if path.suffix == ".jsonl":
        found = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found = [record for record in found if "name" in record and "true" in record]  # not the journal's header
    else:
        found = list(load_run(path)[0].values())
    return [{**record, "_source": str(path)} for record in found]


def table(records: list[dict]) -> list[dict]:
    """One row per (kind, setting), and one per kind for two-shape free-form settings together."""
    groups: dict = defaultdict(list)
    for record in {(r.get("_source"), r["name"]): r for r in records}.values():  # a resumed run's last record of a
        # problem (two roots may hold problems of one name: generated with other seeds)
        kind = record.get("kind") or record["name"].split("_", 1)[0]
        name = setting(record["name"], kind)
        groups[(kind, name)].append(record)
        if kind == "ff" and re.fullmatch(r"nact\d+_\d+", name):
            groups[(kind, "two shapes, all settings")].append(record)
        elif kind == "ff":
            groups[(kind, "one shape, all settings")].append(record)
    rows = []
    for (kind, name), found in sorted(groups.items()):
        right = sum(int(r.get("correct") or 0) for r in found)
        queries = sum(len(r["true"]) for r in found)
        confidence = [c for r in found for c in (r.get("confidence") or [])]
        truth = [t == p for r in found for t, p in zip(r["true"], r.get("predicted") or [None] * len(r["true"]))]
        rows.append({"kind": kind, "setting": name, "problems": len(found), "queries": queries,
                     "accuracy": round(right / queries, 4) if queries else None,
                     "accuracy_95": accuracy_interval(right, queries),
                     "rule_match": round(sum(bool(r.get("rule_match")) for r in found) / len(found), 4),
                     "wrong": queries - right,
                     "wrong_at_0_99": sum(c >= 0.99 and not ok for c, ok in zip(confidence, truth))})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| type | setting | problems | accuracy (95 %) | rule match | wrong (at >= 0.99) |",
             "|---|---|---:|---:|---:|---:|"]
    for row in rows:
        low, high = row["accuracy_95"] or (0, 0)
        lines.append(f"| {row['kind']} | {row['setting']} | {row['problems']} | {100 * row['accuracy']:.1f} "
                     f"({100 * low:.1f}-{100 * high:.1f}) | {100 * row['rule_match']:.1f} | {row['wrong']} "
                     f"({row['wrong_at_0_99']}) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench settings", description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="+", type=Path, help="eval --json files (or .jsonl record files)")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON")
    parser.add_argument("--markdown", type=Path, default=None, help="write the table as markdown")
    args = parser.parse_args(argv)
    for out, option in ((args.json, "--json"), (args.markdown, "--markdown")):
        if out is not None:
            check_output_file(out, option)
    rows = table([record for path in args.records for record in _records(path)])
    text = markdown(rows)
    print(text, end="")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "records": [str(p) for p in args.records]}, indent=1) + "\n",
                             encoding="utf-8")
    if args.markdown is not None:
        args.markdown.write_text(text, encoding="utf-8")
    return 0
