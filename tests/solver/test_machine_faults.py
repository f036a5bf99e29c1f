"""Faults of the machine while `eval` works (issue 54): a full disk while it writes its journal, summary or `--dump`
reports, a read-only output folder, a memory cap, and two runs given the same `--json`. Each fault must end the run
with one line naming the path and the fault (no traceback), lose no record already written, leave no half-written
file under a final name, and let the same command resume afterwards.

A full disk is injected at the write layer (`dsl.owned.write_chunk`: half of the chunk written, then ENOSPC), and
where the machine allows (root, `unshare -m`) a small tmpfs fills up for real."""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dsl.owned
from benchmarks._hostile_faults import PAUSED, can_mount
from dsl.commands import write_dataset
from dsl.generate import ProblemKind
from solver.app.cli import main

REPO = Path(__file__).resolve().parents[2]
TEMPORARY_SUFFIXES = (".tmp", ".new")
GIB = 2**30


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("faults") / "data"
    write_dataset(root, {ProblemKind.FREE_FORM: 4}, seed=54, workers=1, size=128, progress=False)
    return root


def evaluate(root: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "--data", str(root), "--split", "ff", "--oracle", "--workers", "1", "--json", str(out), *extra]


def run(argv: list[str], capsys) -> tuple[int, list[str]]:
    """Exit code and the lines of stderr a person reads (progress bars left out); no traceback."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    return code, message_lines(capsys.readouterr().err)


def message_lines(err: str) -> list[str]:
    assert "Traceback" not in err
    lines = [line.split("\r")[-1].strip() for line in err.splitlines()]
    return [line for line in lines if line and "%|" not in line and not line.startswith("written:")]


def journal_lines(out: Path) -> list[dict]:
    """Every line of the journal, each whole JSON (a cut or interleaved line fails here)."""
    lines = (out.parent / f"{out.name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def no_half_written_file(folder: Path) -> None:
    """No temporary file left, and every JSON and HTML file under its final name whole."""
    for path in folder.rglob("*"):
        assert not path.name.endswith(TEMPORARY_SUFFIXES), f"{path} left behind"
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".html":
            assert path.read_text().rstrip().endswith("</html>"), f"{path} is cut"
        elif path.suffix == ".jsonl":
            [json.loads(line) for line in path.read_text().splitlines()]


class FullDisk:
    """`dsl.owned.write_chunk` that fails when writing the `nth` chunk to a file whose name matches `target` (a
    regular expression): half the chunk reaches the file, then OSError(ENOSPC), as a disk filling up mid-write."""

    def __init__(self, target: str, nth: int = 1):
        self.target, self.nth, self.seen, self.struck = re.compile(target), nth, 0, False
        self.write = dsl.owned.write_chunk

    def __call__(self, handle, data) -> int:
        if self.target.search(str(handle.name)) and not self.struck:
            self.seen += 1
            if self.seen == self.nth:
                self.struck = True
                self.write(handle, data[: len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.write(handle, data)


@pytest.mark.parametrize("target, nth, named", [
    (r"\.out\.json\.jsonl\.\d+\.new", 1, "out.json.jsonl"),  # the journal's header, written beside it
    (r"/out\.json\.jsonl$", 2, "out.json.jsonl"),  # the second record appended
    (r"/\.out\.json\.\d+\.tmp$", 1, "out.json"),  # the summary
    (r"/dump/\.ff_", 3, "dump"),  # the second problem's report of --dump
    (r"/dump/\.index\.html", 1, "index.html"),  # the index of --dump
], ids=["journal-header", "journal-record", "summary", "dump-report", "dump-index"])
def test_a_full_disk_stops_eval_clearly_and_loses_nothing(generated, tmp_path, capsys, monkeypatch, target, nth, named):
    clean = tmp_path / "clean" / "out.json"
    assert run(evaluate(generated, clean), capsys)[0] == 0
    out = tmp_path / "run" / "out.json"
    argv = evaluate(generated, out, "--dump", str(tmp_path / "run" / "dump"))
    disk = FullDisk(target, nth)
    monkeypatch.setattr(dsl.owned, "write_chunk", disk)
    code, lines = run(argv, capsys)
    assert disk.struck
    assert code == 1 and len(lines) == 1, lines
    assert named in lines[0] and "No space left on device" in lines[0]
    no_half_written_file(tmp_path / "run")
    kept = journal_lines(out)[1:] if (out.parent / "out.json.jsonl").exists() else []
    monkeypatch.setattr(dsl.owned, "write_chunk", disk.write)
    assert run(argv, capsys)[0] == 0  # resumed once the disk has room
    records = journal_lines(out)[1:]
    assert records[: len(kept)] == kept  # nothing written before the fault is lost
    assert sorted(r["name"] for r in records) == sorted(r["name"] for r in journal_lines(clean)[1:])  # each once
    labels = {r["name"]: r["predicted"] for r in journal_lines(clean)[1:]}
    assert {r["name"]: r["predicted"] for r in records} == labels
    no_half_written_file(tmp_path / "run")
    assert len(json.loads(out.read_text())["problems"]) == 4


def test_a_read_only_output_folder_is_refused_before_any_work(generated, tmp_path, capsys, monkeypatch):
    solved = []
    monkeypatch.setattr("solver.app.commands.evaluate_problem", lambda *a, **k: solved.append(a))

    def read_only(handle, data):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(dsl.owned, "write_chunk", read_only)
    for argv, option in ((evaluate(generated, tmp_path / "ro" / "out.json"), "--json"),
                         (evaluate(generated, tmp_path / "out.json", "--dump", str(tmp_path / "ro")), "--dump")):
        code, lines = run(argv, capsys)
        assert code == 1 and len(lines) == 1 and lines[0].startswith(f"bongard-solver eval: {option}")
        assert "Read-only file system" in lines[0]
    assert solved == [] and not (tmp_path / "ro" / "out.json.jsonl").exists()


def test_a_second_eval_on_the_same_json_is_refused_while_the_first_runs(generated, tmp_path, capsys):
    """Two real evals on one --json: the first (another process) waits inside its first problem until told to go
    on, so the second surely comes while the first holds the journal."""
    out, go = tmp_path / "out.json", tmp_path / "go"
    argv = evaluate(generated, out)
    first = subprocess.Popen([sys.executable, "-c", PAUSED, str(go), *argv], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "solving"  # its journal is open and locked
        before = (tmp_path / "out.json.jsonl").read_bytes()
        code, lines = run(argv, capsys)
        assert code == 1 and len(lines) == 1
        assert "another eval run is writing this journal" in lines[0] and str(out) in lines[0]
        assert (tmp_path / "out.json.jsonl").read_bytes() == before  # the second wrote nothing
        go.write_text("")
        assert first.wait(300) == 0, first.stderr.read()[-2000:]
    finally:
        first.kill()
    records = journal_lines(out)[1:]  # every line whole JSON: nothing interleaved
    assert sorted(r["name"] for r in records) == sorted(json.loads(
        (generated / "ShapeBongard_V2_split.json").read_text())["ff"])
    assert run(argv, capsys)[0] == 0 and journal_lines(out)[1:] == records  # the first has ended: nothing to do


DIES_ON_NACT6 = """
import os, sys
from solver.app import commands
from solver.app.cli import main
solve = commands.evaluate_problem
def dies_on_nact6(job, perception=None, dump=None):  # as a worker ended by a library that gave up for want of memory
    if job.name.startswith("ff_nact6"):
        os._exit(1)
    return solve(job, perception, dump)
if sys.argv[1] == "dies":
    commands.evaluate_problem = dies_on_nact6
sys.exit(main(sys.argv[2:]))
"""


def test_a_worker_that_dies_ends_eval_clearly_instead_of_hanging(generated, tmp_path):
    out = tmp_path / "out.json"
    argv = ["eval", "--data", str(generated), "--split", "ff", "--oracle", "--workers", "2", "--json", str(out)]
    done = subprocess.run([sys.executable, "-c", DIES_ON_NACT6, "dies", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    lines = message_lines(done.stderr)
    assert done.returncode == 1 and len(lines) == 1 and "ended in the middle of the run" in lines[0], done.stderr
    assert f"the records written are kept in {out}.jsonl" in lines[0]
    kept = journal_lines(out)[1:]
    assert "ff_nact6" not in {r["name"][:8] for r in kept}
    again = subprocess.run([sys.executable, "-c", DIES_ON_NACT6, "lives", *argv], cwd=REPO, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    records = journal_lines(out)[1:]
    assert records[: len(kept)] == kept and len({r["name"] for r in records}) == len(records) == 4


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "solver.app.cli", *argv]


def capped(limit: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return set_limit


@pytest.mark.parametrize("pixels", [False, True], ids=["oracle", "pixels"])
def test_eval_under_a_2_gib_memory_cap_runs_or_stops_clearly(generated, tmp_path, pixels):
    out = tmp_path / "out.json"
    argv = cli("eval", "--data", str(generated), "--split", "ff", "--json", str(out), "--workers", "2",
               *(("--limit", "1") if pixels else ("--oracle",)))
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=900, preexec_fn=capped(2 * GIB))
    lines = message_lines(done.stderr)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    if done.returncode == 1:
        assert len(lines) == 1 and "memory" in lines[0], lines
    else:
        assert json.loads(out.read_text())["errors"] == 0
    no_half_written_file(tmp_path)


def test_eval_under_a_tight_memory_cap_stops_with_one_line(generated, tmp_path):
    """A cap too small for the tool's libraries: one line naming the cap, exit code 1 (not a traceback, not a hang)."""
    argv = cli("eval", "--data", str(generated), "--split", "ff", "--oracle", "--json", str(tmp_path / "out.json"))
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300, preexec_fn=capped(GIB // 3))
    lines = message_lines(done.stderr)
    assert done.returncode == 1 and len(lines) == 1 and "ulimit -v" in lines[0], done.stderr[-2000:]


mounting = pytest.mark.skipif(not can_mount(), reason="needs root and unshare -m to mount a tmpfs")


def in_namespace(script: str, **paths: Path) -> subprocess.CompletedProcess:
    """`script` (sh) in a mount namespace of its own: its mounts vanish with it, whatever happens."""
    env = {**os.environ, **{k.upper(): str(v) for k, v in paths.items()}, "PYTHON": sys.executable}
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


@mounting
def test_a_small_tmpfs_filling_up_under_dump(generated, tmp_path):
    """A 400 kB tmpfs holding --json and --dump: the reports fill it; then it grows and the run resumes."""
    disk, seen = tmp_path / "disk", tmp_path / "seen"
    disk.mkdir()
    seen.mkdir()
    script = """
mount -t tmpfs -o size=400k tmpfs "$DISK" || exit 99
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split ff --oracle --workers 1 --json "$DISK/out.json" \
    --dump "$DISK/dump" 2> "$SEEN/first.err"
echo $? > "$SEEN/first.code"
cp -a "$DISK/." "$SEEN/after-first"
mount -o remount,size=64m "$DISK"
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split ff --oracle --workers 1 --json "$DISK/out.json" \
    --dump "$DISK/dump" 2> "$SEEN/second.err"
echo $? > "$SEEN/second.code"
cp -a "$DISK/." "$SEEN/after-second"
"""
    done = in_namespace(script, disk=disk, seen=seen, data=generated)
    assert done.returncode == 0, done.stderr
    lines = message_lines((seen / "first.err").read_text())
    assert (seen / "first.code").read_text().strip() == "1" and len(lines) == 1, lines
    assert "No space left on device" in lines[0] and str(disk) in lines[0]
    no_half_written_file(seen / "after-first")
    kept = journal_lines(seen / "after-first" / "out.json")[1:]
    assert (seen / "second.code").read_text().strip() == "0", (seen / "second.err").read_text()[-2000:]
    records = journal_lines(seen / "after-second" / "out.json")[1:]
    assert records[: len(kept)] == kept and len({r["name"] for r in records}) == len(records) == 4
    no_half_written_file(seen / "after-second")


@mounting
def test_a_read_only_tmpfs_is_refused_then_resumes_once_writable(generated, tmp_path):
    disk, seen = tmp_path / "disk", tmp_path / "seen"
    disk.mkdir()
    seen.mkdir()
    script = """
mount -t tmpfs -o ro,size=4m tmpfs "$DISK" || exit 99
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split ff --oracle --workers 1 --json "$DISK/out.json" \
    2> "$SEEN/first.err"
echo $? > "$SEEN/first.code"
mount -o remount,rw "$DISK"
"$PYTHON" -m solver.app.cli eval --data "$DATA" --split ff --oracle --workers 1 --json "$DISK/out.json" \
    2> "$SEEN/second.err"
echo $? > "$SEEN/second.code"
cp -a "$DISK/." "$SEEN/after"
"""
    started = time.perf_counter()
    done = in_namespace(script, disk=disk, seen=seen, data=generated)
    assert done.returncode == 0, done.stderr
    lines = message_lines((seen / "first.err").read_text())
    assert (seen / "first.code").read_text().strip() == "1" and len(lines) == 1
    assert lines[0].startswith(f"bongard-solver eval: --json {disk}") and "Read-only file system" in lines[0]
    assert (seen / "second.code").read_text().strip() == "0"
    assert len(journal_lines(seen / "after" / "out.json")) == 5
    assert time.perf_counter() - started < 600
