"""Polyline geometry of executed programs: pieces (one per action), intersections, areas, hulls, symmetry.

A shape is executed once with normal strokes from a fixed pose (origin, heading 0, scale 1, so lengths are
the program's own units); each action becomes a `Piece`: a straight segment or a circular arc described
exactly (centre, radius, signed sweep in radians, counter-clockwise positive) together with its sampled
centreline. Everything downstream (stroke graph, features, matching) works on pieces, so stroke types,
zigzag vertices and stamps never enter a geometric attribute.

Tolerances are relative to the size of the drawing (`tolerance(points)`), which keeps every definition
invariant to position, heading and scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, QhullError, cKDTree

from dsl.settings import ARC_STEP, CORNER_DEGREES, GRAZING_DEPTH, RELATIVE_TOLERANCE
from dsl.turtle import execute_shape
from dsl.types import Pose, Shape, StrokeType


@dataclass(frozen=True, slots=True)
class Piece:
    """One drawn action. `sweep` is 0 for a line; an arc rotates `start` about `centre` by `sweep`."""

    start: np.ndarray
    end: np.ndarray
    centre: np.ndarray | None = None
    radius: float = 0.0
    sweep: float = 0.0
    action: int = 0  # index of the action in its shape

    @property
    def is_line(self) -> bool:
        return self.centre is None

    @property
    def length(self) -> float:
        if self.is_line:
            return float(np.linalg.norm(self.end - self.start))
        return abs(self.sweep) * self.radius

    def point(self, t: float) -> np.ndarray:
        if self.is_line:
            return self.start + t * (self.end - self.start)
        return rotate(self.start - self.centre, self.sweep * t) + self.centre

    def points(self, ts: np.ndarray) -> np.ndarray:
        """`point` for an array of parameters: (N, 2)."""
        ts = np.asarray(ts, dtype=float)[:, None]
        if self.is_line:
            return self.start + ts * (self.end - self.start)
        angles = self.sweep * ts[:, 0]
        rel = self.start - self.centre
        c, s = np.cos(angles), np.sin(angles)
        return self.centre + np.stack([c * rel[0] - s * rel[1], s * rel[0] + c * rel[1]], axis=1)

    def direction(self, t: float) -> float:
        """Direction of travel (radians) at parameter t in [0, 1]."""
        if self.is_line:
            d = self.end - self.start
            return math.atan2(d[1], d[0])
        rel = self.point(t) - self.centre
        return math.atan2(rel[1], rel[0]) + math.copysign(math.pi / 2, self.sweep)

    def sample(self, t0: float = 0.0, t1: float = 1.0) -> np.ndarray:
        """The centreline between parameters t0 and t1 as an (N, 2) polyline."""
        if self.is_line:
            return np.array([self.point(t0), self.point(t1)])
        n = max(2, int(math.ceil(abs(self.sweep * (t1 - t0)) / ARC_STEP)) + 1)
        return self.points(np.linspace(t0, t1, n))

    def parameter(self, p: np.ndarray) -> float:
        """The parameter of the point of the piece's line or circle nearest to p (may leave [0, 1])."""
        if self.is_line:
            d = self.end - self.start
            return float(np.dot(p - self.start, d) / max(np.dot(d, d), 1e-18))
        a0 = math.atan2(*(self.start - self.centre)[::-1])
        a = math.atan2(*(p - self.centre)[::-1])
        turn = ((a - a0) * math.copysign(1.0, self.sweep)) % (2 * math.pi)
        span = abs(self.sweep)
        if turn > span and turn - 2 * math.pi > -(turn - span):
            turn -= 2 * math.pi  # closer to the start than to the end
        return turn / span


def rotate(v: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def wrap_degrees(angle: float) -> float:
    """An angle in degrees mapped to (-180, 180]."""
    a = (angle + 180.0) % 360.0 - 180.0
    return 180.0 if a == -180.0 else a


def shape_pieces(shape: Shape) -> list[Piece]:
    """Execute `shape` with normal strokes from the origin (heading 0, scale 1) and return its pieces.

    Degenerate actions (zero length, zero sweep) draw nothing and are left out."""
    geometry = execute_shape(shape.with_strokes(StrokeType.NORMAL), Pose(0.0, 0.0, 0.0, 1.0), magnifier=False)
    pieces: list[Piece] = []
    heading = 0.0
    for i, action in enumerate(shape.actions):
        heading_before = heading + action.turn
        start, end = geometry.end_points[i], geometry.end_points[i + 1]
        heading = float(geometry.headings[i])
        if action.is_line:
            if action.length > 1e-9:
                pieces.append(Piece(start.copy(), end.copy(), action=i))
            continue
        if abs(action.angle) < 1e-6 or action.radius <= 1e-9:
            continue
        h = math.radians(heading_before)
        centre = start + action.radius * np.array([-math.sin(h), math.cos(h)])
        pieces.append(Piece(start.copy(), end.copy(), centre, action.radius, math.radians(action.angle), i))
    return pieces


def sample_pieces(pieces: list[Piece]) -> list[np.ndarray]:
    return [p.sample() for p in pieces]


def resample_uniform(pieces: list[Piece], count: int = 240) -> np.ndarray:
    """About `count` points spread evenly by arc length over all pieces (a length-weighted point set)."""
    total = sum(p.length for p in pieces) or 1.0
    points = []
    for p in pieces:
        n = max(2, int(round(count * p.length / total)) + 1)
        points.append(p.points(np.linspace(0.0, 1.0, n)))
    return np.concatenate(points)


def diameter(points: np.ndarray) -> float:
    if len(points) < 2:
        return 0.0
    hull = hull_points(points)
    d = hull[:, None, :] - hull[None, :, :]
    return float(np.sqrt((d**2).sum(-1)).max())


def tolerance(points: np.ndarray) -> float:
    return RELATIVE_TOLERANCE * max(diameter(points), 1e-9)


def hull_points(points: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull in counter-clockwise order (the points themselves if degenerate)."""
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError):
        return points
    return points[hull.vertices]


def polygon_area(points: np.ndarray) -> float:
    """Signed area of a closed polygon (counter-clockwise positive)."""
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def line_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance from point p to the (infinite) line through a and b."""
    d = b - a
    return abs(float(d[0] * (p - a)[1] - d[1] * (p - a)[0])) / max(float(np.linalg.norm(d)), 1e-18)


def polygon_perimeter(points: np.ndarray) -> float:
    return float(np.linalg.norm(np.roll(points, -1, axis=0) - points, axis=1).sum())


def width_and_length(points: np.ndarray) -> tuple[float, float]:
    """Minimum width of the convex hull (rotating calipers over hull edges) and the diameter."""
    hull = hull_points(points)
    if len(hull) < 3:
        return 0.0, diameter(points)
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-18)
    spans = hull @ normals.T  # (H, E)
    widths = spans.max(0) - spans.min(0)
    return float(widths.min()), diameter(points)


def chamfer(a: np.ndarray, b_tree: cKDTree) -> float:
    """Largest distance from a point of `a` to the point set behind `b_tree`."""
    distances, _ = b_tree.query(a)
    return float(distances.max())


def reflect(points: np.ndarray, centre: np.ndarray, angle: float) -> np.ndarray:
    """Mirror points across the line through `centre` with direction `angle` (radians)."""
    c, s = math.cos(2 * angle), math.sin(2 * angle)
    rel = points - centre
    return centre + np.stack([c * rel[:, 0] + s * rel[:, 1], s * rel[:, 0] - c * rel[:, 1]], axis=1)


def mirror_axes(points: np.ndarray, salient: np.ndarray, centre: np.ndarray, tol: float) -> list[float]:
    """Candidate mirror-axis directions through `centre`: towards salient points, along the bisectors of
    pairs of salient points at equal distance from the centre, and a coarse grid when nothing is salient."""
    angles = [math.atan2(*(p - centre)[::-1]) for p in salient if np.linalg.norm(p - centre) > tol]
    radii = np.linalg.norm(salient - centre, axis=1) if len(salient) else np.zeros(0)
    for i in range(len(salient)):
        for j in range(i + 1, len(salient)):
            if abs(radii[i] - radii[j]) < 2 * tol:
                d = salient[j] - salient[i]
                angles.append(math.atan2(d[1], d[0]) + math.pi / 2)
    if not angles:
        angles = list(np.linspace(0.0, math.pi, 36, endpoint=False))
    return angles


def is_mirror_symmetric(points: np.ndarray, salient: np.ndarray, tol: float) -> bool:
    """Some line maps the point set onto itself within `tol` (Hausdorff distance)."""
    centre = points.mean(axis=0)
    tree = cKDTree(points)
    salient_tree = cKDTree(salient) if len(salient) else None
    for angle in mirror_axes(points, salient, centre, tol):
        if salient_tree is not None and chamfer(reflect(salient, centre, angle), salient_tree) > 2 * tol:
            continue
        if chamfer(reflect(points, centre, angle), tree) <= tol:
            return True
    return False


def is_point_symmetric(points: np.ndarray, tol: float) -> bool:
    """A half turn about the centroid maps the point set onto itself within `tol`."""
    centre = points.mean(axis=0)
    return chamfer(2 * centre - points, cKDTree(points)) <= tol


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _line_line(a: Piece, b: Piece) -> list[np.ndarray]:
    r, s = a.end - a.start, b.end - b.start
    denom = _cross(r, s)
    if abs(denom) < 1e-12 * max(np.dot(r, r) * np.dot(s, s), 1e-30) ** 0.5:
        return []  # parallel: overlaps show up as end points lying on the other piece
    q = b.start - a.start
    return [a.start + (_cross(q, s) / denom) * r]


def _line_circle(a: Piece, centre: np.ndarray, radius: float) -> list[np.ndarray]:
    d = a.end - a.start
    f = a.start - centre
    qa, qb, qc = np.dot(d, d), 2 * np.dot(f, d), np.dot(f, f) - radius * radius
    disc = qb * qb - 4 * qa * qc
    if qa < 1e-18:
        return []
    if disc < 0:  # no intersection: the nearest point, in case the line only grazes the circle
        foot = a.start - (np.dot(f, d) / qa) * d
        return [centre + radius * (foot - centre) / max(np.linalg.norm(foot - centre), 1e-12)]
    root = math.sqrt(disc)
    return [a.start + ((-qb + sign * root) / (2 * qa)) * d for sign in (-1.0, 1.0)]


def _circle_circle(a: Piece, b: Piece) -> list[np.ndarray]:
    d = b.centre - a.centre
    dist = float(np.linalg.norm(d))
    if dist < 1e-12:
        return []
    if dist > a.radius + b.radius or dist < abs(a.radius - b.radius):  # apart or nested: nearest points
        u = d / dist
        return [a.centre + a.radius * u, a.centre - a.radius * u]
    x = (dist * dist + a.radius**2 - b.radius**2) / (2 * dist)
    h = math.sqrt(max(a.radius**2 - x * x, 0.0))
    base = a.centre + x * d / dist
    perp = np.array([-d[1], d[0]]) / dist
    return [base + h * perp, base - h * perp]


def _curve_distance(piece: Piece, p: np.ndarray) -> float:
    """Distance from p to the piece's full line or circle."""
    if piece.is_line:
        return line_distance(p, piece.start, piece.end)
    return abs(float(np.linalg.norm(p - piece.centre)) - piece.radius)


def _merge_grazing(a: Piece, b: Piece, candidates: list[np.ndarray], tol: float) -> list[np.ndarray]:
    """A line and a circle, or two circles, that graze each other cross at two nearby points around a lens
    far thinner than the pen: drawn, the strokes only touch. Such a pair of crossings becomes one touching
    point (the middle of the lens), as for exact tangency, so that a tangency drawn with rounded values
    (an arc meeting a line or another arc) does not split into two crossings and a sliver region."""
    if len(candidates) != 2 or (a.is_line and b.is_line):
        return candidates
    p, q = candidates
    mid = 0.5 * (p + q)
    if _curve_distance(a, mid) + _curve_distance(b, mid) > GRAZING_DEPTH * tol:
        return candidates
    # the middle of the lens: halfway between the two curves along the chord's normal
    return [mid + 0.5 * (_nearest_on_curve(a, mid) - mid) + 0.5 * (_nearest_on_curve(b, mid) - mid)]


def _nearest_on_curve(piece: Piece, p: np.ndarray) -> np.ndarray:
    if piece.is_line:
        d = piece.end - piece.start
        return piece.start + float(np.dot(p - piece.start, d) / max(np.dot(d, d), 1e-18)) * d
    rel = p - piece.centre
    return piece.centre + piece.radius * rel / max(float(np.linalg.norm(rel)), 1e-12)


def distance_to_piece(piece: Piece, p: np.ndarray) -> tuple[float, float]:
    """(distance, parameter) of the point of the piece nearest to p."""
    t = min(max(piece.parameter(p), 0.0), 1.0)
    return float(np.linalg.norm(piece.point(t) - p)), t


def meeting_points(a: Piece, b: Piece, tol: float) -> list[tuple[float, float, np.ndarray]]:
    """Where two pieces cross or touch, as (parameter on a, parameter on b, point).

    Proper intersections of the underlying lines/circles that fall on both pieces, plus every end point
    of one piece within `tol` of the other (touching, T-junctions, overlapping retraces)."""
    if a.is_line and b.is_line:
        candidates = _line_line(a, b)
    elif a.is_line:
        candidates = _line_circle(a, b.centre, b.radius)
    elif b.is_line:
        candidates = _line_circle(b, a.centre, a.radius)
    else:
        candidates = _circle_circle(a, b)
    candidates = _merge_grazing(a, b, candidates, tol)
    found = []
    for p in candidates:
        da, ta = distance_to_piece(a, p)
        db, tb = distance_to_piece(b, p)
        if da <= tol and db <= tol:
            found.append((ta, tb, p))
    for p, on_a in ((a.start, 0.0), (a.end, 1.0)):
        d, tb = distance_to_piece(b, p)
        if d <= tol:
            found.append((on_a, tb, b.point(tb) if 0.0 < tb < 1.0 else p))
    for p, on_b in ((b.start, 0.0), (b.end, 1.0)):
        d, ta = distance_to_piece(a, p)
        if d <= tol:
            found.append((ta, on_b, a.point(ta) if 0.0 < ta < 1.0 else p))
    return found


def junction_corners(pieces: list[Piece], closed: bool) -> tuple[list[float], list[np.ndarray]]:
    """Corner angles (degrees, 0 = spike, 180 = straight) at the junctions where the direction jumps."""
    pairs = list(zip(pieces[:-1], pieces[1:]))
    if closed and len(pieces) > 1:
        pairs.append((pieces[-1], pieces[0]))
    angles, points = [], []
    for a, b in pairs:
        jump = abs(wrap_degrees(math.degrees(b.direction(0.0) - a.direction(1.0))))
        if CORNER_DEGREES <= jump < 180.0 - CORNER_DEGREES:  # a full turn back retraces: no corner
            angles.append(180.0 - jump)
            points.append(b.start)
    return angles, points


def cross_sections(polygon: np.ndarray, angles: np.ndarray, count: int = 48) -> tuple[np.ndarray, ...]:
    """Cross-sections of a polygon by `count` evenly spread lines perpendicular to each direction in
    `angles` (even-odd rule). Per direction and line, each (D, count): total length inside, number of
    inside intervals, first and last boundary position along the line."""
    normals = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (D, 2)
    a = normals @ polygon.T  # (D, N)
    b = np.stack([-normals[:, 1], normals[:, 0]], axis=1) @ polygon.T
    a2, b2 = np.roll(a, -1, axis=1), np.roll(b, -1, axis=1)
    lo, hi = a.min(axis=1, keepdims=True), a.max(axis=1, keepdims=True)
    s = (lo + (hi - lo) * (np.arange(count) + 0.5) / count)[:, None, :]  # (D, 1, K)
    crossing = (a[..., None] - s) * (a2[..., None] - s) < 0  # (D, N, K)
    with np.errstate(divide="ignore", invalid="ignore"):
        position = b[..., None] + (s - a[..., None]) / (a2 - a)[..., None] * (b2 - b)[..., None]
    position = np.sort(np.where(crossing, position, np.inf), axis=1)
    hits = crossing.sum(axis=1)  # (D, K)
    finite = np.where(np.isfinite(position), position, 0.0)
    pairs = finite.shape[1] // 2
    widths = np.abs(finite[:, 1 : 2 * pairs : 2] - finite[:, 0 : 2 * pairs : 2]).sum(axis=1)
    first = finite[:, 0]
    last = np.take_along_axis(finite, np.maximum(hits - 1, 0)[:, None, :], axis=1)[:, 0]
    return widths, hits // 2, first, last


def principal_angle(polygon: np.ndarray) -> float:
    """Direction (radians) of the major axis of a polygon's area moments (exact for the polygon)."""
    x, y = polygon[:, 0] - polygon[:, 0].mean(), polygon[:, 1] - polygon[:, 1].mean()
    x2, y2 = np.roll(x, -1), np.roll(y, -1)
    cross = x * y2 - x2 * y
    cross = cross * np.sign(cross.sum())  # the same for either orientation
    ixx = float(((y * y + y * y2 + y2 * y2) * cross).sum())
    iyy = float(((x * x + x * x2 + x2 * x2) * cross).sum())
    ixy = float(((x * y2 + 2 * x * y + 2 * x2 * y2 + x2 * y) * cross).sum())
    return 0.5 * math.atan2(ixy, iyy - ixx)


def neck_pinch(polygon: np.ndarray, min_share: float, directions: int = 36) -> float:
    """How pinched the narrowest waist of a region is: over cross-sections that are one interval and leave
    at least `min_share` of the area on each side, the largest value of (smallest overhang of the two
    parts beyond the ends of the cross-section) / (its length). A waist has the region widening past both
    of its ends on both sides; 0 = no waist."""
    angles = principal_angle(polygon) + np.linspace(0.0, math.pi, directions, endpoint=False)
    widths, intervals, first, last = cross_sections(polygon, angles)
    area = np.cumsum(widths, axis=1)
    total = area[:, -1:]
    low_before, high_before = np.minimum.accumulate(first, axis=1), np.maximum.accumulate(last, axis=1)
    low_after = np.minimum.accumulate(first[:, ::-1], axis=1)[:, ::-1]
    high_after = np.maximum.accumulate(last[:, ::-1], axis=1)[:, ::-1]
    mid = slice(1, widths.shape[1] - 1)
    overhang = np.minimum.reduce([
        first[:, mid] - low_before[:, :-2], high_before[:, :-2] - last[:, mid],
        first[:, mid] - low_after[:, 2:], high_after[:, 2:] - last[:, mid],
    ])  # fmt: skip
    valid = (intervals[:, mid] == 1) & (np.minimum(area[:, :-2], total - area[:, mid]) >= min_share * total)
    valid &= total > 0
    scores = np.where(valid, overhang / np.maximum(widths[:, mid], 1e-12), 0.0)
    return float(max(scores.max(), 0.0))
