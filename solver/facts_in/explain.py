"""Explanations of problems given as facts: the rule in ASP and in English, for each image whether it
satisfies the rule, its facts that decide each literal and its `why` (`solver.facts_in.why`), and the
optimal rules that tied.

The same `solver.explaining.explanation.Explanation` as for LOGO problems, built by the same
`solver.explaining.explanation.explain_rules`, so the text and HTML reports read alike; this module supplies what
differs: the rule in English, the facts that decide a literal and (`solver.facts_in.why`) the `why`.
"""

from __future__ import annotations

from solver.explaining import Explanation, explain_rules
from solver.facts_in.lang import NOT, FactLiteral, FactRule
from solver.facts_in.problem import FactImage, FactsProblem
from solver.facts_in.why import image_why
from solver.induction import Induction

MAX_FACTS_SHOWN = 6


def rule_english(rule: FactRule, covered_a: int, covered_b: int, n_a: int, n_b: int) -> str:
    if not rule.literals:
        return "no rule separates A from B: every image is put in A"
    phrase = "; and ".join(lit.english() for lit in rule.literals)
    if covered_a == n_a and covered_b == 0:
        return f"every image in A {phrase}; no image in B does"
    return (f"an image is in A if it {phrase}; this holds for {covered_a} of the {n_a} images in A "
            f"and for {covered_b} of the {n_b} images in B")


def _matches(fact, atom) -> bool:
    name, args = atom
    name = name.removeprefix(NOT)
    return (fact.name == name and len(fact.arguments) == len(args)
            and all(not isinstance(a, str) or str(v) == a for v, a in zip(fact.arguments, args)))


def literal_facts(literal: FactLiteral, image: FactImage) -> str:
    """The image's facts that match an atom of the literal (its predicates, with its constants)."""
    shown = [f.text for f in image.facts if any(_matches(f, atom) for atom in literal.atoms)]
    if not shown:
        return "no fact like " + ", ".join(f"{name.removeprefix(NOT)}/{len(args)}" for name, args in literal.atoms)
    more = len(shown) - MAX_FACTS_SHOWN
    return ", ".join(shown[:MAX_FACTS_SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def explain_facts(induction: Induction, problem: FactsProblem, max_alternatives: int = 20) -> Explanation:
    """The explanation of the first optimal rule; the others are its alternatives, each (and the rule)
    scored by its share of the vote, as the queries are labelled (`solver.induction.vote`)."""
    return explain_rules(induction, problem, rule_english, literal_facts, image_why, max_alternatives=max_alternatives)
