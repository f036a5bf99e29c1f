"""Worker processes that leave interrupts to their parent and do not outlive it.

Ctrl-C in a terminal sends SIGINT to every process of the foreground group: a pool worker that raised
KeyboardInterrupt inside a queue read left the pool's lock taken and its `terminate` hanging. Workers
therefore ignore SIGINT (the parent alone is interrupted and shuts the pool down), and ask the kernel
(Linux: PR_SET_PDEATHSIG) for SIGTERM when their parent dies, so a killed parent leaves no orphans.
`worker_setup` is the pools' initializer: `Pool(n, initializer=worker_setup, initargs=(os.getpid(),))`.
A child started as a new interpreter (`python -m ...`, Ray's workers) imports this checkout's code when its
PYTHONPATH is `checkout_path()`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1
CHECKOUT = Path(__file__).resolve().parents[1]  # the folder holding this code's packages


def checkout_path() -> str:
    """PYTHONPATH for a new interpreter that must run this checkout's code (not another installed copy): the
    checkout first, then this process's PYTHONPATH."""
    return os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl: the worker still ends when its task queue closes


def worker_setup(parent: int | None = None) -> None:
    """Pool initializer: ignore SIGINT, end with the parent (`parent`: its pid, to catch a parent that
    died before the request was made). SIGTERM ends the worker even when its parent handles it in Python (the
    resident solver, `solver.app.server`): a handler inherited through the fork would wait for the worker's main
    thread, blocked on its task queue, and the pool's `terminate` (which sends SIGTERM) would wait for ever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(1)
