"""Hostile-input cases for the Python API: `solve_problem` given odd problems.

Pixel images go to a stub perception (every image read as the first positive's program), so these cases
test the API's checks, not the decoder. An error counts as clear when it is one of the tool's own error
classes (a ValueError or RuntimeError defined in dsl, solver, perception or search) with a one-line message.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks._hostile_files import make_root

TOOL_PACKAGES = ("dsl", "solver", "perception", "search")


def _tool_errors() -> tuple[type, ...]:
    """The tool's own exception classes: what the API may raise for a bad problem."""
    import importlib
    import inspect
    import pkgutil

    found = []
    for package in TOOL_PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):  # the rooms of solver too
            try:
                sub = importlib.import_module(info.name)
            except Exception:  # a module that needs an optional dependency
                continue
            found += [c for _, c in inspect.getmembers(sub, inspect.isclass)
                      if issubclass(c, (ValueError, RuntimeError)) and c.__module__.startswith(package)]
    return tuple(set(found))


def api_cases(data: Path, work: Path, ff: str) -> list[dict]:
    from dsl.syntax import parse_image
    from dsl.types import Action, ImageProgram, Shape
    from solver.solving.api import ProblemInput, solve_problem

    root = make_root(data, work / "api", [ff])
    entry = json.loads((root / "ff" / "ff_action_programs.json").read_text())[ff]
    pos = [parse_image(p) for p in entry[0]]
    neg = [parse_image(p) for p in entry[1]]
    drawn = np.full((64, 64), 255, np.uint8)
    drawn[32, 8:56] = 0
    errors = _tool_errors()

    def stub(images, **_):
        return [pos[0]] * len(images)

    def solve(problem, **options):
        """The call of a case; `problem` may be a function making it (building it can be the fault)."""
        return lambda: solve_problem(problem() if callable(problem) else problem, perception=stub, time_limit=5.0,
                                     **options)

    line = Shape((Action.line(1.0),))
    rng = np.random.default_rng(0)
    arrays = {
        "blank": np.full((64, 64), 255, np.uint8), "one-dim": np.full(64, 255, np.uint8), "nan": np.full((64, 64), np.nan),
        "inf": np.full((64, 64), np.inf), "three-dim": np.zeros((4, 64, 64), np.uint8), "empty": np.zeros((0, 0), np.uint8),
        "noise": (rng.random((64, 64)) * 255).astype(np.uint8), "strings": np.array([["a", "b"], ["c", "d"]]),
        "objects": np.array([[None, 1], [2, 3]], dtype=object), "huge": np.broadcast_to(np.uint8(255), (5000, 5000)),
        "complex": np.full((64, 64), 1 + 1j), "all-ink": np.zeros((64, 64), np.uint8),
    }
    cases = []
    for name, array in arrays.items():
        cases.append({"family": "api", "name": f"all-{name}-arrays", "expect": "error", "errors": errors,
                      "call": solve(ProblemInput([array] * 6, [array] * 6, [array, array]))})
        cases.append({"family": "api", "name": f"one-{name}-array", "expect": "ok" if name != "huge" else "any",
                      "errors": errors, "call": solve(ProblemInput([array] + [drawn] * 5, [drawn] * 6, [drawn, drawn]))})
    counts = {"8-a-side": (pos + pos[:1], neg + neg[:1]), "100-a-side": (pos * 15, neg * 15), "0-a-side": ([], []),
              "6-a-side": (pos[:6], neg[:6]), "7-and-6": (pos, neg[:6]), "1-a-side": (pos[:1], neg[:1])}
    for name, (a, b) in counts.items():
        cases.append({"family": "api", "name": f"pair-{name}", "expect": "error", "errors": errors, "call": solve((a, b))})
    odd_inputs = {
        "empty-context": ProblemInput([], [], []), "empty-a": ProblemInput([], neg[:6], neg[6:]),
        "string-side": ProblemInput("abcdef", neg[:6], []), "none-side": ProblemInput(None, neg[:6], []),
        "int-images": ProblemInput([1, 2, 3], neg[:6], []), "dict-images": ProblemInput([{"a": 1}] * 6, neg[:6], []),
        "str-images": ProblemInput(["line_normal_1.000-0.500"] * 6, neg[:6], []),
        "bad-json-program": ProblemInput([[["line_normal_9.000-0.500"]]] * 6, neg[:6], []),
        "100-actions": lambda: ProblemInput([ImageProgram((Shape((Action.line(1.0),) * 100),))] * 6, neg[:6], []),
        "1000-context": ProblemInput(pos * 150, neg * 150, []),
        "number": 42, "none": None, "dict": {"positives": pos}, "bytes": b"abc", "pair-of-strings": ("abc", "def"),
        "missing-folder": str(work / "api" / "nowhere"), "a-file": str(root / "ShapeBongard_V2_split.json"),
        "folder-no-programs": str(make_root(data, work / "api-bare", [ff]) / "ff" / "images" / ff),
    }
    for name, problem in odd_inputs.items():
        options = {"oracle": True} if name == "folder-no-programs" else {}
        if name == "folder-no-programs":
            (Path(problem).parent.parent / "ff_action_programs.json").unlink()
        cases.append({"family": "api", "name": name, "expect": "error", "errors": errors, "call": solve(problem, **options)})
    valid = {"programs": (pos, neg), "json-entry": entry, "no-queries": ProblemInput(pos[:6], neg[:6], []),
             "three-queries": ProblemInput(pos[:6], neg[:6], [pos[6], neg[6], pos[0]]),
             "folder-oracle": str(root / "ff" / "images" / ff)}
    for name, problem in valid.items():
        options = {"oracle": True} if name == "folder-oracle" else {}
        cases.append({"family": "api", "name": f"valid-{name}", "expect": "ok", "errors": errors, "call": solve(problem, **options)})
    return cases
