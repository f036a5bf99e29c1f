"""Explanations: the rule in ASP and in plain English, the facts of each image that satisfy or violate
it, and the optimal rules that tied with it."""

from __future__ import annotations

from dataclasses import dataclass

from solver.facts import TOLERANCES, ImageFacts, ProblemFacts, Role
from solver.induce import Induction, InducedRule, Outcome
from solver.rules import Comparison, Family, Literal, Rule
from solver.why import Why
from solver.why_rules import image_why
from solver.words import article, attribute_phrase, count_noun, number, words

ROLE_TEXT = {Role.A.value: "A", Role.B.value: "B", Role.QUERY.value: "query"}


def literal_english(literal: Literal) -> str:
    """The literal as a verb phrase about one image: 'has eight straight lines'."""
    if literal.family is Family.SEQUENCE:
        verb = "has no shape drawn" if literal.negated else "has a shape drawn"
        return f"{verb} by the stroke sequence [{literal.name}]"
    if literal.family is Family.IMAGE_SEQUENCE:
        verb = "is not drawn" if literal.negated else "is drawn"
        return f"{verb} by exactly the stroke sequences [{literal.name}]"
    if literal.family.is_near:
        length_tol, angle_tol, ignore_strokes = TOLERANCES[literal.tolerance]
        within = f"lengths within {length_tol:g}, angles within {angle_tol:g} degrees"
        within += ", any stroke types" if ignore_strokes else ""
        what = ("is drawn by the stroke sequences" if literal.family.is_image
                else "has a shape drawn by the stroke sequence")
        return f"{'not: ' if literal.negated else ''}{what} [{literal.name}] ({within})"
    if literal.family is Family.CATEGORIES:
        shapes = " and ".join(f"{article(words(n))} ({n})" for n in literal.names)
        return f"does not show {shapes}" if literal.negated else f"shows {shapes}"
    if literal.family is Family.CATEGORY:
        shape = f"{article(words(literal.name))} ({literal.name})"
        return f"does not contain {shape}" if literal.negated else f"contains {shape}"
    if literal.family is Family.ATTRIBUTE:
        return attribute_phrase(literal.name, literal.negated)
    noun = count_noun(literal.name, literal.value)
    if literal.comparison is Comparison.EQ:
        amount = f"{'does not have exactly' if literal.negated else 'has'} {number(literal.value)}"
    elif literal.comparison is Comparison.GE:
        amount = f"has at least {number(literal.value)}"
    else:
        amount = f"has at most {number(literal.value)}"
    return f"{amount} {noun}"


def rule_english(rule: Rule, covered_a: int, covered_b: int, n_a: int, n_b: int) -> str:
    if not rule.literals:
        return "no rule separates A from B: every image is put in A"
    phrase = " and ".join(literal_english(lit) for lit in rule.literals)
    if covered_a == n_a and covered_b == 0:
        return f"every image in A {phrase}; no image in B does"
    return (f"an image is in A if it {phrase}; this holds for {covered_a} of the {n_a} images in A "
            f"and for {covered_b} of the {n_b} images in B")


def _value(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, tuple):
        return str(value[0]) if len(value) == 1 else f"{value[0]}..{value[-1]}"
    return str(value)


def _values(values: tuple) -> str:
    shown = [_value(v) for v in values]
    return shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ") in its shapes"


def literal_fact(literal: Literal, facts: ImageFacts) -> str:
    """The image's own facts that decide the literal."""
    if literal.family.is_near:
        return "shape programs " + " | ".join(f"[{s}]" for s in facts.sequences)
    if literal.family.is_sequence:
        if literal.name in facts.sequences or literal.name == facts.image_sequence:
            return "has that program"
        return "shape programs " + " | ".join(f"[{s}]" for s in facts.sequences)
    if literal.family in (Family.CATEGORY, Family.CATEGORIES):
        shapes = ", ".join("/".join(s.categories) or "not a library shape" for s in facts.shapes)
        return f"shapes: {shapes}"
    if literal.family is Family.ATTRIBUTE:
        return f"{literal.name} = {_values(facts.attribute_values(literal.name))}"
    return f"{literal.name} = {_values(facts.count_values(literal.name))}"


@dataclass(frozen=True, slots=True)
class ImageEvidence:
    image: str  # ASP name: a(0), b(3), q(1)
    role: str  # A, B or query
    in_a: bool  # what the rule says
    correct: bool | None  # None for queries
    literals: tuple[tuple[str, bool, str], ...]  # (literal ASP, holds, the image's fact)
    why: Why | None = None  # one sentence and its evidence (solver.why)


@dataclass(frozen=True, slots=True)
class Explanation:
    outcome: str
    asp: str
    english: str
    errors: int
    length: int
    evidence: tuple[ImageEvidence, ...]
    alternatives: tuple[tuple[str, str], ...]  # tied optimal rules (or, by posterior, the other fitting rules)
    seconds: float

    def to_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "asp": self.asp,
            "english": self.english,
            "errors": self.errors,
            "length": self.length,
            "evidence": [
                {"image": e.image, "role": e.role, "in_a": e.in_a, "correct": e.correct,
                 "literals": [{"literal": a, "holds": h, "fact": f} for a, h, f in e.literals],
                 **({"why": e.why.to_dict()} if e.why is not None else {})}
                for e in self.evidence
            ],
            "alternatives": [{"asp": a, "english": t} for a, t in self.alternatives],
            "seconds": round(self.seconds, 4),
        }

    def to_text(self) -> str:
        lines = [f"rule ({self.outcome}, {self.errors} context errors):", f"  {self.english}", f"  {self.asp}"]
        for e in self.evidence:
            mark = "" if e.correct is None else ("  ok" if e.correct else "  WRONG")
            facts = e.why.sentence if e.why is not None else "; ".join(
                f"{'holds' if h else 'fails'}: {f}" for _, h, f in dict.fromkeys(e.literals))
            lines.append(f"  {e.image:5} {e.role:5} -> {'A' if e.in_a else 'B'}{mark}  {facts}")
        if self.alternatives:
            lines.append(f"tied alternatives ({len(self.alternatives)}):")
            lines += [f"  {english}\n    {asp}" for asp, english in self.alternatives]
        return "\n".join(lines)


def _evidence(induced: InducedRule, facts: ProblemFacts) -> tuple[ImageEvidence, ...]:
    items = []
    for role, index, image_facts in facts.images():
        key = (role.value, index)
        in_a = key in induced.covered
        correct = None if role is Role.QUERY else in_a == (role is Role.A)
        true_literals = induced.evidence.get(key, frozenset())
        literals = tuple((lit.asp, lit in true_literals, literal_fact(lit, image_facts))
                         for lit in induced.rule.literals)
        holds = {lit: lit in true_literals for lit in induced.rule.literals}
        why = image_why(induced.rule, holds, image_facts, in_a, ROLE_TEXT[role.value])
        items.append(ImageEvidence(f"{role.value}({index})", ROLE_TEXT[role.value], in_a, correct, literals, why))
    return tuple(items)


def explain(induction: Induction, facts: ProblemFacts, max_alternatives: int = 20) -> Explanation:
    if not induction.rules:
        return Explanation(Outcome.NO_RULE.value, "", "no rule was found within the time limit", 0, 0, (),
                           (), induction.seconds)
    best = induction.rules[0]
    n_a, n_b = len(facts.context_a), len(facts.context_b)
    covered_a = sum((Role.A.value, i) in best.covered for i in range(n_a))
    covered_b = sum((Role.B.value, i) in best.covered for i in range(n_b))

    def english(induced: InducedRule) -> str:
        ca = sum((Role.A.value, i) in induced.covered for i in range(n_a))
        cb = sum((Role.B.value, i) in induced.covered for i in range(n_b))
        return rule_english(induced.rule, ca, cb, n_a, n_b)

    weights = induction.weights or (None,) * len(induction.rules)
    alternatives = tuple((r.rule.asp, english(r) + ("" if w is None else f" (posterior {w:.3f})"))
                         for r, w in zip(induction.rules[1:1 + max_alternatives], weights[1:]))
    return Explanation(
        outcome=induction.outcome.value,
        asp=best.rule.asp,
        english=rule_english(best.rule, covered_a, covered_b, n_a, n_b),
        errors=best.rule.errors,
        length=best.rule.length,
        evidence=_evidence(best, facts),
        alternatives=alternatives,
        seconds=induction.seconds,
    )
