"""One path from a problem to a Solution: `solve_problem` of a folder gives the labels, rule and calibrated
confidence that `bongard-solver eval` records for it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dsl.commands import write_dataset
from dsl.dataset import list_problems, load_problem, problem_folder
from dsl.generate import ProblemKind
from solver import ProblemInput, solve_problem
from solver.app.commands import evaluate


def test_the_api_and_eval_give_the_same_labels_rules_and_confidences(tmp_path: Path):
    root = tmp_path / "data"
    write_dataset(root, {ProblemKind.FREE_FORM: 1, ProblemKind.BASIC: 1, ProblemKind.ABSTRACT: 1}, seed=11, workers=1,
                  progress=False)
    names = list_problems(root)
    (root / "ShapeBongard_V2_split.json").write_text(json.dumps({"few": names}))
    evaluate(str(root), "few", tmp_path / "eval.json", None, False, 1, 10.0)
    records = {r["name"]: r for r in json.loads((tmp_path / "eval.json").read_text())["problems"]}
    assert len(records) == 3
    for name in names:
        solution = solve_problem(problem_folder(root, name))
        record = records[name]
        assert list(solution.labels) == record["predicted"]
        assert (solution.rule.asp if solution.rule else None) == record["rule"]
        assert [round(c, 4) for c in solution.confidence] == record["confidence"]


def test_pixel_arrays_take_the_same_path_as_the_folder(tmp_path: Path):
    write_dataset(tmp_path, {ProblemKind.ABSTRACT: 1}, seed=5, workers=1, progress=False)
    folder = problem_folder(tmp_path, list_problems(tmp_path)[0])
    problem = load_problem(folder)
    pixels = [image.load() for image in problem.in_solving_order]
    given = ProblemInput(pixels[:6], pixels[6:12], pixels[12:])
    from_arrays, from_folder = solve_problem(given), solve_problem(folder)
    assert from_arrays.labels == from_folder.labels and from_arrays.rule == from_folder.rule
    assert np.allclose(from_arrays.confidence, from_folder.confidence)
