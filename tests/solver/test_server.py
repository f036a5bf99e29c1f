"""The resident solver behind `solve` and `explain` (solver.app.server): a command it answers prints what the
command prints in its own process, with the same exit code; it is not used when switched off or under a resource
limit; it ends when asked, and answers "stale" once a file of the checkout changed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dsl.dataset import list_problems, problem_folder
from solver.app import resident as server
from solver.app.server import _serve_one

CHECKOUT = Path(__file__).resolve().parents[2]


def _env(runtime: Path, switch: str) -> dict:
    return dict(os.environ, PYTHONPATH=str(CHECKOUT), XDG_RUNTIME_DIR=str(runtime), BONGARD_SOLVER_SERVER=switch,
                BONGARD_SOLVER_SERVER_IDLE="120")


def _cli(*argv: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.app.cli", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _without_seconds(text: str):
    """A solution's JSON without its timings."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "seconds" not in k}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(json.loads(text))


def _status(env: dict, cwd: Path) -> str:
    return _cli("server", "status", env=env, cwd=cwd).stdout


@pytest.fixture()
def problem(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    done = _cli("generate", "--out", str(root), "--abstract", "1", "--workers", "1", env=_env(tmp_path, "off"),
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return problem_folder(root, list_problems(root)[0])


def test_a_command_answered_by_the_server_prints_what_its_own_process_prints(problem: Path, tmp_path: Path):
    runtime = Path(tempfile.mkdtemp(prefix="bs-"))  # a short path: a socket's name holds at most 108 bytes
    on, off = _env(runtime, "on"), _env(runtime, "off")
    try:
        first = _cli("solve", str(problem), "--json", env=on, cwd=tmp_path)  # runs here, starts the server
        assert first.returncode == 0, first.stderr
        deadline = time.monotonic() + 300
        while "running" not in _status(on, tmp_path):
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.5)
        own = _cli("solve", str(problem), "--json", env=off, cwd=tmp_path)
        served = _cli("solve", str(problem.relative_to(tmp_path)), "--json", env=on, cwd=tmp_path)  # its folder too
        assert "1 commands answered" in _status(on, tmp_path)
        assert served.returncode == own.returncode == 0
        assert _without_seconds(served.stdout) == _without_seconds(own.stdout) == _without_seconds(first.stdout)
        text_own = _cli("solve", str(problem), env=off, cwd=tmp_path)
        text_served = _cli("solve", str(problem), env=on, cwd=tmp_path)
        assert text_served.stdout == text_own.stdout and "\nquery 1: " in text_served.stdout
        missing = [_cli("solve", str(tmp_path / "missing"), env=env, cwd=tmp_path) for env in (off, on)]
        assert missing[0].returncode == missing[1].returncode == 1
        assert missing[0].stderr == missing[1].stderr and "missing" in missing[1].stderr
        usage = [_cli("solve", str(problem), "--no-such-option", env=env, cwd=tmp_path) for env in (off, on)]
        assert usage[0].returncode == usage[1].returncode == 2 and usage[0].stderr == usage[1].stderr
        assert "4 commands answered" in _status(on, tmp_path)
        waiting = subprocess.Popen([sys.executable, "-m", "solver.app.cli", "solve", str(problem)], cwd=tmp_path,
                                   env=on, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(0.3)
        waiting.send_signal(signal.SIGINT)  # Ctrl-C: the command (and the server's run of it) interrupted
        _, said = waiting.communicate(timeout=120)
        assert waiting.returncode == 130 and said.endswith("interrupted\n")
        again = _cli("solve", str(problem), env=on, cwd=tmp_path)  # the server goes on
        assert again.stdout == text_own.stdout
    finally:
        stopped = _cli("server", "stop", env=on, cwd=tmp_path)
    assert stopped.stdout.startswith("stopped")
    deadline = time.monotonic() + 30
    while "not running" not in _status(on, tmp_path):
        assert time.monotonic() < deadline, "the server did not stop"
        time.sleep(0.2)
    assert not [p for p in (runtime / "bongard-solver").iterdir()]  # its socket and pid file removed
    shutil.rmtree(runtime)


def test_no_server_when_switched_off_or_under_a_resource_limit(monkeypatch):
    monkeypatch.setenv(server.SWITCH_ENV, "on")
    monkeypatch.setattr(server.resource, "getrlimit", lambda which: (server.resource.RLIM_INFINITY,) * 2)
    assert server.enabled() == (sys.platform != "win32")
    for off in ("off", "0", "No", "false"):
        monkeypatch.setenv(server.SWITCH_ENV, off)
        assert not server.enabled()
        assert server.forwarded(["solve", "x"]) is None
    monkeypatch.setenv(server.SWITCH_ENV, "on")
    assert server.forwarded(["eval", "x"]) is None  # eval and the others never go to a server
    capped = server.resource.RLIMIT_AS
    monkeypatch.setattr(server.resource, "getrlimit",
                        lambda which: (2**30, 2**30) if which == capped else (server.resource.RLIM_INFINITY,) * 2)
    assert not server.enabled()


def test_the_socket_folder_is_private_and_named_for_the_environment(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = server.socket_path()
    assert path.parent == tmp_path / "bongard-solver" and path.parent.stat().st_mode & 0o077 == 0
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "other"))
    assert server.socket_path() != path  # another environment, another server
    monkeypatch.setenv("BONGARD_SOLVER_DEBUG", "1")
    other = server.socket_path()
    monkeypatch.delenv("BONGARD_SOLVER_DEBUG")
    assert server.socket_path() == other  # read per command: the same server
    os.chmod(path.parent, 0o755)
    assert server.socket_path().parent != path.parent  # a folder others may enter is not used


def test_stamps_change_with_a_file_and_a_stale_server_says_so(tmp_path: Path, monkeypatch):
    (tmp_path / "dsl").mkdir()
    (tmp_path / "dsl" / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(server, "CHECKOUT", tmp_path)
    stamps = server.file_stamps()
    (tmp_path / "dsl" / "a.py").write_text("x = 22\n")
    assert server.file_stamps() != stamps
    ours, theirs = socket.socketpair()
    with ours:
        theirs.sendall(json.dumps({"argv": ["solve", "x"], "cwd": str(tmp_path), "env": {}}).encode() + b"\n")
        assert _serve_one(ours, stamps) is False  # the server ends
    with theirs, theirs.makefile("rb") as reader:
        assert json.loads(reader.readline()) == {"pid": os.getpid()}
        assert json.loads(reader.readline()) == {"stale": True}
