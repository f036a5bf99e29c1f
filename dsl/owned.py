"""Files the tool writes carry a mark, and the tool replaces or appends to no file that lacks it.

    JSON object   its first key is "written_by": "bongard-solver"
    JSON lines    the first line is such an object (the header; `eval` keeps its options there)
    HTML          <meta name="generator" content="bongard-solver">
    PNG           a tEXt chunk Software = bongard-solver

A file whose first few kilobytes hold none of these marks belongs to someone else: `check_replaceable`
refuses it with an `OutputError` naming the file, before any work starts.

Every byte the tool writes goes through `write_chunk`: `write_atomically` (a whole file: written beside its
name, then renamed over it, so the name holds the old file or the whole new one) and `append_line` (one line
of a journal: a line the system could not finish writing is cut off again). A write that fails (a full disk, a
read-only or vanished folder, an I/O error) leaves no temporary file and raises a `WriteError` naming the file
and the fault.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import BinaryIO

WRITER = "bongard-solver"
MARK_KEY = "written_by"
HTML_MARK = f'<meta name="generator" content="{WRITER}">'
PNG_TEXT = {"Software": WRITER}
_MARKS = (f'"{MARK_KEY}": "{WRITER}"'.encode(), HTML_MARK.encode(), b"Software\x00" + WRITER.encode())
_HEAD_BYTES = 4096


class OutputError(ValueError):
    """An output path the tool cannot or must not write; the message names the path and the fault."""


class WriteError(OutputError):
    """Writing a file failed: the disk is full, the folder read-only or gone, an I/O error. Nothing under the
    file's name is half-written (see the module's docstring). `fault`: the system's word for it."""

    def __init__(self, message: str, fault: str = ""):
        super().__init__(message)
        self.fault = fault


def write_chunk(handle: BinaryIO, data: memoryview) -> int:
    """Write what the system takes of `data` to `handle` (an unbuffered binary file); how many bytes. The one
    place the tool's bytes go to disk (tests inject a full disk here)."""
    return handle.write(data)


def _write_all(handle: BinaryIO, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[write_chunk(handle, view):]


def _fault(path: Path, doing: str, error: OSError) -> WriteError:
    fault = error.strerror or str(error)
    return WriteError(f"{path}: cannot {doing} ({fault})", fault)


def write_atomically(path: Path | str, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to a temporary file beside `path`, then rename it over `path`; on a failure
    the temporary file is removed and a WriteError names `path`."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "wb", buffering=0) as handle:
            _write_all(handle, raw)
        os.replace(temporary, path)
    except BaseException as error:  # a full disk, or an interrupt: no temporary file stays behind
        with contextlib.suppress(OSError):
            temporary.unlink()
        if isinstance(error, OSError):
            raise _fault(path, "write", error) from None
        raise
    return path


def append_line(handle: BinaryIO, path: Path, text: str) -> None:
    """Append `text` and a newline to `handle` (the file `path`, opened unbuffered for appending): the whole
    line, or on a failure nothing (the part written is cut off again) and a WriteError naming `path`."""
    size = os.fstat(handle.fileno()).st_size
    try:
        _write_all(handle, (text + "\n").encode("utf-8"))
    except BaseException as error:  # a full disk, or an interrupt: no part of the line stays behind
        with contextlib.suppress(OSError):
            os.ftruncate(handle.fileno(), size)
        if isinstance(error, OSError):
            raise _fault(path, "append to it", error) from None
        raise


def marked(record: dict) -> dict:
    """`record` with the tool's mark as its first key."""
    return {MARK_KEY: WRITER, **{k: v for k, v in record.items() if k != MARK_KEY}}


def marked_json(record: dict, indent: int | None = 1) -> str:
    return json.dumps(marked(record), indent=indent)


def is_ours(path: Path) -> bool:
    """Whether the file at `path` carries the tool's mark near its start."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return False
    return any(mark in head for mark in _MARKS)


def check_replaceable(path: Path | str, option: str, action: str = "replace") -> Path:
    """`path` if the tool may write it (`action`: replace or append to it): absent, or a file the tool
    wrote; else an OutputError."""
    if str(path) == "":
        raise OutputError(f"{option}: an empty path is not a file name")
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a folder; give a file name")
    if path.exists() and not is_ours(path):
        raise OutputError(f"{option} {path}: the file exists and was not written by {WRITER}; "
                          f"refusing to {action} it (move it away or choose another path)")
    return path


def probe_folder(folder: Path, option: str) -> Path:
    """Create `folder` (and its parents) and check that a file can be written there; an OutputError
    naming the option and the fault otherwise."""
    for parent in (folder, *folder.parents):
        if parent.exists() and not parent.is_dir():
            raise OutputError(f"{option} {folder}: {parent} is a file, not a folder")
        if parent.exists():
            break
    probe = folder / f".{WRITER}-probe-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb", buffering=0) as handle:  # a byte, so that a full disk is found here too
            _write_all(handle, b"\n")
        probe.unlink()
    except OSError as error:
        with contextlib.suppress(OSError):
            probe.unlink()
        raise OutputError(f"{option} {folder}: cannot write there ({error.strerror or error})") from None
    return folder


def check_output_file(path: Path | str, option: str) -> Path:
    """An output file: its folder writable, the file absent or the tool's own (see `check_replaceable`)."""
    path = check_replaceable(path, option)
    probe_folder(path.parent if str(path.parent) else Path("."), option)
    return path


def check_output_folder(path: Path | str, option: str) -> Path:
    """An output folder: not empty as a name, not a file, writable (created if missing)."""
    if str(path) == "":
        raise OutputError(f"{option}: an empty path is not a folder name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{option} {path}: is a file, not a folder")
    return probe_folder(path, option)
