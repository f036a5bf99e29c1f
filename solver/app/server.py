"""The resident solver's process (`python -m solver.app.server SOCKET ARGV...`, started by
`solver.app.resident.start_behind`): it imports the solver, warms up on ARGV's problem, then runs the commands sent
to SOCKET one at a time with `solver.app.cli.main`, until idle, stopped or stale (`solver.app.resident`)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
import sys
import warnings
from pathlib import Path

from solver.app import resident
from solver.app.cli import main as cli_main
from solver.app.resident import (IDLE_ENV, IDLE_SECONDS, PER_COMMAND_ENV, SWITCH_ENV, busy, file_stamps, lock_file,
                                 owner)


REQUEST_SECONDS = 30.0  # the longest a connection may take to send its request


class _Stream:
    """A command's stdout (1) or stderr (2): what it writes joins `pieces`, (stream, text) in the order written,
    shared by both streams."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, pieces: list[list], number: int):
        self.pieces, self.number = pieces, number

    def write(self, text: str) -> int:
        if self.pieces and self.pieces[-1][0] == self.number:
            self.pieces[-1][1] += text
        else:
            self.pieces.append([self.number, text])
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _Stopped(BaseException):
    """SIGTERM: the server ends, even in the middle of a command (which catches SystemExit and exceptions)."""


def _stop(*_) -> None:
    raise _Stopped()


def _idle_seconds() -> float:
    """IDLE_ENV's seconds (a positive number), else IDLE_SECONDS."""
    try:
        seconds = float(os.environ.get(IDLE_ENV, ""))
    except ValueError:
        return IDLE_SECONDS
    return seconds if 0 < seconds < 10**7 else IDLE_SECONDS


def _run(argv: list[str], cwd: str, env: dict) -> dict:
    """One command run here as `bongard-solver ARGV` from `cwd`: its exit code and output. A command that did not
    end well leaves no kept perception behind (`resident.forget`)."""
    pieces: list[list] = []
    for name in PER_COMMAND_ENV:
        if env.get(name) is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = env[name]
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(_Stream(pieces, 1)), contextlib.redirect_stderr(_Stream(pieces, 2)), \
                warnings.catch_warnings():  # and each warning shown again, as in a process of its own
            try:
                code = cli_main(argv)
            except SystemExit as ended:  # argparse's usage errors
                code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 2)
            except KeyboardInterrupt:
                print(f"bongard-solver {argv[0] if argv else ''}: interrupted", file=sys.stderr)
                code = 130
    except OSError as error:  # the command's folder is gone
        pieces.append([2, f"bongard-solver: cannot run in {cwd}: {error.strerror}\n"])
        code = 1
    if code != 0:
        resident.forget()
    return {"code": code, "output": pieces}


def _solve_only(args) -> list[str]:
    """`solve PROBLEM` with the options of a parsed `solve` or `explain` that `solve` takes (`--out` dropped)."""
    kept = ["--oracle"] if args.oracle else []
    kept += ["--checkpoint", str(args.checkpoint)] if args.checkpoint is not None else []
    kept += ["--workers", str(args.workers)] if args.workers is not None else []
    return ["solve", str(args.problem), *kept]


def _warm_up(argv: list[str]) -> None:
    """The kept perception loaded and warmed up (`solver.app.product.warm_up`: one built-in problem per generator, in
    its pool's processes too), then the problem of the command that started this server solved, its output
    discarded."""
    from solver.app.cli import build_parser
    from solver.app.product import warm_up

    with contextlib.suppress(Exception, SystemExit):
        args = build_parser().parse_args(argv)
        if not args.oracle:
            with resident.perception(args.checkpoint, args.workers) as kept:
                warm_up(kept)
        _run(_solve_only(args), os.getcwd(), {})  # nothing written


def _listening(path: Path) -> socket.socket:
    """A socket listening at `path`, published whole (bound under another name, then renamed)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    loose = path.with_name(f".{path.stem}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        loose.unlink()
    server.bind(str(loose))
    os.chmod(loose, 0o600)
    server.listen(8)
    os.replace(loose, path)
    return server


def _serve_one(connection: socket.socket, stamps: list) -> bool:
    """Answer one connection; False when the server should end (asked to stop, or its files changed)."""
    with connection, connection.makefile("rb") as reader:
        connection.settimeout(REQUEST_SECONDS)  # a command sends its request as it connects
        try:
            request = json.loads(reader.readline() or b"null")
        except (ValueError, OSError):
            return True
        connection.settimeout(None)
        if not isinstance(request, dict):
            return True
        connection.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        if request.get("stop"):
            connection.sendall(b'{"stopped": true}\n')
            return False
        if request.get("status"):
            connection.sendall(json.dumps({"pid": os.getpid(), "served": _SERVED[0]}).encode() + b"\n")
            return True
        if file_stamps() != stamps:
            connection.sendall(b'{"stale": true}\n')
            return False
        answer = _run(list(request.get("argv", [])), str(request.get("cwd", "/")), dict(request.get("env", {})))
        _SERVED[0] += 1
        with contextlib.suppress(OSError):
            connection.sendall(json.dumps(answer).encode() + b"\n")
    return True


_SERVED = [0]  # commands answered by this server


def serve(path: Path, argv: list[str]) -> int:
    """The server's life: claim `path` (its .pid file), warm up on ARGV's problem, answer commands until idle."""
    try:
        descriptor = os.open(lock_file(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if busy(path):
            return 0  # another server is starting or running here
        lock_file(path).unlink(missing_ok=True)  # left by one that died
        return serve(path, argv)
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    os.environ[SWITCH_ENV] = "off"  # its commands (and their helpers) run here, never forwarded
    resident.KEPT = {}  # its commands' perceptions kept from one to the next
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    idle = _idle_seconds()
    listener = None
    try:
        stamps = file_stamps()
        _warm_up(argv)
        listener = _listening(path)
        listener.settimeout(idle)
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                break
            except KeyboardInterrupt:  # a SIGINT meant for a command that had already ended
                continue
            try:
                if not _serve_one(connection, stamps):
                    break
            except (OSError, KeyboardInterrupt):
                continue
    except _Stopped:
        pass
    finally:
        resident.forget()
        if listener is not None:
            listener.close()
            if owner(path) == os.getpid():
                path.unlink(missing_ok=True)
        if owner(path) == os.getpid():
            lock_file(path).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(serve(Path(sys.argv[1]), sys.argv[2:]))
    finally:
        gc.freeze()  # its socket removed: end without walking torch's objects (as `solver.app.cli.entry`)
