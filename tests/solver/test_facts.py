"""Problems given as facts: loading and validation, the modes, solve_facts, the report and solve-facts."""

from __future__ import annotations

import json

import pytest

from solver import FactsError, solve_facts
from solver.app.cli import main
from solver.facts_in.problem import load_problem, problem_from_dict
from solver.facts_in.report import render_facts_html
from solver.facts_in.solve import solution_record


def person(action: str, thing: str, extra: tuple[str, ...] = ()) -> list[str]:
    return ["obj(o1)", "obj(o2)", "cls(o1,person)", f"cls(o2,{thing})", f"rel(o1,{action},o2)", *extra]


def rides_horse_problem() -> dict:
    """Bongard-HOI style: B differs from A by one literal (another action, or another object)."""
    a = [person("ride", "horse", ("obj(o3)", f"cls(o3,{t})", f"rel(o1,{v},o3)"))
         for t, v in (("dog", "walk"), ("cup", "hold"), ("ball", "kick"), ("bike", "push"), ("cat", "pet"),
                      ("kite", "fly"))]
    b = [person("feed", "horse"), person("ride", "bike"), person("wash", "horse"), person("ride", "elephant"),
         person("ride", "bike", ("obj(o3)", "cls(o3,horse)", "rel(o1,feed,o3)")),
         person("ride", "camel", ("obj(o3)", "cls(o3,horse)", "rel(o1,pet,o3)"))]
    return {"name": "rides", "A": a, "B": b, "queries": [person("ride", "horse"), person("ride", "boat")]}


def write(tmp_path, data, name="p.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# loading and validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, fault", [
    ("{not json", "not JSON"),
    ({"A": [["cls(o1,"]], "B": [["x"]]}, "does not parse"),
    ({"A": [["cls(X,dog)"]], "B": [["x"]]}, "does not parse"),
    ({"A": [["p(a", "b),c"]], "B": [["x"]]}, "'p(a' does not parse"),
    ({"A": [], "B": [["x"]]}, "'A' needs at least one image"),
    ({"A": [["x"]]}, "'B' must be a list"),
    ({"A": [["p(a,b,c,d)"]], "B": [["x"]]}, "at most 3 are read"),
    ({"A": [["42"]], "B": [["x"]]}, "is not a predicate"),
    ({"A": [[3]], "B": [["x"]]}, "must be a string"),
    ({"A": ["cls(o1,dog)"], "B": [["x"]]}, "A image 0 must be a list"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_input_gets_one_clear_error_naming_the_file(tmp_path, data, fault):
    path = write(tmp_path, data)
    with pytest.raises(FactsError) as error:
        load_problem(path)
    assert str(path) in str(error.value) and fault in str(error.value)
    assert "\n" not in str(error.value)


def test_the_command_reports_bad_input_in_one_line(tmp_path, capsys):
    path = write(tmp_path, {"A": [["cls(o1,"]], "B": [["x"]]})
    assert main(["solve-facts", str(path)]) == 1
    message = capsys.readouterr().err.strip()
    assert message.startswith("bongard-solver solve-facts:") and str(path) in message and "\n" not in message


def test_modes_come_from_the_facts():
    problem = problem_from_dict(rides_horse_problem())
    assert {m.text for m in problem.modes} == {"cls(+obj, #const)", "obj(+obj)", "rel(+obj, #const, +obj)"}


def test_facts_with_commas_and_brackets_in_strings_are_read_whole():
    image = ['note(o1,"a, (b")', "obj(o1)", "size(o1,3)."]
    assert problem_from_dict({"A": [image], "B": [["x"]]}).context_a[0].texts == ('note(o1,"a, (b")', "obj(o1)",
                                                                                   "size(o1,3)")


def test_without_declarations_first_arguments_are_objects():
    problem = problem_from_dict({"A": [["color(b1,red)", "left_of(b1,b2)", "color(b2,blue)", "big(b1)",
                                        "scene(indoor)"]], "B": [["color(b1,red)"]]})
    assert {m.text for m in problem.modes} == {"big(+obj)", "color(+obj, #const)", "left_of(+obj, +obj)",
                                               "scene(#const)"}


# solving ------------------------------------------------------------------------------------------

def test_hard_negatives_leave_the_joint_rule():
    solution = solve_facts(rides_horse_problem())
    assert solution.rule.asp == "in_a :- cls(X,horse), rel(_,ride,X)."
    assert solution.explanation.english.startswith("every image in A has object X with cls(X,horse)")
    assert solution.labels == (True, False) and solution.confidence == (1.0, 1.0)


def test_counts_and_absence():
    dogs = lambda n, cats=0: [f"obj(d{k})" for k in range(n)] + [f"cls(d{k},dog)" for k in range(n)] + \
        [f"obj(c{k})" for k in range(cats)] + [f"cls(c{k},cat)" for k in range(cats)]
    counted = solve_facts({"A": [dogs(3, c) for c in range(6)], "B": [dogs(2, 1), dogs(4), dogs(2), dogs(4, 2),
                                                                      dogs(4, 3), dogs(2, 4)],
                           "queries": [dogs(3, 5), dogs(5)]})
    assert counted.rule.asp == "in_a :- #count { X : cls(X,dog) } = 3."
    assert counted.labels == (True, False)
    absent = solve_facts({"A": [dogs(n) for n in range(1, 7)], "B": [dogs(n, 1) for n in range(1, 7)],
                          "queries": [dogs(7), dogs(1, 2)]})
    assert absent.rule.asp == "in_a :- #count { 0 : cls(_,cat) } = 0."
    assert absent.labels == (True, False)


def test_a_noisy_image_of_a_costs_one_error():
    problem = rides_horse_problem()
    problem["A"][5] = person("feed", "horse")
    solution = solve_facts(problem)
    assert solution.rule.asp == "in_a :- cls(X,horse), rel(_,ride,X)."
    assert solution.explanation.errors == 1


def test_tied_rules_are_reported_and_vote():
    a = [["obj(o1)", "color(o1,red)", "shape(o1,cube)"]] * 3
    b = [["obj(o1)", "color(o1,blue)", "shape(o1,ball)"]] * 3
    problem = {"A": a, "B": b, "queries": [["obj(o1)", "color(o1,red)", "shape(o1,ball)"]]}
    solution = solve_facts(problem)
    rules = {solution.rule.asp} | {a.asp for a in solution.explanation.alternatives}
    assert rules == {"in_a :- color(_,red).", "in_a :- shape(_,cube)."}  # "no blue" is longer
    assert solution.confidence == (0.5,)
    record = solution_record(problem_from_dict(problem), solution)
    assert [alt["score"] for alt in record["alternatives"]] == [0.5] and record["explanation"]["score"] == 0.5


def test_record_and_report_escape_every_name(tmp_path):
    problem = rides_horse_problem()
    problem["name"] = "<b>odd</b>"
    problem["queries"][0].append('note(o1,"<script>alert(1)</script>")')
    solution = solve_facts(problem)
    loaded = problem_from_dict(problem)
    record = solution_record(loaded, solution)
    assert set(record) >= {"rule", "english", "labels", "confidence", "alternatives"}
    page = render_facts_html(loaded, record)
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>odd</b>" not in page


def test_solve_facts_command_writes_json_and_report(tmp_path, capsys):
    path = write(tmp_path, rides_horse_problem(), "rides.json")
    assert main(["solve-facts", str(path), "--json", str(tmp_path / "out.json"),
                 "--explain", str(tmp_path / "report")]) == 0
    record = json.loads((tmp_path / "out.json").read_text())
    assert record["rule"] == "in_a :- cls(X,horse), rel(_,ride,X)." and record["labels"] == [True, False]
    page = (tmp_path / "report" / "rides.html").read_text()
    assert page.startswith("<!doctype html>") and page.count('<p class="why">') == 14
    assert "rel(o1,feed,o2) where the rule needs rel(_,ride,o2)" in page  # b(0): another action on the horse
    assert '<li class="diff">rel(o1,feed,o2)</li>' in page and '<li class="match">cls(o2,horse)</li>' in page
    assert all("why" in e for e in record["explanation"]["evidence"])
    assert "query 1: B" in capsys.readouterr().out


def test_a_rule_of_two_literals_says_in_asp_what_it_covers():
    from tests.solver.test_facts_encodings import derives_in_a

    dog, cat, bird = ["obj(d)", "cls(d,dog)"], ["obj(c)", "cls(c,cat)"], ["obj(b)", "cls(b,bird)"]
    a = [dog, dog + bird, dog, dog + bird, dog, dog]
    b = [dog + cat, bird, dog + cat + bird, cat, bird + cat, dog + cat]
    queries = [dog + bird, cat + dog]
    solution = solve_facts({"A": a, "B": b, "queries": queries})
    assert len(solution.rule.literals) == 2 and solution.labels == (True, False)
    covered = solution.induction.rules[0].covered
    for role, images in (("a", a), ("b", b), ("q", queries)):
        for index, image in enumerate(images):
            assert derives_in_a(solution.rule.asp, tuple(image)) == ((role, index) in covered)


def test_the_report_replaces_only_its_own_files(tmp_path, capsys):
    path = write(tmp_path, rides_horse_problem(), "rides.json")
    report = tmp_path / "report"
    assert main(["solve-facts", str(path), "--explain", str(report)]) == 0
    assert main(["solve-facts", str(path), "--explain", str(report)]) == 0  # its own page: replaced
    (report / "rides.html").write_text("<p>someone's notes</p>")
    capsys.readouterr()
    assert main(["solve-facts", str(path), "--explain", str(report)]) == 1
    error = capsys.readouterr().err.strip()
    assert "rides.html" in error and len(error.splitlines()) == 1 and "rule" not in error
    assert (report / "rides.html").read_text() == "<p>someone's notes</p>"
