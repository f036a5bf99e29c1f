"""Hostile-input cases of the machine itself (issue 54), for `benchmarks.hostile`: `eval` while the disk fills up
(its journal's header, a record, the summary, a `--dump` report, the index), with a read-only output folder, under a
memory cap, given the same `--json` as a run still going, and with a pool worker that dies.

Each case runs `eval` in child processes (`python -m solver.app.cli`, or a driver that injects the fault at the write
layer, `dsl.owned.write_chunk`) and checks what the issue asks: exit code 1 with one line naming the path and the
fault, no traceback, no record written before the fault lost, no half-written or temporary file, and the same
command resuming afterwards to every problem exactly once. A case raises `FaultHandled` (one line: what the tool
said) when all of that holds, and `FaultMishandled` with what went wrong otherwise; the memory cap may also end in
a normal run. Where the machine allows (root and `unshare -m`) a small tmpfs fills up, and one mounted read-only is
written to, for real.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks._hostile_files import make_root

GIB = 2**30
TEMPORARY_SUFFIXES = (".tmp", ".new")


class FaultHandled(ValueError):
    """The fault ended the run as it should; the message is the tool's line."""


class FaultMishandled(RuntimeError):
    """The fault lost a record, left a half-written file, printed a traceback, hung, or did not resume."""


DRIVER = """
import errno, os, re, sys
import dsl.owned
from solver.app import commands
from solver.app.cli import main
fault, target, nth, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
write, seen = dsl.owned.write_chunk, [0]
def failing(handle, data):
    if re.search(target, str(handle.name)):
        seen[0] += 1
        if seen[0] == nth or fault == "read-only":
            if fault == "disk-full":
                write(handle, data[: len(data) // 2])
            code = errno.ENOSPC if fault == "disk-full" else errno.EROFS
            raise OSError(code, os.strerror(code))
    return write(handle, data)
solve = commands.evaluate_problem
def dies(job, perception=None, dump=None):
    if job.name == target:
        os._exit(1)
    return solve(job, perception, dump)
if fault in ("disk-full", "read-only"):
    dsl.owned.write_chunk = failing
elif fault == "worker-dies":
    commands.evaluate_problem = dies
sys.exit(main(argv))
"""


def _code_root() -> str:
    import solver

    return str(Path(solver.__file__).resolve().parents[1])


def _run(args: list[str], timeout: float = 900, limit: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": _code_root()}
    cap = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))) if limit else None
    try:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env,
                              preexec_fn=cap)
    except subprocess.TimeoutExpired:
        raise FaultMishandled(f"still running after {timeout:.0f} s: a hang") from None


def _lines(stderr: str) -> list[str]:
    if "Traceback (most recent call last)" in stderr:
        raise FaultMishandled("a traceback: " + stderr.strip().splitlines()[-1][:200])
    lines = [line.split("\r")[-1].strip() for line in stderr.splitlines()]
    return [line for line in lines if line and "%|" not in line and not line.startswith(("written:", "--split"))]


def _journal(out: Path) -> list[dict]:
    path = out.with_name(out.name + ".jsonl")
    if not path.exists():
        return []
    try:
        return [json.loads(line) for line in path.read_text().splitlines()][1:]
    except json.JSONDecodeError:
        raise FaultMishandled(f"{path}: a line that is not whole JSON (cut or interleaved)") from None


def _whole_files(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.name.endswith(TEMPORARY_SUFFIXES):
            raise FaultMishandled(f"{path}: a temporary file left behind")
        if path.suffix == ".json":
            try:
                json.loads(path.read_text())
            except json.JSONDecodeError:
                raise FaultMishandled(f"{path}: half-written under its final name") from None
        if path.suffix == ".html" and not path.read_text().rstrip().endswith("</html>"):
            raise FaultMishandled(f"{path}: half-written under its final name")


def _eval_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "--data", str(root), "--split", "tiny", "--oracle", "--workers", "1", "--json", str(out), *extra]


def _resumed(root: Path, out: Path, kept: list[dict], names: list[str], *extra: str) -> None:
    """The same command, without the fault, goes on to every problem once and keeps what was written."""
    again = _run(["-m", "solver.app.cli", *_eval_argv(root, out, *extra)])
    if again.returncode != 0:
        raise FaultMishandled(f"the resume failed: {(_lines(again.stderr) or ['?'])[-1][:200]}")
    records = _journal(out)
    if records[: len(kept)] != kept:
        raise FaultMishandled("a record written before the fault is lost or changed")
    if sorted(r["name"] for r in records) != sorted(names):
        raise FaultMishandled(f"after the resume the journal holds {sorted(r['name'] for r in records)}")
    _whole_files(out.parent)


def _expect_stop(done: subprocess.CompletedProcess, *needles: str) -> str:
    lines = _lines(done.stderr)
    if done.returncode == 0:
        raise FaultMishandled("exit code 0: the fault went unreported")
    if done.returncode != 1 or len(lines) != 1 or not all(n in lines[0] for n in needles):
        raise FaultMishandled(f"exit code {done.returncode}, said: {' | '.join(lines)[:300]}")
    return lines[0]


def injected_case(data: Path, work: Path, names: list[str], fault: str, target: str, nth: int, named: str,
                  dump: bool = False):
    def call() -> None:
        root = make_root(data, work, names)
        out = work / "out" / "out.json"
        extra = ("--dump", str(work / "out" / "dump")) if dump else ()
        done = _run(["-c", DRIVER, fault, target, str(nth), *_eval_argv(root, out, *extra)])
        fault_text = "No space left on device" if fault == "disk-full" else "Read-only file system"
        said = _expect_stop(done, named, fault_text)
        _whole_files(work / "out")
        _resumed(root, out, _journal(out), names, *extra)
        raise FaultHandled(said)
    return call


def two_runs_case(data: Path, work: Path, names: list[str]):
    """Two evals on one --json: the first (the driver `PAUSED`) waits inside its first problem until told to go on,
    so the second surely comes while the first holds the journal."""
    def call() -> None:
        root = make_root(data, work, names)
        out, go = work / "out" / "out.json", work / "go"
        env = {**os.environ, "PYTHONPATH": _code_root()}
        first = subprocess.Popen([sys.executable, "-c", PAUSED, str(go), *_eval_argv(root, out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            if first.stdout.readline().strip() != "solving":
                raise FaultMishandled("the first run did not start")
            before = out.with_name(out.name + ".jsonl").read_bytes()
            said = _expect_stop(_run(["-m", "solver.app.cli", *_eval_argv(root, out)]), str(out), "another eval run")
            if out.with_name(out.name + ".jsonl").read_bytes() != before:
                raise FaultMishandled("the second run wrote to the journal the first holds")
            go.write_text("")
            if first.wait(900) != 0:
                raise FaultMishandled(f"the first run failed: {first.stderr.read()[-200:]}")
        finally:
            first.kill()
        records = _journal(out)
        if sorted(r["name"] for r in records) != sorted(names):
            raise FaultMishandled(f"the first run's journal holds {sorted(r['name'] for r in records)}")
        raise FaultHandled(said)
    return call


PAUSED = """
import sys, time
from pathlib import Path
from solver.app import commands
from solver.app.cli import main
solve, go = commands.evaluate_problem, Path(sys.argv[1])
def paused(job, perception=None, dump=None):
    print("solving", flush=True)
    while not go.exists():
        time.sleep(0.05)
    return solve(job, perception, dump)
commands.evaluate_problem = paused
sys.exit(main(sys.argv[2:]))
"""


def worker_dies_case(data: Path, work: Path, names: list[str]):
    def call() -> None:
        root = make_root(data, work, names)
        out = work / "out" / "out.json"
        argv = ["eval", "--data", str(root), "--split", "tiny", "--oracle", "--workers", "2", "--json", str(out)]
        said = _expect_stop(_run(["-c", DRIVER, "worker-dies", sorted(names)[-1], "0", *argv], timeout=300),
                            "ended in the middle of the run", str(out))
        kept = _journal(out)
        _resumed(root, out, kept, names)
        raise FaultHandled(said)
    return call


def memory_case(data: Path, work: Path, names: list[str], pixels: bool, limit: int = 2 * GIB):
    """eval under an address-space cap: it runs (every problem, no error recorded) or stops with one line."""
    def call() -> None:
        root = make_root(data, work, names[:1] if pixels else names)
        out = work / "out" / "out.json"
        argv = ["eval", "--data", str(root), "--split", "tiny", "--workers", "2", "--json", str(out)]
        done = _run(["-m", "solver.app.cli", *argv, *(() if pixels else ("--oracle",))], limit=limit)
        if done.returncode == 0:
            errors = [r["error"] for r in _journal(out) if r["error"]]
            if errors:
                raise FaultMishandled(f"exit code 0, but problems recorded as failed: {errors[0][:150]}")
            return
        raise FaultHandled(_expect_stop(done, "memory"))
    return call


def can_mount() -> bool:
    """Whether this process may mount a tmpfs in a mount namespace of its own (root and `unshare -m`)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=1m",
                               "tmpfs", "/mnt"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def tmpfs_case(data: Path, work: Path, names: list[str], options: str, fault_text: str):
    """eval into a tmpfs mounted with `options` (a small size, or read-only) in a mount namespace of its own; then the
    tmpfs made roomy (or writable) and the same command resumed."""
    script = """
mount -t tmpfs -o "$OPTIONS" tmpfs "$DISK" || exit 99
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split tiny --oracle --workers 1 --json "$DISK/out.json" \
    --dump "$DISK/dump" 2> "$SEEN/first.err"
echo $? > "$SEEN/first.code"
cp -a "$DISK/." "$SEEN/after-first"
mount -o remount,rw,size=64m "$DISK"
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split tiny --oracle --workers 1 --json "$DISK/out.json" \
    --dump "$DISK/dump" 2> "$SEEN/second.err"
echo $? > "$SEEN/second.code"
cp -a "$DISK/." "$SEEN/after-second"
"""

    def call() -> None:
        root = make_root(data, work, names)
        disk, seen = work / "disk", work / "seen"
        disk.mkdir(parents=True)
        seen.mkdir()
        env = {**os.environ, "PYTHONPATH": _code_root(), "PYTHON": sys.executable, "DISK": str(disk),
               "SEEN": str(seen), "DATA": str(root), "OPTIONS": options}
        done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], env=env,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise FaultMishandled(f"the scenario failed: {done.stderr[-200:]}")
        first = subprocess.CompletedProcess([], int((seen / "first.code").read_text()), "", (seen / "first.err").read_text())
        said = _expect_stop(first, str(disk), fault_text)
        _whole_files(seen / "after-first")
        kept = _journal(seen / "after-first" / "out.json")
        if (seen / "second.code").read_text().strip() != "0":
            raise FaultMishandled(f"the resume failed: {(seen / 'second.err').read_text()[-200:]}")
        records = _journal(seen / "after-second" / "out.json")
        if records[: len(kept)] != kept or sorted(r["name"] for r in records) != sorted(names):
            raise FaultMishandled("a record lost, or a problem missing or doubled, after the resume")
        _whole_files(seen / "after-second")
        raise FaultHandled(said)
    return call


def fault_cases(data: Path, work: Path, pixels: bool = False) -> list[dict]:
    base = work / "fault"
    split = json.loads((data / "ShapeBongard_V2_split.json").read_text())
    names = sorted({n for key, value in split.items() if key != "all" for n in value})
    injected = [
        ("disk-full-journal-header", "disk-full", r"\.out\.json\.jsonl\.\d+\.new", 1, "out.json.jsonl", False),
        ("disk-full-journal-record", "disk-full", r"/out\.json\.jsonl$", 2, "out.json.jsonl", False),
        ("disk-full-summary", "disk-full", r"/\.out\.json\.\d+\.tmp$", 1, "out.json", False),
        ("disk-full-dump-report", "disk-full", r"/dump/\.", 3, "dump", True),
        ("disk-full-dump-index", "disk-full", r"/dump/\.index\.html", 1, "index.html", True),
        ("read-only-output", "read-only", r"/out/", 1, "--json", False),
        ("read-only-dump", "read-only", r"/dump/", 1, "--dump", True),
    ]
    cases = [{"family": "fault", "name": name, "expect": "error", "errors": (FaultHandled,),
              "call": injected_case(data, base / name, names, fault, target, nth, named, dump)}
             for name, fault, target, nth, named, dump in injected]
    cases += [{"family": "fault", "name": "two-runs-one-json", "expect": "error", "errors": (FaultHandled,),
               "call": two_runs_case(data, base / "two-runs", names)},
              {"family": "fault", "name": "worker-dies", "expect": "error", "errors": (FaultHandled,),
               "call": worker_dies_case(data, base / "worker-dies", names)},
              {"family": "fault", "name": "memory-2gib-oracle", "expect": "any", "errors": (FaultHandled,),
               "call": memory_case(data, base / "memory-oracle", names, pixels=False)}]
    if pixels:
        cases.append({"family": "fault", "name": "memory-2gib-pixels", "expect": "any", "errors": (FaultHandled,),
                      "call": memory_case(data, base / "memory-pixels", names, pixels=True)})
    if can_mount():
        cases += [{"family": "fault", "name": "tmpfs-full", "expect": "error", "errors": (FaultHandled,),
                   "call": tmpfs_case(data, base / "tmpfs-full", names, "size=400k", "No space left on device")},
                  {"family": "fault", "name": "tmpfs-read-only", "expect": "error", "errors": (FaultHandled,),
                   "call": tmpfs_case(data, base / "tmpfs-ro", names, "ro,size=4m", "Read-only file system")}]
    return cases
