"""Explanations: the rule in ASP and in plain English (`solver.explaining.english`), the facts of each image that
satisfy or violate it, and the rules that tied with it, each with its score (its posterior under the size
principle, or an equal share of the vote); alternatives that read the same in English are said once.

`Explanation` (with `ImageEvidence` per image and `Alternative` per tied rule) is the record both paths fill, and
`explain_rules` builds it from an induction; LOGO problems (`explain`) and problems given as facts
(`solver.facts_in.explain`) supply only their English, the facts that decide a literal and the `why`.
"""

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

    def to_dict(self) -> dict:
        return {"image": self.image, "role": self.role, "in_a": self.in_a, "correct": self.correct,
                "literals": [{"literal": a, "holds": h, "fact": f} for a, h, f in self.literals],
                **({"why": self.why.to_dict()} if self.why is not None else {})}


@dataclass(frozen=True, slots=True)
class Alternative:
    """A rule that tied with the chosen one: its ASP, its English and its score (posterior or vote share)."""

    asp: str
    english: str
    score: float

    def to_dict(self) -> dict:
        return {"asp": self.asp, "english": self.english, "score": round(self.score, 4)}


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
            "evidence": [e.to_dict() for e in self.evidence],
            "alternatives": [a.to_dict() for a in self.alternatives],
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


def _said(induction: Induction, english: Callable, weights, says: Callable | None, max_alternatives: int) -> list:
    """[ASP, English, score] of the chosen rule, then of up to `max_alternatives` others: the rules that say the same
    (`says(rule, English)` equal; None: no two rules) are one entry with their scores added."""
    said: dict = {}
    for position, (induced, weight) in enumerate(zip(induction.rules, weights)):
        text = english(induced)
        key = position if says is None else says(induced.rule, text)
        if key in said:  # e.g. a count and the attribute it states: one rule in two notations
            said[key][2] += weight
        elif len(said) <= max_alternatives:
            said[key] = [induced.rule.asp, text, weight]
    return list(said.values())


def explain_rules(induction: Induction, problem, rule_english: Callable, fact_of: Callable, why_of: Callable, *,
                  says: Callable | None = None, literals: Callable | None = None,
                  max_alternatives: int = 20) -> Explanation:
    """The explanation of the induction's first rule over `problem` (its `context_a`, `context_b` and `images()`),
    the other rules its alternatives, each scored by its share of the vote (`solver.induction.vote`: its posterior
    weight, or an equal share). What differs between LOGO problems and problems given as facts:
    `rule_english(rule, covered_a, covered_b, n_a, n_b)`, the image's fact that decides a literal
    (`fact_of(literal, image)`), the `why` (`why_of(rule, holds, image, in_a, role)`), what a rule says (`says`,
    see `_said`) and the rule's literals in ASP and English with the names they use (`literals(rule)`)."""
    if not induction.rules:
        return no_rule(induction)
    best = induction.rules[0]
    n_a, n_b = len(problem.context_a), len(problem.context_b)

    def english(induced: InducedRule) -> str:
        return rule_english(induced.rule, *covered(induced, n_a, n_b), n_a, n_b)

    weights = induction.weights or (1.0 / len(induction.rules),) * len(induction.rules)
    (_, text, score), *others = _said(induction, english, weights, says, max_alternatives)
    return Explanation(
        outcome=induction.outcome.value,
        asp=best.rule.asp,
        english=text,
        errors=best.rule.errors,
        length=best.rule.length,
        evidence=image_evidence(best, problem.images(), fact_of, why_of),
        alternatives=tuple(sorted((Alternative(*entry) for entry in others), key=lambda a: -a.score)),
        seconds=induction.seconds,
        literals=literals(best.rule) if literals is not None else (),
        score=score,
    )


def _says(rule, text: str) -> tuple:
    """What a LOGO rule says: its literals' phrases and its English after the first sentence."""
    return frozenset(literal_phrase(lit) for lit in rule.literals), text.split(". ", 1)[-1]


def _literals(rule) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    return tuple((lit.asp, literal_phrase(lit), _named(lit)) for lit in rule.literals)


def explain(induction: Induction, facts: ProblemFacts, max_alternatives: int = 20) -> Explanation:
    """The explanation of a LOGO problem's induction; alternatives that say the same are one."""
    return explain_rules(induction, facts, rule_english, literal_fact, image_why, says=_says, literals=_literals,
                         max_alternatives=max_alternatives)
