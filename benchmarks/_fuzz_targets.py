"""What `bench fuzz` does with each input, and how it judges the outcome.

Every input ends as one of

    clear      the tool's own error for that surface, one line of at most MAX_MESSAGE characters, naming the file
               (for the file surfaces)
    accepted   a result that passes the surface's checks (an action in range that prints and parses again, a
               problem of 7 + 7 programs, an image of uint8 pixels, a solution with a label per query, exit code 0)
    unclear    the tool's error, but not one short line naming the file
    uncaught   any other exception (or a result that fails the checks, or an 'internal error' of the command line)
    hang       still running after the time bound (`benchmarks.fuzz` stops it)

A target takes the input and a scratch folder of its worker, and returns (outcome, message).
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path

OUTCOMES = ("clear", "accepted", "unclear", "uncaught", "hang")
MAX_MESSAGE = 500
PROBLEM = "ff_nact4_0000"  # the problem of the split and program surfaces' scratch dataset
SOLVED_SHARE = 5  # one facts problem in this many that parse is solved too (by a hash of its bytes)


def judged_error(error: BaseException, expected: tuple[type, ...], names: str | None = None) -> tuple[str, str]:
    """An exception raised for an input: clear, unclear or uncaught."""
    text = str(error)
    if not isinstance(error, expected):
        return "uncaught", described(error)
    short = "\n" not in text and 0 < len(text) <= MAX_MESSAGE
    named = names is None or names in text
    return ("clear" if short and named else "unclear"), text[:300]


def described(error: BaseException) -> str:
    """An exception in one line, with where it was raised."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"[:240] + where


def action_target(text: str, scratch: Path) -> tuple[str, str]:
    from dsl.syntax import ActionStringError, format_action, parse_action

    try:
        action = parse_action(text)
    except Exception as error:
        return judged_error(error, (ActionStringError,))
    values = (action.turn, action.length, action.radius, action.angle)
    if not all(math.isfinite(v) for v in values) or not 0.0 <= action.length <= 1.0 or not 0.0 <= action.radius <= 1.0:
        return "uncaught", f"accepted out of range: {action}"
    parse_action(format_action(action))
    return "accepted", ""


def _write(path: Path, raw: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def program_target(raw: bytes, scratch: Path) -> tuple[str, str]:
    from dsl.dataset import DatasetError, read_programs

    path = _write(scratch / "programs" / "ff" / "ff_action_programs.json", raw)
    try:
        table = read_programs(path)
    except Exception as error:
        return judged_error(error, (DatasetError,), str(path))
    if not all(len(p.positives) == len(p.negatives) == 7 for p in table.values()):
        return "uncaught", "accepted a problem without 7 + 7 programs"
    return "accepted", ""


def scratch_dataset(scratch: Path) -> Path:
    """A dataset root of one generated problem (images and programs), made once per scratch folder."""
    root = scratch / "dataset"
    if not (root / "ff" / "images" / PROBLEM).is_dir():
        from dsl.commands import write_dataset
        from dsl.generate import ProblemKind

        write_dataset(root, {ProblemKind.FREE_FORM: 1}, seed=54, workers=1, size=64, progress=False)
    return root


def split_target(raw: bytes, scratch: Path) -> tuple[str, str]:
    from dsl.dataset import SPLIT_FILE, DatasetError, load_split, read_splits

    root = scratch_dataset(scratch)
    _write(root / SPLIT_FILE, raw)
    try:
        splits = read_splits(root)
        for split in list(splits)[:2]:
            problems = load_split(root, split)
            if not all(p.has_programs for p in problems):
                return "uncaught", "a problem loaded without its programs"
    except Exception as error:
        return judged_error(error, (DatasetError,), str(root))
    return "accepted", ""


def facts_target(raw: bytes, scratch: Path) -> tuple[str, str]:
    from solver.facts_in import FactsError, load_problem, solve_facts

    path = _write(scratch / "facts" / "problem.json", raw)
    try:
        problem = load_problem(path)
    except Exception as error:
        return judged_error(error, (FactsError,), str(path))
    if zlib.crc32(raw) % SOLVED_SHARE == 0:
        try:
            solution = solve_facts(problem, time_limit=5.0)
        except Exception as error:  # a problem the reader took must solve
            return "uncaught", f"solve_facts: {type(error).__name__}: {error}"[:300]
        if len(solution.labels) != len(problem.queries) or not all(0.0 <= c <= 1.0 for c in solution.confidence):
            return "uncaught", "a solution without a label and a confidence in [0, 1] per query"
    return "accepted", ""


def png_target(raw: bytes, scratch: Path) -> tuple[str, str]:
    import numpy as np

    from dsl.dataset import DatasetError, read_image
    from solver.reading import unreadable_reason

    path = _write(scratch / "image" / "0.png", raw)
    try:
        pixels = read_image(path)
    except Exception as error:
        return judged_error(error, (DatasetError,), str(path))
    if pixels.dtype != np.uint8 or pixels.ndim != 2:
        return "uncaught", f"an image read as {pixels.dtype} {pixels.shape}"
    reason = unreadable_reason(pixels)
    return "accepted", reason or ""


FILE_TARGETS = {"action": action_target, "program": program_target, "split": split_target, "facts": facts_target,
                "png": png_target}
