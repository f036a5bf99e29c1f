"""Every set-B image's `why` names a difference that is true, on 20 generated problems of each type
(ground-truth programs): free-form negatives against the generator's own one-action change, basic ones
against the shape it swapped, abstract ones against the attributes the negative lacks."""

from __future__ import annotations

import functools

import pytest

from dsl.align import Tolerance, alignments, differences, positions
from dsl.canonical import canonical_shape, shape_key
from dsl.free_form import Perturbation
from dsl.generate import ProblemKind, generate_problem, plan_problems
from dsl.library import load_library
from solver.solving.api import ProblemInput, solve_problem
from solver.induction.rules import Comparison, Family
from solver.app.scoring import _names_attribute, rule_matches
from solver.explaining.why_sequence import rule_shapes

PROBLEMS = 20
SEED = 2828
WAY_FIELD = {Perturbation.MOVE_TYPE: "stroke", Perturbation.MOVE_NAME: "kind", Perturbation.DIRECT_ANGLE: "turn"}


@functools.cache
def solved(kind: ProblemKind) -> list:
    """(generated problem, solution) for the first PROBLEMS problems of `kind`."""
    results = []
    for spec in plan_problems(kind, PROBLEMS, SEED):
        problem = generate_problem(spec, SEED)
        given = ProblemInput(problem.positives[:6], problem.negatives[:6], (problem.positives[6], problem.negatives[6]))
        results.append((problem, solve_problem(given)))
    return results


def rejected_negatives(problem, solution):
    """(negative index, its evidence) for every set-B image and the negative query the rule puts out of A."""
    evidence = {e.image: e for e in solution.explanation.evidence}
    for k in range(7):
        item = evidence[f"b({k})" if k < 6 else "q(1)"]
        if not item.in_a:
            yield k, item


def true_differences(rule_shape, rule_index, positive, negative, two_shapes):
    """Each way the positive's shape lies on the rule's shape (several for a symmetric shape), the rule's
    actions where the negative's shape departs from it, laid the same way."""
    found = []
    for way in (a for a in alignments(rule_shape, positive) if a.cost == 0):
        traced = {p.index: p for p in positions(negative, way.backwards)}
        found.append(({(rule_index + 1 if two_shapes else None, s.reference.index + 1) for s in way.steps
                       if differences(s.reference, traced[s.other.index], Tolerance())}, way))
    return found


def test_free_form_why_names_the_action_the_generator_changed():
    checked = 0
    for problem, solution in solved(ProblemKind.FREE_FORM):
        [literal] = solution.rule.literals
        assert literal.family.is_sequence and not literal.negated, (problem.name, solution.rule.asp)
        rules = rule_shapes(literal)
        positive = problem.positives[0]
        for k, evidence in rejected_negatives(problem, solution):
            change, negative = problem.changes[k], problem.negatives[k]
            why = evidence.why
            named = {(d.shape, d.action) for d in why.differs_at}
            assert named and {d.image_shape for d in why.differs_at} == {change.shape}, (problem.name, k, why)
            candidates = []
            for r, rule_shape in enumerate(rules):
                if shape_key(rule_shape) == shape_key(positive.shapes[change.shape]):
                    candidates += true_differences(rule_shape, r, positive.shapes[change.shape],
                                                   negative.shapes[change.shape], len(rules) > 1)
            assert any(named == truth for truth, _ in candidates), (problem.name, k, why.sentence, candidates)
            for truth, way in candidates:  # the generator's record lies among the true differences
                junction_before = way.backwards and change.way is Perturbation.DIRECT_ANGLE
                index = change.action - 1 if junction_before else change.action
                mapped = next(s.reference.index + 1 for s in way.steps if s.other.index == index)
                assert mapped in {a for _, a in truth}, (problem.name, k, change, truth)
            assert all(WAY_FIELD[change.way] in d.fields for d in why.differs_at), (problem.name, k, why)
            checked += 1
    assert checked >= 6 * PROBLEMS


def same_geometry(a: str, b: str) -> bool:
    library = load_library()
    return a == b or shape_key(library[a].shape, True) == shape_key(library[b].shape, True)


def test_basic_why_names_the_missing_shape_and_its_look_alike():
    checked = 0
    for problem, solution in solved(ProblemKind.BASIC):
        families = {lit.family for lit in solution.rule.literals}
        assert families <= {Family.CATEGORY, Family.CATEGORIES}, (problem.name, solution.rule.asp)
        for k, evidence in rejected_negatives(problem, solution):
            swap, why = problem.changes[k], evidence.why
            [failing] = why.failing
            assert same_geometry(failing.name, swap.original), (problem.name, k, why.sentence, swap)
            assert why.marked == ((swap.slot, None),), (problem.name, k, why, swap)
            assert "in its place" in why.sentence
            checked += 1
    assert checked >= 6 * PROBLEMS


def literal_holds(literal, program) -> bool:
    """The literal on one single-shape image, its facts found afresh (a library shape: the shape table's labels,
    `solver.induction.facts`; counts: any reading)."""
    from solver.induction.facts import image_facts

    shape = image_facts(program).shapes[0]
    if literal.family is Family.ATTRIBUTE:
        return (shape.attributes.get(literal.name) == 1) != literal.negated
    readings = shape.counts[literal.name]
    if literal.negated:
        return not any(n == literal.value for n in readings)
    compare = {Comparison.EQ: lambda n: n == literal.value, Comparison.GE: lambda n: n >= literal.value,
               Comparison.LE: lambda n: n <= literal.value}[literal.comparison]
    return any(compare(n) for n in readings)


def test_abstract_why_names_a_failing_attribute_of_the_concept():
    checked = matched = 0
    for problem, solution in solved(ProblemKind.ABSTRACT):
        rule = solution.rule
        assert {lit.family for lit in rule.literals} <= {Family.ATTRIBUTE, Family.COUNT}, (problem.name, rule.asp)
        by_asp = {lit.asp: lit for lit in rule.literals}
        names_concept = rule_matches(problem.name, rule)
        matched += names_concept
        for k, evidence in rejected_negatives(problem, solution):
            loss, why, program = problem.changes[k], evidence.why, problem.negatives[k]
            assert why.failing, (problem.name, k, why)
            for failing in why.failing:
                literal = by_asp[failing.literal]
                assert not literal_holds(literal, program), (problem.name, k, failing)
                assert failing.name == literal.name and failing.needs
            if names_concept:
                failing_literals = [by_asp[f.literal] for f in why.failing]
                assert any(_names_attribute(a, failing_literals) for a in loss.lacks), (problem.name, k, loss, why)
            checked += 1
    assert checked >= 6 * PROBLEMS and matched >= PROBLEMS // 2


@pytest.mark.parametrize("kind", list(ProblemKind))
def test_every_image_has_a_sentence(kind):
    for problem, solution in solved(kind)[:3]:
        for evidence in solution.explanation.evidence:
            assert evidence.why is not None and evidence.why.sentence.endswith(".")
            record = solution.to_dict()["explanation"]["evidence"][0]["why"]
            assert set(record) == {"sentence", "differs_at", "failing", "found", "marked"}


def test_sentences_from_facts_alone():
    from solver.induction.facts import ImageFacts, ShapeFacts
    from solver.induction.rules import Literal, Rule
    from solver.explaining.why_rules import image_why

    four = Literal(Family.COUNT, "straight_lines", comparison=Comparison.EQ, value=4)
    convex = Literal(Family.ATTRIBUTE, "convex")
    facts = ImageFacts((ShapeFacts("s", (), {"convex": 1}, {"straight_lines": (3,)}),))
    why = image_why(Rule((four, convex)), {four: False, convex: True}, facts, False, "B")
    assert why.sentence == "It has 3 straight lines; the rule needs exactly 4."
    assert [f.to_dict() for f in why.failing] == [{"literal": four.asp, "name": "straight_lines",
                                                   "measured": [[3]], "needs": "exactly 4"}]
    seq = Literal(Family.SEQUENCE, "line_normal_1.000-0.500")  # no program known: the literal is named
    assert image_why(Rule((seq,)), {seq: False}, facts, False, "B").failing[0].literal == seq.asp


def test_a_rule_about_one_shape_ignores_the_other_and_one_about_both_marks_an_extra_shape():
    from dsl.syntax import parse_shape
    from dsl.types import ImageProgram, StrokeType
    from solver.induction.facts import image_facts, shape_text
    from solver.induction.rules import Literal, Rule
    from solver.explaining.why_rules import image_why

    ruled = parse_shape(["line_normal_1.000-0.500", "line_zigzag_1.000-0.750"])
    other = parse_shape(["arc_normal_0.500_0.750-0.500"])
    changed = ruled.with_strokes(StrokeType.NORMAL)
    facts = image_facts(ImageProgram((other, changed)))
    one = Literal(Family.SEQUENCE, shape_text(canonical_shape(ruled)))
    why = image_why(Rule((one,)), {one: False}, facts, False, "B")
    assert why.marked == ((1, 1),) and "shapes" not in why.sentence
    assert [(d.action, d.fields, d.image_shape) for d in why.differs_at] in ([(2, ("stroke",), 1)],
                                                                             [(1, ("stroke",), 1)])
    both = Literal(Family.IMAGE_SEQUENCE, shape_text(canonical_shape(ruled)))
    alone = image_why(Rule((both,)), {both: False}, facts, False, "B")
    assert (0, None) in alone.marked and alone.sentence.startswith("It has 2 shapes where the rule has 1")


def test_an_extra_arc_drawn_over_another_says_which():
    from dsl.align import Tolerance
    from dsl.syntax import parse_shape
    from solver.explaining.why_sequence import best_matches, differences, drawn_over, _where

    # a circle of four quarter arcs, and one walked on past its start: the fifth arc lies over the first
    rule = parse_shape([f"arc_{s}_0.500_0.625-0.500" for s in ("normal", "square", "zigzag", "circle")])
    walked = parse_shape([f"arc_{s}_0.500_0.625-0.500" for s in ("normal", "square", "zigzag", "circle", "triangle")])
    assert [drawn_over(walked, i) for i in range(5)] == [4, None, None, None, 0]
    assert all(drawn_over(rule, i) is None for i in range(4))
    match, = best_matches((rule,), (walked,), Tolerance())
    extra, = differences(match, False, walked)
    assert extra.fields == ("extra",) and extra.over == 1 and extra.to_dict()["over"] == 1
    assert "a triangle-stamped arc" in _where(extra) and "drawn again over action 1" in _where(extra)
    tail = parse_shape([f"arc_{s}_0.500_0.625-0.500" for s in ("normal", "square", "zigzag", "circle")]
                       + ["line_triangle_1.000-0.500"])  # a line beyond the circle is drawn over nothing
    extra, = differences(best_matches((rule,), (tail,), Tolerance())[0], False, tail)
    assert extra.over is None and "drawn again" not in _where(extra)
