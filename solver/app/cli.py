"""The `bongard-solver` command line.

Each package owns the subcommands of its own work (`dsl.commands`: generate; `perception.commands`:
train-decoder, train-shapes, decode; `solver.app.commands`: solve, eval;
`solver.facts_in.commands`: solve-facts;
`solver.app.product`: explain, demo; `benchmarks.commands`: bench).
This module only gathers them. The benchmarks are looked up by name at run time so that no library
package imports `benchmarks` (the entry point is the one place that sees every package).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import gc
import importlib
import re
import resource
import sys

from dsl import options

COMMAND_MODULES = (
    "dsl.commands",
    "perception.commands",
    "solver.app.commands",
    "solver.facts_in.commands",
    "solver.app.product",
    "solver.app.resident",
    "benchmarks.commands",
)


class Parser(argparse.ArgumentParser):
    """argparse's parser (the subcommands' too), the front door of every command: an option a command types `int`
    or `float` is read as `dsl.options.whole_number` or `finite_number` (ASCII digits, at most 40 characters, finite;
    Python's `int()` and `float()` also take other scripts' digits, `nan` and `inf`), and a usage error is kept to a
    short line (a value of thousands of characters is cut where argparse would repeat it whole)."""

    def add_argument(self, *args, **kwargs):
        strict = {int: options.whole_number, float: options.finite_number}
        if kwargs.get("type") in strict:
            kwargs["type"] = strict[kwargs["type"]]
        return super().add_argument(*args, **kwargs)

    def error(self, message: str):
        super().error(_shortened(message))


def _shortened(message: str, longest: int = 60) -> str:
    message = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in message)  # \r, \n
    message = re.sub(r"'([^']{%d})[^']+'" % longest, r"'\1...'", message)
    message = " ".join(token if len(token) <= 80 else token[:80] + "..." for token in message.split(" "))
    return message if len(message) <= 400 else message[:397] + "..."


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="bongard-solver",
        description="Neuro-symbolic solver for Bongard-LOGO problems.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        module.register(subcommands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand inside the error boundary (`solver.app.guard.run_guarded`): a failure is one line
    on stderr and exit code 1, a usage error exit code 2, Ctrl-C exit code 130. The command modules import the
    solver's libraries inside their commands, so building the parser (and `--help`) loads none of them. `solve`
    and `explain` run in this environment's resident solver when one runs, and leave one behind when none does
    (`solver.app.resident`)."""
    _fewer_malloc_arenas()
    from solver.app import resident

    given = list(sys.argv[1:] if argv is None else argv)
    code = resident.forwarded(given)  # `solve` and `explain` in a resident solver, when one runs (it parses them)
    if code is not None:
        return code
    try:
        parser = build_parser()  # imports every command's module: Ctrl-C may come here too
        args = parser.parse_args(argv)
        from solver.app.guard import run_guarded
    except KeyboardInterrupt:
        print("bongard-solver: interrupted", file=sys.stderr)
        return 130
    except (MemoryError, OSError, ImportError, RuntimeError) as error:  # a library that cannot load: memory?
        print(f"bongard-solver: cannot start: {_startup_fault(error)}", file=sys.stderr)
        return 1
    try:
        code = run_guarded(args.command, lambda: args.func(args))
    except (MemoryError, OSError, ImportError, RuntimeError) as error:  # the guard could not load what it names
        print(f"bongard-solver: cannot start: {_startup_fault(error)}", file=sys.stderr)  # errors with (a memory cap)
        return 1
    resident.start_behind(given, args.command)  # for the next one
    return code


def entry() -> int:
    """The console script (and `python -m solver.app.cli`): `main`, then every object of the process moved out of
    the cyclic garbage collector's reach (`gc.freeze`) before the interpreter ends. Its collection at exit walks
    every object torch, Numba and clingo made: about 1.1 s of a fresh `solve` of 4-5 s (issue 53). Atexit handlers
    still run and objects are still released; only reference cycles are left to the process's end. Not in `main`,
    which tests and benchmarks call in a process that goes on."""
    code = main()
    gc.freeze()
    return code


M_ARENA_MAX = -8  # glibc's mallopt parameter: the most malloc arenas
CAPPED_ARENAS = 2  # malloc arenas under an address-space cap


def _fewer_malloc_arenas() -> None:
    """Under an address-space cap (`ulimit -v`) at most CAPPED_ARENAS malloc arenas, as MALLOC_ARENA_MAX would set
    before the process starts: glibc gives threads arenas of their own, each reserving 64 MB of address space, and
    with torch's and OpenBLAS's threads a pixel `eval --workers 2` under 1.4 GiB stopped (can't start new thread)
    and under 1.6 GiB aborted in C++ (std::bad_alloc); with two arenas both ran (2 problems, 0 errors)."""
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY or not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt(M_ARENA_MAX, CAPPED_ARENAS)
    except (OSError, AttributeError):
        pass  # not glibc: its own malloc


def _startup_fault(error: BaseException) -> str:
    """One line for a failure to load the tool's libraries (the guard may be among them), naming a memory cap."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    cap = "" if limit == resource.RLIM_INFINITY else (
        f" (perhaps out of memory: this process may use at most {limit / 2**30:.2f} GiB of address space: ulimit -v)")
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return (text if len(text) <= 240 else text[:237] + "...") + cap

if __name__ == "__main__":
    sys.exit(entry())
