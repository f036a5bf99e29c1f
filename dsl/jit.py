"""Numba's `njit` with its on-disk cache in a user cache folder: the compiled kernels of `dsl.raster` and `search`
are found on disk by the next process instead of being compiled again (issue 53: a fresh `solve` compiled for
seconds).

The folder: NUMBA_CACHE_DIR when set (Numba's own variable, taken as it is), else `bongard-solver/numba/KEY` in the
user's cache folder (XDG_CACHE_HOME or ~/.cache; ~/Library/Caches on macOS; LOCALAPPDATA on Windows). KEY is a
digest of the sources of `dsl` and `search` (and Numba's and Python's versions): Numba checks only the stamp of the
file that defines a kernel, not the kernels it calls in other files nor the settings it reads as constants
(`search.settings.BLOCK`, `dsl.settings.RASTER_WIDENING`), so a change anywhere in those packages starts a fresh
folder. A folder that cannot be made or written (a read-only home) turns the cache off: the kernels compile in
each process, as before, and nothing fails.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import io
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

import numba
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher

APP = "bongard-solver"
KEYED_PACKAGES = ("dsl", "search")  # the packages whose sources the compiled kernels depend on


def _user_cache_root() -> Path:
    """The platform's per-user cache folder."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


@functools.cache
def _sources_key() -> str:
    """A digest of every source file of KEYED_PACKAGES, Numba's version and Python's: the cache's freshness."""
    digest = hashlib.sha256(f"{numba.__version__} {sys.version}".encode())
    here = Path(__file__).resolve().parent.parent
    for package in KEYED_PACKAGES:
        for path in sorted((here / package).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


@functools.cache
def cache_folder() -> Path | None:
    """The folder Numba caches the kernels in (set on `numba.config`), or None when no folder can be written."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    try:
        folder = Path(given) if given else _user_cache_root() / APP / "numba" / _sources_key()
    except (OSError, RuntimeError):  # no home folder, a source unreadable
        return None
    if not _writable(folder):
        return None
    numba.config.CACHE_DIR = str(folder)
    return folder


def cached_file(stem: str) -> Path | None:
    """A file for derived data in `cache_folder()`, named for what it derives from: the sources of KEYED_PACKAGES
    (as the folder is, also when NUMBA_CACHE_DIR names it) and the package's data files (`dsl/data`: the shape
    tables); None when no folder can be written. The caller reads it if it is there and whole, else rebuilds."""
    folder = cache_folder()
    if folder is None:
        return None
    try:
        data = hashlib.sha256()
        for path in sorted((Path(__file__).resolve().parent / "data").iterdir()):
            if path.is_file():
                data.update(path.name.encode() + b"\0" + path.read_bytes())
        return folder / f"{stem}-{_sources_key()}-{data.hexdigest()[:16]}.npz"
    except OSError:
        return None


def stored_arrays(stem: str, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays derived from the sources and the shape tables alone: `build()`'s, read from `cached_file(stem)` when
    stored there before and whole (numpy arrays only, no pickle), else built and stored there (whole or not at all,
    `dsl.owned.write_atomically`). Built in every process when no folder can be written; a file that cannot be read is
    built again and replaced. Tables a fresh process would spend a second of CPU on (issue 53)."""
    from dsl.owned import WriteError, write_atomically

    path = cached_file(stem)
    if path is not None:
        try:
            with np.load(path, allow_pickle=False) as found:
                return {key: found[key] for key in found.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # not there yet, or not whole
            pass
    arrays = build()
    if path is not None and path.parent.is_dir():
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        try:
            write_atomically(path, buffer.getvalue())
        except (OSError, WriteError):  # the cache is an aid: a failure to write it is no error
            pass
    return arrays


class _Kernel(CPUDispatcher):
    """A kernel compiled once for the types of the values a caller passes, whatever constants among them: called
    from another kernel with a constant (`_store(seen, 0, params)`), Numba's own dispatcher compiles the callee
    again for that literal value (`Literal[int](0)`), the same machine work as for any int, and a first run pays
    each such compile (about 0.1-0.4 s of CPU each: issue 53). A kernel that needs a constant's value at compile
    time (`numba.literally`) cannot be one of these."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                         {name: types.unliteral(a) for name, a in kws.items()})


def njit(*args, **options):
    """`numba.njit`, cached on disk in `cache_folder()` when `cache=True` and a folder can be written, and compiled
    for the types of its arguments, not for the constants a calling kernel passes (`_Kernel`)."""
    if options.get("cache"):
        options["cache"] = cache_folder() is not None
    made = numba.njit(*args, **options)
    if args and callable(args[0]):  # @njit without options: the kernel itself
        return _as_kernel(made)
    return lambda function: _as_kernel(made(function))


def _as_kernel(made):
    if isinstance(made, CPUDispatcher):  # not the plain function NUMBA_DISABLE_JIT leaves
        made.__class__ = _Kernel
    return made
