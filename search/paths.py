"""Centreline paths of traced readings and of the ink, for the free-form tracer (`search.trace`).

    ink_ends(target)                   the two ends of every ink part, heading into the ink
    centrelines(program, starts)       a traced reading's centrelines, points a pixel apart
    path_gap(a, b)                     how far apart two such paths lie (pixels, both ways)
    chamfer(line, target)              how far a path lies from the ink and the ink from it
"""

from __future__ import annotations

import math

import numpy as np

from dsl.canonical import to_travel_form
from dsl.types import ImageProgram
from dsl.walk import State, walk_shape
from search.settings import CHAMFER_CAP, END_REACH, END_RING, END_TIP, MIN_PART_PIXELS
from search.template import Target, resample


def ink_ends(target: Target, reach: float = END_REACH) -> list[State]:
    """The two ends of every ink part (the ends of its longest geodesic path through the ink), each heading
    into the ink (towards the ink `reach` pixels along the path); the unit is left 0."""
    from scipy import ndimage
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    ink = target.dt == 0
    labels, count = ndimage.label(ink, structure=np.ones((3, 3)))
    out = []
    for part in range(1, count + 1):
        rows, cols = np.nonzero(labels == part)
        if len(rows) < MIN_PART_PIXELS:
            continue
        index = -np.ones(ink.shape, dtype=np.int64)
        index[rows, cols] = np.arange(len(rows))
        src, dst = [], []
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            r2, c2 = rows + dr, cols + dc
            ok = (r2 >= 0) & (r2 < ink.shape[0]) & (c2 >= 0) & (c2 < ink.shape[1])
            ok[ok] &= index[r2[ok], c2[ok]] >= 0
            src.append(index[rows[ok], cols[ok]])
            dst.append(index[r2[ok], c2[ok]])
        src, dst = np.concatenate(src), np.concatenate(dst)
        graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(len(rows), len(rows))).tocsr()
        first = shortest_path(graph, directed=False, unweighted=True, indices=0)
        a = int(np.argmax(np.where(np.isfinite(first), first, -1)))
        from_a = shortest_path(graph, directed=False, unweighted=True, indices=a)
        b = int(np.argmax(np.where(np.isfinite(from_a), from_a, -1)))
        from_b = shortest_path(graph, directed=False, unweighted=True, indices=b)
        for distances in (from_a, from_b):
            tip, ring = distances <= END_TIP, np.abs(distances - reach) <= END_RING
            if not ring.any():
                continue
            x, y = cols[tip].mean() + 0.5, rows[tip].mean() + 0.5  # the middle of the stroke's end
            tx, ty = cols[ring].mean() + 0.5, rows[ring].mean() + 0.5
            out.append(State(float(x), float(y), math.atan2(ty - y, tx - x), 0.0))
    return out


def centrelines(program: ImageProgram, starts: tuple[State, ...], spacing: float = 1.0) -> np.ndarray:
    """The centrelines (crop frame) of a traced `program` walked from its shapes' `starts`, as points at most
    `spacing` pixels apart (`search.template.resample`): a reading of more, shorter actions on the same path
    gives nearly the same points."""
    paths = [np.concatenate(walk_shape(start, to_travel_form(shape))[1]) for shape, start in zip(program.shapes, starts)]
    return np.concatenate([resample(path, spacing) for path in paths])


def _nearest(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For every point of `a`, the distance to the nearest point of `b`."""
    from scipy.spatial import cKDTree

    return cKDTree(b).query(a)[0]


def path_gap(a: np.ndarray, b: np.ndarray) -> float:
    """The symmetric Hausdorff distance between two point paths (pixels)."""
    return float(max(_nearest(a, b).max(), _nearest(b, a).max()))


def chamfer(line: np.ndarray, target: Target) -> float:
    """Mean distance (pixels, each capped at CHAMFER_CAP) from the path `line` to the ink, plus the mean
    from the ink's samples to the path."""
    rows = np.clip(line[:, 1].astype(int), 0, target.dt.shape[0] - 1)
    cols = np.clip(line[:, 0].astype(int), 0, target.dt.shape[1] - 1)
    forward = np.minimum(target.dt[rows, cols], CHAMFER_CAP).mean()
    return float(forward + np.minimum(_nearest(target.samples, line), CHAMFER_CAP).mean())
