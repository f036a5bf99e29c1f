"""The kernels compiled ahead of their first use, in a helper process, while the cache of compiled kernels is
cold (issue 53: the first run after an install compiles for about 25 s of CPU on one core while the other waits).

`start()` (called by the commands that solve in their own process: solve, explain, demo) does nothing once the cache
folder holds DONE; else it starts `python -m search.warm FOLDER PID` (PID: the command's), which compiles the
kernels of WARM_LIST into Numba's cache in the reverse of the order a problem first calls them, at a lower priority,
and writes DONE when all are there. The command's own process compiles from the other end: a kernel one process has
stored, the other loads from the cache instead of compiling it (Numba looks in the cache each time a kernel meets
new argument types), so the two meet in the middle. One helper at a time (a lock on LOCK in the folder); the command
stops its helper when it ends (`atexit`; a command killed takes its helper with it, `dsl.processes.worker_setup`):
Numba writes each cache file whole, so a stopped helper leaves none damaged, and the next cold command starts again
from the kernels not yet stored.

WARM_LIST (`search/data/warm_kernels.json`) names each kernel a first run compiles (module, function) with its
argument types as Numba spells them, in the order they were first compiled; `bongard-solver bench warm_list --out
search/data/warm_kernels.json` records it (`benchmarks/warm_list.py`), and `tests/search/test_warm.py` checks that
it names kernels of the code with as many types as they take. A kernel missing from it is compiled where it is first
called, as before: the list changes when things are compiled, never what they compute.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

WARM_LIST = Path(__file__).resolve().parent / "data" / "warm_kernels.json"
DONE = "warm.done"  # in the cache folder: every kernel of WARM_LIST is stored there
LOCK = "warm.lock"  # in the cache folder: held by the helper compiling into it
NICENESS = 10  # the helper's priority below the command's (Unix nice increment): on a busy machine it yields


def kernels(listed: Path = WARM_LIST) -> list[tuple[str, str, str]]:
    """The entries of a list of kernels (WARM_LIST): (module, function, argument types), in the order a problem
    first calls them."""
    return [(row["module"], row["function"], row["types"]) for row in json.loads(listed.read_text())["kernels"]]


def signature(types: str) -> tuple:
    """The argument types spelled as Numba's repr spells them ("(Array(float64, 2, 'C', False, aligned=True),
    int64)") as Numba types."""
    from numba.core import types as numba_types

    value = eval(types, {"__builtins__": {}}, vars(numba_types))  # names of Numba's types only
    return tuple(value) if isinstance(value, tuple) else (value,)


def compile_all(order: list[tuple[str, str, str]]) -> None:
    """Each kernel of `order` compiled for its types (or found in the cache), in that order; one that cannot be
    (the list older than the code) is left to be compiled where it is called."""
    for module, function, types in order:
        try:
            getattr(importlib.import_module(module), function).compile(signature(types))
        except Exception:  # noqa: BLE001 - a stale entry: the kernel compiles at its first call, as without a list
            continue


def start() -> subprocess.Popen | None:
    """The helper started when the cache folder is cold (no DONE), else None; stopped when this process ends.
    Nothing is started where no cache folder can be written, off POSIX (the helper uses `nice` and `flock`), or
    when WARM_LIST is missing."""
    from dsl.jit import cache_folder

    folder = cache_folder()
    if (folder is None or os.name != "posix" or not sys.executable or (folder / DONE).exists()
            or not WARM_LIST.is_file()):
        return None  # sys.executable is empty where Python is embedded: no interpreter to start
    from dsl.processes import checkout_path

    environment = dict(os.environ, PYTHONPATH=checkout_path())
    try:
        helper = subprocess.Popen(
            [sys.executable, "-m", "search.warm", str(folder), str(os.getpid())], env=environment,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):  # no process can be started: the command compiles on its own, as before
        return None
    atexit.register(_stop, helper)
    return helper


def _stop(helper: subprocess.Popen) -> None:
    if helper.poll() is None:
        helper.terminate()
        try:
            helper.wait(timeout=5)
        except subprocess.TimeoutExpired:
            helper.kill()


def _run(folder: Path, parent: int, listed: Path = WARM_LIST) -> int:
    """The helper's work: under LOCK, every kernel of `listed` compiled into `folder`, the last called first. Like a
    pool's worker (`dsl.processes.worker_setup`) it leaves Ctrl-C to the command `parent` and ends with it."""
    import fcntl

    from dsl.processes import worker_setup

    worker_setup(parent)
    os.nice(NICENESS)
    with open(folder / LOCK, "a") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another helper is at it
        from dsl.jit import cache_folder

        if cache_folder() != folder:
            return 1  # this process would compile into another folder (its environment differs): no use
        compile_all(kernels(listed)[::-1])
        (folder / DONE).touch()
    return 0


if __name__ == "__main__":
    sys.exit(_run(Path(sys.argv[1]), int(sys.argv[2]), *map(Path, sys.argv[3:4])))
