"""Every report page is self-contained and escapes every text it shows: each string of a real solution
(rule, English, facts, `why`, alternatives, outcome) and the problem's name is made hostile, and no tag
of it may reach the page; nothing is loaded from the network."""

from __future__ import annotations

import re

from solver import solve_facts
from solver.facts_in.problem import problem_from_dict
from solver.facts_in.report import render_facts_html
from solver.facts_in.solve import solution_record
from solver.explaining.report import ReportImage, render_html

HOSTILE = "<script>alert(1)</script>"
KEYS_READ_NOT_SHOWN = {"image"}  # evidence is looked up by it: a hostile one would hide the evidence


def tainted(value):
    """Every string in the record prefixed by the hostile text (the keys looked up left alone)."""
    if isinstance(value, str):
        return HOSTILE + value
    if isinstance(value, list):
        return [tainted(v) for v in value]
    if isinstance(value, dict):
        return {k: v if k in KEYS_READ_NOT_SHOWN else tainted(v) for k, v in value.items()}
    return value


def assert_safe(page: str, shown: int) -> None:
    assert "<script" not in page and "alert(1)</" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= shown  # the texts are there, escaped
    assert not re.search(r'(src|href)="(https?:)?//', page) and "@import" not in page and "<link" not in page
    assert not re.search(r"url\((?!data:)", page)


def test_pixel_report_escapes_every_text_of_a_real_solution():
    from dsl.generate import ProblemKind, generate_problem, plan_problems
    from solver.solving.api import ProblemInput, solve_problem

    problem = generate_problem(plan_problems(ProblemKind.BASIC, 1, 5)[0], 5)
    programs = list(problem.positives[:6]) + list(problem.negatives[:6]) + [problem.positives[6], problem.negatives[6]]
    solution = solve_problem(ProblemInput(programs[:6], programs[6:12], programs[12:])).to_dict()
    assert all(e["why"]["sentence"] for e in solution["explanation"]["evidence"])
    page = render_html(HOSTILE, [ReportImage(None, p, None) for p in programs], tainted(solution))
    assert_safe(page, shown=1 + 2 + 14 * 2)  # name (title, heading), rule, and per image a fact and its why


def test_facts_report_escapes_every_text_and_hostile_facts():
    person = ["obj(o1)", "obj(o2)", "cls(o1,person)"]
    a = [person + ["cls(o2,horse)", "rel(o1,ride,o2)", f'note(o2,"{HOSTILE}")']] * 3
    b = [person + ["cls(o2,horse)", "rel(o1,feed,o2)"], person + ["cls(o2,bike)", "rel(o1,ride,o2)"]] * 2
    raw = {"name": HOSTILE, "A": a, "B": b, "queries": [a[0], b[0]]}
    problem = problem_from_dict(raw)
    record = solution_record(problem, solve_facts(raw))
    assert_safe(render_facts_html(problem, record), shown=2 + 4)  # name, and the note in A's and a query's facts
    assert_safe(render_facts_html(problem, tainted(record)), shown=2 + 2 + 9 * 2)
