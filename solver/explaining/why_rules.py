"""The `why` of a LOGO image under the induced rule, from the rule's own evidence.

  stroke-sequence literals  where the image's program departs from the rule's (`solver.explaining.why_sequence`)
  category literals         the library shapes found; for an image without the shape, the look-alike in
                            its place (a shape of the same super class, as basic negatives draw)
  attribute and count       the attribute or count that fails, with the image's value and where it came from:
                            the shape table's label of the library shape the image draws (and the measured value
                            where it disputes the label), or the measure (`solver.induction.facts`)

An image in A is explained by the literals that hold, an image outside A by those that fail.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver.explaining.english import (article, attribute_phrase, count_noun, display_name, labelled_value, super_class,
                                       value_source, words)
from dsl.features import STRAIGHT_LINE_ATTRIBUTES
from dsl.library import load_library
from solver.induction import ImageFacts, ShapeFacts
from solver.induction import Comparison, Family, Literal, Rule
from solver.explaining.why import Failing, Part, Why, rule_why
from solver.explaining.why_sequence import sequence_part


def _shape_name(shape: ShapeFacts, wanted: tuple[str, ...]) -> str | None:
    """The category a shape is shown as: one the rule names if it has one, else its first."""
    return next((c for c in shape.categories if c in wanted), shape.categories[0] if shape.categories else None)


def _assign(wanted: tuple[str, ...], shapes: tuple[ShapeFacts, ...]) -> dict[str, int]:
    """The rule's categories found on distinct shapes of the image: name -> shape index (as many as can be)."""
    best: dict[str, int] = {}

    def extend(k: int, used: dict[str, int]) -> None:
        nonlocal best
        if len(used) > len(best):
            best = dict(used)
        if k == len(wanted):
            return
        for s, shape in enumerate(shapes):
            if wanted[k] in shape.categories and s not in used.values():
                extend(k + 1, {**used, wanted[k]: s})
        extend(k + 1, used)

    extend(0, {})
    return best


def _look_alike(missing: str, shapes: tuple[ShapeFacts, ...], free: list[int]) -> int | None:
    """The shape in the missing one's place: one of its super class if there is one, else the first free."""
    family = super_class(missing)
    same = [k for k in free if any(super_class(c) == family for c in shapes[k].categories)]
    return (same or free or [None])[0]


def _shape_phrase(shape: ShapeFacts, wanted: tuple[str, ...]) -> str:
    name = _shape_name(shape, wanted)
    return article(display_name(name)) if name else "a shape that is not a library shape"


def category_part(literal: Literal, holds: bool, facts: ImageFacts) -> Part:
    wanted, shapes = literal.names, facts.shapes
    found = tuple(display_name(n) if (n := _shape_name(s, wanted)) else "no library shape" for s in shapes)
    assigned = _assign(wanted, shapes)
    if literal.negated:
        if holds:
            return Part(f"it shows no {' with '.join(display_name(n) for n in wanted)}", found=found)
        marked = tuple((k, None) for k in sorted(set(assigned.values())))
        text = f"it shows {' and '.join(article(display_name(n)) for n in wanted)}, which the rule excludes"
        return Part(text, failing=Failing(literal.asp, wanted[0], list(found), "none of them"), found=found,
                    marked=marked)
    if holds:
        return Part(f"it shows {' and '.join(article(display_name(n)) for n in wanted)}", found=found)
    free = [k for k in range(len(shapes)) if k not in assigned.values()]
    clauses, marked = [], []
    for name in (n for n in wanted if n not in assigned):
        k = _look_alike(name, shapes, free)
        if k is None:
            clauses.append(f"it has no {display_name(name)}, nor any shape in its place")
            continue
        free.remove(k)
        marked.append((k, None))
        place = _shape_phrase(shapes[k], wanted)
        kin = _shape_name(shapes[k], wanted)
        family = super_class(name)
        same = f", a look-alike of the same super class ({words(family)})" if kin and super_class(kin) == family else ""
        clauses.append(f"it has no {display_name(name)}: in its place {place}{same}")
    missing = [n for n in wanted if n not in assigned]
    failing = Failing(literal.asp, missing[0] if missing else wanted[0], list(found),
                      " and ".join(article(display_name(n)) for n in wanted))
    return Part("; ".join(clauses), failing=failing, found=found, marked=tuple(marked))


def _measured_phrase(name: str, value: int | None) -> str:
    return f"'{words(name)}' does not apply" if value is None else attribute_phrase(name, not value)


def attribute_source(name: str, facts: ImageFacts) -> str:
    """Where the image's value of attribute `name` came from (`value_source`), shape by shape."""
    notes = []
    for shape in facts.shapes:
        if shape.labelled_as is None or name not in shape.labelled:
            notes.append(value_source(None, [], []))
            continue
        measured = [_measured_phrase(name, shape.disputed[name])] if name in shape.disputed else []
        notes.append(value_source(shape.labelled_as, [labelled_value(name, shape.attributes.get(name))], measured))
    return " ".join(dict.fromkeys(notes))


def count_source(name: str, facts: ImageFacts) -> str:
    """Where the image's count of straight lines came from: the table's "has N straight lines" of the library shape
    it draws (with the measured Ns that dispute it), or nothing for a measured count (as before)."""
    notes = []
    for shape in facts.shapes:
        table = [n for n in STRAIGHT_LINE_ATTRIBUTES if n in shape.labelled]
        if name != "straight_lines" or shape.labelled_as is None or not table:
            continue
        labels = load_library()[shape.labelled_as].attributes
        said = [words(n) for n in table if labels[n] == 1] or ["none of three to eight straight lines"]
        measured = [_measured_phrase(n, v) for n, v in shape.disputed.items() if n in STRAIGHT_LINE_ATTRIBUTES]
        notes.append(value_source(shape.labelled_as, said, measured))
    return "".join(f" {note}" for note in dict.fromkeys(notes))


def attribute_part(literal: Literal, holds: bool, facts: ImageFacts) -> Part:
    name, values = literal.name, list(facts.attribute_values(literal.name))
    source = attribute_source(name, facts)
    if holds:
        return Part(f"it {attribute_phrase(name, literal.negated)} {source}")
    needs = attribute_phrase(name, literal.negated)
    if not literal.negated and all(v is None for v in values):
        text = f"'{words(name)}' does not apply to it {source}; the rule needs one that {needs}"
    else:
        text = f"it {attribute_phrase(name, not literal.negated)} {source}; the rule needs one that {needs}"
    return Part(text, failing=Failing(literal.asp, name, values, needs))


def _readings(values: tuple[int, ...] | None) -> str:
    if not values:
        return "n/a"
    return str(values[0]) if len(values) == 1 else " or ".join(str(v) for v in values)


def count_needs(literal: Literal) -> str:
    if literal.comparison is Comparison.EQ:
        return f"{'other than' if literal.negated else 'exactly'} {literal.value}"
    return f"{'at least' if literal.comparison is Comparison.GE else 'at most'} {literal.value}"


def count_part(literal: Literal, holds: bool, facts: ImageFacts) -> Part:
    values = facts.count_values(literal.name)
    measured = [_readings(v) for v in values]
    noun = count_noun(literal.name, 1 if measured == ["1"] else 2)
    has = f"it has {measured[0]} {noun}" if len(measured) == 1 else f"its shapes have {' and '.join(measured)} {noun}"
    needs = count_needs(literal)
    has += count_source(literal.name, facts)
    if holds:
        return Part(f"{has} (the rule needs {needs})")
    failing = Failing(literal.asp, literal.name, [list(v) if v else None for v in values], needs)
    return Part(f"{has}; the rule needs {needs}", failing=failing)


def literal_part(literal: Literal, holds: bool, facts: ImageFacts) -> Part:
    part = None
    if literal.family.is_sequence:
        part = sequence_part(literal, holds, facts)
    elif literal.family in (Family.CATEGORY, Family.CATEGORIES):
        part = category_part(literal, holds, facts)
    elif literal.family is Family.ATTRIBUTE:
        part = attribute_part(literal, holds, facts)
    elif literal.family is Family.COUNT:
        part = count_part(literal, holds, facts)
    if part is not None:
        return part
    if holds:
        return Part(f"it satisfies {literal.asp}")
    return Part(f"it fails {literal.asp}", failing=Failing(literal.asp, literal.name, None, literal.asp))


def image_why(rule: Rule | None, holds: Mapping[Literal, bool], facts: ImageFacts, in_a: bool, role: str) -> Why:
    """One image's `why` under `rule`: `holds` says which literals hold of it, `in_a` what the rule says,
    `role` "A", "B" or "query"."""
    return rule_why(rule, holds, facts, in_a, role, literal_part)
