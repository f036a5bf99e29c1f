"""Concept features of an image program, computed from its executed geometry (never from shape names).

`image_features(program)` returns the 26 attributes of the shape table (`dsl.library.ATTRIBUTES`: 1, 0,
or None where the attribute does not apply) and numeric counts (`COUNT_NAMES`). Each shape is executed
once from a fixed pose with normal strokes (`dsl.geometry.shape_pieces`) and turned into a planar stroke
graph (`dsl.stroke_graph`); every definition is invariant to position, heading, scale, start point,
tracing direction and stroke type. Distances are relative to the drawing's diameter (about a pen width,
RELATIVE_TOLERANCE). The definitions, read off the shapes the table labels 1 and 0:

counts
  straight_lines     line actions, merged when collinear and touching (a side drawn as two actions, or
                     retraced, is one line); straight_segments: straight edges between meeting points
                     (a line cut by a crossing or a touching stroke counts as two)
  arcs               arc actions merged when on the same circle and touching
  corners            junctions of consecutive actions where the direction of travel jumps
  acute/right/obtuse_angles  the angle between every two strokes that leave a node and do not go
                     straight on (corners, crossings, touching figures); right within RIGHT_ANGLE_DEGREES
  crossings          nodes where strokes meet and one of them goes on through the point (X or T), or
                     where three or more figures meet (six stroke ends or more);
                     junctions: nodes where three or more stroke ends meet; proper_crossings: X only
  parts              perceived parts: every enclosed region, and every connected group of strokes that
                     encloses nothing; components: connected pieces; closed_loops: enclosed regions
  free_ends, shapes, actions

attributes
  has_N_straight_lines   straight_lines <= N <= straight_segments (the table counts a cut line either way)
  closed_shape       encloses a region and has no loose end; convex (one region only): fills its hull
  thin_shape         narrow hull, or the enclosed regions form a thin band
  symmetric          a mirror line maps the drawing onto itself; self_transposed: a half turn does
  has_acute/obtuse_angle, has_angle   from the angles above; has_line_crossing: crossings > 0
  has_two_parts      exactly two enclosed regions; balanced/unbalanced_two by their area ratio
  necked             an enclosed region narrows to a waist overhung on both ends by both halves
  exist_triangle/quadrangle   a region bounded by 3 / 4 straight sides; exist_regular: a region that
                     is a circle or a polygon regular to the eye (side lengths within REGULAR_SPREAD,
                     turns within REGULAR_TURN_DEGREES: a 0.6 x 0.7 rectangle reads as a square);
                     exist_sector: a region bounded by one arc and two radii (or a diameter)

The stroke graph treats what the pen cannot show as the table does: a line or arc that grazes another
around a sliver thinner than the pen touches it once (`dsl.geometry.meeting_points`), and strokes that
almost meet at one point and cut a region smaller than two pen widths meet there (`dsl.stroke_graph`);
so action strings rounded to three decimals have the features of the exact shape.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from dsl.geometry import (
    Piece,
    hull_points,
    is_mirror_symmetric,
    is_point_symmetric,
    junction_corners,
    neck_pinch,
    polygon_area,
    polygon_perimeter,
    line_distance,
    shape_pieces,
    tolerance,
    width_and_length,
)
from dsl.library import ATTRIBUTES, load_library
from dsl.settings import (BALANCED_RATIO, CONVEX_FILL, CORNER_DEGREES, MEETING_ENDS, NECK_PINCH, NECK_SIDE_SHARE,
                          REGULAR_SPREAD, REGULAR_TURN_DEGREES, RELATIVE_TOLERANCE, RIGHT_ANGLE_DEGREES,
                          SYMMETRY_TOLERANCE, THIN_BAND, THIN_RATIO, UNBALANCED_RATIO)
from dsl.stroke_graph import Face, StrokeGraph
from dsl.types import ImageProgram, Shape, StrokeType

STRAIGHT_LINE_ATTRIBUTES = tuple(f"has_{word}_straight_lines"
                                 for word in ("three", "four", "five", "six", "seven", "eight"))  # N = 3 ... 8
COUNT_NAMES = (
    "straight_lines", "straight_segments", "arcs", "corners", "acute_angles", "right_angles",
    "obtuse_angles", "parts", "components", "crossings", "junctions", "proper_crossings", "free_ends",
    "closed_loops", "shapes", "actions",
)  # fmt: skip


@dataclass(slots=True)
class ShapeGeometryFacts:
    """Everything the attributes of one shape are computed from."""

    pieces: list[Piece]
    points: np.ndarray  # length-uniform samples of the centreline
    tol: float
    graph: StrokeGraph
    corner_angles: list[float]
    corner_points: list[np.ndarray]
    straight_lines: int
    arcs: int
    closed: bool  # the stroke ends where it starts


@dataclass(frozen=True, slots=True)
class ImageFeatures:
    attributes: dict[str, int | None]
    counts: dict[str, int] = field(default_factory=dict)


def collinear_touching(a: Piece, b: Piece, tol: float) -> bool:
    da, db = a.end - a.start, b.end - b.start
    la, lb = np.linalg.norm(da), np.linalg.norm(db)
    if abs(da[0] * db[1] - da[1] * db[0]) > math.sin(math.radians(CORNER_DEGREES)) * la * lb:
        return False
    u = da / la
    normal = np.array([-u[1], u[0]])
    if max(abs(np.dot(b.start - a.start, normal)), abs(np.dot(b.end - a.start, normal))) > tol:
        return False
    lo, hi = sorted((np.dot(b.start - a.start, u), np.dot(b.end - a.start, u)))
    return lo <= la + tol and hi >= -tol


def same_circle_touching(a: Piece, b: Piece, tol: float) -> bool:
    if np.linalg.norm(a.centre - b.centre) > tol or abs(a.radius - b.radius) > tol:
        return False
    ends_a, ends_b = (a.start, a.end), (b.start, b.end)
    return any(np.linalg.norm(p - q) <= tol for p in ends_a for q in ends_b)


def count_groups(pieces: list[Piece], joined) -> int:
    """Number of classes of the transitive closure of `joined` over `pieces`."""
    parent = list(range(len(pieces)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces)):
            if find(i) != find(j) and joined(pieces[i], pieces[j]):
                parent[find(i)] = find(j)
    return len({find(i) for i in range(len(pieces))})


@functools.lru_cache(maxsize=4096)
def shape_facts(shape: Shape) -> ShapeGeometryFacts | None:
    """The geometry facts of one shape; None if it draws nothing (every action of zero length or sweep)."""
    pieces = shape_pieces(shape)
    if not pieces:
        return None
    tol = tolerance(np.concatenate([p.sample() for p in pieces]))
    graph = StrokeGraph(pieces, tol)
    closed = bool(np.linalg.norm(pieces[-1].end - pieces[0].start) <= tol)
    angles, corner_points = junction_corners(pieces, closed)
    lines = [p for p in pieces if p.is_line]
    arcs = [p for p in pieces if not p.is_line]
    return ShapeGeometryFacts(
        pieces=pieces,
        points=graph.sample_uniform(),
        tol=tol,
        graph=graph,
        corner_angles=angles,
        corner_points=corner_points,
        straight_lines=count_groups(lines, lambda a, b: collinear_touching(a, b, tol) or collinear_touching(b, a, tol)),
        arcs=count_groups(arcs, lambda a, b: same_circle_touching(a, b, tol)),
        closed=closed,
    )


def crossing_nodes(graph: StrokeGraph) -> set[int]:
    """Nodes where lines cross to the eye: a stroke goes on through the point (X or T), or three or more
    figures meet there (three lenses or triangles touching at their tips: the table labels such meeting
    points crossings, 23 of the 24 library shapes with one; two figures meeting at a tip it labels either
    way, see docs/attributes.md)."""
    meeting = {v for v in graph.graph.nodes if graph.graph.degree(v) >= MEETING_ENDS}
    return set(graph.through_junctions()) | meeting


def shape_counts(facts: ShapeGeometryFacts, shape: Shape) -> dict[str, int]:
    angles = [a for _, a in facts.graph.node_angles()]
    return {
        "straight_lines": facts.straight_lines,
        "straight_segments": facts.graph.straight_edges(),
        "arcs": facts.arcs,
        "corners": len(facts.corner_angles),
        "acute_angles": sum(a < 90.0 - RIGHT_ANGLE_DEGREES for a in angles),
        "right_angles": sum(abs(a - 90.0) <= RIGHT_ANGLE_DEGREES for a in angles),
        "obtuse_angles": sum(a > 90.0 + RIGHT_ANGLE_DEGREES for a in angles),
        "parts": facts.graph.parts(),
        "components": facts.graph.components(),
        "crossings": len(crossing_nodes(facts.graph)),
        "junctions": len(facts.graph.junctions()),
        "proper_crossings": len(facts.graph.crossings),
        "free_ends": len(facts.graph.free_ends()),
        "closed_loops": len(facts.graph.faces),
        "shapes": 1,
        "actions": len(shape),
    }


_COMPUTED: dict = {}  # features computed in another process (`remember_features`), by normal-stroke program
COMPUTED_LIMIT = 4096  # programs kept so (the memo is emptied beyond: a long run's later problems bring their own)


def image_features(program: ImageProgram) -> ImageFeatures:
    """Attributes (keyed by `dsl.library.ATTRIBUTES`, None = not applicable) and counts of an image.
    Memoised per program drawn with normal strokes (stroke types never change a feature), so a library
    shape drawn with other strokes is computed once; the caller gets its own dictionaries."""
    key = program.with_strokes(StrokeType.NORMAL)
    cached = _COMPUTED.get(key)
    if cached is None:
        cached = _image_features(key)
    return ImageFeatures(dict(cached.attributes), dict(cached.counts))


def shape_features(program: ImageProgram | None) -> tuple:
    """The features of each shape of `program` alone, as `remember_features` takes them: a worker process that
    read an image computes what the problem's facts will ask of each shape (`solver.induction.facts.shape_facts`). Nothing
    for no program, or when a shape cannot be taken (the facts compute it again then, and report the fault)."""
    if program is None:
        return ()
    keys = [ImageProgram((shape.with_strokes(StrokeType.NORMAL),)) for shape in program.shapes]
    try:
        return tuple((key, _image_features(key)) for key in keys)
    except Exception:
        return ()


def remember_features(known) -> None:
    """Features another process computed ((normal-stroke program, ImageFeatures), ...: `shape_features`), so that
    `image_features` here need not compute them again."""
    if len(_COMPUTED) > COMPUTED_LIMIT:
        _COMPUTED.clear()
    _COMPUTED.update(known)


@functools.lru_cache(maxsize=4096)
def _image_features(program: ImageProgram) -> ImageFeatures:
    per_shape = []
    counts = {name: 0 for name in COUNT_NAMES}
    for shape in program.shapes:
        own = _shape_own_features(shape)
        if own is None:  # draws nothing: no attribute applies
            per_shape.append({name: None for name in ATTRIBUTES})
            counts["shapes"] += 1
            counts["actions"] += len(shape)
            continue
        attributes, shape_count = own
        per_shape.append(attributes)
        for name, value in shape_count.items():
            counts[name] += value
    attributes = combine_attributes(per_shape, counts)
    return ImageFeatures({name: attributes.get(name) for name in ATTRIBUTES}, counts)


def _shape_own_features(shape: Shape) -> tuple[dict, dict] | None:
    """One shape's attributes and counts (`shape_attributes`, `shape_counts`), or None when it draws nothing: a
    library shape drawn with normal strokes from the shipped table (`library_features`), any other computed."""
    known = library_features().get(shape)
    if known is not None:
        return dict(known[0]), dict(known[1])
    return _computed_own_features(shape)


def _computed_own_features(shape: Shape) -> tuple[dict, dict] | None:
    """One shape's attributes and counts computed from its geometry, or None when it draws nothing."""
    facts = shape_facts(shape)
    if facts is None:
        return None
    shape_count = shape_counts(facts, shape)
    return shape_attributes(facts, shape_count), shape_count


LIBRARY_FEATURES_FILE = "library_features.json"  # dsl/data, written by `write_library_features`


@functools.cache
def library_features() -> dict[Shape, tuple[dict, dict]]:
    """Each library shape drawn with normal strokes -> its own attributes and counts, as `_computed_own_features`
    computes them, read from package data: the readings of basic and abstract problems are library shapes, and
    computing a shape's features takes ~10 ms (generated basic problems: ~0.1 s of a problem's CPU). Keyed by the
    exact shape, so a reading off the library's values is computed as before. Empty without the file."""
    path = resources.files("dsl").joinpath("data", LIBRARY_FEATURES_FILE)
    if not path.is_file():
        return {}
    table = json.loads(path.read_text(encoding="utf-8"))
    library = load_library()
    found = {}
    for name, (attribute_values, count_values) in table["shapes"].items():
        shape = library[name].shape.with_strokes(StrokeType.NORMAL)
        found[shape] = (dict(zip(table["attributes"], attribute_values)), dict(zip(table["counts"], count_values)))
    return found


@functools.cache
def _table_disagreements() -> dict[Shape, frozenset]:
    """Each library shape (normal strokes) -> the attributes on which the shape table labels it (0 or 1) otherwise
    than `_shape_own_features` computes it (48 of the 627 shapes: `bench attributes`, `docs/attributes.md`)."""
    found = {}
    for entry in load_library().values():
        shape = entry.shape.with_strokes(StrokeType.NORMAL)
        own = _shape_own_features(shape)
        computed = own[0] if own is not None else {}
        found[shape] = frozenset(name for name, value in entry.attributes.items()
                                 if value in (0, 1) and computed.get(name) is not None and computed[name] != value)
    return found


def table_disagreements(program: ImageProgram) -> tuple[str, ...]:
    """The attributes on which the shape table labels a shape of `program` that is a library shape (exactly, strokes
    aside) otherwise than its features are computed here: a fact of the image that the table disputes. Features
    are never taken from the table (module docstring); a label resting on a disputed fact is less sure
    (`solver.solving.confidence`)."""
    table = _table_disagreements()
    return tuple(sorted({name for shape in program.shapes
                         for name in table.get(shape.with_strokes(StrokeType.NORMAL), ())}))


def compute_library_features() -> dict:
    """The table `library_features` reads, computed (every library shape's `_computed_own_features`, normal strokes;
    about 6 s), as written to `dsl/data/library_features.json` by `write_library_features`."""
    shapes, attribute_names, count_names = {}, None, None
    for name, entry in load_library().items():
        own = _computed_own_features(entry.shape.with_strokes(StrokeType.NORMAL))
        if own is None:
            raise ValueError(f"library shape {name} draws nothing")
        attributes, shape_count = own
        attribute_names = attribute_names or list(attributes)
        count_names = count_names or list(shape_count)
        if list(attributes) != attribute_names or list(shape_count) != count_names:
            raise ValueError(f"library shape {name}: features named otherwise than the first shape's")
        shapes[name] = [list(attributes.values()), list(shape_count.values())]
    return {"about": "each library shape's own features, normal strokes (dsl.features.compute_library_features); "
                     "derived from the Bongard-LOGO shape tables (MIT, see ATTRIBUTION.md)",
            "attributes": attribute_names, "counts": count_names, "shapes": shapes}


def write_library_features(path) -> None:
    """Write `compute_library_features()` as JSON to `path` (`python -m dsl.features PATH` remakes the shipped
    table after a change to the feature definitions; a test checks that the shipped table is current)."""
    Path(path).write_text(json.dumps(compute_library_features(), separators=(",", ":")) + "\n", encoding="utf-8")


def is_polygon(face: Face, corners: int) -> bool:
    return len(face.sides) == corners and all(s.is_line for s in face.sides)


def is_circle(face: Face) -> bool:
    return len(face.sides) == 1 and not face.sides[0].is_line and not face.turns


def is_regular(face: Face) -> bool:
    if is_circle(face):
        return True
    if len(face.sides) < 3 or not all(s.is_line for s in face.sides):
        return False
    lengths = np.array([s.length for s in face.sides])
    turns = np.array(face.turns)
    return bool(lengths.std() <= REGULAR_SPREAD * lengths.mean() and np.ptp(turns) <= REGULAR_TURN_DEGREES)


def is_sector(face: Face, tol: float) -> bool:
    """A circular sector: a region bounded by one arc and straight sides that lie on lines through the
    arc's centre (two radii, or one diameter for a half disc)."""
    lines = [s for s in face.sides if s.is_line]
    arcs = [s for s in face.sides if not s.is_line]
    if len(arcs) != 1 or not 1 <= len(lines) <= 2 or len(face.sides) != len(lines) + 1:
        return False
    centre = arcs[0].centre
    return all(line_distance(centre, s.start, s.end) <= 2 * tol for s in lines)


def shape_attributes(facts: ShapeGeometryFacts, counts: dict[str, int]) -> dict[str, int | None]:
    faces = facts.graph.faces
    angles = facts.corner_angles
    lines = counts["straight_lines"]
    attributes: dict[str, int | None] = {
        "has_curve": int(counts["arcs"] > 0),
        "has_straight_line": int(lines > 0),
        "closed_shape": int(len(faces) > 0 and counts["free_ends"] == 0),
        "has_angle": int(len(angles) + counts["acute_angles"] + counts["right_angles"] + counts["obtuse_angles"] > 0),
        "has_acute_angle": int(counts["acute_angles"] > 0),
        "has_obtuse_angle": int(counts["obtuse_angles"] > 0),
        "has_line_crossing": int(counts["crossings"] > 0),
        "exist_regular": int(any(is_regular(f) for f in faces)),
        "exist_triangle": int(any(is_polygon(f, 3) for f in faces)),
        "exist_quadrangle": int(any(is_polygon(f, 4) for f in faces)),
        "exist_sector": int(any(is_sector(f, facts.tol) for f in faces)),
    }
    attributes.update(line_count_attributes(lines, counts["straight_segments"]))
    attributes.update(symmetry_attributes(facts))
    attributes.update(outline_attributes(facts))
    attributes.update(two_part_attributes(facts))
    return attributes


def salient_points(facts: ShapeGeometryFacts) -> np.ndarray:
    """Corners, stroke ends, crossings and branch points: what a mirror must map onto each other."""
    graph = facts.graph
    nodes = [graph.nodes[v] for v in graph.graph.nodes if graph.graph.degree(v) != 2]
    points = nodes + facts.corner_points + [graph.nodes[v] for v in graph.crossings]
    return np.array(points).reshape(-1, 2)


def symmetry_attributes(facts: ShapeGeometryFacts) -> dict[str, int | None]:
    tol = SYMMETRY_TOLERANCE / RELATIVE_TOLERANCE * facts.tol
    symmetric = is_mirror_symmetric(facts.points, salient_points(facts), tol)
    transposed = is_point_symmetric(facts.points, tol)
    return {
        "symmetric": int(symmetric),
        "self_transposed": int(transposed),
        "symmetric_transposed": int(symmetric and transposed),
    }


def outline_attributes(facts: ShapeGeometryFacts) -> dict[str, int | None]:
    """Thin: the drawing is narrow (hull width / diameter) or what it encloses is a thin band (mean
    thickness 2 * area / perimeter of the regions, over the diameter). Convex: applies to a drawing that
    encloses exactly one region, which is convex when it fills its hull."""
    width, length = width_and_length(facts.points)
    faces = facts.graph.faces
    thin = width < THIN_RATIO * length
    if faces:
        area = sum(f.area for f in faces)
        perimeter = sum(polygon_perimeter(f.polygon) for f in faces)
        thin = thin or 2 * area / perimeter < THIN_BAND * length
    convex = None
    if len(faces) == 1:
        face = faces[0]
        hull_area = abs(polygon_area(hull_points(face.polygon)))
        convex = int(face.area >= CONVEX_FILL * hull_area)
    return {"thin_shape": int(thin), "convex": convex}


def is_necked(facts: ShapeGeometryFacts) -> bool:
    """Some enclosed region narrows to a waist that both of its halves overhang on both ends."""
    return any(neck_pinch(face.polygon, NECK_SIDE_SHARE) > NECK_PINCH for face in facts.graph.faces)


def two_part_attributes(facts: ShapeGeometryFacts) -> dict[str, int | None]:
    """Two parts: the shape reads as two parts (`StrokeGraph.parts`), i.e. it encloses exactly two
    regions, joined at a point, a crossing or a side; balanced / unbalanced by the area ratio of the
    smaller region to the larger (None in the band between the two thresholds, as the table has it)."""
    faces = facts.graph.faces
    necked = int(is_necked(facts))
    if facts.graph.parts() != 2 or len(faces) != 2:
        return {"has_two_parts": 0, "balanced_two": 0, "unbalanced_two": 0, "necked": necked}
    small, large = sorted(f.area for f in faces)
    balanced: int | None = 1 if small >= BALANCED_RATIO * large else 0 if small <= UNBALANCED_RATIO * large else None
    unbalanced = None if balanced is None else 1 - balanced
    return {"has_two_parts": 1, "balanced_two": balanced, "unbalanced_two": unbalanced, "necked": necked}


def combine_attributes(per_shape: list[dict[str, int | None]], counts: dict[str, int]) -> dict[str, int | None]:
    """One shape: its attributes. Two shapes (relative placement unknown): a property of the image holds
    if it holds for some shape ("has", "exist") or for every shape (the others); counts are totals."""
    if len(per_shape) == 1:
        return per_shape[0]
    combined: dict[str, int | None] = {}
    for name in per_shape[0]:
        values = [a[name] for a in per_shape]
        if None in values:
            combined[name] = None
        elif name.startswith(("has_", "exist_")):
            combined[name] = int(any(values))
        else:
            combined[name] = int(all(values))
    combined.update(line_count_attributes(counts["straight_lines"], counts["straight_segments"]))
    return combined


def line_count_attributes(lines: int, segments: int) -> dict[str, int]:
    """"Has N straight lines" holds for every N between the number of straight lines (collinear
    consecutive pieces merged) and the number of straight segments between meeting points: a line cut by
    a crossing can be seen as one line or as two."""
    return {name: int(lines <= n <= max(lines, segments)) for n, name in enumerate(STRAIGHT_LINE_ATTRIBUTES, 3)}


if __name__ == "__main__":
    import sys

    write_library_features(sys.argv[1] if len(sys.argv) > 1 else "dsl/data/" + LIBRARY_FEATURES_FILE)
