"""`bench fuzz`'s API surface: `solve_problem` and `solve_facts` called with odd problems and odd argument values.

An input is a recipe, plain JSON (so that it is saved and replayed as it is): the function, the problem (a form and
its images, each image a token), and the arguments given (each value a token). `build_call` makes the Python
objects. Pixel images go to a plain callable perception that reads every image as one line (unless the recipe gives
`perception` itself), so an input takes milliseconds, not the decoder's seconds.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np

from benchmarks._fuzz_inputs import facts_problem, fact_leaf, mutate_json
from benchmarks._fuzz_targets import PROBLEM, judged_error, scratch_dataset

IMAGES = ("line", "arc", "two", "json", "pixels", "blank", "nan", "one-d", "none", "str", "int", "dict", "bad-json",
          "big-shape", "bytes", "huge", "three-d", "bool-array", "object-array")
VALID_IMAGES = ("line", "arc", "two", "json", "pixels")
FORMS = ("pair", "input", "entry", "programs", "folder", "missing-folder", "odd")
ODD_PROBLEMS = (42, None, "abc", "", b"abc", {"a": 1}, [1, 2, 3], ["abc", "def"], 1.5, True)
ARGUMENTS = {"solve_problem": ("oracle", "perception", "time_limit", "max_rules", "decoded"),
             "solve_facts": ("time_limit", "max_rules", "max_literals", "max_atoms")}
FLOATS = ("nan", "inf", "-inf", 1e308, -0.0, 1e-300, 86400, 86400.0001, 5, 0, -1, 0.5, 2.5)
INTS = (-1, 0, 1, 2, 3, 4, 8, 9, 64, 100_000, 100_001, 2**63, 10**100)
CALLABLES = ("ok", "wrong-count", "strings", "nones", "arrays")
_VALID = {"a": ["line"] * 7, "b": ["arc"] * 7, "q": ["pixels", "line"], "notes": 0, "value": 0}
WARM_UP_RECIPES = tuple({"function": "solve_problem", "problem": {"form": form, **_VALID}, "arguments": {}}
                        for form in ("pair", "input", "folder"))


def _value_token(rng, name: str) -> list:
    if name == "perception":  # never None: that is the shipped decoder, seconds a problem
        return ["callable", rng.choice(CALLABLES)] if rng.random() < 0.6 else [
            rng.choice(("int", "str", "list", "object", "complex")), 1]
    how = rng.randrange(12)
    if how < 3:
        return ["float", rng.choice(FLOATS)]
    if how < 6:
        return ["int", rng.choice(INTS)]
    if how == 6:
        return ["str", rng.choice(("5", "", "nan", "\u0665", "true", "1e3"))]
    if how == 7:
        return ["bool", rng.random() < 0.5]
    if how == 8:
        return [rng.choice(("np.float32", "np.int64", "np.bool", "decimal", "fraction")), rng.choice((1, 3, 5))]
    if how == 9:
        return [rng.choice(("none", "list", "object", "complex"))]
    return ["int", rng.choice((1, 2, 3, 64))]


def _images(rng, count: int) -> list[str]:
    if rng.random() < 0.6:
        return [rng.choice(VALID_IMAGES)] * count
    return [rng.choice(IMAGES) if rng.random() < 0.3 else "line" for _ in range(count)]


def api_input(rng) -> dict:
    """A recipe: {"function", "problem", "arguments"}."""
    function = "solve_problem" if rng.random() < 0.8 else "solve_facts"
    if function == "solve_facts":
        value = facts_problem(rng)
        for _ in range(rng.randrange(0, 3)):
            value = mutate_json(rng, value, fact_leaf)
        problem = {"form": "facts", "value": value} if rng.random() < 0.9 else {"form": "odd", "value": rng.randrange(10)}
    else:
        form = rng.choice(FORMS)
        counts = [rng.choice((7, 7, 7, 6, 8, 0, 1, 100)) for _ in range(2)]
        problem = {"form": form, "a": _images(rng, counts[0]), "b": _images(rng, counts[1]),
                   "q": _images(rng, rng.choice((2, 2, 0, 1, 3))), "notes": rng.choice((0, 0, 1, 2, 14)),
                   "value": rng.randrange(len(ODD_PROBLEMS))}
    arguments = {name: _value_token(rng, name) for name in ARGUMENTS[function] if rng.random() < 0.35}
    return {"function": function, "problem": problem, "arguments": arguments}


@functools.cache
def _programs() -> dict:
    from dsl.syntax import parse_image

    return {"line": parse_image([["line_normal_1.000-0.500"]]), "arc": parse_image([["arc_normal_0.500_0.625-0.500"]]),
            "two": parse_image([["line_normal_0.500-0.500"], ["arc_circle_0.250_0.875-0.250"]])}


def _image(token: str):
    from dsl.types import Action, ImageProgram, Shape

    drawn = np.full((64, 64), 255, np.uint8)
    drawn[32, 8:56] = 0
    made = {
        "json": lambda: [["line_normal_1.000-0.500", "line_normal_0.500-0.250"]], "pixels": lambda: drawn,
        "blank": lambda: np.full((64, 64), 255, np.uint8), "nan": lambda: np.full((64, 64), np.nan),
        "one-d": lambda: np.full(64, 255, np.uint8), "none": lambda: None, "str": lambda: "line_normal_1.000-0.500",
        "int": lambda: 7, "dict": lambda: {"a": 1}, "bad-json": lambda: [["line_normal_9.000-0.500"]],
        "big-shape": lambda: ImageProgram((Shape((Action.line(1.0),) * 100),)),
        "bytes": lambda: b"\x89PNG", "huge": lambda: np.broadcast_to(np.uint8(255), (5000, 5000)),
        "three-d": lambda: np.zeros((3, 64, 64), np.uint8), "bool-array": lambda: drawn < 128,
        "object-array": lambda: np.array([[None, 1], [2, 3]], dtype=object),
    }
    return _programs()[token] if token in _programs() else made[token]()


def _perception(kind: str):
    line = _programs()["line"]
    behaviours = {"ok": lambda images: [line] * len(images), "wrong-count": lambda images: [line],
                  "strings": lambda images: ["line"] * len(images), "nones": lambda images: [None] * len(images),
                  "arrays": lambda images: list(images)}
    behaviour = behaviours[kind]

    def perceive(images, **_):
        return behaviour(images)

    return perceive


def _value(token: list):
    kind = token[0]
    if kind == "float":
        return float(token[1])
    simple = {"int": lambda: int(token[1]), "str": lambda: str(token[1]), "bool": lambda: bool(token[1]),
              "np.float32": lambda: np.float32(token[1]), "np.int64": lambda: np.int64(token[1]),
              "np.bool": lambda: np.bool_(token[1]), "decimal": lambda: Decimal(token[1]),
              "fraction": lambda: Fraction(token[1], 3), "none": lambda: None, "list": lambda: [1],
              "object": lambda: object(), "complex": lambda: complex(1, 1), "callable": lambda: _perception(token[1])}
    return simple[kind]()


def build_call(recipe: dict, scratch: Path):
    """The call a recipe describes, as a function of no arguments."""
    from dsl.dataset import ProblemPrograms
    from solver import ProblemInput, solve_facts, solve_problem

    problem, arguments = recipe["problem"], {k: _value(v) for k, v in recipe["arguments"].items()}
    if recipe["function"] == "solve_facts":
        given = problem["value"] if problem["form"] == "facts" else ODD_PROBLEMS[problem["value"]]
        return lambda: solve_facts(given, **arguments)
    arguments.setdefault("perception", _perception("ok"))
    a, b, q = ([_image(t) for t in problem[side]] for side in ("a", "b", "q"))
    form = problem["form"]
    if form == "pair":
        given = (a, b)
    elif form == "input":
        given = ProblemInput(a, b, q, [f"note {k}" for k in range(problem["notes"])])
    elif form == "entry":
        given = [[_image("json")] * len(a), [_image("json")] * len(b)]
    elif form == "programs":
        given = ProblemPrograms("fuzz", tuple(a), tuple(b))
    elif form == "folder":
        given = str(scratch_dataset(scratch) / "ff" / "images" / PROBLEM)
    elif form == "missing-folder":
        given = str(scratch / "no-such-problem")
    else:
        given = ODD_PROBLEMS[problem["value"]]
    return lambda: solve_problem(given, **arguments)


@functools.cache
def tool_errors() -> tuple[type, ...]:
    """The tool's own error classes (ValueError and RuntimeError subclasses of dsl and solver): what the API may
    raise for a bad call."""
    from benchmarks._hostile_api import _tool_errors

    return _tool_errors()


def api_target(recipe: dict, scratch: Path) -> tuple[str, str]:
    try:
        call = build_call(recipe, scratch)
    except Exception as error:  # a recipe this code cannot build: the fuzzer's fault, not the tool's
        return "uncaught", f"recipe: {type(error).__name__}: {error}"[:300]
    try:
        solution = call()
    except Exception as error:
        return judged_error(error, tool_errors())
    labels, confidence = solution.labels, solution.confidence
    if len(labels) != len(confidence) or not all(math.isfinite(c) and 0.0 <= c <= 1.0 for c in confidence):
        return "uncaught", f"a solution of {len(labels)} labels and confidences {confidence}"
    return "accepted", ""
