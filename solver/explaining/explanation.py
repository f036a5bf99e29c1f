"""Explanations: the rule in ASP and in plain English (`solver.explaining.english`), the facts of each image that
satisfy or violate it, and the rules that tied with it, each with its score (its posterior under the size
principle, or an equal share of the vote); alternatives that read the same in English are said once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solver.explaining.english import literal_phrase, rule_english, shape_words
from solver.induction import ImageFacts, ProblemFacts, Role
from solver.induction import Induction, InducedRule, Outcome
from solver.induction import Family, Literal
from solver.settings import UNDECIDED
from solver.explaining.why import Why
from solver.explaining.why_rules import image_why

ROLE_TEXT = {Role.A.value: "A", Role.B.value: "B", Role.QUERY.value: "query"}


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
    why: Why | None = None  # one sentence and its evidence (solver.explaining.why)


@dataclass(frozen=True, slots=True)
class Alternative:
    """A rule that tied with the chosen one: its ASP, its English and its score (posterior or vote share)."""

    asp: str
    english: str
    score: float


@dataclass(frozen=True, slots=True)
class Explanation:
    outcome: str
    asp: str
    english: str
    errors: int
    length: int
    evidence: tuple[ImageEvidence, ...]
    alternatives: tuple[Alternative, ...]  # tied rules (or, by posterior, the other fitting rules)
    seconds: float
    literals: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (ASP, English, identifiers named)
    score: float = 1.0  # the chosen rule's posterior, or its share of the vote

    def to_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "asp": self.asp,
            "english": self.english,
            "score": round(self.score, 4),
            "literals": [{"asp": a, "english": e, "names": list(n)} for a, e, n in self.literals],
            "errors": self.errors,
            "length": self.length,
            "evidence": [
                {"image": e.image, "role": e.role, "in_a": e.in_a, "correct": e.correct,
                 "literals": [{"literal": a, "holds": h, "fact": f} for a, h, f in e.literals],
                 **({"why": e.why.to_dict()} if e.why is not None else {})}
                for e in self.evidence
            ],
            "alternatives": [{"asp": a.asp, "english": a.english, "score": round(a.score, 4)}
                             for a in self.alternatives],
            "seconds": round(self.seconds, 4),
        }

    def to_text(self) -> str:
        lines = [f"rule ({self.outcome}, {self.errors} context errors, score {self.score:.3f}):",
                 f"  {self.english}", f"  {self.asp}"]
        named = dict.fromkeys(f"{shape_words(n)} = {n}" for _, _, names in self.literals for n in names)
        if named:
            lines.append(f"  shapes named: {'; '.join(named)}")
        for e in self.evidence:
            mark = "" if e.correct is None else ("  ok" if e.correct else "  WRONG")
            facts = e.why.sentence if e.why is not None else "; ".join(
                f"{'holds' if h else 'fails'}: {f}" for _, h, f in dict.fromkeys(e.literals))
            lines.append(f"  {e.image:5} {e.role:5} -> {'A' if e.in_a else 'B'}{mark}  {facts}")
        if self.alternatives and self.score < UNDECIDED:
            lines.append(f"the evidence does not decide: this rule scores {self.score:.3f}, the alternatives below "
                         f"{sum(a.score for a in self.alternatives):.3f} together")
        if self.alternatives:
            lines.append(f"alternatives ({len(self.alternatives)}; score = posterior, or share of the vote):")
            lines += [f"  {a.score:.3f}  {a.english}\n         {a.asp}" for a in self.alternatives]
        return "\n".join(lines)


def image_evidence(induced: InducedRule, images, fact_of: Callable, why_of: Callable) -> tuple[ImageEvidence, ...]:
    """The evidence of every image (`images`: (role, index, image) in solving order) under the induced
    rule: what the rule says, whether that is right, per literal whether it holds and the image's fact
    that decides it (`fact_of(literal, image)`), and the `why` (`why_of(rule, holds, image, in_a, role)`)."""
    items = []
    for role, index, image in images:
        key = (role.value, index)
        in_a = key in induced.covered
        correct = None if role is Role.QUERY else in_a == (role is Role.A)
        true_literals = induced.evidence.get(key, frozenset())
        holds = {lit: lit in true_literals for lit in induced.rule.literals}
        literals = tuple((lit.asp, holds[lit], fact_of(lit, image)) for lit in induced.rule.literals)
        why = why_of(induced.rule, holds, image, in_a, ROLE_TEXT[role.value])
        items.append(ImageEvidence(f"{role.value}({index})", ROLE_TEXT[role.value], in_a, correct, literals, why))
    return tuple(items)


def covered(induced: InducedRule, n_a: int, n_b: int) -> tuple[int, int]:
    """How many context images of A and of B the rule puts in A."""
    return (sum((Role.A.value, i) in induced.covered for i in range(n_a)),
            sum((Role.B.value, i) in induced.covered for i in range(n_b)))


def no_rule(induction: Induction) -> Explanation:
    return Explanation(Outcome.NO_RULE.value, "", "no rule was found within the time limit", 0, 0, (), (),
                       induction.seconds, score=0.0)


def _named(literal: Literal) -> tuple[str, ...]:
    """The identifiers of the library shapes a category literal names (kept beside the English words)."""
    if literal.family in (Family.CATEGORY, Family.CATEGORIES):
        return literal.names
    return ()


def explain(induction: Induction, facts: ProblemFacts, max_alternatives: int = 20) -> Explanation:
    if not induction.rules:
        return no_rule(induction)
    best = induction.rules[0]
    n_a, n_b = len(facts.context_a), len(facts.context_b)

    def english(induced: InducedRule) -> str:
        return rule_english(induced.rule, *covered(induced, n_a, n_b), n_a, n_b)

    weights = induction.weights or (1.0 / len(induction.rules),) * len(induction.rules)
    said: dict[tuple, list] = {}  # what a rule says -> [ASP, English, score]: the same thing is said once
    for induced, weight in zip(induction.rules, weights):
        text = english(induced)
        key = (frozenset(literal_phrase(lit) for lit in induced.rule.literals), text.split(". ", 1)[-1])
        if key in said:  # e.g. a count and the attribute it states: one rule in two notations
            said[key][2] += weight
        elif len(said) <= max_alternatives:
            said[key] = [induced.rule.asp, text, weight]
    chosen, *others = said.values()
    alternatives = tuple(sorted((Alternative(*entry) for entry in others), key=lambda a: -a.score))
    return Explanation(
        outcome=induction.outcome.value,
        asp=best.rule.asp,
        english=chosen[1],
        errors=best.rule.errors,
        length=best.rule.length,
        evidence=image_evidence(best, facts.images(), literal_fact, image_why),
        alternatives=alternatives,
        seconds=induction.seconds,
        literals=tuple((lit.asp, literal_phrase(lit), _named(lit)) for lit in best.rule.literals),
        score=chosen[2],
    )
