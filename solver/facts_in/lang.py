"""The rule language of problems given as facts, on the Python side: literals read back from the terms of
solver/encodings/facts_features.lp, as conjunctive queries over the problem's own predicates.

A literal's concept is a conjunction of atoms over object variables (X, Y) and constants: the view
`t(rel, (self, c(ride), link))` of `r(...)` is the atom rel(X, ride, Y). One query has many terms (rooted
at either object, `any` or a variable used once), so literals are compared by their canonical form: a
variable used once becomes `_` (existence) and the variables are renamed to the least order. The
canonical form names the rule (`Rule.asp`, a clingo rule over the problem's facts with head `in_a`), and
decides when two literals are the same.

Kinds (costs in the encoding):
    exists   some objects satisfy the conjunction                  rel(X,ride,Y), cls(Y,horse)
    absent   no objects do                                         #count { X : cls(X,horse) } = 0
    count    the number of objects X satisfying it, =, >=, <= N    #count { X : cls(X,dog) } = 3
    ground, not_ground   a fact without objects                    scene(indoor), not scene(indoor)
A conjunction may hold one negated atom: cls(X,person), not rel(X,ride,_) (no fact rel(X,ride,_)).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import clingo

VARIABLES = "XYZUVWPQRST"
COMPARISONS = {"eq": "=", "ge": ">=", "le": "<="}
AMOUNTS = {"eq": "exactly", "ge": "at least", "le": "at most"}


class Kind(enum.Enum):
    EXISTS = "exists"
    ABSENT = "absent"
    COUNT = "count"
    GROUND = "ground"
    NOT_GROUND = "not_ground"


Argument = int | str | None  # a variable number, a constant's ASP text, or None for `_`
Atom = tuple[str, tuple[Argument, ...]]  # (predicate, arguments); a negated atom's predicate begins with NOT
NOT = "not "


class FactTermError(ValueError):
    """A term of the encoding that is not a literal of this language."""


def _view_atom(view: clingo.Symbol, self_var: int, link_var: int | None) -> Atom:
    name, arguments = view.arguments[0].name, view.arguments[1].arguments
    args: list[Argument] = []
    for cell in arguments:
        if cell.name == "self":
            args.append(self_var)
        elif cell.name == "link":
            args.append(link_var)
        elif cell.name == "any":
            args.append(None)
        elif cell.name == "c" and len(cell.arguments) == 1:
            args.append(str(cell.arguments[0]))
        else:
            raise FactTermError(f"not a view cell: {cell}")
    return name, tuple(args)


def concept_atoms(concept: clingo.Symbol, root: int = 0, fresh: Iterator[int] | None = None) -> list[Atom]:
    """The atoms of an object concept, the object being variable `root`; links get `fresh` variables."""
    fresh = fresh if fresh is not None else itertools.count(root + 1)
    if concept.name == "t":
        return [_view_atom(concept, root, None)]
    if concept.name == "r":
        view, other = concept.arguments
        link = next(fresh)
        return [_view_atom(view, root, link)] + concept_atoms(other, link, fresh)
    if concept.name == "and":
        first, second = concept.arguments
        return concept_atoms(first, root, fresh) + concept_atoms(second, root, fresh)
    if concept.name == "andnot":
        first, second = concept.arguments
        name, args = _view_atom(second, root, None)
        return concept_atoms(first, root, fresh) + [(NOT + name, args)]
    raise FactTermError(f"not an object concept: {concept}")


def _canonical(atoms: list[Atom], keep_root: bool) -> tuple[Atom, ...]:
    """Variables used once become `_` (except a counted root); renamed to the least sorted atom list."""
    uses: dict[int, int] = {}
    for _, args in atoms:
        for a in args:
            if isinstance(a, int):
                uses[a] = uses.get(a, 0) + 1
    kept = sorted(v for v, n in uses.items() if n > 1 or (keep_root and v == 0))
    free = [v for v in kept if not (keep_root and v == 0)]
    best = None
    for order in itertools.permutations(range(len(free))):
        names = {v: k + (1 if keep_root and 0 in kept else 0) for v, k in zip(free, order)}
        if keep_root and 0 in kept:
            names[0] = 0
        renamed = sorted(set((n, tuple(names.get(a) if isinstance(a, int) else a for a in args))
                             for n, args in atoms), key=_atom_key)
        if best is None or [_atom_key(a) for a in renamed] < [_atom_key(a) for a in best]:
            best = renamed
    return tuple(best)


def _atom_key(atom: Atom) -> tuple:
    name, args = atom
    return (name, len(args), tuple((0, a, "") if isinstance(a, int) else (1, 0, a) if a is not None else (2, 0, "")
                                   for a in args))


def atom_text(atom: Atom, names: str) -> str:
    name, args = atom
    if not args:
        return name
    shown = [names[a] if isinstance(a, int) else "_" if a is None else a for a in args]
    return f"{name}({','.join(shown)})"


@dataclass(frozen=True, slots=True)
class FactLiteral:
    """One literal of a rule: `atoms` in canonical form; `term` the encoding's term (fed back to clingo)."""

    kind: Kind
    atoms: tuple[Atom, ...]
    comparison: str | None = None
    value: int | None = None
    term: clingo.Symbol | None = field(default=None, compare=False)

    @staticmethod
    def from_symbol(symbol: clingo.Symbol) -> "FactLiteral":
        """The one conversion of the encoding's literal terms (exists(C), neg(..), count(C, Op, N), ...)."""
        if symbol.name == "neg" and len(symbol.arguments) == 1:
            inner = FactLiteral.from_symbol(symbol.arguments[0])
            kind = {Kind.EXISTS: Kind.ABSENT, Kind.GROUND: Kind.NOT_GROUND}.get(inner.kind)
            if kind is None:
                raise FactTermError(f"not a literal: {symbol}")
            return FactLiteral(kind, inner.atoms, term=symbol)
        if symbol.name == "exists" and len(symbol.arguments) == 1:
            return FactLiteral(Kind.EXISTS, _canonical(concept_atoms(symbol.arguments[0]), False), term=symbol)
        if symbol.name == "count" and len(symbol.arguments) == 3:
            concept, comparison, value = symbol.arguments
            return FactLiteral(Kind.COUNT, _canonical(concept_atoms(concept), True), comparison.name,
                               value.number, symbol)
        if symbol.name == "ground" and len(symbol.arguments) == 1:
            return FactLiteral(Kind.GROUND, (_view_atom(symbol.arguments[0], 0, None),), term=symbol)
        raise FactTermError(f"not a literal: {symbol}")

    @property
    def key(self) -> tuple:
        """Equal for two literals that say the same."""
        return (self.kind.value, tuple(_atom_key(a) for a in self.atoms), self.comparison or "", self.value or 0)

    @property
    def sort_key(self) -> tuple:
        order = list(Kind).index(self.kind)
        return (order, len(self.atoms), self.key)

    @property
    def variables(self) -> int:
        return len({a for _, args in self.atoms for a in args if isinstance(a, int)})

    def body(self, names: str = VARIABLES) -> str:
        """The literal as a clingo rule body over the problem's facts, variables named from `names`."""
        conjunction = ", ".join(atom_text(a, names) for a in self.atoms)
        if self.kind in (Kind.EXISTS, Kind.GROUND):
            return conjunction
        if self.kind is Kind.NOT_GROUND:
            return f"not {conjunction}"
        if self.kind is Kind.ABSENT:
            counted = ",".join(names[:self.variables]) or "0"
            return f"#count {{ {counted} : {conjunction} }} = 0"
        return f"#count {{ {names[0]} : {conjunction} }} {COMPARISONS[self.comparison]} {self.value}"

    @property
    def asp(self) -> str:
        return self.body()

    def english(self) -> str:
        """A phrase about one image: 'has objects X, Y with rel(X,ride,Y) and cls(Y,horse)'."""
        conjunction = " and ".join(atom_text(a, VARIABLES) for a in self.atoms)
        names = ", ".join(VARIABLES[:self.variables])
        plural = "s" if self.variables > 1 else ""
        if self.kind is Kind.GROUND:
            return f"has the fact {conjunction}"
        if self.kind is Kind.NOT_GROUND:
            return f"does not have the fact {conjunction}"
        if self.kind is Kind.EXISTS:
            return f"has object{plural} {names} with {conjunction}" if names else f"has a fact like {conjunction}"
        if self.kind is Kind.ABSENT:
            return f"has no object{plural} {names} with {conjunction}" if names else f"has no fact like {conjunction}"
        amount = AMOUNTS[self.comparison]
        noun = "object" if self.value == 1 else "objects"
        return f"has {amount} {self.value} {noun} X with {conjunction}"


@dataclass(frozen=True, slots=True)
class FactRule:
    """A conjunction of literals: an image is in A when every literal holds of it."""

    literals: tuple[FactLiteral, ...]
    errors: int = 0
    length: int = 0

    @property
    def asp(self) -> str:
        """A clingo rule over one image's facts: `in_a` is derived exactly when the image satisfies it."""
        if not self.literals:
            return "in_a."
        bodies, offset = [], 0
        for literal in self.literals:
            bodies.append(literal.body(VARIABLES[offset:]))
            offset += literal.variables
        return "in_a :- " + ", ".join(bodies) + "."

    @property
    def sort_key(self) -> tuple:
        return (len(self.literals), tuple(lit.sort_key for lit in self.literals))

    @property
    def key(self) -> tuple:
        return tuple(sorted(lit.key for lit in self.literals))

    @property
    def sequence_shapes(self) -> int:
        """No literal fixes a stroke sequence (solver.induction.vote breaks even votes by it: the first rule)."""
        return 0


def make_rule(literals: tuple[FactLiteral, ...], errors: int, length: int) -> FactRule:
    return FactRule(literals, errors, length)
