"""The strict front door (issue 54): every numeric argument of `solve_problem`, `solve_facts` and the command line
checked by the same functions (`dsl.limits`), a None where an image must be a clear error, and action strings
read in ASCII digits of bounded length."""

from __future__ import annotations

import argparse
import math
import re

import numpy as np
import pytest

from dsl.limits import MAX_SECONDS, LimitError, check_count, check_seconds, number_from_text
from dsl.options import count, seconds
from dsl.syntax import ActionStringError, parse_action
from dsl.types import Action, ImageProgram, Shape
from solver import ProblemInput, SolverError, solve_facts, solve_problem

LINE = ImageProgram((Shape((Action.line(1.0),)),))
ARC = ImageProgram((Shape((Action.arc(0.5, 90.0),)),))
PAIR = ([LINE] * 7, [ARC] * 7)


def rides_horse() -> dict:
    def person(action: str) -> list[str]:
        return ["obj(o1)", "obj(o2)", "cls(o1,person)", "cls(o2,horse)", f"rel(o1,{action},o2)"]

    return {"A": [person("ride")] * 3, "B": [person("feed")] * 3, "queries": [person("ride")]}


@pytest.mark.parametrize("options, fault", [
    ({"time_limit": "5"}, "time_limit: expected a number of seconds, got str '5'"),
    ({"time_limit": -1}, "time_limit: must be above 0 and at most 86400, got -1"),
    ({"time_limit": math.nan}, "time_limit: expected a finite number of seconds, got nan"),
    ({"time_limit": math.inf}, "time_limit: expected a finite number"),
    ({"time_limit": True}, "time_limit: expected a number of seconds, got bool"),
    ({"time_limit": 0}, "time_limit: must be above 0"),
    ({"max_rules": -1}, "max_rules: must be from 1 to"),
    ({"max_rules": 0}, "max_rules: must be from 1 to"),
    ({"max_rules": 2.5}, "max_rules: expected a whole number, got float 2.5"),
    ({"max_rules": "64"}, "max_rules: expected a whole number, got str"),
    ({"oracle": "yes"}, "oracle: expected True or False, got str 'yes'"),
    ({"decoded": 1}, "decoded: expected True or False, got int 1"),
    ({"perception": 5}, "perception: expected a callable"),
])
def test_solve_problem_refuses_a_bad_argument_naming_it(options, fault):
    with pytest.raises(SolverError) as error:
        solve_problem(PAIR, **options)
    assert fault in str(error.value) and "\n" not in str(error.value)


def test_solve_problem_takes_numpy_numbers_and_the_bounds():
    assert solve_problem(PAIR, time_limit=np.float32(5.0), max_rules=np.int64(3)).labels == (True, False)
    assert solve_problem(PAIR, time_limit=MAX_SECONDS, max_rules=1).labels == (True, False)


@pytest.mark.parametrize("queries", [(None, ARC), (LINE, None)])
def test_a_none_query_is_a_clear_error(queries):
    with pytest.raises(SolverError, match=r"queries image \d: None where an image must be"):
        solve_problem(ProblemInput([LINE] * 6, [ARC] * 6, queries))


def test_a_none_context_image_is_a_clear_error():
    with pytest.raises(SolverError, match="set B image 2: None where an image must be"):
        solve_problem(ProblemInput([LINE] * 6, [ARC, ARC, None, ARC, ARC, ARC], [LINE]))


def test_a_none_image_with_its_note_stays_an_unreadable_image():
    given = ProblemInput([LINE] * 6, [ARC] * 6, (None, ARC), notes=["query 0.png: unreadable or corrupt PNG"])
    solution = solve_problem(given)
    assert solution.labels == (False, False) and solution.confidence[0] == 0.0


@pytest.mark.parametrize("options, fault", [
    ({"time_limit": "5"}, "time_limit: expected a number of seconds"), ({"time_limit": -1}, "time_limit: must be"),
    ({"max_rules": -1}, "max_rules: must be from 1"), ({"max_literals": 0}, "max_literals: must be from 1 to 8"),
    ({"max_atoms": 7}, "max_atoms: must be from 1 to 3"), ({"max_atoms": None}, "max_atoms: expected a whole number"),
])
def test_solve_facts_refuses_a_bad_argument_naming_it(options, fault):
    with pytest.raises(SolverError, match=fault):
        solve_facts(rides_horse(), **options)


def test_solve_facts_still_solves_with_good_arguments():
    assert solve_facts(rides_horse(), time_limit=5, max_rules=1, max_literals=1, max_atoms=3).labels == (True,)


@pytest.mark.parametrize("text", ["\u0665", "\uff15", "1_0", " 5", "5 ", "nan", "inf", "0x10", "", "9" * 41])
def test_the_command_line_takes_ascii_decimals_only(text):
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)
    with pytest.raises(argparse.ArgumentTypeError):
        count(0)(text)


def test_the_command_line_and_the_api_share_the_checks():
    assert seconds("2.5") == check_seconds(2.5) == 2.5
    assert count(1, 64)("64") == check_count(64, 1, 64) == 64
    with pytest.raises(argparse.ArgumentTypeError) as cli:
        seconds("-1")
    with pytest.raises(LimitError) as api:
        check_seconds(-1.0)
    assert str(api.value) == str(cli.value) == "must be above 0 and at most 86400, got -1.0"
    assert number_from_text("1e3") == 1000.0


@pytest.mark.parametrize("text, fault", [
    ("line_normal_\u0660.\u0665-0.500", "non-ASCII character '\u0660' at 12"),
    ("line_normal_\uff10.500-0.500", "non-ASCII character"),
    ("line_normal_0." + "0" * 100_000 + "-0.500", "an action string of 100020 characters, over the limit of 64"),
    ("line_normal_0." + "0" * 20 + "-0.500", "length of 22 characters"),
    ("arc_normal_0.500_0.500-0.50000000000000", "turn of 16 characters"),
], ids=["arabic-indic", "full-width", "padded-100000", "padded-20", "long-turn"])
def test_action_numbers_are_ascii_and_short(text, fault):
    with pytest.raises(ActionStringError) as error:
        parse_action(text)
    assert fault in str(error.value) and len(str(error.value)) < 300


@pytest.mark.parametrize("text", ["line_normal_0.5-0.5", "line_normal_1-0", "arc_circle_0.25_0.625-0.833",
                                  "line_zigzag_0.12345678-0.500"])
def test_short_ascii_numbers_still_parse(text):
    assert parse_action(text)


@pytest.mark.parametrize("answer, fault", [
    (lambda images: ["line"] * len(images), "perception: image 0 read as str, not an ImageProgram"),
    (lambda images: [LINE], "perception: expected one program per image (8), got 1 items"),
    (lambda images: iter([LINE] * len(images)), "perception: expected one program per image (8), got list_iterator"),
], ids=["strings", "too-few", "an-iterator"])
def test_a_perception_callable_answering_wrongly_is_a_clear_error(answer, fault):
    """Found by `bench fuzz` (seed 54, api-274): strings from a perception callable reached induction."""
    drawn = np.full((32, 32), 255, np.uint8)
    drawn[16, 4:28] = 0
    with pytest.raises(SolverError, match=re.escape(fault)):
        solve_problem(ProblemInput([drawn] + [LINE] * 5, [drawn] * 6, [drawn]), perception=lambda images, **_: answer(images))


@pytest.mark.parametrize("argv, fault", [
    (["train-decoder", "--out", "x.pt", "--workers", "-5"], "--workers: must be from 0 to 64, got -5"),
    (["train-decoder", "--out", "x.pt", "--time-limit", "-1"], "--time-limit: must be at least 0"),
    (["train-decoder", "--out", "x.pt", "--hidden", "0"], "--hidden: must be from 1 to 4096"),
    (["train-shapes", "--epochs", "0"], "--epochs: must be from 1 to 10000"),
    (["train-shapes", "--lr", "nan"], "--lr: expected a number in ASCII digits"),
])
def test_training_options_are_checked_for_range_too(argv, fault, capsys, tmp_path, monkeypatch):
    from solver.app.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and fault in capsys.readouterr().err
    assert not (tmp_path / "x.pt").exists()
