"""Facts about the images of a problem, and writing them into a clingo program.

Facts are per shape, gathered per image: an image "has" a value when one of its (one or two) shapes
has it. Per shape: its canonical program (stroke sequence), the human-designed categories it draws
(`search.categories`), its geometric attributes and numeric counts (`dsl.features` of the shape
alone). Shape-level facts keep a two-shape image from matching a concept through a sum over both
shapes: in a basic problem each negative keeps one of the two shapes, so only a rule about both shapes
separates A from B.

Stroke sequences are exact canonical programs, so one misperceived value flips an image. For decoded
programs there are also near facts: a shape of image I draws the program K of a shape of set A within
a tolerance T (`TOLERANCES`: turns and arc sweeps within some degrees and lengths within some units,
stroke types kept; or stroke types ignored). The tolerances stay well below what separates a free-form
negative from its positives (another kind of action, a turn changed by at least 60 degrees, another
stroke type: spec §3.2), and the induction pays for a tolerance, so exact programs win whenever they
fit as well.

Counts stay numbers: the attributes has_three_straight_lines ... has_eight_straight_lines are not
written, `count(I, straight_lines, N)` expresses them (DESIGN.md, the rule language).

Where an attribute's value comes from (`AttributeSource`): the abstract generator chooses its positives and
negatives by the shape table's labels (spec §3.4), not by geometry, so a shape recognised as a library shape
(its categories: exactly for true programs, with tolerance for decoded ones) takes the table's labels
(`table_labels`; a count of straight lines takes the table's "has N straight lines"), and its measured value
(`dsl.features`) serves every shape the library does not hold and every attribute the table leaves open (a
geometric tie of library shapes labelled otherwise). Where the table and the measure disagree, the shape keeps
the measured value beside the label (`ShapeFacts.disputed`): the explanation says where the value came from,
and the query's confidence can weigh it.

Python writes only facts, through clingo's backend; the rules that read them are the encodings in
`solver/encodings/`. Images are named in ASP by their role: a(0..5) set A, b(0..5) set B, q(0..)
the queries.
"""

from __future__ import annotations

import contextlib
import enum
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import clingo

from dsl.canonical import canonical_shape, same_shape
from dsl.features import STRAIGHT_LINE_ATTRIBUTES, image_features
from dsl.library import ATTRIBUTES, load_library
from dsl.syntax import format_shape
from dsl.types import ImageProgram, Shape, StrokeType
from dsl.categories import exact_shape_categories
from search.categories import matched_shape_categories
from solver.settings import ATTRIBUTE_SOURCE, TOLERANCES

COUNTED_ATTRIBUTES = frozenset(a for a in ATTRIBUTES if re.fullmatch(r"has_[a-z]+_straight_lines", a))
# The counts written as facts: the numbers a concept is about (DESIGN.md: straight lines, parts; arcs).
# Counts that restate an attribute at >= 1 (acute angles, crossings, corners, ...) are left out: with
# six images per side their exact values (corners = 9) separate A from B by chance far more often than
# they name a concept, and a 2-literal concept then loses to a 1-literal coincidence. Nor are counts of
# the program rather than the drawing written (actions).
COUNTS = ("straight_lines", "arcs", "parts")
# A count that can be read in several ways: every reading from the count up to the other count is a fact
# (a straight line cut by a crossing reads as one line or as two segments; `dsl.features`).
COUNT_READINGS = {"straight_lines": "straight_segments"}


class CategorySource(enum.Enum):
    """How categories are found: EXACT for ground-truth programs, MATCHED for decoded ones."""

    EXACT = "exact"
    MATCHED = "matched"


class AttributeSource(enum.Enum):
    """Where a shape's attributes come from."""

    GEOMETRY = "geometry"  # measured on the drawing (`dsl.features`), library shapes too
    TABLE = "table"  # a recognised library shape takes the shape table's labels; any other shape is measured
    BOTH = "both"  # as TABLE, and the measured value is kept where it disputes the label (`ShapeFacts.disputed`)


_SOURCE = [AttributeSource(ATTRIBUTE_SOURCE)]  # the source in use (`attribute_source` changes it for a while)


def current_attribute_source() -> AttributeSource:
    return _SOURCE[-1]


@contextlib.contextmanager
def attribute_source(source: AttributeSource | str) -> Iterator[AttributeSource]:
    """Facts written inside take their attributes from `source` (`bench ablations --attributes`); the library
    pools follow (`solver.induction.pools`)."""
    _SOURCE.append(AttributeSource(source))
    try:
        yield _SOURCE[-1]
    finally:
        _SOURCE.pop()


class Role(enum.Enum):
    """Which part of a problem an image belongs to; the value names it in ASP."""

    A = "a"
    B = "b"
    QUERY = "q"


@dataclass(frozen=True, slots=True)
class ShapeFacts:
    """What the solver knows of one shape. Attribute value None = not applicable (no fact written)."""

    sequence: str
    categories: tuple[str, ...] = ()
    attributes: dict[str, int | None] = field(default_factory=dict)
    counts: dict[str, tuple[int, ...]] = field(default_factory=dict)  # every reading of each count
    program: Shape | None = field(default=None, compare=False)  # the shape itself (for near facts)
    labelled_as: str | None = None  # the library shape whose table labels the attributes are (None: measured)
    labelled: frozenset[str] = field(default=frozenset(), compare=False)  # the attributes whose values are its labels
    disputed: dict[str, int | None] = field(default_factory=dict, compare=False)  # attribute -> its measured value,
    # where the table labels the shape otherwise (AttributeSource.BOTH)


@dataclass(frozen=True, slots=True)
class ImageFacts:
    shapes: tuple[ShapeFacts, ...]

    @property
    def sequences(self) -> tuple[str, ...]:
        return tuple(s.sequence for s in self.shapes)

    @property
    def image_sequence(self) -> str:
        """The canonical programs of all shapes, in a fixed order, separated by ' | '."""
        return " | ".join(sorted(self.sequences))

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(sorted({c for s in self.shapes for c in s.categories}))

    def attribute_values(self, name: str) -> tuple[int | None, ...]:
        return tuple(s.attributes.get(name) for s in self.shapes)

    def count_values(self, name: str) -> tuple[tuple[int, ...] | None, ...]:
        return tuple(s.counts.get(name) for s in self.shapes)


@dataclass(frozen=True, slots=True)
class ProblemFacts:
    """The facts of a problem's context images (sets A and B) and its queries, in order."""

    context_a: tuple[ImageFacts, ...]
    context_b: tuple[ImageFacts, ...]
    queries: tuple[ImageFacts, ...]
    tolerant: bool = True  # near facts are written (decoded programs); ground truth needs no tolerance

    def images(self) -> list[tuple[Role, int, ImageFacts]]:
        groups = ((Role.A, self.context_a), (Role.B, self.context_b), (Role.QUERY, self.queries))
        return [(role, index, facts) for role, group in groups for index, facts in enumerate(group)]


def shape_text(shape: Shape) -> str:
    """A shape as one line of official action strings."""
    return " ".join(format_shape(shape))


def shape_facts(shape: Shape, categories: CategorySource = CategorySource.EXACT,
                source: AttributeSource | None = None) -> ShapeFacts:
    find_categories = exact_shape_categories if categories is CategorySource.EXACT else matched_shape_categories
    source = source or current_attribute_source()
    names = find_categories(shape)
    features = image_features(ImageProgram((shape,)))
    measured, counts = features.attributes, count_readings(features.counts)
    labels = table_labels(names) if source is not AttributeSource.GEOMETRY else {}
    attributes = {**measured, **labels}
    if any(name in labels for name in STRAIGHT_LINE_ATTRIBUTES) and "straight_lines" in counts:
        counts["straight_lines"] = labelled_line_readings(counts["straight_lines"], labels)
    disputed = {name: measured.get(name) for name, value in labels.items()
                if value is not None and measured.get(name) is not None and measured[name] != value
                and source is AttributeSource.BOTH}
    return ShapeFacts(
        sequence=shape_text(canonical_shape(shape)),
        categories=names,
        attributes={k: v for k, v in attributes.items() if k not in COUNTED_ATTRIBUTES},
        counts=counts,
        program=shape,
        labelled_as=labelled_name(names) if labels else None,
        labelled=frozenset(labels),
        disputed=disputed,
    )


def table_labels(names: tuple[str, ...]) -> dict[str, int | None]:
    """The shape table's labels of a shape that draws the library shapes `names` (a geometric tie: several): each
    attribute on which they agree, 1 or 0, or None where the attribute does not apply (the table's -1, and its one
    stray value: in neither of the generator's pools). An attribute they label otherwise is left out (measured)."""
    library = load_library()
    rows = [library[name].attributes for name in names if name in library]
    if not rows:
        return {}
    labels = {}
    for name in ATTRIBUTES:
        values = {row[name] if row[name] in (0, 1) else None for row in rows}
        if len(values) == 1:
            labels[name] = values.pop()
    return labels


def labelled_name(names: tuple[str, ...]) -> str | None:
    """The library shape a labelled shape is shown as: the first of its tie."""
    return next((name for name in names if name in load_library()), None)


def labelled_line_readings(readings: tuple[int, ...], labels: dict[str, int | None]) -> tuple[int, ...]:
    """The readings of a count of straight lines under the table's "has N straight lines" (N = 3 ... 8): the Ns it
    labels 1 and the measured readings among 3 ... 8 it leaves open; when it labels no N 1, the measured readings
    it does not label 0 (all of them if it denies every one)."""
    named = {n for n, name in enumerate(STRAIGHT_LINE_ATTRIBUTES, 3) if labels.get(name) == 1}
    denied = {n for n, name in enumerate(STRAIGHT_LINE_ATTRIBUTES, 3) if labels.get(name) == 0}
    if named:
        kept = named | {n for n in readings if 3 <= n <= 8 and STRAIGHT_LINE_ATTRIBUTES[n - 3] not in labels}
    else:
        kept = {n for n in readings if n not in denied}
    return tuple(sorted(kept)) or readings


def count_readings(counts: dict[str, int]) -> dict[str, tuple[int, ...]]:
    readings = {}
    for name in COUNTS:
        if name in counts:
            upper = counts.get(COUNT_READINGS.get(name, name), counts[name])
            readings[name] = tuple(range(counts[name], max(counts[name], upper) + 1))
    return readings


def image_facts(program: ImageProgram, categories: CategorySource = CategorySource.EXACT,
                source: AttributeSource | None = None) -> ImageFacts:
    return ImageFacts(tuple(shape_facts(shape, categories, source) for shape in program.shapes))


def problem_facts(
    context_a: list[ImageProgram],
    context_b: list[ImageProgram],
    queries: list[ImageProgram],
    categories: CategorySource = CategorySource.EXACT,
    tolerant: bool = True,
) -> ProblemFacts:
    cache: dict[Shape, ShapeFacts] = {}
    source = current_attribute_source()

    def facts(program: ImageProgram) -> ImageFacts:
        for shape in program.shapes:
            if shape not in cache:
                cache[shape] = shape_facts(shape, categories, source)
        return ImageFacts(tuple(cache[shape] for shape in program.shapes))

    return ProblemFacts(
        tuple(facts(p) for p in context_a), tuple(facts(p) for p in context_b), tuple(facts(p) for p in queries),
        tolerant,
    )


def image_symbol(role: Role, index: int) -> clingo.Symbol:
    return clingo.Function(role.value, [clingo.Number(index)])


def name_symbol(name: str) -> clingo.Symbol:
    """A constant for an identifier-like name (attribute, count), a string otherwise."""
    if name and name[0].islower() and name.replace("_", "").isalnum() and name.isascii():
        return clingo.Function(name)
    return clingo.String(name)


def fact_atoms(role: Role, index: int, facts: ImageFacts) -> list[clingo.Symbol]:
    """The ground atoms (as symbols) that describe one image; a value shared by both shapes once."""
    image = image_symbol(role, index)
    membership = {Role.A: "in_a", Role.B: "in_b", Role.QUERY: "query"}[role]
    atoms = [clingo.Function("image", [image]), clingo.Function(membership, [image])]
    if len(facts.shapes) == 2:
        atoms.append(clingo.Function("image_seq", [image, clingo.String(facts.image_sequence)]))
    for k, shape in enumerate(facts.shapes):
        atoms.append(clingo.Function("seq", [image, clingo.String(shape.sequence)]))
        stamps = sum(a.stroke is not StrokeType.NORMAL for a in shape.program.actions) if shape.program else 0
        if stamps:  # stamped(K, N): program K draws N actions with a stroke other than plain (family.lp)
            atoms.append(clingo.Function("stamped", [clingo.String(shape.sequence), clingo.Number(stamps)]))
        atoms += [clingo.Function("category", [image, clingo.Number(k), clingo.String(name)])
                  for name in shape.categories]
        for name, value in sorted(shape.attributes.items()):
            if value is not None:
                atoms.append(clingo.Function("attr", [image, name_symbol(name), clingo.Number(int(value))]))
        for name, values in sorted(shape.counts.items()):
            atoms += [clingo.Function("count", [image, name_symbol(name), clingo.Number(int(v))]) for v in values]
    return list(dict.fromkeys(atoms))


def near(a: Shape, b: Shape, tolerance: str) -> bool:
    """The two shapes draw the same program within the tolerance (either one's start and direction)."""
    length_tol, angle_tol, ignore_strokes = TOLERANCES[tolerance]
    return len(a) == len(b) and (same_shape(a, b, length_tol, angle_tol, ignore_strokes)
                                 or same_shape(b, a, length_tol, angle_tol, ignore_strokes))


def _within(narrow: str, wide: str) -> bool:
    """Tolerance `narrow` accepts no pair of shapes that `wide` does not (no larger value, strokes kept if
    `wide` keeps them): `near` is then true at `wide` wherever it is at `narrow`."""
    (length, angle, ignores), (wide_length, wide_angle, wide_ignores) = TOLERANCES[narrow], TOLERANCES[wide]
    return length <= wide_length and angle <= wide_angle and (wide_ignores or not ignores)


class _Nearness:
    """`near` for the shapes of one problem, each pair of shapes compared once for all tolerances and with
    fewer comparisons, the same answers: two shapes with other numbers of actions of each kind (and
    stroke, for a tolerance that keeps stroke types) are never near, since no start or direction changes
    them; a pair near at one tolerance is near at every wider one, and one not near at a tolerance is near at
    no narrower one (`_within`). The widest tolerances are compared first."""

    ORDER = sorted(TOLERANCES, key=lambda t: -sum(_within(n, t) for n in TOLERANCES))

    def __init__(self) -> None:
        self._pairs: dict[tuple[int, int], dict[str, bool]] = {}
        self._kinds: dict[tuple[int, bool], Counter] = {}
        self._shapes: list[Shape] = []  # alive while their ids are keys

    def _actions(self, shape: Shape, ignore_strokes: bool) -> Counter:
        key = (id(shape), ignore_strokes)
        if key not in self._kinds:
            self._shapes.append(shape)
            self._kinds[key] = Counter((a.kind, None if ignore_strokes else a.stroke) for a in shape.actions)
        return self._kinds[key]

    def __call__(self, a: Shape, b: Shape, tolerance: str) -> bool:
        key = (id(a), id(b))
        if key not in self._pairs:
            self._shapes += (a, b)
            self._pairs[key] = self._compare(a, b)
        return self._pairs[key][tolerance]

    def _compare(self, a: Shape, b: Shape) -> dict[str, bool]:
        found: dict[str, bool] = {}
        for tolerance in self.ORDER:
            ignore_strokes = TOLERANCES[tolerance][2]
            if any(value and _within(t, tolerance) for t, value in found.items()):
                found[tolerance] = True
            elif any(not value and _within(tolerance, t) for t, value in found.items()):
                found[tolerance] = False
            else:
                found[tolerance] = (len(a) == len(b) and near(a, b, tolerance)
                                    if self._actions(a, ignore_strokes) == self._actions(b, ignore_strokes) else False)
        return found


def _near_pair(shapes: tuple[ShapeFacts, ...], pair: tuple[ShapeFacts, ...], tolerance: str,
               near_to: Callable[[Shape, Shape, str], bool] = near) -> bool:
    first, second = shapes
    return any(near_to(first.program, x.program, tolerance) and near_to(second.program, y.program, tolerance)
               for x, y in (pair, pair[::-1]))


def near_atoms(problem: ProblemFacts) -> list[clingo.Symbol]:
    """near(I, K, T) for every image I with a shape within tolerance T of the program K of a shape of
    set A (a candidate of the seq_near literal); image_near(I, K, T) likewise for two-shape images and
    the programs K of a two-shape image of set A. Only for shapes with their program known."""
    shapes = {s.sequence: s for image in problem.context_a for s in image.shapes if s.program is not None}
    pairs = {image.image_sequence: image.shapes for image in problem.context_a
             if len(image.shapes) == 2 and all(s.program is not None for s in image.shapes)}
    near_to = _Nearness()
    atoms = []
    for role, index, facts in problem.images():
        symbol = image_symbol(role, index)
        for tolerance in TOLERANCES:
            for key, candidate in shapes.items():
                if any(s.program is not None and near_to(s.program, candidate.program, tolerance)
                       for s in facts.shapes):
                    atoms.append(clingo.Function("near", [symbol, clingo.String(key), clingo.Function(tolerance)]))
            if len(facts.shapes) == 2 and all(s.program is not None for s in facts.shapes):
                for key, pair in pairs.items():
                    if _near_pair(facts.shapes, pair, tolerance, near_to):
                        atoms.append(clingo.Function("image_near", [symbol, clingo.String(key),
                                                                    clingo.Function(tolerance)]))
    return atoms


def problem_atoms(problem: ProblemFacts) -> tuple[clingo.Symbol, ...]:
    """Every fact of the problem (each image's, then the near facts if tolerant), as symbols. Kept for the
    problem last asked for: `solver.solving.api` runs up to three inductions on the same facts."""
    global _LAST_WRITTEN
    last = _LAST_WRITTEN
    if last is not None and last[0] is problem:
        return last[1]
    atoms = [symbol for role, index, facts in problem.images() for symbol in fact_atoms(role, index, facts)]
    atoms += near_atoms(problem) if problem.tolerant else ()
    _LAST_WRITTEN = (problem, tuple(atoms))
    return _LAST_WRITTEN[1]


_LAST_WRITTEN: tuple[ProblemFacts, tuple[clingo.Symbol, ...]] | None = None  # (problem, its atoms), see above


def write_facts(control: clingo.Control, problem: ProblemFacts) -> int:
    """Add the problem's facts to `control` through its backend (before grounding); returns their number."""
    atoms = problem_atoms(problem)
    with control.backend() as backend:
        for symbol in atoms:
            backend.add_rule([backend.add_atom(symbol)])
    return len(atoms)
