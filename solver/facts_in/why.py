"""The `why` of an image given as facts: each literal of the rule matched on the image's facts.

A literal is a conjunctive query over the image's facts (`solver.facts_in.lang`); matching it here, as
clingo reads the rule's ASP text, gives the evidence a reader can check in the image's fact list:

  exists        holds: the facts of one match ("it has an object X with ...: cls(o2,horse), ...");
                fails: the nearest matches, those that satisfy the most atoms, with the atoms they lack
                and the image's facts in their place ("cls(o2,horse) but rel(o1,feed,o2) where the
                rule needs rel(_,ride,o2)")
  absent        fails: the facts of the objects that have the concept
  count         the number of objects X that satisfy the conjunction ("it has 4 objects X with
                cls(X,dog); the rule needs exactly 3")
  ground        whether the image has the fact (and, if not, its facts of that predicate)

`Failing.measured` is the count for a count literal; for the others a list of matches, each
{"has": the image's facts that match, "lacks": the atoms they lack, "instead": the image's facts of
those predicates, about the same objects}. `Why.found` holds the facts that satisfy the rule's literals,
and the facts of the objects a count literal counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from solver.facts_in.problem import Fact, FactImage
from solver.facts_in.lang import AMOUNTS, NOT, VARIABLES, Atom, FactLiteral, FactRule, Kind, atom_text
from solver.explaining import Failing, Part, Why, rule_why

MAX_SHOWN = 6  # matches kept as evidence, and facts named in one clause, at most (for reading, not fitted)
MAX_MATCHES = 2000  # matches of part of a conjunction read when looking for the nearest (a time bound; not fitted)

Binding = dict[int, str]  # variable number -> the value (an argument's ASP text)


def _fits(atom: Atom, fact: Fact, binding: Binding) -> Binding | None:
    """The binding extended so that the atom (not negated) is the fact, or None."""
    name, args = atom
    if fact.name != name or len(fact.arguments) != len(args):
        return None
    bound = dict(binding)
    for wanted, value in zip(args, fact.arguments):
        text = str(value)
        if isinstance(wanted, int):
            if bound.setdefault(wanted, text) != text:
                return None
        elif wanted is not None and wanted != text:
            return None
    return bound


def _negated(atom: Atom) -> bool:
    return atom[0].startswith(NOT)


def _plain(atom: Atom) -> Atom:
    return atom[0].removeprefix(NOT), atom[1]


def _present(atom: Atom, facts: tuple[Fact, ...], binding: Binding) -> list[Fact]:
    """The facts that match the atom (negated or not, read as a positive atom) under the binding."""
    return [fact for fact in facts if _fits(_plain(atom), fact, binding) is not None]


def matches(atoms: tuple[Atom, ...], facts: tuple[Fact, ...]) -> Iterator[tuple[Binding, tuple[Fact, ...]]]:
    """Every way the conjunction holds of the facts, as clingo reads it: a binding of its variables and
    the facts its positive atoms are; a negated atom holds when no fact matches it."""
    positive = [a for a in atoms if not _negated(a)]
    negative = [a for a in atoms if _negated(a)]
    by_predicate: dict[tuple[str, int], list[Fact]] = {}
    for fact in facts:
        by_predicate.setdefault((fact.name, len(fact.arguments)), []).append(fact)

    def extend(k: int, binding: Binding, used: tuple[Fact, ...]) -> Iterator[tuple[Binding, tuple[Fact, ...]]]:
        if k == len(positive):
            if not any(_present(atom, facts, binding) for atom in negative):
                yield binding, used
            return
        name, args = positive[k]
        for fact in by_predicate.get((name, len(args)), ()):
            bound = _fits(positive[k], fact, binding)
            if bound is not None:
                yield from extend(k + 1, bound, used + (fact,))

    return extend(0, {}, ())


def count(literal: FactLiteral, image: FactImage) -> int:
    """The number of objects X (the counted variable) that satisfy the literal's conjunction."""
    return len({binding.get(0) for binding, _ in matches(literal.atoms, image.facts)})


def holds(literal: FactLiteral, image: FactImage) -> bool:
    """Whether the literal holds of the image, as clingo reads its ASP text (the tests check that the
    encoding agrees)."""
    if literal.kind is Kind.COUNT:
        number = count(literal, image)
        return {"eq": number == literal.value, "ge": number >= literal.value, "le": number <= literal.value}[
            literal.comparison]
    found = next(matches(literal.atoms, image.facts), None) is not None
    return found if literal.kind in (Kind.EXISTS, Kind.GROUND) else not found


def _texts(facts) -> list[str]:
    return sorted(dict.fromkeys(f.text for f in facts))


def _instantiated(atom: Atom, binding: Binding) -> str:
    """The atom with its bound variables replaced by their values."""
    name, args = atom
    return atom_text((name, tuple(binding.get(a, a) if isinstance(a, int) else a for a in args)), VARIABLES)


def _in_place(atom: Atom, facts: tuple[Fact, ...], binding: Binding) -> list[Fact]:
    """The image's facts where an atom is missing: of its predicate and about the same objects (for a
    negated atom, the facts it excludes)."""
    if _negated(atom):
        return _present(atom, facts, binding)
    name, args = atom
    same_objects = (name, tuple(a if isinstance(a, int) and a in binding else None for a in args))
    return _present(same_objects, facts, binding)


def nearest(literal: FactLiteral, image: FactImage) -> list[dict]:
    """The matches of the most atoms of the literal's conjunction (all of them when it holds), each with
    the atoms it lacks (instantiated) and the image's facts in their place."""
    atoms = literal.atoms
    for size in range(len(atoms), -1, -1):
        near: dict[tuple, dict] = {}
        for kept in itertools.combinations(range(len(atoms)), size):
            lacking = [atoms[k] for k in range(len(atoms)) if k not in kept]
            found = matches(tuple(atoms[k] for k in kept), image.facts)
            for binding, used in itertools.islice(found, MAX_MATCHES):
                lacks = [_instantiated(atom, binding) for atom in lacking]
                instead = _texts(f for atom in lacking for f in _in_place(atom, image.facts, binding))
                entry = {"has": _texts(used), "lacks": lacks, "instead": instead}
                near.setdefault((tuple(entry["has"]), tuple(lacks)), entry)
        if near:
            return [near[key] for key in sorted(near)][:MAX_SHOWN]
    return []


def _listed(texts: list[str]) -> str:
    more = len(texts) - MAX_SHOWN
    return ", ".join(texts[:MAX_SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def _subject(literal: FactLiteral) -> tuple[str, str]:
    """What the literal asks for, with its article and without: ('an ', 'object X with cls(X,horse) and
    rel(_,ride,X)')."""
    conjunction = _conjunction(literal, " and ")
    if literal.variables == 0:
        return "a ", f"fact like {conjunction}"
    if literal.variables == 1:
        return "an ", f"object X with {conjunction}"
    return "", f"objects {', '.join(VARIABLES[:literal.variables])} with {conjunction}"


def _near_text(entry: dict) -> str:
    lacks = " and ".join(entry["lacks"])
    has = f"it has {_listed(entry['has'])} but " if entry["has"] else "it has "
    if entry["instead"]:
        return f"{has}{_listed(entry['instead'])} where the rule needs {lacks}"
    return f"{has}no {lacks}"


def _exists_part(literal: FactLiteral, holds: bool, image: FactImage) -> Part:
    near = nearest(literal, image)
    article, subject = _subject(literal)
    if holds:
        found = tuple(near[0]["has"]) if near else ()
        return Part(f"it has {article}{subject}: {_listed(list(found))}", found=found)
    text = f"it has no {subject}"
    if near:
        text += f": {_near_text(near[0])}"
        others = len(near) - 1
        text += f" ({others} more as close)" if others else ""
    return Part(text, failing=Failing(literal.asp, _conjunction(literal), near, article + subject))


def _absent_part(literal: FactLiteral, holds: bool, image: FactImage) -> Part:
    article, subject = _subject(literal)
    if holds:
        return Part(f"it has no {subject}")
    near = nearest(literal, image)
    found = sorted({text for entry in near for text in entry["has"]})
    return Part(f"it has {article}{subject}: {_listed(found)}; the rule needs none",
                failing=Failing(literal.asp, _conjunction(literal), near, "none"))


def _count_part(literal: FactLiteral, holds: bool, image: FactImage) -> Part:
    found = list(matches(literal.atoms, image.facts))
    number = len({binding.get(0) for binding, _ in found})
    counted = tuple(_texts(f for _, used in found for f in used))
    noun = "object" if number == 1 else "objects"
    has = f"it has {number} {noun} X with {_conjunction(literal, ' and ')}"
    needs = f"{AMOUNTS[literal.comparison]} {literal.value}"
    if holds:
        return Part(f"{has} (the rule needs {needs})", found=counted)
    return Part(f"{has}; the rule needs {needs}", found=counted,
                failing=Failing(literal.asp, _conjunction(literal), number, needs))


def _ground_part(literal: FactLiteral, holds: bool, image: FactImage) -> Part:
    fact = _conjunction(literal)
    present = holds == (literal.kind is Kind.GROUND)
    near = nearest(literal, image)
    if holds:
        return Part(f"it has the fact {fact}" if present else f"it does not have the fact {fact}",
                    found=(fact,) if present else ())
    if present:
        return Part(f"it has the fact {fact}, which the rule excludes",
                    failing=Failing(literal.asp, fact, near, f"no fact {fact}"))
    others = near[0]["instead"] if near else []
    text = f"it does not have the fact {fact}" + (f": it has {_listed(others)}" if others else "")
    return Part(text, failing=Failing(literal.asp, fact, near, f"the fact {fact}"))


def _conjunction(literal: FactLiteral, joiner: str = ", ") -> str:
    return joiner.join(atom_text(a, VARIABLES) for a in literal.atoms)


def literal_part(literal: FactLiteral, holds: bool, image: FactImage) -> Part:
    """One clause of the `why`: the literal on the image, with the facts that decide it."""
    if literal.kind is Kind.EXISTS:
        return _exists_part(literal, holds, image)
    if literal.kind is Kind.ABSENT:
        return _absent_part(literal, holds, image)
    if literal.kind is Kind.COUNT:
        return _count_part(literal, holds, image)
    return _ground_part(literal, holds, image)


def image_why(rule: FactRule | None, holds: Mapping[FactLiteral, bool], image: FactImage, in_a: bool,
              role: str) -> Why:
    """One image's `why` under `rule` (as `solver.explaining.why_rules.image_why` for LOGO images)."""
    return rule_why(rule, holds, image, in_a, role, literal_part)
