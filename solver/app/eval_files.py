"""The files of `bongard-solver eval`: the per-problem journal OUT.jsonl and the summary OUT.

The journal's first line is a header naming the tool and the options its records were made with
(dataset root, split, oracle or pixels, time limit, checkpoint); every other line is one problem's record.
A run resumes a journal only when its options are the same (else it stops, naming the options that
differ), and neither file is replaced or appended to unless the tool wrote it (`dsl.owned`). A record
whose problem failed is kept on resume, or solved again with `--retry-failed` (the newer record wins).
"""

from __future__ import annotations

import json
from pathlib import Path

from dsl.owned import MARK_KEY, WRITER, OutputError, check_output_file, check_replaceable, marked

HEADER_KEY = "eval_options"


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".jsonl")


def eval_options(root: str, split: str, oracle: bool, time_limit: float, checkpoint: Path | None) -> dict:
    """The options that decide a record (not --workers, --limit or --dump: they change no result)."""
    return {"data": str(Path(root).resolve()), "split": split, "oracle": bool(oracle), "time_limit": time_limit,
            "checkpoint": str(Path(checkpoint).resolve()) if checkpoint is not None and not oracle else None}


def _header(partial: Path) -> dict | None:
    with partial.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get(MARK_KEY) != WRITER or not isinstance(header.get(HEADER_KEY), dict):
        return None
    return header[HEADER_KEY]


def _differences(found: dict, wanted: dict) -> str:
    keys = sorted(set(found) | set(wanted))
    return ", ".join(f"{k} {found.get(k)!r} there, {wanted.get(k)!r} now" for k in keys if found.get(k) != wanted.get(k))


def read_records(partial: Path) -> dict[str, dict]:
    """The records of a journal by problem name (the last one of a name wins); a line cut by an
    interruption, and the header, are skipped."""
    done: dict[str, dict] = {}
    if not partial.exists():
        return done
    for line in partial.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interruption: that problem is solved again
        if isinstance(record, dict) and isinstance(record.get("name"), str):
            done[record["name"]] = record
    return done


def open_journal(out: Path, options: dict, names: set[str], retry_failed: bool = False) -> dict[str, dict]:
    """Check both output files before any work, start or resume the journal; the records to keep."""
    check_output_file(out, "--json")
    partial = check_replaceable(journal_path(out), "--json (its journal)", "append to")
    if not partial.exists() or partial.stat().st_size == 0:
        if partial.exists():
            raise OutputError(f"--json {partial}: the file exists and was not written by {WRITER}; "
                              "refusing to append to it (move it away or choose another path)")
        partial.write_text(json.dumps(marked({HEADER_KEY: options})) + "\n", encoding="utf-8")
        return {}
    found = _header(partial)
    if found is None:
        raise OutputError(f"--json {partial}: its first line is not the header of an eval journal; "
                          "refusing to append to it (move it away or choose another path)")
    if found != options:
        raise OutputError(f"--json {partial}: its records were made with other options ({_differences(found, options)});"
                          " choose another --json or remove the journal to start again")
    if not partial.read_bytes().endswith(b"\n"):
        with partial.open("a", encoding="utf-8") as sink:
            sink.write("\n")  # end a line cut by an interruption
    done = {name: r for name, r in read_records(partial).items() if name in names}
    if retry_failed:
        done = {name: r for name, r in done.items() if r.get("error") is None}
    return done


def summary_text(summary: dict, options: dict) -> str:
    return json.dumps(marked({**summary, HEADER_KEY: options}), indent=1)
