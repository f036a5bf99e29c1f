"""The kill -9 trial on Ray: one Ray worker process killed mid-run; the eval still ends complete.

    bongard-solver bench ray_kill --data ROOT --split NAME --work DIR [--workers 2] [--after 3]
                                  [--reference OUT.json] [--json RESULT]

Starts `bongard-solver eval --data ROOT --split NAME --ray local --workers K --json DIR/eval.json`, waits
until `--after` problems are recorded (the workers are warm and busy), then sends SIGKILL to one Ray worker
process that is running a problem (a process of the run titled `ray::solve_on_worker...`, as `ps` shows it).
Checked at the end: the command's exit code, every problem of the split in the summary exactly once and
without an error, no problem recorded twice in the journal, and (with `--reference`, the summary of another
run of the same split) the same labels and rules problem for problem.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.interrupts import descendants, journal_faults

TASK_TITLE = "ray::solve_on_worker"  # a Ray worker's process title while it runs a problem (idle: ray::IDLE)
POLL_SECONDS = 0.5  # how often the journal and the processes are looked at
FINISH_SECONDS = 3600.0  # the run's time to finish after the kill, at most


def command(args: argparse.Namespace, out: Path) -> list[str]:
    return [sys.executable, "-m", "solver.app.cli", "eval", "--data", str(args.data), "--split", args.split,
            "--ray", "local", "--workers", str(args.workers), "--json", str(out)]


def recorded(journal: Path) -> int:
    if not journal.exists():
        return 0
    return sum(1 for line in journal.read_text(errors="replace").splitlines() if line.startswith("{"))


def busy_workers(root: int) -> list[int]:
    """Pids of the Ray worker processes under `root` that are running a problem."""
    busy = []
    for pid in sorted(descendants(root)):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(TASK_TITLE):
            busy.append(pid)
    return busy


def check(out: Path, expected: int, reference: Path | None) -> dict:
    """The finished run's summary against the checks of the module docstring."""
    summary = json.loads(out.read_text())
    names = [p["name"] for p in summary["problems"]]
    duplicated, broken = journal_faults(out.with_name(out.name + ".jsonl"))
    result = {"problems": len(names), "expected": expected, "distinct": len(set(names)),
              "errors": sum(p["error"] is not None for p in summary["problems"]),
              "journal_duplicates": duplicated, "journal_broken_lines": broken, "accuracy": summary["accuracy"]}
    if reference is not None:
        theirs = {p["name"]: (p["predicted"], p["rule"]) for p in json.loads(reference.read_text())["problems"]}
        mine = {p["name"]: (p["predicted"], p["rule"]) for p in summary["problems"]}
        result["differ_from_reference"] = sorted(n for n in theirs if mine.get(n) != theirs[n])
    return result


def main(argv: list[str] | None = None) -> int:
    from solver.app.resident import own_process

    own_process()  # the commands' own process is what is tried
    parser = argparse.ArgumentParser(prog="bongard-solver bench ray_kill", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", required=True)
    parser.add_argument("--work", type=Path, required=True, help="folder for the run's files (a fresh one)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--after", type=int, default=3, help="problems recorded before the kill")
    parser.add_argument("--reference", type=Path, default=None, help="summary of another eval of the split")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    from dsl.dataset import read_splits

    expected = len(read_splits(str(args.data))[args.split])
    args.work.mkdir(parents=True, exist_ok=True)
    out = args.work / "eval.json"
    if out.with_name(out.name + ".jsonl").exists():
        raise SystemExit(f"bench ray_kill: {args.work} holds an earlier run; give a fresh --work")
    with (args.work / "eval.stderr").open("wb") as log:
        process = subprocess.Popen(command(args, out), stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    start, killed = time.monotonic(), None
    while process.poll() is None and killed is None:
        time.sleep(POLL_SECONDS)
        busy = busy_workers(process.pid) if recorded(out.with_name(out.name + ".jsonl")) >= args.after else []
        if busy:
            os.kill(busy[0], signal.SIGKILL)
            killed = {"pid": busy[0], "after_seconds": round(time.monotonic() - start, 1),
                      "recorded_before": recorded(out.with_name(out.name + ".jsonl"))}
            print(f"kill -9 {busy[0]} ({TASK_TITLE}) after {killed['after_seconds']} s", file=sys.stderr)
    code = process.wait(timeout=FINISH_SECONDS)
    result = {"command": " ".join(command(args, out)[1:]), "killed": killed, "exit_code": code,
              "seconds": round(time.monotonic() - start, 1)}
    if code == 0:
        result |= check(out, expected, args.reference)
    result["complete"] = bool(code == 0 and killed and result["problems"] == result["distinct"] == expected
                              and result["errors"] == 0 and result["journal_duplicates"] == 0)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"written_by": "bongard-solver", **result}, indent=1))
    return 0 if result["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
