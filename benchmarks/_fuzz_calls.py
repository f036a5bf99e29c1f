"""`bench fuzz`'s call surfaces: the command line's options (every command, read from the parser itself) and the
arguments of `solve_problem` and `solve_facts`.

    cli  an argv: a valid command line of one command with one to three of its options given odd values, a token
         dropped, doubled or added. Paths are written with placeholders ({data}, {out}, {problem}, {image}, {facts})
         filled in with the worker's sandbox, so that a saved input replays anywhere. `solve`, `eval`, `explain`
         (with --oracle) and `solve-facts` run in full on a one-problem dataset; the other commands (they train,
         decode or generate for minutes) only through the front door: their options parsed and checked.
    api  a recipe (JSON): `solve_problem` or `solve_facts`, a problem in one of its forms (with odd images and odd
         forms), and odd values for its arguments; built into Python objects by `build_call`.

A CLI input can also end as `loose`: the front door took a number it should have refused (not finite, or not in
ASCII digits), e.g. an option typed `int` or `float` rather than with the checks of `dsl.options`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
import shutil
from pathlib import Path

from benchmarks._fuzz_inputs import ODD_NUMBERS, facts_problem, mutate_text
from benchmarks._fuzz_targets import PROBLEM, described, scratch_dataset

TEMPLATES = {
    "generate": ["generate", "--out", "{out}/gen"], "train-decoder": ["train-decoder", "--out", "{out}/dec.pt"],
    "train-shapes": ["train-shapes"], "decode": ["decode", "{image}"], "solve": ["solve", "{problem}", "--oracle"],
    "eval": ["eval", "--data", "{data}", "--split", "tiny", "--oracle", "--json", "{out}/eval.json"],
    "solve-facts": ["solve-facts", "{facts}"], "explain": ["explain", "{problem}", "--oracle", "--out", "{out}/report"],
    "demo": ["demo", "--out", "{out}/demo"], "bench": ["bench", "render"],
}
RUN_IN_FULL = ("solve", "eval", "explain", "solve-facts")  # with --oracle (solve-facts always): a second or less
NUMERIC_TYPES = ("count", "seconds", "positive_number", "fraction", "int", "float")
VALID_NUMBERS = ("1", "2", "3", "0.5", "10", "64", "0", "7")
ODD_PATHS = ("{out}/x.json", "{out}/a/b/c", "", " ", "{out}/" + "a" * 300, "{out}/\udcff.json", "/proc/bongard/x",
             "/dev/full", "/dev/null", "{data}/ff/ff_action_programs.json", "{out}", ".", "..", "../x", "~/x",
             "{data}/ShapeBongard_V2_split.json", "{problem}", "{out}/x.json/", "-")
ODD_TOKENS = ("--nope", "-x", "--", "-", "--oracle", "--json", "--help-me", "x" * 5000, "\udcff", "--time-limit=1",
              "--workers=2=3")




@functools.cache
def parser_options() -> dict[str, list[tuple[list[str], str, tuple | None, bool]]]:
    """Per command, its options: (option strings, type name, choices, is a flag)."""
    from solver.app.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    found = {}
    for name, parser in commands.items():
        found[name] = [(list(a.option_strings), getattr(a.type, "__name__", "str"), tuple(a.choices or ()) or None,
                        a.nargs == 0) for a in parser._actions if a.option_strings and a.dest != "help"]
    return found


def _value(rng, kind: str, choices: tuple | None) -> str:
    if choices:
        return rng.choice(choices) if rng.random() < 0.6 else mutate_text(rng, rng.choice(choices))
    if kind in NUMERIC_TYPES:
        if rng.random() < 0.4:
            return rng.choice(VALID_NUMBERS)
        return rng.choice(ODD_NUMBERS) if rng.random() < 0.6 else mutate_text(rng, rng.choice(VALID_NUMBERS))
    return rng.choice(ODD_PATHS) if rng.random() < 0.8 else mutate_text(rng, rng.choice(ODD_PATHS))


def cli_input(rng) -> list[str]:
    """An argv (with placeholders) of one command, its options given odd values."""
    command = rng.choice(sorted(TEMPLATES))
    argv = list(TEMPLATES[command])
    options = parser_options().get(command, [])
    for _ in range(rng.randrange(1, 4) if options else 0):
        strings, kind, choices, flag = rng.choice(options)
        argv += [rng.choice(strings)] if flag else [rng.choice(strings), _value(rng, kind, choices)]
    how = rng.randrange(8)
    if how == 0 and len(argv) > 1:
        del argv[rng.randrange(1, len(argv))]
    elif how == 1:
        argv.insert(rng.randrange(1, len(argv) + 1), rng.choice(ODD_TOKENS))
    elif how == 2 and len(argv) > 2:
        k = rng.randrange(1, len(argv))
        argv.insert(k, argv[k])
    elif how == 3:
        k = rng.randrange(len(argv))
        argv[k] = mutate_text(rng, argv[k]).replace("\x00", "")
    return [_kept_inside(a.replace("\x00", "")) for a in argv]  # a real command line holds no NUL


FIXED_ABSOLUTE = ("/proc/bongard/x", "/dev/full", "/dev/null")  # absolute paths outside {out} that change nothing


def _kept_inside(token: str) -> str:
    """An absolute path a mutation made (say '/dev\u2f1e/u') moved under {out}: the campaign asks the tool to write
    nowhere outside its output folder, so that any file changed outside it is the tool's doing."""
    return "{out}" + token if token.startswith("/") and token not in FIXED_ABSOLUTE else token


def cli_sandbox(scratch: Path) -> dict[str, str]:
    """The places an argv's placeholders stand for: a one-problem dataset, a facts file, and an empty output folder
    (emptied before every input); the process works in a folder three levels under it, so '..' stays inside."""
    from benchmarks._fuzz_inputs import rng_for
    import json

    data = scratch_dataset(scratch)
    (data / "ShapeBongard_V2_split.json").write_text(json.dumps({"tiny": [PROBLEM]}))  # the split surface writes it too
    facts = scratch / "facts.json"
    if not facts.exists():
        facts.write_text(json.dumps(facts_problem(rng_for(0, "cli-facts", 0))))
    out = scratch / "cli"
    shutil.rmtree(out, ignore_errors=True)
    (out / "cwd" / "a" / "b").mkdir(parents=True)
    problem = data / "ff" / "images" / PROBLEM
    return {"{data}": str(data), "{out}": str(out), "{problem}": str(problem), "{image}": str(problem / "1" / "0.png"),
            "{facts}": str(facts), "cwd": str(out / "cwd" / "a" / "b")}


def filled(argv: list[str], places: dict[str, str]) -> list[str]:
    found = []
    for token in argv:
        for key, value in places.items():
            token = token.replace(key, value) if key.startswith("{") else token
        found.append(token)
    return found


def runs_in_full(argv: list[str]) -> bool:
    command = argv[0] if argv else ""
    return command in RUN_IN_FULL and (command == "solve-facts" or "--oracle" in argv) and not any(
        a.startswith("--ray") for a in argv)


_ASCII_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _loose(parsed, argv: list[str]) -> str:
    """A number the front door took though it should not have: not finite, or not in ASCII digits."""
    for option, value in zip(argv, argv[1:]):
        if option == "--":
            break  # after it, every token is an operand
        if not option.startswith("--"):
            continue
        got = getattr(parsed, option[2:].split("=")[0].replace("-", "_"), None)
        if isinstance(got, float) and not math.isfinite(got):
            return f"{option} {value!r} taken as {got}"
        if isinstance(got, (int, float)) and not isinstance(got, bool) and not _ASCII_NUMBER.fullmatch(value):
            return f"{option} {value!r} taken as {got}"
    return ""


def _message_lines(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        line = line.split("\r")[-1].strip()
        if line and "%|" not in line and not line.startswith(("usage:", "warning:", "written:", "report:")):
            lines.append(line)
    return lines


def cli_target(argv: list[str], scratch: Path) -> tuple[str, str]:
    """Run the argv in this process (in full, or through the front door only) and judge it."""
    import os

    from solver.app.cli import build_parser, main

    places = cli_sandbox(scratch)
    argv = filled(argv, places)
    err, out = io.StringIO(), io.StringIO()
    home = os.getcwd()
    os.chdir(places["cwd"])
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            if runs_in_full(argv):
                code = main(argv)
                loose = ""
            else:
                loose = _loose(build_parser().parse_args(argv), argv)
                code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
        loose = ""
    except Exception as error:
        return "uncaught", described(error)
    finally:
        os.chdir(home)
    stderr = err.getvalue()
    lines = _message_lines(stderr)
    if "Traceback (most recent call last)" in stderr or any("internal error" in line for line in lines):
        return "uncaught", (lines[-1] if lines else stderr[-300:])[:300]
    if code == 0:
        return ("loose", loose) if loose else ("accepted", "")
    last = lines[-1] if lines else ""
    clear = code in (1, 2) and last.startswith("bongard-solver") and len(last) <= 500
    clear = clear and (len(lines) == 1 or code == 2)  # argparse may print the usage first
    return ("clear" if clear else "unclear"), last[:300] or f"exit code {code}, nothing said"
