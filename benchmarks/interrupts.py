"""Interrupt trials: a pixel `eval` stopped by Ctrl-C or SIGKILL at random moments, then resumed.

    bongard-solver bench interrupts --data ROOT --split NAME --work DIR [--trials 30] [--workers 2]

Each trial starts (or resumes) `bongard-solver eval --data ROOT --split NAME --json DIR/eval.json` in its
own process group, waits a random 8-60 s, then sends SIGINT to the group (as Ctrl-C in a terminal does:
odd trials) or SIGKILL to the parent alone (even trials: a killed parent must take its pool workers with
it). Counted per trial: a hang (the parent still running 20 s after SIGINT), an exit code other than
130 after SIGINT, orphans (processes of the run still alive 5 s after the parent ended), and the journal:
a record of a problem twice, a line that is not JSON other than the last. A run that finished before its
signal starts the next trial on a fresh journal. At the end the journal is resumed to completion and
compared with an uninterrupted run (`--reference`): a problem missing or labelled otherwise is lost.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

HANG_SECONDS = 20.0
ORPHAN_SECONDS = 5.0


def descendants(root: int) -> set[int]:
    """The pids of every process under `root` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def journal_faults(path: Path) -> tuple[int, int]:
    """(records of a problem already recorded, lines that are not JSON other than a cut last line)."""
    if not path.exists():
        return 0, 0
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    names, duplicated, broken = set(), 0, 0
    for k, line in enumerate(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            broken += k != len(lines) - 1
            continue
        name = record.get("name")
        if name is None:
            continue
        if name in names and record.get("error") is None:
            duplicated += 1
        names.add(name)
    return duplicated, broken


def _as_in_a_terminal() -> None:
    """A command typed in a terminal starts with SIGINT at its default (a background job of a script,
    such as this benchmark run with nohup ... &, inherits it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def command(args: argparse.Namespace, out: Path) -> list[str]:
    return [sys.executable, "-m", "solver.app.cli", "eval", "--data", str(args.data), "--split", args.split,
            "--workers", str(args.workers), "--json", str(out)]


def trial(args: argparse.Namespace, out: Path, number: int, rng: random.Random) -> dict:
    by_sigint = number % 2 == 1
    log = out.with_name(f"trial{number}.stderr")
    with log.open("wb") as sink:
        process = subprocess.Popen(command(args, out), stdout=subprocess.DEVNULL, stderr=sink,
                                   start_new_session=True, preexec_fn=_as_in_a_terminal)
    wait = rng.uniform(8.0, 60.0)
    try:
        process.wait(timeout=wait)
        finished = True
    except subprocess.TimeoutExpired:
        finished = False
    family = descendants(process.pid) if not finished else set()
    result = {"trial": number, "signal": "SIGINT" if by_sigint else "SIGKILL", "after_seconds": round(wait, 1),
              "finished_first": finished, "hang": False, "exit_code": process.returncode, "orphans": 0}
    if not finished:
        if by_sigint:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.kill()
        try:
            process.wait(timeout=HANG_SECONDS)
        except subprocess.TimeoutExpired:
            result["hang"] = True
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        result["exit_code"] = process.returncode
        time.sleep(ORPHAN_SECONDS)
        result["orphans"] = sum(alive(pid) for pid in family)
        for pid in family:  # leave nothing behind for the next trial
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    stderr = log.read_text(errors="replace")
    result["traceback"] = "Traceback (most recent call last)" in stderr
    result["duplicated"], result["broken_lines"] = journal_faults(out.with_name(out.name + ".jsonl"))
    return result


def compare(out: Path, reference: Path) -> dict:
    """Problems of the reference run missing from `out`, or labelled otherwise."""
    mine = {p["name"]: p for p in json.loads(out.read_text())["problems"]} if out.exists() else {}
    theirs = {p["name"]: p for p in json.loads(reference.read_text())["problems"]}
    lost = sorted(set(theirs) - set(mine))
    differ = sorted(n for n in set(theirs) & set(mine) if theirs[n]["predicted"] != mine[n]["predicted"])
    return {"problems": len(theirs), "lost": lost, "labelled_otherwise": differ}


def main(argv: list[str] | None = None) -> int:
    from solver.app.resident import own_process

    own_process()  # the commands' own process is what is tried
    parser = argparse.ArgumentParser(prog="bongard-solver bench interrupts", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", required=True)
    parser.add_argument("--work", type=Path, required=True, help="folder for the interrupted runs' files")
    parser.add_argument("--reference", type=Path, default=None, help="summary of an uninterrupted eval to compare with")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    run, results, finals = 0, [], []
    out = args.work / f"run{run}.json"
    for number in range(1, args.trials + 1):
        result = trial(args, out, number, rng)
        results.append(result)
        print(json.dumps(result), file=sys.stderr)
        if result["finished_first"]:  # a new journal for the next trial (a failed run is compared as it is)
            finals.append(out)
            run += 1
            out = args.work / f"run{run}.json"
    subprocess.run(command(args, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    finals.append(out)
    summary = {
        "trials": len(results), "interrupted": sum(not r["finished_first"] for r in results),
        "hangs": sum(r["hang"] for r in results), "orphans": sum(r["orphans"] for r in results),
        "tracebacks": sum(r["traceback"] for r in results),
        "failed_runs": sum(r["finished_first"] and r["exit_code"] != 0 for r in results),
        "sigint_exit_not_130": sum(r["signal"] == "SIGINT" and not r["finished_first"] and r["exit_code"] != 130
                                   for r in results),
        "duplicated_records": sum(r["duplicated"] for r in results), "broken_lines": sum(r["broken_lines"] for r in results),
        "runs": [compare(f, args.reference) for f in finals] if args.reference else [str(f) for f in finals],
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"written_by": "bongard-solver", **summary, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
