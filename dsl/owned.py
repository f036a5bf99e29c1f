"""Files the tool writes carry a mark, and the tool replaces or appends to no file that lacks it.

    JSON object   its first key is "written_by": "bongard-solver"
    JSON lines    the first line is such an object (the header; `eval` keeps its options there)
    HTML          <meta name="generator" content="bongard-solver">
    PNG           a tEXt chunk Software = bongard-solver

A file whose first few kilobytes hold none of these marks belongs to someone else: `check_replaceable`
refuses it with an `OutputError` naming the file, before any work starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

WRITER = "bongard-solver"
MARK_KEY = "written_by"
HTML_MARK = f'<meta name="generator" content="{WRITER}">'
PNG_TEXT = {"Software": WRITER}
_MARKS = (f'"{MARK_KEY}": "{WRITER}"'.encode(), HTML_MARK.encode(), b"Software\x00" + WRITER.encode())
_HEAD_BYTES = 4096


class OutputError(ValueError):
    """An output path the tool cannot or must not write; the message names the path and the fault."""


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
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{WRITER}-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
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
