"""Explanations of problems given as facts: the rule in ASP and in English, for each image whether it
satisfies the rule and its facts that decide each literal, and the optimal rules that tied.

The same `solver.explain.Explanation` as for LOGO problems, so the text and HTML reports read alike.
"""

from __future__ import annotations

from solver.explain import ROLE_TEXT, Explanation, ImageEvidence
from solver.facts import Role
from solver.facts_in import FactImage, FactsProblem
from solver.facts_lang import NOT, FactLiteral, FactRule
from solver.induce import Induction, InducedRule, Outcome

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


def _english(induced: InducedRule, n_a: int, n_b: int) -> str:
    covered_a = sum((Role.A.value, i) in induced.covered for i in range(n_a))
    covered_b = sum((Role.B.value, i) in induced.covered for i in range(n_b))
    return rule_english(induced.rule, covered_a, covered_b, n_a, n_b)


def _evidence(induced: InducedRule, problem: FactsProblem) -> tuple[ImageEvidence, ...]:
    items = []
    for role, index, image in problem.images():
        key = (role.value, index)
        in_a = key in induced.covered
        correct = None if role is Role.QUERY else in_a == (role is Role.A)
        true_literals = induced.evidence.get(key, frozenset())
        literals = tuple((lit.asp, lit in true_literals, literal_facts(lit, image)) for lit in induced.rule.literals)
        items.append(ImageEvidence(f"{role.value}({index})", ROLE_TEXT[role.value], in_a, correct, literals))
    return tuple(items)


def explain_facts(induction: Induction, problem: FactsProblem, max_alternatives: int = 20) -> Explanation:
    if not induction.rules:
        return Explanation(Outcome.NO_RULE.value, "", "no rule was found within the time limit", 0, 0, (), (),
                           induction.seconds)
    best = induction.rules[0]
    n_a, n_b = len(problem.context_a), len(problem.context_b)
    alternatives = tuple((r.rule.asp, _english(r, n_a, n_b)) for r in induction.rules[1:1 + max_alternatives])
    return Explanation(
        outcome=induction.outcome.value,
        asp=best.rule.asp,
        english=_english(best, n_a, n_b),
        errors=best.rule.errors,
        length=best.rule.length,
        evidence=_evidence(best, problem),
        alternatives=alternatives,
        seconds=induction.seconds,
    )
