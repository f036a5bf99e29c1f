"""The hostile-input campaign: hundreds of bad or odd inputs given to the command line and the API.

    bongard-solver bench hostile --data ROOT --work DIR [--json OUT] [--timeout 60] [--pixels]
    python3 -m benchmarks.hostile --data ROOT --work DIR --code OTHER_CHECKOUT   # measure other code

ROOT is a small generated dataset (`bongard-solver generate --out ROOT --ff 2 --basic 1 --abstract 1`);
the cases (`benchmarks._hostile_cases`) break copies of it under DIR. Every case runs in this process (the
command line through `solver.app.cli.main`) under an alarm, and ends as one of

    clear      the expected error: exit code 1 or 2 (an exception of the API's own error classes) with
               one line naming the file or option at fault
    ok         a valid result, where the input is odd but valid (or the tool may accept it)
    unclear    an error, but not one line naming the fault (or an 'internal error' line)
    traceback  a Python exception escaped the command line (or any other exception from the API)
    hang       still running after --timeout seconds
    accepted   an input that must be refused ran to exit code 0
    refused    a valid input the tool refused

and every file the campaign planted that the tool was not asked to write is compared before and after
(`clobbered`). `--pixels` adds the cases that run the decoder (slower).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

OUTCOMES = ("clear", "ok", "unclear", "traceback", "hang", "accepted", "refused")


class Hang(BaseException):
    """Raised by the alarm: the case ran past its time."""


def _alarm(signum, frame):
    raise Hang()


def _digest(paths: list[Path]) -> dict[str, str]:
    out = {}
    for path in paths:
        try:
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "<not a file>"
        except OSError:
            out[str(path)] = "<unreadable>"
    return out


def _message_lines(text: str) -> list[str]:
    """The lines of stderr a person reads: without progress bars (carriage returns) and usage lines."""
    lines = []
    for line in text.splitlines():
        line = line.split("\r")[-1]
        if line.strip() and not line.startswith(("usage:", " ", "eval ", "generate:", "warning:")) and "%|" not in line:
            lines.append(line.strip())
    return lines


def judge_cli(case: dict, code: object, stderr: str) -> str:
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    if code in (0, None):
        return "ok" if case["expect"] != "error" else "accepted"
    if case["expect"] == "ok":
        return "refused"
    lines = _message_lines(stderr) if not isinstance(code, str) else [code]
    last = lines[-1] if lines else ""
    needles = case.get("needles", ())
    if "internal error" in last or not last or not any(n in last for n in needles) or len(lines) > 1:
        return "unclear"
    return "clear"


def run_cli(case: dict, timeout: float) -> tuple[str, str]:
    from solver.app.cli import main

    err, out = io.StringIO(), io.StringIO()
    code: object = None
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(case["argv"])
    except Hang:
        return "hang", ""
    except SystemExit as exit_:
        code = exit_.code
        if isinstance(code, str):
            err.write(code + "\n")
    except BaseException as error:  # noqa: BLE001 - what escapes the command line is what we count
        return "traceback", f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    stderr = err.getvalue()
    lines = _message_lines(stderr) or [str(code)]
    return judge_cli(case, code, stderr), lines[-1][:300]


def run_api(case: dict, timeout: float) -> tuple[str, str]:
    from dsl.dataset import DatasetError
    from solver.solving.api import SolverError

    errors = (SolverError, DatasetError) + tuple(case.get("errors", ()))
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            case["call"]()
    except Hang:
        return "hang", ""
    except errors as error:
        text = str(error)
        if case["expect"] == "ok":
            return "refused", text[:300]
        return ("clear" if "\n" not in text and len(text) < 500 else "unclear"), text[:300]
    except BaseException as error:  # noqa: BLE001
        return "traceback", f"{type(error).__name__}: {error}"[:300]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return ("ok" if case["expect"] != "error" else "accepted"), ""


def run_case(case: dict, timeout: float) -> dict:
    for step in case.get("before", ()):
        step()
    watched = [Path(p) for p in case.get("foreign", ())]
    before = _digest(watched)
    start = time.perf_counter()
    runner = run_cli if "argv" in case else run_api
    try:
        outcome, message = runner(case, timeout)
    except Exception:  # a broken case, not a finding
        outcome, message = "traceback", traceback.format_exc(limit=2).splitlines()[-1]
    for step in case.get("after", ()):
        step()
    if outcome in ("ok", "clear") and case.get("check") is not None and (fault := case["check"]()):
        outcome, message = ("accepted" if case["expect"] == "error" else "refused"), fault
    changed = [p for p, h in _digest(watched).items() if before[p] != h]
    return {"name": case["name"], "family": case["family"], "expect": case["expect"], "outcome": outcome,
            "message": message, "clobbered": changed, "seconds": round(time.perf_counter() - start, 2)}


def summarise(results: list[dict]) -> dict:
    by_family: dict[str, Counter] = {}
    for r in results:
        by_family.setdefault(r["family"], Counter())[r["outcome"]] += 1
    return {"cases": len(results), "outcomes": dict(Counter(r["outcome"] for r in results)),
            "clobbered": sum(bool(r["clobbered"]) for r in results),
            "by_family": {f: dict(c) for f, c in sorted(by_family.items())}}


def main(argv: list[str] | None = None) -> int:
    from solver.app.resident import own_process

    own_process()  # the commands' own process is what is tried
    parser = argparse.ArgumentParser(prog="bongard-solver bench hostile", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a small generated dataset to break copies of")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied)")
    parser.add_argument("--json", type=Path, default=None, help="write every case's outcome here")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    parser.add_argument("--pixels", action="store_true", help="add the cases that run the decoder")
    parser.add_argument("--only", default=None, help="run the families whose name contains this")
    parser.add_argument("--code", type=Path, default=None, help="measure the code of this checkout instead")
    args = parser.parse_args(argv)
    if args.code is not None:  # that checkout's packages first, its benchmarks too (these cases stay ours)
        import benchmarks

        sys.path.insert(0, str(args.code.resolve()))
        benchmarks.__path__.insert(0, str(args.code.resolve() / "benchmarks"))
    from benchmarks._hostile_cases import build_cases

    cases = build_cases(args.data, args.work, pixels=args.pixels)
    scratch = args.work.resolve() / "cwd"  # a case that writes to relative or empty paths writes here
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(scratch)
    if args.only:
        cases = [c for c in cases if args.only in c["family"]]
    results = []
    for k, case in enumerate(cases):
        results.append(run_case(case, args.timeout))
        r = results[-1]
        print(f"[{k + 1}/{len(cases)}] {r['outcome']:9} {r['family']}/{r['name']}: {r['message'][:150]}", file=sys.stderr)
    summary = summarise(results)
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"written_by": "bongard-solver", **summary, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
