"""The generator of problems given as facts and the `bench facts` benchmark."""

from __future__ import annotations

import json
import random

import pytest

from benchmarks.facts import FAMILIES, concept_key, generate_problem, main, run_problem
from solver.facts_in.problem import problem_from_dict


@pytest.mark.parametrize("family", FAMILIES)
def test_problems_are_valid_seeded_and_solved(family):
    problem, concept = generate_problem(family, random.Random(3))
    again, _ = generate_problem(family, random.Random(3))
    assert problem == again
    loaded = problem_from_dict(problem)
    assert len(loaded.context_a) == len(loaded.context_b) == 6 and len(loaded.queries) == 2
    record = run_problem(problem, concept, family)
    assert record["rule_match"] and record["correct"] == 2


def test_every_negative_is_one_change_from_the_concept():
    """A hoi negative keeps the action or the class of the concept (a hard negative), never both."""
    problem, concept = generate_problem("hoi", random.Random(5))
    action, thing = problem["name"].split("_")[1:3]
    for image in problem["B"]:
        assert any(f",{action}," in fact for fact in image) or any(f",{thing})" in fact for fact in image)


def test_concept_key_names_the_same_query_whichever_object_it_starts_from():
    assert concept_key(["exists(r(t(rel,(self,c(ride),link)),t(cls,(self,c(horse)))))"]) == \
        concept_key(["exists(and(t(cls,(self,c(horse))),t(rel,(any,c(ride),self))))"])


def test_bench_writes_its_figures(tmp_path, capsys):
    out = tmp_path / "facts.json"
    assert main(["--per-family", "1", "--seed", "2", "--json", str(out), "--out", str(tmp_path / "problems"),
                 "--explain", str(tmp_path / "reports")]) == 0
    reports = sorted((tmp_path / "reports").glob("*.json"))
    assert len(reports) == 4 and len(list((tmp_path / "reports").glob("*.html"))) == 4
    assert all(e["why"]["sentence"] for r in reports for e in json.loads(r.read_text())["explanation"]["evidence"])
    figures = json.loads(out.read_text())
    assert set(figures["families"]) == set(FAMILIES) and figures["all"]["problems"] == 4
    assert figures["all"]["why_names_concept"] == 1.0 and all(r["why_rejected"] >= 6 for r in figures["problems"])
    assert len(list((tmp_path / "problems").glob("*.json"))) == 4
    assert "rule_match" in capsys.readouterr().out


def test_noise_drops_one_fact_of_some_context_images():
    problem, _ = generate_problem("counts", random.Random(1))
    from benchmarks.facts import with_noise

    noisy = with_noise(problem, random.Random(2), 1.0)
    for side in ("A", "B"):
        for before, after in zip(problem[side], noisy[side]):
            assert len(after) == len(before) - 1 and set(after) < set(before)
    assert noisy["queries"] == problem["queries"]
