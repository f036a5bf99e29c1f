"""Classification of the queries by the optimal rules: each rule votes, the majority labels the query.

Confidence is the share of optimal rules that agree with the label, each rule weighted by its posterior
when the induction has weights (`solver.induction.posterior`), equally otherwise. When the rules split evenly, the
most specific rule decides (the one with the most stroke-sequence literals: a shape's exact program,
strokes included, describes less than its category does), and the confidence is 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.induction.optimal import Induction, InducedRule


@dataclass(frozen=True, slots=True)
class Vote:
    in_a: bool
    confidence: float
    votes_for_a: int
    rules: int


def most_specific(rules: tuple[InducedRule, ...]) -> InducedRule:
    return max(rules, key=lambda r: r.rule.sequence_shapes)


def classify(induction: Induction, images: list[tuple[str, int]]) -> list[Vote]:
    """A vote per image (ASP name as (role, index)) by every rule of the induction."""
    rules = induction.rules
    votes = []
    for image in images:
        if not rules:
            votes.append(Vote(False, 0.0, 0, 0))
            continue
        weights = induction.weights or (1.0,) * len(rules)
        for_a = sum(w for w, induced in zip(weights, rules) if image in induced.covered)
        against = sum(weights) - for_a
        if abs(for_a - against) > 1e-9 * sum(weights):
            in_a = for_a > against
        else:
            in_a = image in most_specific(rules).covered
        confidence = max(for_a, against) / sum(weights)
        votes.append(Vote(in_a, confidence, sum(image in induced.covered for induced in rules), len(rules)))
    return votes
