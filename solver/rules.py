"""The rule language on the Python side: literals and rules, read back from the encodings' terms.

A literal is one of (DESIGN.md, the rule language):
    seq(K)                     the image is drawn by the canonical program K        (free-form)
    category(S)                the image contains a shape of library category S     (basic)
    attr(A), neg(attr(A))      the image has / has not the geometric attribute A    (abstract)
    count(C, Op, N)            count C of the image compared with N (eq, ge, le)    (abstract)
    neg(count(C, eq, N))       count C of the image is not N
A rule is a conjunction of literals: an image is in A when every literal holds of it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Family(enum.Enum):
    """Which part of the rule language a literal comes from (ordered by preference among tied rules)."""

    CATEGORY = "category"
    SEQUENCE = "seq"
    ATTRIBUTE = "attr"
    COUNT = "count"


class Comparison(enum.Enum):
    EQ = "eq"
    GE = "ge"
    LE = "le"

    @property
    def symbol(self) -> str:
        return {"eq": "=", "ge": ">=", "le": "<="}[self.value]


class RuleTermError(ValueError):
    """A term from the encodings that is not a literal of the rule language."""


@dataclass(frozen=True, slots=True)
class Literal:
    family: Family
    name: str  # canonical program text, category name, attribute name or count name
    negated: bool = False
    comparison: Comparison | None = None  # counts only
    value: int | None = None  # counts only

    @staticmethod
    def from_term(term) -> "Literal":
        """From the Python form of a clingo term (see induce.python_value): ("seq", K), ("neg", ...) ..."""
        if isinstance(term, tuple) and term and term[0] == "neg" and len(term) == 2:
            inner = Literal.from_term(term[1])
            return Literal(inner.family, inner.name, True, inner.comparison, inner.value)
        if isinstance(term, tuple) and len(term) == 2 and term[0] in ("seq", "category", "attr"):
            return Literal(Family(term[0]), str(term[1]))
        if isinstance(term, tuple) and len(term) == 4 and term[0] == "count":
            _, name, comparison, value = term
            return Literal(Family.COUNT, str(name), comparison=Comparison(comparison), value=int(value))
        raise RuleTermError(f"not a literal of the rule language: {term!r}")

    @property
    def asp(self) -> str:
        """The literal as the encodings write it."""
        if self.family is Family.COUNT:
            text = f"count({self.name},{self.comparison.value},{self.value})"
        elif self.family in (Family.SEQUENCE, Family.CATEGORY):
            text = f'{self.family.value}("{self.name}")'
        else:
            text = f"{self.family.value}({self.name})"
        return f"neg({text})" if self.negated else text

    def body(self, image: str = "I", variable: str = "N") -> str:
        """The literal as a rule body over the input facts of the encodings."""
        if self.family is Family.COUNT:
            if self.comparison is Comparison.EQ:
                atom = f"count({image},{self.name},{self.value})"
                return f"not {atom}" if self.negated else atom
            return f"count({image},{self.name},{variable}), {variable} {self.comparison.symbol} {self.value}"
        if self.family is Family.ATTRIBUTE:
            atom = f"attr({image},{self.name},1)"
        else:
            atom = f'{self.family.value}({image},"{self.name}")'
        return f"not {atom}" if self.negated else atom

    @property
    def sort_key(self) -> tuple:
        order = list(Family).index(self.family)
        return (order, self.negated, self.name, self.comparison.value if self.comparison else "", self.value or 0)


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
