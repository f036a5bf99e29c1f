"""The human-designed shape library (spec §5): 627 shapes, super classes, `if stamp`, 25 attributes.

Data: `dsl/data/*.tsv`, copied verbatim from the Bongard-LOGO repository (MIT, see ATTRIBUTION.md).
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from importlib import resources

from dsl.types import Action, Shape

# The 25 attribute columns of the attributes table, in column order, then the derived one (spec §3.4).
TABLE_ATTRIBUTES: tuple[str, ...] = (
    "convex",
    "has_curve",
    "has_straight_line",
    "symmetric",
    "self_transposed",
    "has_three_straight_lines",
    "has_four_straight_lines",
    "has_five_straight_lines",
    "has_six_straight_lines",
    "has_seven_straight_lines",
    "has_eight_straight_lines",
    "thin_shape",
    "closed_shape",
    "has_acute_angle",
    "has_obtuse_angle",
    "has_angle",
    "has_line_crossing",
    "has_two_parts",
    "balanced_two",
    "unbalanced_two",
    "necked",
    "exist_regular",
    "exist_triangle",
    "exist_quadrangle",
    "exist_sector",
)
ATTRIBUTES: tuple[str, ...] = TABLE_ATTRIBUTES + ("symmetric_transposed",)


class LibraryError(ValueError):
    """A malformed row in a shape table."""


@dataclass(frozen=True, slots=True)
class LibraryShape:
    """One human-designed shape. `attributes` maps each of ATTRIBUTES to 1, 0 or -1 (not applicable);
    any other table value (one stray 10, spec §5.2) is kept as it is and belongs to neither pool."""

    name: str
    display_name: str
    super_class: str
    shape: Shape
    if_stamp: bool
    attributes: dict[str, int]


def _read_tsv(filename: str) -> list[dict[str, str]]:
    text = resources.files("dsl").joinpath("data", filename).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def parse_turn(token: str) -> float:
    """'L120.0' -> 120.0, 'R30' -> -30.0 (left positive)."""
    token = token.strip()
    if not token or token[0] not in "LR":
        raise LibraryError(f"bad turn {token!r}: expected L<deg> or R<deg>")
    angle = float(token[1:])
    return angle if token[0] == "L" else -angle


def parse_base_action(token: str, turn: float) -> Action:
    """'line_0.5' or 'arc_0.5_-90.0' (TSV notation, spec §1.3) with its turn -> a normal-stroke Action."""
    fields = token.strip().split("_")
    if fields[0] == "line" and len(fields) == 2:
        return Action.line(float(fields[1]), turn)
    if fields[0] == "arc" and len(fields) == 3:
        return Action.arc(float(fields[1]), float(fields[2]), turn)
    raise LibraryError(f"bad base action {token!r}")


def _shape_from_row(row: dict[str, str]) -> Shape:
    actions = [t for t in row["set of base actions"].split(",")]
    turns = [parse_turn(t) for t in row["turn angles"].split("--")]
    if len(actions) != len(turns):
        raise LibraryError(f"{row['shape function name']}: {len(actions)} actions but {len(turns)} turns")
    return Shape(tuple(parse_base_action(a, t) for a, t in zip(actions, turns)))


def _derived_symmetric_transposed(values: dict[str, int]) -> int:
    pair = (values["symmetric"], values["self_transposed"])
    if -1 in pair:
        return -1
    if 0 in pair:
        return 0
    return 1 if pair == (1, 1) else -1


@functools.cache
def load_library() -> dict[str, LibraryShape]:
    """All 627 shapes by shape function name, in file order."""
    attribute_rows = {r["shape function name"]: r for r in _read_tsv("human_designed_shapes_attributes.tsv")}
    library: dict[str, LibraryShape] = {}
    for row in _read_tsv("human_designed_shapes.tsv"):
        name = row["shape function name"]
        attrs_row = attribute_rows[name]
        values = {a: int(float(attrs_row[a])) for a in TABLE_ATTRIBUTES}
        values["symmetric_transposed"] = _derived_symmetric_transposed(values)
        library[name] = LibraryShape(
            name=name,
            display_name=row["shape name"],
            super_class=row["super class"],
            shape=_shape_from_row(row),
            if_stamp=attrs_row["if stamp"].strip() == "1",
            attributes=values,
        )
    return library


def super_classes() -> dict[str, list[str]]:
    """Super class -> shape names, in file order."""
    groups: dict[str, list[str]] = {}
    for shape in load_library().values():
        groups.setdefault(shape.super_class, []).append(shape.name)
    return groups


@functools.cache
def look_alikes(name: str) -> tuple[str, ...]:
    """The other library shapes of library shape `name`'s super class (exact string), in file order: what the basic
    generator draws in a shape's place in set B (spec 3.3)."""
    return tuple(n for n in super_classes()[load_library()[name].super_class] if n != name)
