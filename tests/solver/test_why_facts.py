"""The `why` of problems given as facts: on 20 generated problems of each family, every rejected B image's
`why` names the concept's literal and a true fault, checked against the image's facts and the generator's
own one-literal change; plus the sentences and JSON fields a user reads."""

from __future__ import annotations

import functools
import random
import re

import clingo
import pytest

from benchmarks.facts import FAMILIES, concept_key, generate_problem
from solver import solve_facts
from solver.facts_in.problem import problem_from_dict
from solver.facts_in.lang import FactLiteral
from solver.facts_in.solve import solution_record

PROBLEMS = 20
SEED = 2828


@functools.cache
def solved(family: str) -> list:
    """(problem dict, concept literal, solution) for PROBLEMS generated problems of the family."""
    rng = random.Random(SEED)
    results = []
    for _ in range(PROBLEMS):
        problem, concept = generate_problem(family, rng)
        [term] = concept
        results.append((problem, FactLiteral.from_symbol(clingo.parse_term(term)), solve_facts(problem)))
    return results


def rejected_negatives(problem: dict, solution):
    """(image facts, its evidence) for every set-B image and the negative query the rule puts out of A."""
    evidence = {e.image: e for e in solution.explanation.evidence}
    for k in range(7):
        item = evidence[f"b({k})" if k < 6 else "q(1)"]
        if not item.in_a:
            yield (problem["B"][k] if k < 6 else problem["queries"][1]), item


def concept_failures(family: str):
    """(concept, image facts, the one failing record, the why) of every rejected negative of problems whose rule is
    the concept; at least 6 per problem, and the rule is the concept in nearly every problem."""
    found, matched = [], 0
    for problem, concept, solution in solved(family):
        if solution.rule.key != concept_key([str(concept.term)]):
            continue
        matched += 1
        for facts, evidence in rejected_negatives(problem, solution):
            [failing] = evidence.why.failing
            assert failing.literal == concept.asp, (problem["name"], evidence.why)
            found.append((concept, facts, failing, evidence.why))
    assert matched >= PROBLEMS - 2 and len(found) >= 6 * matched, (family, matched, len(found))
    return found


def values(facts: list[str], predicate: str) -> dict[str, set[str]]:
    """object -> the values of `predicate(object, value)` in the image."""
    found: dict[str, set[str]] = {}
    for fact in facts:
        match = re.fullmatch(rf"{predicate}\((\w+),(\w+)\)", fact)
        if match:
            found.setdefault(match[1], set()).add(match[2])
    return found


def test_counts_why_gives_the_count_one_off_the_concept():
    for concept, facts, failing, why in concept_failures("counts"):
        [[_, (_, wanted)]] = concept.atoms
        counted = sum(wanted in v for v in values(facts, "cls").values())
        assert failing.measured == counted and abs(counted - concept.value) == 1, (facts, failing)
        assert set(why.found) == {f for f in facts if f.startswith("cls(") and f.endswith(f",{wanted})")}
        assert failing.needs == f"exactly {concept.value}"


def test_hoi_why_names_the_changed_action_or_object_of_the_main_interaction():
    """The generator's main interaction is rel(o1, action, o2): one of its two literals is changed."""
    for concept, facts, failing, _ in concept_failures("hoi"):
        thing = next(a[1][1] for a in concept.atoms if a[0] == "cls")
        action = next(a[1][1] for a in concept.atoms if a[0] == "rel")
        main_action = next(f for f in facts if re.fullmatch(r"rel\(o1,\w+,o2\)", f))
        changed = f"cls(o2,{thing})" if main_action == f"rel(o1,{action},o2)" else f"rel(_,{action},o2)"
        assert any(changed in near["lacks"] for near in failing.measured), (facts, failing.measured)
        for near in failing.measured:
            assert set(near["has"]) | set(near["instead"]) <= set(facts) and near["instead"]
            assert not set(near["lacks"]) & set(facts) and len(near["lacks"]) == 1


def test_attributes_why_names_every_object_one_value_away():
    for concept, facts, failing, _ in concept_failures("attributes"):
        wanted = {name: value for name, (_, value) in concept.atoms}
        seen = {name: values(facts, name) for name in wanted}
        objects = {o for by_object in seen.values() for o in by_object}
        away = {o for o in objects if sum(v in seen[n].get(o, ()) for n, v in wanted.items()) == len(wanted) - 1}
        named = set()
        for near in failing.measured:
            [lacks] = near["lacks"]
            name, obj, value = re.fullmatch(r"(\w+)\((\w+),(\w+)\)", lacks).groups()
            assert wanted[name] == value and value not in seen[name].get(obj, ())
            assert near["instead"] == sorted(f"{name}({obj},{v})" for v in seen[name].get(obj, ()))
            named.add(obj)
        assert named == away or len(named) == len(failing.measured) == 6, (facts, failing.measured)


def test_tools_why_lists_the_functions_there_are_or_the_tool_that_has_it():
    for concept, facts, failing, _ in concept_failures("tools"):
        [(_, (_, function))] = concept.atoms
        having = sorted(f for f in facts if re.fullmatch(rf"function\(\w+,{function}\)", f))
        [near] = failing.measured
        if concept.kind.value == "exists":
            assert not having and near["lacks"] == [f"function(_,{function})"]
            assert near["instead"] == sorted(f for f in facts if f.startswith("function("))
        else:
            assert having and near["has"] == having[:1] and failing.needs == "none"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_image_has_a_sentence_and_the_pixel_paths_fields(family):
    problem, _, solution = solved(family)[0]
    record = solution_record(problem_from_dict(problem), solution)
    sides = {"a": problem["A"], "b": problem["B"], "q": problem["queries"]}
    for item in record["explanation"]["evidence"]:
        why, facts = item["why"], sides[item["image"][0]][int(item["image"][2:-1])]
        assert set(why) == {"sentence", "differs_at", "failing", "found", "marked"} and why["sentence"].endswith(".")
        assert not why["differs_at"] and not why["marked"]
        if item["in_a"]:
            assert not why["failing"] and why["found"] and set(why["found"]) <= set(facts)
        else:
            assert [set(f) for f in why["failing"]] == [{"literal", "name", "measured", "needs"}]


def test_sentences_as_a_user_reads_them():
    person = ["obj(o1)", "obj(o2)", "cls(o1,person)"]
    a = [person + ["cls(o2,horse)", "rel(o1,ride,o2)"]] * 3
    b = [person + ["cls(o2,horse)", "rel(o1,feed,o2)"], person + ["cls(o2,bike)", "rel(o1,ride,o2)"]] * 2
    solution = solve_facts({"A": a, "B": b, "queries": [person + ["cls(o2,dog)"]]})
    sentences = [e.why.sentence for e in solution.explanation.evidence]
    assert sentences[0] == ("It has an object X with cls(X,horse) and rel(_,ride,X): cls(o2,horse), "
                            "rel(o1,ride,o2).")
    assert sentences[3] == ("It has no object X with cls(X,horse) and rel(_,ride,X): it has cls(o2,horse) but "
                            "rel(o1,feed,o2) where the rule needs rel(_,ride,o2).")
    assert sentences[4] == ("It has no object X with cls(X,horse) and rel(_,ride,X): it has rel(o1,ride,o2) but "
                            "cls(o2,bike) where the rule needs cls(o2,horse).")
    assert sentences[-1] == ("It has no object X with cls(X,horse) and rel(_,ride,X): it has cls(o1,person), "
                             "cls(o2,dog) where the rule needs cls(X,horse) and rel(_,ride,X).")


def test_absent_ground_and_misclassified_images():
    cat = ["obj(c)", "cls(c,cat)"]
    solution = solve_facts({"A": [["obj(d)", "cls(d,dog)"]] * 3 + [cat], "B": [cat + ["night"]] * 3,
                            "queries": [["day"]]})
    by_image = {e.image: e.why for e in solution.explanation.evidence}
    assert solution.rule.asp == "in_a :- not night."
    assert by_image["b(0)"].sentence == "It has the fact night, which the rule excludes."
    assert by_image["a(3)"].sentence == "It does not have the fact night."
    absent = solve_facts({"A": [["obj(d)", "cls(d,dog)"]] * 3, "B": [cat + ["obj(d)", "cls(d,dog)"]] * 3})
    why = {e.image: e.why for e in absent.explanation.evidence}["b(0)"]
    assert why.sentence == "It has a fact like cls(_,cat): cls(c,cat); the rule needs none."
    assert why.failing[0].measured == [{"has": ["cls(c,cat)"], "lacks": [], "instead": []}]
