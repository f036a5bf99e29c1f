"""The scoring kernels of the enumerator (Numba), each with its plain-Python reference twin.

A pose maps a template (scale-1 turtle units, `search.template`) into the pixel frame of an image crop by
a similarity transform, as a row (cx, cy, a, b):

    column = cx + a*x - b*y,    row = cy - (b*x + a*y)        (a = ppu*s*cos h, b = ppu*s*sin h)

Pixel coordinates are continuous (pixel (i, j) is the square [j, j+1) x [i, i+1)), as in `dsl.raster`.

Kernels
  `sparse_score`  the symmetric, truncated chamfer distance (pixels) of posed centreline samples against
                  the image: forward = mean distance transform of the image ink at the posed points
                  (bilinear, truncated at `cap`); reverse = mean over sampled ink pixels of the distance to
                  the posed centreline polyline (truncated at `reach`), which centres the centreline in
                  the stroke. Used for pose
                  fitting and for ranking structures (which are stroke-agnostic: the distance transform is
                  taken on the ink with small gaps closed).
  `window_l1`     sum of |rendered - image| over a rendered window placed in the image: the pixel score
                  that decides stroke types and polishes poses; `window_l1_shifted` the least such sum
                  over shifts of the window by up to a few pixels (tolerates residual misalignment).
The twins (`*_reference`) use Python loops and the `math` module only; the tests compare them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _bilinear(dt: np.ndarray, col: float, row: float, cap: float) -> float:
    """Distance transform (indexed by pixel, sampled at pixel centres) at a continuous point, <= cap."""
    u, v = col - 0.5, row - 0.5
    h, w = dt.shape
    if u < 0.0 or v < 0.0 or u > w - 1.0 or v > h - 1.0:
        return cap
    j, i = int(u), int(v)
    if j > w - 2:
        j = w - 2
    if i > h - 2:
        i = h - 2
    fu, fv = u - j, v - i
    top = dt[i, j] * (1.0 - fu) + dt[i, j + 1] * fu
    bottom = dt[i + 1, j] * (1.0 - fu) + dt[i + 1, j + 1] * fu
    value = top * (1.0 - fv) + bottom * fv
    return value if value < cap else cap


@njit(cache=True)
def sparse_score(
    points: np.ndarray,
    radii: np.ndarray,
    owner: np.ndarray,
    poses: np.ndarray,
    dt: np.ndarray,
    samples: np.ndarray,
    cap: float,
    reach: float,
) -> tuple[float, float]:
    """(forward mean, reverse mean) of templates (point k belongs to shape owner[k], posed by row owner[k]
    of `poses`; consecutive points of a shape are joined into a polyline) against sampled ink pixel centres
    (`samples` rows: column, row). The reverse term is the distance to the polyline minus `radii[0]`."""
    m = points.shape[0]
    cols = np.empty(m)
    rows = np.empty(m)
    forward = 0.0
    for k in range(m):
        x, y = points[k, 0], points[k, 1]
        o = owner[k]
        cols[k] = poses[o, 0] + poses[o, 2] * x - poses[o, 3] * y
        rows[k] = poses[o, 1] - (poses[o, 3] * x + poses[o, 2] * y)
        forward += _bilinear(dt, cols[k], rows[k], cap)
    reverse = 0.0
    for q in range(samples.shape[0]):
        qx, qy = samples[q, 0], samples[q, 1]
        best2 = reach * reach
        for k in range(m):
            # the segment from point k to point k + 1 of the same shape (a point alone if k ends a shape)
            dx, dy = qx - cols[k], qy - rows[k]
            if k + 1 < m and owner[k + 1] == owner[k]:
                ex, ey = cols[k + 1] - cols[k], rows[k + 1] - rows[k]
                length2 = ex * ex + ey * ey
                if length2 > 0.0:
                    t = (dx * ex + dy * ey) / length2
                    if t > 1.0:
                        t = 1.0
                    elif t < 0.0:
                        t = 0.0
                    dx -= t * ex
                    dy -= t * ey
            d2 = dx * dx + dy * dy
            if d2 < best2:
                best2 = d2
        d = math.sqrt(best2) - radii[0] if m > 0 else reach
        reverse += d if d > 0.0 else 0.0
    return forward / max(m, 1), reverse / max(samples.shape[0], 1)


@njit(cache=True)
def window_l1_shifted(rendered: np.ndarray, image: np.ndarray, r0: int, c0: int, shift: int) -> float:
    """The least `window_l1` sum over placements of the window shifted by up to `shift` pixels."""
    best = np.inf
    for dr in range(-shift, shift + 1):
        for dc in range(-shift, shift + 1):
            total, _ = window_l1(rendered, image, r0 + dr, c0 + dc)
            if total < best:
                best = total
    return best


@njit(cache=True)
def window_l1(rendered: np.ndarray, image: np.ndarray, r0: int, c0: int) -> tuple[float, int]:
    """(sum of |rendered - image| in grey levels, pixels compared) with rendered[0, 0] at image[r0, c0];
    the part of the window outside the image is ignored."""
    h, w = image.shape
    total = 0.0
    count = 0
    for i in range(rendered.shape[0]):
        ii = r0 + i
        if ii < 0 or ii >= h:
            continue
        for j in range(rendered.shape[1]):
            jj = c0 + j
            if jj < 0 or jj >= w:
                continue
            total += abs(float(rendered[i, j]) - float(image[ii, jj]))
            count += 1
    return total, count


# ------------------------------------------------------------------------------------ reference twins


def _bilinear_reference(dt, col: float, row: float, cap: float) -> float:
    u, v = col - 0.5, row - 0.5
    h, w = len(dt), len(dt[0])
    if u < 0.0 or v < 0.0 or u > w - 1.0 or v > h - 1.0:
        return cap
    j, i = min(int(u), w - 2), min(int(v), h - 2)
    fu, fv = u - j, v - i
    value = (float(dt[i][j]) * (1 - fu) + float(dt[i][j + 1]) * fu) * (1 - fv) + (
        float(dt[i + 1][j]) * (1 - fu) + float(dt[i + 1][j + 1]) * fu
    ) * fv
    return min(value, cap)


def _segment_distance_reference(q, a, b) -> float:
    ex, ey = b[0] - a[0], b[1] - a[1]
    length2 = ex * ex + ey * ey
    t = 0.0 if length2 == 0.0 else min(max(((q[0] - a[0]) * ex + (q[1] - a[1]) * ey) / length2, 0.0), 1.0)
    return math.hypot(q[0] - a[0] - t * ex, q[1] - a[1] - t * ey)


def sparse_score_reference(points, radii, owner, poses, dt, samples, cap, reach) -> tuple[float, float]:
    posed = []
    for (x, y), o in zip(points, owner):
        cx, cy, a, b = poses[o]
        posed.append((cx + a * x - b * y, cy - (b * x + a * y)))
    forward = sum(_bilinear_reference(dt, col, row, cap) for col, row in posed)
    pieces = [
        (posed[k], posed[k + 1] if k + 1 < len(posed) and owner[k + 1] == owner[k] else posed[k])
        for k in range(len(posed))
    ]
    reverse = 0.0
    for q in samples:
        nearest = min([reach] + [_segment_distance_reference(q, a, b) for a, b in pieces])
        reverse += max(nearest - (radii[0] if len(radii) else 0.0), 0.0)
    return forward / max(len(points), 1), reverse / max(len(samples), 1)


def window_l1_shifted_reference(rendered, image, r0: int, c0: int, shift: int) -> float:
    return min(
        window_l1_reference(rendered, image, r0 + dr, c0 + dc)[0]
        for dr in range(-shift, shift + 1)
        for dc in range(-shift, shift + 1)
    )


def window_l1_reference(rendered, image, r0: int, c0: int) -> tuple[float, int]:
    total, count = 0.0, 0
    for i, line in enumerate(rendered):
        for j, value in enumerate(line):
            if 0 <= r0 + i < len(image) and 0 <= c0 + j < len(image[0]):
                total += abs(float(value) - float(image[r0 + i][c0 + j]))
                count += 1
    return total, count
