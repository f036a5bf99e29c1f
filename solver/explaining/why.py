"""Why an image is (or is not) in A, in one sentence, with the evidence a reader can check on the image.

Both paths fill the same record, clause by clause (`rule_why`, one `Part` per literal): LOGO problems from
the rule's literals and the image's facts (`solver.explaining.why_rules.image_why`), problems given as facts from the
rule's literals matched on the image's facts (`solver.facts_in.why.image_why`).

    Why.sentence     one sentence for the report
    Why.differs_at   stroke-sequence rules: per differing action, its 1-based index in the rule's tracing,
                     the rule's action and the image's in words
    Why.failing      the literals that fail, each with the image's measured value and what the rule needs
    Why.found        category rules: the library shapes found in the image (display words); facts: the
                     image's facts that satisfy the rule
    Why.marked       the parts of the image's program to draw in the second colour: (shape, action), or
                     (shape, None) for a whole shape (the look-alike of a category rule)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Difference:
    """One action where the image's program departs from the rule's."""

    action: int  # 1-based, in the rule's tracing (for an extra action: the rule's action it follows)
    rule: str  # the rule's action in words ("nothing" for an extra action)
    image: str  # the image's action in words ("nothing" for a missing one)
    shape: int | None = None  # 1-based shape of the rule's program, for two-shape rules
    fields: tuple[str, ...] = ()  # what differs: dsl.align.FIELDS, or "missing" / "extra"
    image_shape: int = 0  # 0-based shape of the image's program
    image_action: int | None = None  # 0-based action of that shape (None: the image lacks the action)
    over: int | None = None  # an extra action drawn again over another: that one, 1-based in the rule's tracing

    def to_dict(self) -> dict:
        record = {"action": self.action, "rule": self.rule, "image": self.image, "fields": list(self.fields)}
        if self.shape is not None:
            record["shape"] = self.shape
        if self.over is not None:
            record["over"] = self.over
        return record


@dataclass(frozen=True, slots=True)
class Failing:
    """A literal of the rule that fails on the image."""

    literal: str  # as the rule writes it (ASP)
    name: str  # the attribute, count, category or predicate it is about
    measured: object  # the image's value (JSON-serialisable): per shape, or a fact's text
    needs: str  # what the rule needs, in words

    def to_dict(self) -> dict:
        return {"literal": self.literal, "name": self.name, "measured": self.measured, "needs": self.needs}


@dataclass(frozen=True, slots=True)
class Part:
    """The evidence of one literal for one image (a clause of the sentence)."""

    text: str
    differs_at: tuple[Difference, ...] = ()
    failing: Failing | None = None
    found: tuple[str, ...] = ()
    marked: tuple[tuple[int, int | None], ...] = ()


@dataclass(frozen=True, slots=True)
class Why:
    sentence: str
    differs_at: tuple[Difference, ...] = ()
    failing: tuple[Failing, ...] = ()
    found: tuple[str, ...] = ()
    marked: tuple[tuple[int, int | None], ...] = ()

    def to_dict(self) -> dict:
        return {
            "sentence": self.sentence,
            "differs_at": [d.to_dict() for d in self.differs_at],
            "failing": [f.to_dict() for f in self.failing],
            "found": list(self.found),
            "marked": [list(m) for m in self.marked],
        }


def sentence(clauses: Sequence[str], suffix: str = "") -> str:
    """Clauses joined into one sentence: capitalised, ended with a full stop."""
    text = "; ".join(c for c in clauses if c) + suffix
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def combine(parts: Sequence[Part], prefix: str = "", suffix: str = "") -> Why:
    clauses = [p.text for p in parts]
    if prefix and clauses:
        clauses[0] = f"{prefix}{clauses[0]}"
    return Why(
        sentence(clauses or [prefix.rstrip(": ")], suffix),
        tuple(d for p in parts for d in p.differs_at),
        tuple(p.failing for p in parts if p.failing is not None),
        tuple(dict.fromkeys(f for p in parts for f in p.found)),
        tuple(dict.fromkeys(m for p in parts for m in p.marked)),
    )


def rule_why(rule, holds: Mapping, image, in_a: bool, role: str, part_of: Callable) -> Why:
    """One image's `why` under `rule` (None: no rule found): `holds` says which literals hold of it, `in_a`
    what the rule says, `role` "A", "B" or "query"; `part_of(literal, holds, image)` makes one clause. An
    image in A is explained by the literals that hold, an image outside A by those that fail."""
    if rule is None or not rule.literals:
        return Why("No rule separates A from B: every image is put in A." if rule else "No rule was found.")
    if in_a:
        parts = [part_of(lit, True, image) for lit in rule.literals]
        if role == "B":
            return combine(parts, "nothing in the rule separates it from A: ", " (the rule misclassifies it)")
        return combine(parts)
    parts = [part_of(lit, False, image) for lit in rule.literals if not holds.get(lit, False)]
    suffix = " (the rule misclassifies it)" if role == "A" else ""
    return combine(parts, "", suffix)
