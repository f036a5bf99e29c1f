"""Voting, explanations, the time limit and rule-match scoring."""

from __future__ import annotations

import random

from solver.induction.vote import classify
from solver.explaining.english import literal_phrase
from solver.explaining.explanation import explain
from solver.induction.facts import ImageFacts, ProblemFacts, ShapeFacts
from solver.induction.optimal import Induction, InducedRule, Outcome, induce
from solver.induction.rules import Comparison, Family, Literal, Rule
from solver.app.scoring import concept_of, rule_matches


def readings(counts: dict) -> dict[str, tuple[int, ...]]:
    return {name: value if isinstance(value, tuple) else (value,) for name, value in counts.items()}


def image(sequence="s", categories=(), attributes=None, counts=None) -> ImageFacts:
    return ImageFacts((ShapeFacts(sequence, tuple(categories), dict(attributes or {}), readings(counts or {})),))


def induced(literals, covered) -> InducedRule:
    return InducedRule(Rule(tuple(literals)), (0, len(literals), 0), frozenset(covered), {})


SEQ = Literal(Family.SEQUENCE, "line_normal_1.000-0.500")
CATEGORY = Literal(Family.CATEGORY, "square")
EIGHT_LINES = Literal(Family.COUNT, "straight_lines", comparison=Comparison.EQ, value=8)


def test_majority_vote_and_confidence():
    rules = (induced([CATEGORY], {("q", 0)}), induced([SEQ], {("q", 0)}), induced([EIGHT_LINES], {("q", 1)}))
    votes = classify(Induction(Outcome.OPTIMAL, rules, (0, 1, 0), 0.0), [("q", 0), ("q", 1)])
    assert [v.in_a for v in votes] == [True, False]
    assert [round(v.confidence, 3) for v in votes] == [0.667, 0.667]


def test_split_vote_is_settled_by_the_most_specific_rule():
    rules = (induced([CATEGORY], {("q", 1)}), induced([SEQ], set()))
    votes = classify(Induction(Outcome.OPTIMAL, rules, (0, 1, 0), 0.0), [("q", 1)])
    assert votes[0].in_a is False and votes[0].confidence == 0.5


def test_no_rule_gives_zero_confidence():
    votes = classify(Induction(Outcome.NO_RULE, (), (), 1.0), [("q", 0)])
    assert votes[0].in_a is False and votes[0].confidence == 0.0


def test_english_of_a_count_rule_with_evidence():
    a = [image(f"a{i}", counts={"straight_lines": 8}) for i in range(6)]
    b = [image(f"b{i}", counts={"straight_lines": 7 + 2 * (i % 2)}) for i in range(6)]
    facts = ProblemFacts(tuple(a), tuple(b), (image("q", counts={"straight_lines": 8}),))
    explanation = explain(induce(facts, encodings=("rule.lp", "count.lp")), facts)
    assert explanation.english == ("An image is in A if it has eight straight lines. This holds for all 6 images "
                                   "of A and none of the 6 images of B.")
    assert explanation.asp == "concept(I) :- image(I), count(I,straight_lines,8)."
    b1 = next(e for e in explanation.evidence if e.image == "b(1)")
    assert b1.literals == (("count(straight_lines,eq,8)", False, "straight_lines = 9"),)
    assert b1.correct is True and b1.in_a is False
    assert explanation.evidence[-1].role == "query" and explanation.evidence[-1].in_a


def test_english_phrases():
    assert literal_phrase(Literal(Family.ATTRIBUTE, "convex", negated=True)) == "is not convex"
    assert literal_phrase(Literal(Family.ATTRIBUTE, "exist_triangle")) == "contains a triangle"
    assert literal_phrase(Literal(Family.COUNT, "arcs", comparison=Comparison.GE, value=1)) == "has a curve"
    assert literal_phrase(CATEGORY) == "shows a square"


def test_time_limit_gives_a_clear_outcome():
    rng = random.Random(1)

    def noisy(i: int) -> ImageFacts:
        return image(f"s{i}", attributes={f"x{k}": rng.randint(0, 1) for k in range(40)},
                     counts={f"c{k}": rng.randint(0, 9) for k in range(10)})

    facts = ProblemFacts(tuple(noisy(i) for i in range(6)), tuple(noisy(i + 6) for i in range(6)), ())
    hurried = induce(facts, time_limit=0.0, max_literals=3)
    assert hurried.outcome in (Outcome.TIME_LIMIT, Outcome.NO_RULE)
    assert explain(hurried, facts).outcome == hurried.outcome.value
    assert induce(facts, time_limit=10.0).outcome is Outcome.OPTIMAL


def test_concept_of_problem_names():
    assert concept_of("ff_nact2_5_0600") == ("ff", ())
    assert concept_of("bd_asymmetric_dagger-open_line_s_new1_0000") == ("bd", ("asymmetric_dagger", "open_line_s_new1"))
    assert concept_of("hd_has_curve-has_straight_line_0300") == ("hd", ("has_curve", "has_straight_line"))


def test_rule_match():
    assert rule_matches("ff_nact4_0000", Rule((SEQ,)))
    assert not rule_matches("ff_nact4_0000", Rule((CATEGORY,)))
    assert rule_matches("bd_square_0000", Rule((CATEGORY,)))
    assert not rule_matches("bd_square-circle_0000", Rule((CATEGORY,)))
    assert rule_matches("hd_has_eight_straight_lines_0000", Rule((EIGHT_LINES,)))
    assert not rule_matches("hd_has_seven_straight_lines_0000", Rule((EIGHT_LINES,)))
    arcs = Literal(Family.COUNT, "arcs", comparison=Comparison.GE, value=1)
    assert rule_matches("hd_has_curve-has_eight_straight_lines_0000", Rule((arcs, EIGHT_LINES)))
    both = Rule((Literal(Family.ATTRIBUTE, "symmetric"), Literal(Family.ATTRIBUTE, "self_transposed")))
    assert rule_matches("hd_symmetric_transposed_0000", both)
    assert not rule_matches("hd_convex_0000", Rule((Literal(Family.ATTRIBUTE, "convex", negated=True),)))
    assert not rule_matches("hd_convex_0000", None)


def test_rule_match_of_equivalent_forms():
    whole = Rule((Literal(Family.ATTRIBUTE, "symmetric_transposed"),))
    assert rule_matches("hd_symmetric-self_transposed_0000", whole)
    assert not rule_matches("hd_symmetric_0000", whole)
    pair = Rule((Literal(Family.CATEGORIES, "circle", other="square"),))
    assert rule_matches("bd_square-circle_0000", pair)
    assert rule_matches("ff_nact3_3_0000", Rule((Literal(Family.IMAGE_SEQUENCE, "a | b"),)))
    two_parts = Rule((Literal(Family.COUNT, "parts", comparison=Comparison.EQ, value=2),))
    assert rule_matches("hd_has_two_parts_0000", two_parts)


def test_a_rule_in_two_notations_is_said_once_with_both_scores():
    """has_curve and 'at least one arc' are one concept: one sentence, the scores summed."""
    facts = ProblemFacts(tuple(image(f"a{i}") for i in range(6)), tuple(image(f"b{i}") for i in range(6)), ())
    in_a = {("a", i) for i in range(6)}
    arcs = Literal(Family.COUNT, "arcs", comparison=Comparison.GE, value=1)
    rules = (induced([Literal(Family.ATTRIBUTE, "has_curve")], in_a), induced([arcs], in_a),
             induced([Literal(Family.ATTRIBUTE, "convex")], in_a))
    explanation = explain(Induction(Outcome.OPTIMAL, rules, (0, 1, 0), 0.0, weights=(0.5, 0.3, 0.2)), facts)
    assert explanation.english.startswith("An image is in A if it has a curve.")
    assert round(explanation.score, 3) == 0.8
    assert [(a.english.split(".")[0], round(a.score, 3)) for a in explanation.alternatives] == [
        ("An image is in A if it is convex", 0.2)]
