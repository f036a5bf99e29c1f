"""The files of `bongard-solver eval`: the per-problem journal OUT.jsonl and the summary OUT.

The journal's first line is a header naming the tool and the options its records were made with
(dataset root, split, oracle or pixels, time limit, checkpoint); every other line is one problem's record.
A run resumes a journal only when its options are the same (else it stops, naming the options that
differ), and neither file is replaced or appended to unless the tool wrote it (`dsl.owned`). A record
whose problem failed is kept on resume, or solved again with `--retry-failed` (the newer record wins).

The journal is created whole (its header written beside it, then linked in place) and held under an
exclusive lock (`flock`) while a run writes it: a second run given the same `--json` stops before any work.
Records are appended whole or not at all (`dsl.owned.append_line`); a line cut by a killed run is dropped
when the journal is next opened.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from pathlib import Path
from typing import BinaryIO

from dsl.owned import (MARK_KEY, WRITER, OutputError, WriteError, append_line, check_output_file,
                       check_replaceable, marked, write_atomically)

HEADER_KEY = "eval_options"
_NO_LOCKS = (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP)  # a filesystem without flock: the run goes on unlocked


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".jsonl")


def eval_options(root: str, split: str, oracle: bool, time_limit: float, checkpoint: Path | None) -> dict:
    """The options that decide a record (not --workers, --limit or --dump: they change no result)."""
    return {"data": str(Path(root).resolve()), "split": split, "oracle": bool(oracle), "time_limit": time_limit,
            "checkpoint": str(Path(checkpoint).resolve()) if checkpoint is not None and not oracle else None}


def _header(first: bytes) -> dict | None:
    try:
        header = json.loads(first.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get(MARK_KEY) != WRITER or not isinstance(header.get(HEADER_KEY), dict):
        return None
    return header[HEADER_KEY]


def _differences(found: dict, wanted: dict) -> str:
    keys = sorted(set(found) | set(wanted))
    return ", ".join(f"{k} {found.get(k)!r} there, {wanted.get(k)!r} now" for k in keys if found.get(k) != wanted.get(k))


def _record(line: bytes) -> dict | None:
    try:
        record = json.loads(line.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        return None  # a line cut by an interruption: that problem is solved again
    return record if isinstance(record, dict) and isinstance(record.get("name"), str) else None


def read_records(partial: Path) -> dict[str, dict]:
    """The records of a journal by problem name (the last one of a name wins); a line cut by an
    interruption, and the header, are skipped."""
    if not partial.exists():
        return {}
    return _records(partial.read_bytes())


def _records(data: bytes) -> dict[str, dict]:
    done: dict[str, dict] = {}
    for line in data.splitlines():
        if (record := _record(line)) is not None:
            done[record["name"]] = record
    return done


class Journal:
    """An open journal, locked for this run: the records it holds, and `append` for new ones."""

    def __init__(self, path: Path, handle: BinaryIO, records: dict[str, dict]):
        self.path, self.handle, self.records = path, handle, records

    def append(self, record: dict) -> None:
        """One record, written whole or not at all (a WriteError naming the journal)."""
        append_line(self.handle, self.path, json.dumps(record))
        self.records[record["name"]] = record

    def close(self) -> None:
        self.handle.close()  # and so the lock

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _create(partial: Path, options: dict) -> None:
    """A new journal holding its header: written beside it, then linked in place, so that the journal appears
    whole and a run starting at the same moment keeps the one that came first."""
    header = json.dumps(marked({HEADER_KEY: options})) + "\n"
    beside = partial.with_name(f".{partial.name}.{os.getpid()}.new")
    try:
        written = write_atomically(beside, header)
    except WriteError as error:
        raise WriteError(f"--json {partial}: cannot create the journal ({error.fault})", error.fault) from None
    try:
        os.link(written, partial)
    except FileExistsError:
        pass
    except OSError as error:  # a filesystem without hard links: created exclusively, then written
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise WriteError(f"--json {partial}: cannot create the journal ({error.strerror or error})") from None
        with contextlib.suppress(FileExistsError), open(partial, "xb", buffering=0) as handle:
            append_line(handle, partial, header.rstrip("\n"))
    finally:
        with contextlib.suppress(OSError):
            written.unlink()


def _lock(handle: BinaryIO, partial: Path) -> None:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise OutputError(f"--json {partial}: another eval run is writing this journal; wait for it to end "
                          "(then run this command again to resume) or give another --json") from None
    except OSError as error:
        if error.errno not in _NO_LOCKS:
            handle.close()
            raise OutputError(f"--json {partial}: cannot lock the journal ({error.strerror or error})") from None


def _drop_cut_line(handle: BinaryIO, partial: Path, data: bytes) -> bytes:
    """The journal without a last line cut by a killed run (a complete record missing its newline gets one)."""
    cut = data[data.rfind(b"\n") + 1:]
    if not cut:
        return data
    if _record(cut) is not None:
        append_line(handle, partial, "")
        return data + b"\n"
    try:
        os.ftruncate(handle.fileno(), len(data) - len(cut))
    except OSError as error:
        raise WriteError(f"--json {partial}: cannot cut its broken last line ({error.strerror or error})") from None
    return data[: len(data) - len(cut)]


def open_journal(out: Path, options: dict, names: set[str], retry_failed: bool = False) -> Journal:
    """Check both output files before any work, start or resume the journal and lock it; the journal, holding
    the records to keep."""
    check_output_file(out, "--json")
    partial = check_replaceable(journal_path(out), "--json (its journal)", "append to")
    if partial.exists() and partial.stat().st_size == 0:
        raise OutputError(f"--json {partial}: the file exists and was not written by {WRITER}; "
                          "refusing to append to it (move it away or choose another path)")
    if not partial.exists():
        _create(partial, options)
    try:
        handle = open(partial, "a+b", buffering=0)
    except OSError as error:
        raise OutputError(f"--json {partial}: cannot open the journal ({error.strerror or error})") from None
    _lock(handle, partial)
    try:
        handle.seek(0)
        data = handle.read()
        found = _header(data.split(b"\n", 1)[0])
        if found is None:
            raise OutputError(f"--json {partial}: its first line is not the header of an eval journal; "
                              "refusing to append to it (move it away or choose another path)")
        if found != options:
            raise OutputError(f"--json {partial}: its records were made with other options "
                              f"({_differences(found, options)}); choose another --json or remove the journal to start again")
        done = {name: r for name, r in _records(_drop_cut_line(handle, partial, data)).items() if name in names}
    except BaseException:
        handle.close()
        raise
    if retry_failed:
        done = {name: r for name, r in done.items() if r.get("error") is None}
    return Journal(partial, handle, done)


def summary_text(summary: dict, options: dict) -> str:
    return json.dumps(marked({**summary, HEADER_KEY: options}), indent=1)
