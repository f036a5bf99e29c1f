"""A resident solver behind `solve` and `explain`, so that a command run in a fresh process need not load the
solver again (issue 53).

A fresh `bongard-solver solve` spends 2.5-3 s before it solves anything: importing torch, Numba, clingo and the
solver, loading the models, loading the compiled kernels on their first call; the solving itself takes 0.2-0.7 s.
The first `solve` or `explain` run in its own process therefore leaves a server behind when it ends: a new process
(`python -m solver.app.server SOCKET ARGS...`, a session of its own, its output discarded) that imports the solver,
solves that command's problem once unseen (the models and kernels loaded), and then listens on a Unix socket.
A later `solve` or `explain` sends it its arguments and working folder, and prints what the command printed there,
on the same streams in the same order, with the same exit code: the server runs the same `solver.app.cli.main`.

- One server per interpreter, checkout and environment: the socket's name is a digest of the interpreter, this
  checkout's folder and the environment variables that change what a command computes (ENV_PREFIXES, ENV_NAMES);
  it lies in $XDG_RUNTIME_DIR/bongard-solver, else in the temporary folder's bongard-solver-UID, a folder only its
  owner may enter (another's or a looser one is not used).
- Never stale: the server notes every file of this checkout's packages (size and time of change) when it starts and
  checks them before each command; if one changed it answers "stale" and ends, the command runs in its own process
  and starts a new server.
- One command at a time (a second waits its turn); Ctrl-C in the command that waits interrupts the server's command
  (SIGINT), which ends as it would in its own process (exit code 130).
- It ends after IDLE_ENV seconds without a command (default IDLE_SECONDS), on `bongard-solver server stop`, or when
  it is killed (it removes its socket).
- Not used, nor started: with BONGARD_SOLVER_SERVER=off (also 0, no, false; the tests and the benchmarks that check
  a command's own process set it), under a resource limit (`ulimit -v` and the like: the command must run where the
  limit holds), or where no folder for the socket can be made. A server that cannot be reached, or that dies during
  a command, leaves the command to run in its own process.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dsl.processes import CHECKOUT, checkout_path

SWITCH_ENV = "BONGARD_SOLVER_SERVER"
IDLE_ENV = "BONGARD_SOLVER_SERVER_IDLE"
IDLE_SECONDS = 600.0  # a server with no command for this long ends (its memory goes back: resident 0.5 GB, and 0.4 GB
# for each of its two perception processes, after 24 free-form problems)
SERVED = ("solve", "explain")  # the commands a server runs
ENV_PREFIXES = ("BONGARD_", "NUMBA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH", "CUDA_", "PYTHON", "RAY_")
ENV_NAMES = ("XDG_CACHE_HOME", "HOME")
PER_COMMAND_ENV = ("BONGARD_SOLVER_DEBUG",)  # read while a command runs: set as the command's own process has it
NOT_KEYED = (SWITCH_ENV, IDLE_ENV) + PER_COMMAND_ENV
PACKAGES = ("dsl", "perception", "search", "solver", "benchmarks")
LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_RSS", "RLIMIT_FSIZE")
CONNECT_SECONDS = 2.0  # how long a command waits to reach a server that exists
STARTUP_SECONDS = 600.0  # the longest a server may take to start listening (a first run compiles its kernels)


def own_process() -> None:
    """The commands this process runs (and the processes it starts) run in their own process, no resident solver
    used or started: what a benchmark of a command's own process measures (hostile input, interrupts, fuzzing, Ray
    faults)."""
    os.environ[SWITCH_ENV] = "off"


def enabled() -> bool:
    """Whether a command may use (and start) a server: not switched off, no resource limit set."""
    if os.environ.get(SWITCH_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return False
    for name in LIMITS:
        which = getattr(resource, name, None)
        if which is not None and resource.getrlimit(which)[0] != resource.RLIM_INFINITY:
            return False
    return sys.platform != "win32"


def _key() -> str:
    """A digest of what a server's answers depend on besides the files it watches."""
    env = sorted((k, v) for k, v in os.environ.items()
                 if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and k not in NOT_KEYED)
    text = json.dumps([sys.executable, sys.version, str(CHECKOUT), env])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _private_folder(folder: Path) -> Path | None:
    """`folder`, made if missing: only if it is this user's and no one else may enter it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def socket_path() -> Path | None:
    """Where this environment's server listens (None: no private folder for it)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    bases = ([Path(runtime) / "bongard-solver"] if runtime else []) + [
        Path(tempfile.gettempdir()) / f"bongard-solver-{os.getuid()}"]
    for base in bases:
        path = base / f"{_key()}.sock"
        if len(os.fsencode(path)) < 100 and _private_folder(base) is not None:  # sun_path holds 108 bytes
            return path
    return None


def file_stamps() -> list:
    """Size and time of change of every file of this checkout's packages (what a server must not outlive)."""
    found = []
    for package in PACKAGES:
        for folder, folders, files in os.walk(CHECKOUT / package):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            for name in sorted(files):
                with contextlib.suppress(OSError):
                    info = os.stat(os.path.join(folder, name))
                    found.append([os.path.join(folder, name), info.st_size, info.st_mtime_ns])
    return found


# --- the command's side -------------------------------------------------------------------------------------


def _connected(path: Path) -> socket.socket | None:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(CONNECT_SECONDS)
    try:
        client.connect(str(path))
    except OSError:
        client.close()
        return None
    client.settimeout(None)
    return client


def _exchange(client: socket.socket, request: dict) -> dict | None:
    """Send one request; the server's answer, None if it went away first. The server's pid comes first: Ctrl-C
    here interrupts the command there (SIGINT), then goes on as a KeyboardInterrupt."""
    client.sendall(json.dumps(request).encode() + b"\n")
    pid = None
    with client.makefile("rb") as reader:
        try:
            hello = json.loads(reader.readline() or b"null")
            pid = hello.get("pid") if isinstance(hello, dict) else None
            line = reader.readline()
        except KeyboardInterrupt:
            if isinstance(pid, int):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGINT)
            raise
    return json.loads(line) if line else None


def forwarded(argv: list[str]) -> int | None:
    """Run `bongard-solver ARGV` in this environment's server and print its output: its exit code, None where
    there is no server to run it (the command then runs here). Only `solve` and `explain` (ARGV's first word); the
    server parses ARGV, so a usage error or `--help` prints as here."""
    command = argv[0] if argv else None
    if command not in SERVED or not enabled():
        return None
    path = socket_path()
    if path is None or not path.exists():
        return None
    client = _connected(path)
    if client is None:
        return None
    try:
        request = {"argv": argv, "cwd": os.getcwd(), "env": {k: os.environ.get(k) for k in PER_COMMAND_ENV}}
    except OSError:  # no working folder (removed): the command runs here and says so
        client.close()
        return None
    try:
        with client:
            answer = _exchange(client, request)
    except KeyboardInterrupt:
        print(f"bongard-solver {command}: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError):
        return None
    if not isinstance(answer, dict) or answer.get("stale") or "code" not in answer:
        return None
    try:
        for stream, text in answer["output"]:
            (sys.stdout if stream == 1 else sys.stderr).write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    return int(answer["code"])


def start_behind(argv: list[str], command: str) -> None:
    """After a command ran in its own process: start this environment's server unless one runs or is starting.
    It warms up on ARGV's problem (a `solve` of it, its output discarded)."""
    if command not in SERVED or not enabled():
        return
    path = socket_path()
    if path is None or busy(path):
        return
    env = dict(os.environ, PYTHONPATH=checkout_path())  # this checkout's code, whatever is installed
    with contextlib.suppress(OSError):
        subprocess.Popen([sys.executable, "-m", "solver.app.server", str(path), *argv], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
                         cwd=os.getcwd())


def lock_file(path: Path) -> Path:
    """The file holding the pid of the server at `path` from its start to its end."""
    return path.with_suffix(".pid")


def owner(path: Path) -> int | None:
    """The pid written in `path`'s lock, if that process is alive."""
    try:
        pid = int(lock_file(path).read_text().strip())
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    except (OSError, ValueError):
        return None
    return pid


def busy(path: Path) -> bool:
    """Whether a server is running at `path`, or starting there (its lock younger than STARTUP_SECONDS: an older
    lock without a socket names a process that died and whose pid was given to another)."""
    if owner(path) is None:
        return False
    try:
        return path.exists() or time.time() - lock_file(path).stat().st_mtime < STARTUP_SECONDS
    except OSError:
        return False


# --- the perception of a command -------------------------------------------------------------------------------

KEPT: dict | None = None  # in the resident solver (set by it): (checkpoint, workers) -> a PixelPerception kept open
SERVED_WORKERS = 2  # perception processes of a command the resident solver runs without --workers (its pool kept)


@contextlib.contextmanager
def perception(checkpoint, workers: int | None):
    """The `PixelPerception` of one `solve` or `explain` from pixels. In a process of its own: a new one on `workers`
    processes (default 1: a pool would load the models and kernels again for one problem), closed after the command.
    In the resident solver: one kept open from command to command, on `workers` processes or SERVED_WORKERS (at most
    the CPUs), its pool loaded once, so a command shares its problem's images out (the labels are the same whatever
    the workers: `tests/solver/test_execution_local.py`)."""
    from solver.reading import PixelPerception

    if KEPT is None:
        with PixelPerception(checkpoint, workers=workers or 1) as opened:
            yield opened
        return
    key = (None if checkpoint is None else str(checkpoint), workers or min(SERVED_WORKERS, os.cpu_count() or 1))
    if key not in KEPT:
        KEPT[key] = PixelPerception(checkpoint, workers=key[1])
    yield KEPT[key]


def forget() -> None:
    """The kept perceptions closed (after a command that failed or was interrupted: a pool in an unknown state)."""
    while KEPT:
        _, kept = KEPT.popitem()
        with contextlib.suppress(Exception):
            kept.close()


# --- `bongard-solver server` -------------------------------------------------------------------------------


def _ask(request: dict) -> dict | None:
    path = socket_path()
    client = None if path is None or not path.exists() else _connected(path)
    if client is None:
        return None
    with client:
        try:
            return _exchange(client, request)
        except (OSError, ValueError):
            return None


def server_command(args: argparse.Namespace) -> int:
    path = socket_path()
    if args.action == "stop":
        answer = _ask({"stop": True})
        starting = None if answer or path is None or not busy(path) else owner(path)
        if starting is not None:  # not listening yet
            with contextlib.suppress(OSError):
                os.kill(starting, signal.SIGTERM)
        print("stopped" if answer or starting else "no server running", f"({path})" if path else "")
        return 0
    if not enabled():
        print(f"no server: switched off ({SWITCH_ENV}) or under a resource limit")
        return 0
    answer = _ask({"status": True})
    if answer is None:
        state = "starting" if path is not None and busy(path) else "not running"
        print(f"server {state} ({path})")
    else:
        print(f"server running: pid {answer['pid']}, {answer['served']} commands answered ({path})")
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("server", help="the resident solver behind solve and explain: status or stop")
    parser.add_argument("action", choices=("status", "stop"), help="show it, or end it")
    parser.set_defaults(func=server_command)

