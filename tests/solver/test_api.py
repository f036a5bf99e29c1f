"""solve_problem on official_dev problems with oracle programs, the input forms, and the error cases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dsl.dataset import load_problem, read_programs
from solver import ProblemInput, SolverError, solve_problem
from solver.solving import programs as solving_programs
from solver.induction.rules import Family

from tests.official import OFFICIAL_DEV
pytestmark = pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official_dev data not available")

FREE_FORM = "ff_nact4_0600"
BASIC = "bd_asymmetric_dagger-open_line_s_new1_0000"


def folder(name: str) -> Path:
    return OFFICIAL_DEV / name[:2] / "images" / name


def programs_json(name: str) -> list:
    return json.loads((OFFICIAL_DEV / name[:2] / f"{name[:2]}_action_programs.json").read_text())[name]


def test_free_form_from_folder_with_oracle_programs():
    solution = solve_problem(folder(FREE_FORM), oracle=True)
    assert solution.labels == (True, False)
    assert solution.rule.families() == {Family.SEQUENCE}
    assert solution.explanation.english.startswith("An image is in A if it has a shape drawn as ")
    assert solution.explanation.errors == 0
    assert len(solution.explanation.evidence) == 14


def test_basic_problem_names_its_two_shapes():
    solution = solve_problem(folder(BASIC), oracle=True)
    assert solution.labels == (True, False)
    names = {name for lit in solution.rule.literals for name in lit.names}
    assert {"asymmetric_dagger", "open_line_s_new1"} <= names
    assert solution.rule.families() == {Family.CATEGORIES}
    assert solution.confidence[0] > 0.5 and solution.confidence[1] > 0.5


def test_input_forms_agree():
    from_json = solve_problem(programs_json(FREE_FORM))
    table = read_programs(OFFICIAL_DEV / "ff")
    from_problem = solve_problem(load_problem(folder(FREE_FORM), table), oracle=True)
    from_programs = solve_problem(table[FREE_FORM])
    entry = table[FREE_FORM]
    given = ProblemInput(entry.positives[:6], entry.negatives[:6], (entry.positives[6], entry.negatives[6]))
    from_input = solve_problem(given)
    rules = {s.rule.asp for s in (from_json, from_problem, from_programs, from_input)}
    assert len(rules) == 1
    assert from_json.labels == from_problem.labels == from_programs.labels == from_input.labels


def test_explanation_is_json_serialisable():
    solution = solve_problem(programs_json(BASIC))
    text = json.dumps(solution.to_dict())
    assert "evidence" in text and "alternatives" in text
    assert "WRONG" not in solution.explanation.to_text()


def test_perception_callable_supplies_programs():
    entry = read_programs(OFFICIAL_DEV / "ff")[FREE_FORM]
    drawn = np.full((8, 8), 255, dtype=np.uint8)
    drawn[4, 1:7] = 0  # a line: any drawing will do, the perception given reads them all the same
    given = ProblemInput([drawn] * 6, list(entry.negatives[:6]), [drawn, entry.negatives[6]])
    calls = []

    def perception(images):
        calls.append(len(images))
        return [entry.positives[0]] * len(images)

    solution = solve_problem(given, perception=perception)
    assert calls == [7]  # every pixel image of the problem in one batch
    assert solution.labels == (True, False)


def test_a_folder_is_solved_from_its_pixels_unless_oracle():
    table = read_programs(OFFICIAL_DEV / "ff")
    entry = table[FREE_FORM]
    calls = []

    def perception(images):  # reads every image as the program the dataset gives it
        calls.append([image.shape for image in images])
        truth = list(entry.positives[:6]) + list(entry.negatives[:6]) + [entry.positives[6], entry.negatives[6]]
        return truth

    solution = solve_problem(folder(FREE_FORM), perception=perception)
    assert len(calls) == 1 and calls[0] == [(512, 512)] * 14  # the 14 images, as pixels
    assert solution.labels == (True, False)
    solve_problem(folder(FREE_FORM), oracle=True, perception=perception)
    solve_problem(load_problem(folder(FREE_FORM), table), oracle=True, perception=perception)
    assert len(calls) == 1  # oracle: the JSON's programs, no perception


def test_pixels_without_perception_use_the_default_pipeline(monkeypatch):
    entry = read_programs(OFFICIAL_DEV / "ff")[FREE_FORM]
    drawn = np.full((8, 8), 255, dtype=np.uint8)
    drawn[4, 1:7] = 0
    calls = []

    def perception(images):
        calls.append(len(images))
        return [entry.positives[0]] * len(images)

    monkeypatch.setattr(solving_programs, "default_perception", lambda: perception)
    solve_problem(ProblemInput([drawn] * 6, list(entry.negatives[:6]), [drawn, entry.negatives[6]]))
    assert calls == [7]


def test_pixels_with_oracle_fail_clearly():
    blank = np.full((8, 8), 255, dtype=np.uint8)
    with pytest.raises(SolverError, match="oracle perception asked for"):
        solve_problem(ProblemInput([blank] * 6, [blank] * 6, [blank, blank]), oracle=True)


def test_folder_without_programs_fails_clearly_under_oracle(tmp_path):
    problem = folder(FREE_FORM)
    copy = tmp_path / "ff" / "images" / FREE_FORM
    for label in ("0", "1"):
        (copy / label).mkdir(parents=True)
        for k in range(7):
            (copy / label / f"{k}.png").write_bytes((problem / label / f"{k}.png").read_bytes())
    with pytest.raises(Exception, match="action_programs.json"):
        solve_problem(copy, oracle=True)


def test_malformed_programs_are_reported():
    entry = programs_json(FREE_FORM)
    entry[0][2] = [["line_bogus_1.000-0.500"]]
    with pytest.raises(SolverError, match="set A image 2"):
        solve_problem(entry)
    with pytest.raises(SolverError, match="7 positive and 7 negative"):
        solve_problem([entry[0][:3], entry[1][:3]])
