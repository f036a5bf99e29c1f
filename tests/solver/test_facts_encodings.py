"""Golden tests of facts_features.lp / facts_rule.lp and of the canonical forms of solver.facts_in.lang: small
fact sets, their candidate literals, and every literal's ASP text checked against the encoding."""

from __future__ import annotations

import random

import clingo
import pytest

from benchmarks.facts import FAMILIES, generate_problem
from solver.facts_in.problem import image_bits, problem_from_dict
from solver.facts_in.lang import FactLiteral, FactRule, Kind
from solver.facts_in import why as why_facts
from solver.facts_in.solve import candidates, prune

PERSON_HORSE = ["obj(o1)", "obj(o2)", "cls(o1,person)", "cls(o2,horse)", "rel(o1,ride,o2)"]


def literal(term: str) -> FactLiteral:
    return FactLiteral.from_symbol(clingo.parse_term(term))


def derives_in_a(rule: str, facts: tuple[str, ...]) -> bool:
    """Run the rule's ASP text on one image's facts with clingo."""
    control = clingo.Control(["--warn=none"])
    control.add("base", [], " ".join(f"{fact}." for fact in facts) + rule + " #show in_a/0.")
    control.ground([("base", [])])
    found = []
    control.solve(on_model=lambda model: found.extend(model.symbols(shown=True)))
    return bool(found)


def candidate_asp(problem) -> set[str]:
    return {FactLiteral.from_symbol(c.term).asp for c in candidates(problem)}


def test_one_query_rooted_at_either_object_is_one_literal():
    by_rider = literal("exists(r(t(rel,(self,c(ride),link)),t(cls,(self,c(horse)))))")
    by_horse = literal("exists(and(t(cls,(self,c(horse))),t(rel,(any,c(ride),self))))")
    assert by_rider.key == by_horse.key
    assert by_rider.asp == "cls(X,horse), rel(_,ride,X)"


def test_a_counted_object_keeps_its_variable():
    rider = literal("count(r(t(rel,(self,c(ride),link)),t(cls,(self,c(horse)))),eq,2)")
    horse = literal("count(and(t(cls,(self,c(horse))),t(rel,(any,c(ride),self))),eq,2)")
    assert rider.key != horse.key  # riders of horses, horses ridden: different numbers
    assert rider.asp == "#count { X : cls(Y,horse), rel(X,ride,Y) } = 2"
    assert horse.asp == "#count { X : cls(X,horse), rel(_,ride,X) } = 2"


def test_negated_literals_and_ground_facts():
    assert literal("neg(exists(t(cls,(self,c(dog)))))").kind is Kind.ABSENT
    assert literal("neg(ground(t(scene,(c(night),))))").asp == "not scene(night)"
    rule = FactRule((literal("exists(t(cls,(self,c(dog))))"), literal("neg(exists(t(cls,(self,c(cat)))))")))
    assert rule.asp == "in_a :- cls(_,dog), #count { 0 : cls(_,cat) } = 0."


def test_candidates_from_set_a_and_absences_from_set_b():
    a = [PERSON_HORSE] * 3
    b = [["obj(o1)", "obj(o2)", "cls(o1,person)", "cls(o2,bike)", "rel(o1,ride,o2)"]] * 3
    found = candidate_asp(problem_from_dict({"A": a, "B": b}))
    assert "cls(X,horse), rel(_,ride,X)" in found
    assert "cls(X,horse), cls(Y,person), rel(Y,ride,X)" in found
    assert "#count { 0 : cls(_,bike) } = 0" in found
    assert all(text.endswith("= 0") or "not cls(X,bike)" in text for text in found if "bike" in text)


def test_object_declarations_are_counted_but_never_a_part():
    a = [["obj(o1)", "obj(o2)", "obj(o3)", "cls(o1,dog)"]] * 3
    b = [["obj(o1)", "cls(o1,dog)"]] * 3
    found = candidate_asp(problem_from_dict({"A": a, "B": b}))
    assert "#count { X : obj(X) } = 3" in found
    assert not any("obj(X), cls" in text or "cls(X,dog), obj(X)" in text for text in found)


def test_facts_without_objects_are_image_literals():
    a = [["obj(o1)", "cls(o1,cup)", "night", "scene(kitchen)"]] * 3
    b = [["obj(o1)", "cls(o1,cup)", "scene(garden)"]] * 3
    found = candidate_asp(problem_from_dict({"A": a, "B": b}))
    assert {"night", "scene(kitchen)", "not scene(garden)"} <= found


def _check_every_literal(problem, pruned: bool = True) -> int:
    bits = image_bits(problem)
    checked = 0
    found = candidates(problem)
    for candidate in prune(found, problem) if pruned else found:
        literal = FactLiteral.from_symbol(candidate.term)
        rule = FactRule((literal,)).asp
        for role, index, image in problem.images():
            chunk, bit = bits[clingo.Function(role.value, [clingo.Number(index)])]
            holds = bool(candidate.masks[chunk] >> bit & 1)
            assert derives_in_a(rule, image.texts) == holds, (rule, image.texts)
            assert why_facts.holds(literal, image) == holds, (rule, image.texts)  # the `why` reads it the same
        checked += 1
    return checked


@pytest.mark.parametrize("family", FAMILIES)
def test_every_literal_says_in_asp_what_the_encoding_computes(family):
    """Each kept candidate's rule text, run by clingo on each image, derives in_a exactly where the
    encoding says the literal holds (canonical forms and counts included)."""
    problem, _ = generate_problem(family, random.Random(11))
    assert _check_every_literal(problem_from_dict(problem)) > 10


def test_literals_of_facts_without_objects_and_of_three_arguments_say_the_same():
    a = [PERSON_HORSE + ["scene(field)", "rel(o2,near,o1)"], PERSON_HORSE + ["night"], PERSON_HORSE + ["night"]]
    b = [["obj(o1)", "obj(o2)", "cls(o1,person)", "cls(o2,horse)", "rel(o1,feed,o2)", "scene(field)"]] * 2
    assert _check_every_literal(problem_from_dict({"A": a, "B": b, "queries": [a[0], b[0]]}), pruned=False) > 10


def test_a_negated_fact_inside_a_conjunction():
    idle = ["obj(o1)", "obj(o2)", "cls(o1,person)", "cls(o2,horse)"]
    a = [idle, idle + ["obj(o3)", "cls(o3,person)", "rel(o3,ride,o2)"], idle + ["rel(o2,ride,o1)"]]
    b = [person_rides for person_rides in [PERSON_HORSE] * 3]
    found = candidate_asp(problem_from_dict({"A": a, "B": b}))
    assert "cls(X,person), not rel(X,ride,_)" in found
    assert _check_every_literal(problem_from_dict({"A": a, "B": b, "queries": [a[1], b[0]]}), pruned=False) > 10
