"""The kernels compiled ahead of their first use, in a helper process, while the cache of compiled kernels is cold
(issue 53: the first run after an install compiles for about 25 s of CPU on one core while the other waits).

`start()` (called by the commands that solve in their own process: solve, explain, demo) does nothing once the cache
folder holds DONE; else it starts `python -m search.warm FOLDER PID` (PID: the command's), which compiles the
kernels of WARM_LIST into Numba's cache in the list's order, at a lower priority, and writes DONE when all are
there. The list puts first the kernels most problems need, in the reverse of the order a problem first calls them,
and the others after them, the likeliest needed first: the command's own process compiles what it needs from the
other end, a kernel one process has stored the other loads from the cache instead of compiling it (Numba looks in
the cache each time a kernel meets new argument types), and the two meet in the middle, the helper's time not spent
first on kernels few problems call. Where they meet, the command claims each kernel it starts compiling (a file in
CLAIMS, named for the kernel and its types) and the helper passes over a claimed one, coming back to it once the
rest are done (loaded from the cache by then, unless the command ended first). One helper at a time (a lock on LOCK
in the folder); the command asks its helper to stop when it ends (`atexit`, without waiting; a command killed does
the same, `dsl.processes.worker_setup`), and the helper stops once the kernel in hand is compiled and stored: a
kernel longer to compile than a warm command takes to run is stored all the same (stopped in the middle, the helper
of every later command would start it again and never finish the list), and the helper outlives its command by at
most that one kernel. Numba writes each cache file whole, so a helper killed leaves none damaged, and the next cold
command starts again from the kernels not yet stored.

WARM_LIST (`search/data/warm_kernels.json`) names each kernel a first run calls from Python (module, function) with
its argument types as Numba spells them (those compiled inside it compile with it) and the share of problems that
need it, in the helper's order; `bongard-solver bench warm_list --out search/data/warm_kernels.json` records it
(`benchmarks/warm_list.py`: a first run of a generated workload, then each problem solved alone), and
`tests/search/test_warm.py` checks that it names kernels of the code with as many types as they take. A kernel
missing from it is compiled where it is first called, as before: the list changes when things are compiled, never
what they compute.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

WARM_LIST = Path(__file__).resolve().parent / "data" / "warm_kernels.json"
DONE = "warm.done"  # in the cache folder: every kernel of WARM_LIST is stored there
LOCK = "warm.lock"  # in the cache folder: held by the helper compiling into it
CLAIMS = "warm.claims"  # in the cache folder: a file for each kernel the command has started compiling
_CLAIMING: set[Path] = set()  # the claims folders this process's compiling is claimed in
NICENESS = 10  # the helper's priority below the command's (Unix nice increment): on a busy machine it yields


def kernels(listed: Path = WARM_LIST) -> list[tuple[str, str, str]]:
    """The entries of a list of kernels (WARM_LIST): (module, function, argument types), in the order the helper
    compiles them."""
    return [(row["module"], row["function"], row["types"]) for row in json.loads(listed.read_text())["kernels"]]


def signature(types: str) -> tuple:
    """The argument types spelled as Numba's repr spells them ("(Array(float64, 2, 'C', False, aligned=True),
    int64)") as Numba types."""
    from numba.core import types as numba_types

    value = eval(types, {"__builtins__": {}}, vars(numba_types))  # names of Numba's types only
    return tuple(value) if isinstance(value, tuple) else (value,)


def claim_name(module: str, function: str, types: str) -> str:
    """The file name in CLAIMS of a kernel compiled for `types` (spelled as in WARM_LIST)."""
    return hashlib.sha256(f"{module}.{function}{types}".encode()).hexdigest()[:32]


def compile_all(order: list[tuple[str, str, str]], claims: Path | None = None,
                stopped: Callable[[], bool] = lambda: False) -> bool:
    """Each kernel of `order` compiled for its types (or found in the cache), in that order, those claimed in the
    folder `claims` last; one that cannot be (the list older than the code) is left to be compiled where it is
    called. Before each kernel `stopped()` is asked, and True ends the work: the result is whether all were done."""
    later = []
    for entry in order:
        if claims is not None and (claims / claim_name(*entry)).exists():
            later.append(entry)  # the command is compiling it: by the time the rest are done, it is in the cache
            continue
        if stopped():
            return False
        _compile(*entry)
    for entry in later:
        if stopped():
            return False
        _compile(*entry)
    return True


def _compile(module: str, function: str, types: str) -> None:
    try:
        getattr(importlib.import_module(module), function).compile(signature(types))
    except Exception:  # noqa: BLE001 - a stale entry: the kernel compiles at its first call, as without a list
        return


def _claim_what_this_process_compiles(claims: Path) -> None:
    """From now on, each kernel of dsl or search that this process starts compiling claimed in `claims` (Numba's
    event API: its "numba:compile" event starts after the cache was looked in and missed)."""
    from numba.core import event

    from dsl.jit import KEYED_PACKAGES

    class Claims(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            kernel = ev.data["dispatcher"].py_func
            if kernel.__module__.split(".")[0] in KEYED_PACKAGES:
                name = claim_name(kernel.__module__, kernel.__name__, repr(tuple(ev.data["args"])))
                try:
                    (claims / name).touch()
                except OSError:  # the folder gone or not writable: the helper compiles it too, as without claims
                    pass

        def on_end(self, ev: event.Event) -> None:
            pass

    if claims in _CLAIMING:
        return  # a process that runs several commands (the resident solver) listens once
    try:
        claims.mkdir(exist_ok=True)
    except OSError:
        return
    event.register("numba:compile", Claims())
    _CLAIMING.add(claims)


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
    _claim_what_this_process_compiles(folder / CLAIMS)
    return helper


def _stop(helper: subprocess.Popen) -> None:
    if helper.poll() is None:
        helper.terminate()  # it stops once the kernel in hand is stored: not waited for


def _run(folder: Path, parent: int, listed: Path = WARM_LIST) -> int:
    """The helper's work: under LOCK, every kernel of `listed` compiled into `folder`, in its order. Like a
    pool's worker (`dsl.processes.worker_setup`) it leaves Ctrl-C to the command `parent` and ends with it, once
    the kernel in hand is stored."""
    import fcntl

    from dsl.processes import worker_setup

    worker_setup(parent)
    asked_to_stop = []  # SIGTERM (from the command's end, or its death): stop once the kernel in hand is stored
    signal.signal(signal.SIGTERM, lambda *_: asked_to_stop.append(True))
    os.nice(NICENESS)
    with open(folder / LOCK, "a") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # another helper is at it
        from dsl.jit import cache_folder

        if cache_folder() != folder:
            return 1  # this process would compile into another folder (its environment differs): no use
        if compile_all(kernels(listed), folder / CLAIMS, lambda: bool(asked_to_stop)):
            (folder / DONE).touch()
    return 0


if __name__ == "__main__":
    sys.exit(_run(Path(sys.argv[1]), int(sys.argv[2]), *map(Path, sys.argv[3:4])))
