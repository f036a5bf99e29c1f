"""Facts about the images of a problem, and writing them into a clingo program.

Per image: its canonical program (stroke sequence), the human-designed categories of its shapes
(`solver.categories`), its geometric attributes and numeric counts (`dsl.features`). Python writes
only facts, through clingo's backend; the rules that read them are the encodings in
`solver/encodings/`.

Images are named in ASP by their role: a(0..5) set A, b(0..5) set B, q(0..) the queries.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import clingo

from dsl.canonical import canonical_image
from dsl.features import image_features
from dsl.syntax import format_image
from dsl.types import ImageProgram
from solver.categories import exact_categories, matched_categories


class CategorySource(enum.Enum):
    """How categories are found: EXACT for ground-truth programs, MATCHED for decoded ones."""

    EXACT = "exact"
    MATCHED = "matched"


class Role(enum.Enum):
    """Which part of a problem an image belongs to; the value names it in ASP."""

    A = "a"
    B = "b"
    QUERY = "q"


@dataclass(frozen=True, slots=True)
class ImageFacts:
    """What the solver knows of one image. Attribute value None = not applicable (no fact written)."""

    sequence: str
    categories: tuple[str, ...] = ()
    attributes: dict[str, int | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProblemFacts:
    """The facts of a problem's context images (sets A and B) and its queries, in order."""

    context_a: tuple[ImageFacts, ...]
    context_b: tuple[ImageFacts, ...]
    queries: tuple[ImageFacts, ...]

    def images(self) -> list[tuple[Role, int, ImageFacts]]:
        groups = ((Role.A, self.context_a), (Role.B, self.context_b), (Role.QUERY, self.queries))
        return [(role, index, facts) for role, group in groups for index, facts in enumerate(group)]


def program_text(program: ImageProgram) -> str:
    """A program as one line of official action strings: shapes separated by ' | ', actions by ' '."""
    return " | ".join(" ".join(shape) for shape in format_image(program))


def image_facts(program: ImageProgram, categories: CategorySource = CategorySource.EXACT) -> ImageFacts:
    """All facts of one image program: canonical sequence, categories, attributes and counts."""
    find_categories = exact_categories if categories is CategorySource.EXACT else matched_categories
    features = image_features(program)
    return ImageFacts(
        sequence=program_text(canonical_image(program)),
        categories=find_categories(program),
        attributes=dict(features.attributes),
        counts=dict(features.counts),
    )


def problem_facts(
    context_a: list[ImageProgram],
    context_b: list[ImageProgram],
    queries: list[ImageProgram],
    categories: CategorySource = CategorySource.EXACT,
) -> ProblemFacts:
    cache: dict[ImageProgram, ImageFacts] = {}

    def facts(program: ImageProgram) -> ImageFacts:
        if program not in cache:
            cache[program] = image_facts(program, categories)
        return cache[program]

    return ProblemFacts(
        tuple(facts(p) for p in context_a), tuple(facts(p) for p in context_b), tuple(facts(p) for p in queries)
    )


def image_symbol(role: Role, index: int) -> clingo.Symbol:
    return clingo.Function(role.value, [clingo.Number(index)])


def name_symbol(name: str) -> clingo.Symbol:
    """A constant for an identifier-like name (attribute, count), a string otherwise."""
    if name and name[0].islower() and name.replace("_", "").isalnum() and name.isascii():
        return clingo.Function(name)
    return clingo.String(name)


def fact_atoms(role: Role, index: int, facts: ImageFacts) -> list[clingo.Symbol]:
    """The ground atoms (as symbols) that describe one image."""
    image = image_symbol(role, index)
    atoms = [clingo.Function("image", [image])]
    if role is Role.A:
        atoms.append(clingo.Function("in_a", [image]))
    elif role is Role.B:
        atoms.append(clingo.Function("in_b", [image]))
    else:
        atoms.append(clingo.Function("query", [image]))
    atoms.append(clingo.Function("seq", [image, clingo.String(facts.sequence)]))
    atoms += [clingo.Function("category", [image, clingo.String(name)]) for name in facts.categories]
    for name, value in sorted(facts.attributes.items()):
        if value is not None:
            atoms.append(clingo.Function("attr", [image, name_symbol(name), clingo.Number(int(value))]))
    for name, value in sorted(facts.counts.items()):
        atoms.append(clingo.Function("count", [image, name_symbol(name), clingo.Number(int(value))]))
    return atoms


def write_facts(control: clingo.Control, problem: ProblemFacts) -> int:
    """Add the problem's facts to `control` through its backend (before grounding); returns their number."""
    written = 0
    with control.backend() as backend:
        for role, index, facts in problem.images():
            for symbol in fact_atoms(role, index, facts):
                backend.add_rule([backend.add_atom(symbol)])
                written += 1
    return written
