"""The rule language on the Python side: literals and rules, read back from the encodings' terms.

A literal is one of (DESIGN.md, the rule language):
    categories(X, Y)           the image shows a shape of category X and another of category Y  (basic)
    category(S)                the image has a shape of library category S                      (basic)
    image_seq(K)               the image is drawn by exactly the shapes K (two-shape images)     (free-form)
    seq(K)                     the image has a shape drawn by the canonical program K            (free-form)
    image_near(K, T), seq_near(K, T)   the same within tolerance T (perception noise, see facts.TOLERANCES)
    attr(A), neg(attr(A))      a shape of the image has / no shape has attribute A               (abstract)
    count(C, Op, N)            a shape's count C compared with N (eq, ge, le)                    (abstract)
    neg(count(C, eq, N))       no shape of the image has count C = N
A rule is a conjunction of literals: an image is in A when every literal holds of it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Family(enum.Enum):
    """Which part of the rule language a literal comes from (ordered by preference among tied rules)."""

    CATEGORIES = "categories"
    CATEGORY = "category"
    IMAGE_SEQUENCE = "image_seq"
    SEQUENCE = "seq"
    IMAGE_SEQUENCE_NEAR = "image_near"
    SEQUENCE_NEAR = "seq_near"
    ATTRIBUTE = "attr"
    COUNT = "count"

    @property
    def is_sequence(self) -> bool:
        return self in (Family.IMAGE_SEQUENCE, Family.SEQUENCE, Family.IMAGE_SEQUENCE_NEAR, Family.SEQUENCE_NEAR)

    @property
    def is_near(self) -> bool:
        return self in (Family.IMAGE_SEQUENCE_NEAR, Family.SEQUENCE_NEAR)

    @property
    def is_image(self) -> bool:
        """Literals about both shapes of a two-shape image."""
        return self in (Family.IMAGE_SEQUENCE, Family.IMAGE_SEQUENCE_NEAR)


class Comparison(enum.Enum):
    EQ = "eq"
    GE = "ge"
    LE = "le"

    @property
    def symbol(self) -> str:
        return {"eq": "=", "ge": ">=", "le": "<="}[self.value]


class RuleTermError(ValueError):
    """A term from the encodings that is not a literal of the rule language."""


AT_LEAST_ONE = {  # attribute -> the count that is >= 1 exactly when the attribute holds (one literal says what
    # the other does: the English and the scoring read them as one)
    "has_straight_line": "straight_lines",
    "has_curve": "arcs",
    "has_angle": "corners",
    "has_acute_angle": "acute_angles",
    "has_obtuse_angle": "obtuse_angles",
    "has_line_crossing": "crossings",
}

NAMED = {Family.SEQUENCE.value, Family.IMAGE_SEQUENCE.value, Family.CATEGORY.value, Family.ATTRIBUTE.value}


@dataclass(frozen=True, slots=True)
class Literal:
    family: Family
    name: str  # program text, category name (the first of two), attribute name or count name
    negated: bool = False
    comparison: Comparison | None = None  # counts only
    value: int | None = None  # counts only
    other: str | None = None  # the second category of `categories`
    tolerance: str | None = None  # near stroke sequences only (facts.TOLERANCES)

    @staticmethod
    def from_term(term) -> "Literal":
        """From the Python form of a clingo term (see induce.python_value): ("seq", K), ("neg", ...) ..."""
        if isinstance(term, tuple) and term and term[0] == "neg" and len(term) == 2:
            inner = Literal.from_term(term[1])
            return Literal(inner.family, inner.name, True, inner.comparison, inner.value, inner.other,
                           inner.tolerance)
        if isinstance(term, tuple) and len(term) == 2 and term[0] in NAMED:
            return Literal(Family(term[0]), str(term[1]))
        if isinstance(term, tuple) and len(term) == 3 and term[0] in (Family.SEQUENCE_NEAR.value,
                                                                      Family.IMAGE_SEQUENCE_NEAR.value):
            return Literal(Family(term[0]), str(term[1]), tolerance=str(term[2]))
        if isinstance(term, tuple) and len(term) == 3 and term[0] == Family.CATEGORIES.value:
            return Literal(Family.CATEGORIES, str(term[1]), other=str(term[2]))
        if isinstance(term, tuple) and len(term) == 4 and term[0] == Family.COUNT.value:
            _, name, comparison, value = term
            return Literal(Family.COUNT, str(name), comparison=Comparison(comparison), value=int(value))
        raise RuleTermError(f"not a literal of the rule language: {term!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, self.other) if self.other is not None else (self.name,)

    @property
    def asp(self) -> str:
        """The literal as the encodings write it."""
        if self.family is Family.COUNT:
            text = f"count({self.name},{self.comparison.value},{self.value})"
        elif self.family is Family.ATTRIBUTE:
            text = f"attr({self.name})"
        elif self.family.is_near:
            text = f'{self.family.value}("{self.name}",{self.tolerance})'
        else:
            text = f"{self.family.value}(" + ",".join(f'"{n}"' for n in self.names) + ")"
        return f"neg({text})" if self.negated else text

    def body(self, image: str = "I", variable: str = "N") -> str:
        """The literal as a rule body over the input facts of the encodings."""
        if self.family is Family.COUNT and self.comparison is not Comparison.EQ:
            return f"count({image},{self.name},{variable}), {variable} {self.comparison.symbol} {self.value}"
        if self.family is Family.COUNT:
            atom = f"count({image},{self.name},{self.value})"
        elif self.family is Family.ATTRIBUTE:
            atom = f"attr({image},{self.name},1)"
        elif self.family is Family.CATEGORY:
            atom = f'category({image},_,"{self.name}")'
        elif self.family is Family.CATEGORIES:
            atom = f'category({image},S1,"{self.name}"), category({image},S2,"{self.other}"), S1 != S2'
        elif self.family is Family.SEQUENCE_NEAR:
            atom = f'near({image},"{self.name}",{self.tolerance})'
        elif self.family is Family.IMAGE_SEQUENCE_NEAR:
            atom = f'image_near({image},"{self.name}",{self.tolerance})'
        else:
            atom = f'{self.family.value}({image},"{self.name}")'
        return f"not {atom}" if self.negated else atom

    @property
    def sort_key(self) -> tuple:
        order = list(Family).index(self.family)
        comparison = self.comparison.value if self.comparison else ""
        return (order, self.negated, self.names, comparison, self.value or 0, self.tolerance or "")


@dataclass(frozen=True, slots=True)
class Rule:
    """A conjunction of literals; `errors` = misclassified context images, `length` = summed literal cost."""

    literals: tuple[Literal, ...]
    errors: int = 0
    length: int = 0

    @property
    def asp(self) -> str:
        if not self.literals:
            return "concept(I) :- image(I)."
        bodies = [lit.body("I", f"N{k}") for k, lit in enumerate(self.literals)]
        return "concept(I) :- image(I), " + ", ".join(bodies) + "."

    @property
    def sort_key(self) -> tuple:
        return (len(self.literals), tuple(lit.sort_key for lit in self.literals))

    def families(self) -> set[Family]:
        return {lit.family for lit in self.literals}

    @property
    def sequence_shapes(self) -> int:
        """How many shapes the rule's stroke-sequence literals fix exactly (its specificity)."""
        return sum(2 if lit.family.is_image else 1 for lit in self.literals
                   if lit.family.is_sequence and not lit.family.is_near and not lit.negated)
