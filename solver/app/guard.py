"""The command line's error boundary and its checks of options, made before any work starts.

`run_guarded` runs one subcommand: a failure the user can cause (a bad file, a bad option, an output path
the tool must not write) ends it with one line on stderr naming the file or option and the fault, exit
code 1; Ctrl-C ends it with exit code 130; argparse's usage errors keep code 2. An unexpected exception is
one line too, marked as an internal error (set BONGARD_SOLVER_DEBUG=1 to see its traceback).

The argparse types (`dsl.options`: `count`, `seconds`, `seed`, ...) reject negative, NaN, infinite and
out-of-range numbers; they are re-exported here.
"""

from __future__ import annotations

import errno
import os
import resource
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from dsl.dataset import DatasetError
from dsl.limits import LimitError
from dsl.options import count, path_text, positive_number, seconds, seed, workers  # noqa: F401 (re-exported)
from dsl.owned import OutputError
from dsl.syntax import ActionStringError

DEBUG_ENV = "BONGARD_SOLVER_DEBUG"


class SetupError(ValueError):
    """An option that names a missing or unusable input (a checkpoint, a dataset root)."""


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that report a fault of the user's input; their message names the file or option."""
    from solver.solving import SolverError
    from solver.reading import EvidenceError
    from solver.facts_in import FactsError
    from solver.reading import PerceptionError

    return (DatasetError, LimitError, OutputError, ActionStringError, SetupError, SolverError, PerceptionError,
            EvidenceError, FactsError)


def one_line(text: str, limit: int = 400) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _os_message(error: OSError) -> str:
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


def run_guarded(command: str, work: Callable[[], int | None]) -> int:
    """Run `work` (one subcommand) inside the error boundary; its exit code."""
    prefix = f"bongard-solver {command}"
    try:
        return int(work() or 0)
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader of our output went away: nothing left to tell
        return 1
    except Exception as error:
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{prefix}: {describe(error)}", file=sys.stderr)
        return 1


def describe(error: BaseException) -> str:
    """One line for an exception: the message of a user error, else the kind of failure."""
    if out_of_memory(error):
        said = "" if not str(error) else f": {error}" if isinstance(error, MemoryError) else f": {type(error).__name__}: {error}"
        return one_line(f"out of memory{memory_cap() or ' (an input too large?)'}{said}")
    if isinstance(error, _user_errors()):
        return one_line(str(error))
    if isinstance(error, OSError):
        return one_line(_os_message(error))
    if isinstance(error, RecursionError):
        return "input nested too deep"
    return one_line(f"internal error ({type(error).__name__}: {error}){memory_cap('perhaps out of memory:')}; "
                    f"set {DEBUG_ENV}=1 for the traceback")


_MEMORY_SIGNS = ("can't start new thread", "could not create a primitive", "can't allocate memory", "out of memory",
                 "Cannot allocate memory")  # what libraries raise, as RuntimeError, when an allocation fails


def out_of_memory(error: BaseException) -> bool:
    """Whether `error` says the machine ran out of memory (or of threads): a MemoryError, ENOMEM, or a library's
    RuntimeError saying so (torch, the thread module), a SystemError under a memory cap (a C extension that failed
    without saying why), or an error caused by one of these. A fault of the machine, not of the problem solved."""
    for _ in range(8):  # the error, then what caused it
        if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.errno == errno.ENOMEM):
            return True
        if isinstance(error, RuntimeError) and any(sign in str(error) for sign in _MEMORY_SIGNS):
            return True
        if isinstance(error, SystemError) and memory_cap():  # a C extension failing without saying why, under a cap
            return True
        if isinstance(error, ImportError) and "failed to map segment" in str(error):  # a library not mapped in
            return True
        if error.__cause__ is None:
            return False
        error = error.__cause__
    return False


def memory_cap(lead: str = "") -> str:
    """' (this process may use at most N GiB of address space: ulimit -v)' when such a cap is set, else ''."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return ""
    return f" ({lead + ' ' if lead else ''}this process may use at most {limit / 2**30:.2f} GiB of address space: ulimit -v)"


def existing_file(path: Path | str | None, option: str) -> Path | None:
    """`path` if it names a readable file (None passes: the default)."""
    if path is None:
        return None
    path = Path(path)
    if not path.exists():
        raise SetupError(f"{option} {path}: no such file")
    if not path.is_file():
        raise SetupError(f"{option} {path}: not a file")
    if not os.access(path, os.R_OK):
        raise SetupError(f"{option} {path}: not readable")
    return path


def check_decoder(path: Path | str | None, option: str = "--checkpoint") -> None:
    """Load the decoder checkpoint named by `option` once, so a missing or broken one fails before the
    work starts (None: the shipped checkpoint)."""
    if existing_file(path, option) is None:
        return
    from perception.decode import load_decoder

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's warnings about a foreign pickle: the error says it
            load_decoder(path)
    except Exception as error:  # any failure to load is the file's fault: a wrong or damaged checkpoint
        raise SetupError(f"{option} {path}: not a decoder checkpoint ({one_line(str(error), 160)})") from None


def check_dataset_root(root: Path | str, option: str = "--data") -> Path:
    root = Path(root)
    if not root.exists():
        raise SetupError(f"{option} {root}: no such folder")
    if not root.is_dir():
        raise SetupError(f"{option} {root}: not a folder")
    return root
