"""Library-shape matching: which human-designed shape does a one-stroke shape draw?

Invariances: stroke types (the shape is executed with normal strokes), position and scale (the point set
is centred on its centroid and scaled to unit RMS radius), start point and tracing direction (the drawing
is compared as a point set sampled evenly by arc length, so neither the order of actions nor where the
stroke starts matters), and heading (the best rotation is searched). Mirror images are different shapes.

Descriptor per shape: MATCH_POINTS points spread evenly along the centreline (normalised as above) and a polar
histogram (radius x angle). Matching: a rotation-invariant pre-filter (radial and distance histograms)
keeps the closest library shapes; for each, the best rotations come from circular cross-correlation of the
polar histograms (FFT over the angle axis) and are refined by the symmetric mean nearest-point distance
(chamfer). Score = 1 - distance / SCORE_SCALE, floored at 0. Library shapes whose drawings are identical
within TIE_DISTANCE are one group (`ShapeMatch.names`), reported together rather than guessed between.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from dsl.geometry import resample_uniform, shape_pieces
from dsl.jit import njit, stored_arrays
from dsl.library import load_library
from dsl.types import ImageProgram, Shape

from search.kernels import stable_argsort
from search.settings import ANGLE_BINS, MATCH_POINTS, PREFILTER, RADIUS_BINS, ROTATION_PEAKS, SCORE_SCALE, TIE_DISTANCE


@dataclass(frozen=True, slots=True)
class ShapeMatch:
    names: tuple[str, ...]  # geometrically identical library shapes (a tie)
    score: float  # 1 = identical drawing, 0 = nothing alike


@dataclass(frozen=True, slots=True)
class Descriptor:
    points: np.ndarray  # (MATCH_POINTS, 2) centred, unit RMS radius
    polar: np.ndarray  # (RADIUS_BINS, ANGLE_BINS) point histogram
    invariant: np.ndarray  # rotation-invariant summary for the pre-filter


def _normalised_points(shape: Shape) -> np.ndarray:
    pieces = shape_pieces(shape)
    if not pieces:
        raise ValueError("the shape draws nothing (every action has zero length or sweep)")
    points = resample_uniform(pieces, MATCH_POINTS)
    points = points - points.mean(axis=0)
    rms = math.sqrt(float((points**2).sum(axis=1).mean())) or 1.0
    return points / rms


def _polar_histogram(points: np.ndarray) -> np.ndarray:
    radius = np.linalg.norm(points, axis=1)
    angle = np.arctan2(points[:, 1], points[:, 0])
    r_bin = np.minimum((radius / 2.5 * RADIUS_BINS).astype(int), RADIUS_BINS - 1)
    position = (angle % (2 * math.pi)) / (2 * math.pi) * ANGLE_BINS
    histogram = np.zeros((RADIUS_BINS, ANGLE_BINS))
    low = np.floor(position).astype(int)
    share = position - low
    np.add.at(histogram, (r_bin, low % ANGLE_BINS), 1.0 - share)
    np.add.at(histogram, (r_bin, (low + 1) % ANGLE_BINS), share)
    return histogram


def _invariant(points: np.ndarray) -> np.ndarray:
    radius = np.linalg.norm(points, axis=1)
    radial = np.histogram(radius, bins=16, range=(0.0, 2.5))[0] / len(points)
    sub = points[:: max(1, len(points) // 64)]
    d = np.linalg.norm(sub[:, None] - sub[None], axis=-1)[np.triu_indices(len(sub), 1)]
    pairwise = np.histogram(d, bins=16, range=(0.0, 4.0))[0] / len(d)
    return np.concatenate([radial, pairwise])


def describe(shape: Shape) -> Descriptor:
    points = _normalised_points(shape)
    return Descriptor(points, _polar_histogram(points), _invariant(points))


def _rotate(points: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return points @ np.array([[c, s], [-s, c]])


def _chamfers(a: Descriptor, b: Descriptor, angles) -> list[float]:
    """The symmetric mean nearest-point distance between `a` rotated by each of `angles` and `b` (`chamfers_at`)."""
    return chamfers_at(a.points, b.points, np.asarray(angles, dtype=np.float64)).tolist()


def chamfers_reference(a: np.ndarray, b: np.ndarray, angles) -> list[float]:
    """`chamfers_at` in plain Python (k-d tree queries): its test twin."""
    n, m = len(a), len(b)
    forward = cKDTree(b).query(np.concatenate([_rotate(a, t) for t in angles]))[0]
    backward = cKDTree(a).query(np.concatenate([_rotate(b, -t) for t in angles]))[0]
    return [float(0.5 * (forward[k * n:(k + 1) * n].mean() + backward[k * m:(k + 1) * m].mean()))
            for k in range(len(angles))]


@njit(cache=True)
def _mean_nearest(a: np.ndarray, b: np.ndarray, order: np.ndarray, c: float, s: float) -> float:
    """Mean over the points of `a` turned by (c, s) = (cos, sin) of the distance to the nearest point of `b`
    (`order`: b's points by x): a sweep out from the query's x in both directions, stopped where the x gap
    alone is no nearer than the nearest found, which starts as the previous query's nearest point (the points
    follow the centreline, so it is close)."""
    n = b.shape[0]
    bx = np.empty(n)
    for j in range(n):
        bx[j] = b[order[j], 0]
    total, last = 0.0, 0
    for i in range(a.shape[0]):
        x = a[i, 0] * c - a[i, 1] * s
        y = a[i, 0] * s + a[i, 1] * c
        dx, dy = x - b[order[last], 0], y - b[order[last], 1]
        best = dx * dx + dy * dy
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if bx[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        for step in (1, -1):
            j = lo if step == 1 else lo - 1
            while 0 <= j < n:
                dx = bx[j] - x
                if dx * dx >= best:
                    break
                dy = b[order[j], 1] - y
                d = dx * dx + dy * dy
                if d < best:
                    best, last = d, j
                j += step
        total += math.sqrt(best)
    return total / a.shape[0]


@njit(cache=True)
def chamfers_at(a: np.ndarray, b: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Per angle t: the symmetric mean nearest-point distance between the point set `a` turned by t and `b`
    (exact nearest points, as a k-d tree's, by sweeps along x: `_mean_nearest`)."""
    out = np.empty(angles.shape[0])
    a_order, b_order = stable_argsort(a[:, 0].copy()), stable_argsort(b[:, 0].copy())  # contiguous copies (a strided
    # column would be another signature to compile); the order of equal x does not change a nearest distance
    for k in range(angles.shape[0]):
        c, s = math.cos(angles[k]), math.sin(angles[k])
        out[k] = 0.5 * (_mean_nearest(a, b, b_order, c, s) + _mean_nearest(b, a, a_order, c, -s))
    return out


def distance(a: Descriptor, b: Descriptor, above: float | None = None) -> float:
    """Smallest chamfer distance between the two drawings over rotations of `a`: the peaks of the polar
    histograms' circular cross-correlation, the best one refined by halving steps. `above`: a distance past which
    the exact value is not wanted: when the best peak's lies so far over it that no refinement can bring it down
    to `above` (`_refined_reach`), the peak's distance is given unrefined (no lower than the exact one, and over
    `above` as the exact one is)."""
    spectrum = np.fft.fft(b.polar, axis=1) * np.conj(np.fft.fft(a.polar, axis=1))
    correlation = np.real(np.fft.ifft(spectrum, axis=1)).sum(axis=0)
    step = 2 * math.pi / ANGLE_BINS
    peaks = [peak * step for peak in np.argsort(correlation)[::-1][:ROTATION_PEAKS]]
    best, angle = min(zip(_chamfers(a, b, peaks), peaks))
    if above is not None and best > above + _refined_reach(a, step):
        return best
    for delta in (step / 2, step / 4, step / 8):
        candidates = (angle - delta, angle + delta)
        for value, candidate in zip(_chamfers(a, b, candidates), candidates):
            if value < best:
                best, angle = value, candidate
    return best


def _refined_reach(a: Descriptor, step: float) -> float:
    """How far `distance`'s refinement can lower a peak's chamfer distance, at most: the refined rotation lies within
    step / 2 + step / 4 + step / 8 of the peak's, and turning `a` by t moves each of its points by at most t times
    its radius, so each nearest-point distance of either direction (and so their mean) by at most t * a's largest
    radius (a small slack for rounding)."""
    return 0.875 * step * float(np.sqrt((a.points ** 2).sum(axis=1).max())) + 1e-9


class LibraryIndex:
    """The library shapes' point sets and pre-filter summaries; full descriptors and tie groups are made
    on demand (a query needs the descriptors of its PREFILTER candidates and the ties of those only)."""

    def __init__(self, names: tuple[str, ...], points: list[np.ndarray], invariants: np.ndarray | None = None) -> None:
        self.names = names
        self.points = points
        self.invariants = np.array([_invariant(p) for p in points]) if invariants is None else invariants  # (S, F)
        self._descriptors: dict[int, Descriptor] = {}
        self._components: dict[int, tuple[int, ...]] = {}
        self._tied: dict[tuple[int, int], bool] = {}

    def descriptor(self, i: int) -> Descriptor:
        if i not in self._descriptors:
            points = self.points[i]
            self._descriptors[i] = Descriptor(points, _polar_histogram(points), self.invariants[i])
        return self._descriptors[i]

    def _same_drawing(self, i: int, j: int) -> bool:
        i, j = min(i, j), max(i, j)
        if (i, j) not in self._tied:
            self._tied[(i, j)] = bool(distance(self.descriptor(i), self.descriptor(j)) < TIE_DISTANCE)
        return self._tied[(i, j)]

    def component(self, i: int) -> tuple[int, ...]:
        """The tie group of library shape i (indices in library order): the connected class of shapes
        whose drawings coincide within TIE_DISTANCE (pre-filtered by invariant gap, as ever)."""
        if i not in self._components:
            members, frontier = {i}, [i]
            while frontier:
                k = frontier.pop()
                gaps = np.abs(self.invariants - self.invariants[k]).sum(axis=1)
                for j in np.nonzero(gaps < 0.15)[0]:
                    j = int(j)
                    if j not in members and self._same_drawing(k, j):
                        members.add(j)
                        frontier.append(j)
            group = tuple(sorted(members))
            for k in group:
                self._components[k] = group
        return self._components[i]

    def group_names(self, i: int) -> tuple[str, ...]:
        return tuple(self.names[k] for k in self.component(i))

    @property
    def groups(self) -> tuple[tuple[str, ...], ...]:
        """Every tie group (in library order of first member)."""
        return tuple(dict.fromkeys(self.group_names(i) for i in range(len(self.names))))


@functools.cache
def library_index() -> LibraryIndex:
    """Point sets and pre-filter summaries of all library shapes: read from the user cache folder when made there
    before (`dsl.jit.stored_arrays`, named for the sources and the shape tables), else computed (0.7 s of CPU, in every
    process that matches a shape: issue 53) and stored there."""
    library = load_library()
    names = tuple(library)
    found = stored_arrays("library_index", lambda: _index_arrays(names))
    if tuple(found["names"].tolist()) != names:  # not this library's (the file is named for the shape tables)
        found = _index_arrays(names)
    return LibraryIndex(names, np.split(found["points"], found["offsets"][1:-1]), found["invariants"])


def _index_arrays(names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The index of the library shapes `names`, computed, as arrays: names, the point sets end to end with their
    offsets, the invariants."""
    library = load_library()
    index = LibraryIndex(names, [_normalised_points(library[n].shape) for n in names])
    return {"names": np.array(names), "points": np.concatenate(index.points),
            "offsets": np.cumsum([0] + [len(p) for p in index.points]), "invariants": index.invariants}


def match_shape(shape: Shape, top: int = 5) -> list[ShapeMatch]:
    """The `top` library groups nearest to `shape`, best first (memoised per shape); none if the shape
    draws nothing."""
    return list(_match_shape(shape, top))


@functools.lru_cache(maxsize=4096)
def _match_shape(shape: Shape, top: int) -> tuple[ShapeMatch, ...]:
    return _matched(shape, top, None)


def best_match_names(shape: Shape, min_score: float) -> tuple[str, ...]:
    """The names of the library group nearest to `shape` when its match scores at least `min_score`, else none:
    `match_shape(shape, top=1)`'s answer to that question, with no candidate refined whose best correlation peak
    already lies too far for that score (`distance`'s `above`; a decoded free-form shape matches nothing, and its
    candidates were refined for nothing)."""
    found = _matched(shape, 1, SCORE_SCALE * (1.0 - min_score) + 1e-9)
    return found[0].names if found and found[0].score >= min_score else ()


def _matched(shape: Shape, top: int, above: float | None) -> tuple[ShapeMatch, ...]:
    """`match_shape`; `above`: distances past it need not be exact (`distance`): a match past it may come with a
    distance too high (and so a score too low), and may rank in another place among such matches."""
    index = library_index()
    if not shape_pieces(shape):
        return ()  # draws nothing: no category
    query = describe(shape)
    gaps = np.abs(index.invariants - query.invariant).sum(axis=1)
    candidates = np.argsort(gaps)[: max(PREFILTER, top)]
    best_per_group: dict[tuple[int, ...], float] = {}
    for i in candidates:
        group = index.component(int(i))
        d = distance(query, index.descriptor(int(i)), above)
        best_per_group[group] = min(best_per_group.get(group, math.inf), d)
    ranked = sorted(best_per_group.items(), key=lambda item: item[1])[:top]
    return tuple(ShapeMatch(tuple(index.names[k] for k in g), max(0.0, 1.0 - d / SCORE_SCALE)) for g, d in ranked)


def image_categories(program: ImageProgram, top: int = 5) -> list[list[ShapeMatch]]:
    """`match_shape` for every shape of an image."""
    return [match_shape(shape, top) for shape in program.shapes]
