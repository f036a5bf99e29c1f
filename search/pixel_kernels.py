"""The kernels of the pixel score (Numba): the candidate rendered and compared with the image, as
`search.pose` polishes poses and `search.strokes` chooses stroke types; each with its plain-Python twin in
`search.kernel_twins` (or a test against the kernels it stands for). Poses are rows (cx, cy, a, b) in the
crop frame, pixel coordinates continuous, as in `search.kernels`.

Kernels
  `window_l1`     sum of |rendered - image| over a rendered window placed in the image: the pixel score
                  that decides stroke types and polishes poses; `window_l1_shifted` the least such sum
                  over shifts of the window by up to a few pixels (tolerates residual misalignment);
                  `rendered_l1` the same sum for marks rendered in place, without the window's image: the
                  white part of the window is the image's darkness (`window_darkness`, once per window: a polish
                  renders many poses in one), only the rendered ink box is visited (the same total: every term
                  is a whole grey level).
                  `rendered_l1_shifted` the least shifted sum for marks rendered in place (the stroke choice:
                  the window's `darkness_integral` computed once for every stroke option tried in it).
  `pixel_pattern_search` pose polishing: pattern search on the pixel score of one shape's pose (`posed_marks`,
                  then `rendered_l1`), compiled whole.
  `posed_marks`   shapes' marks posed into a window's pixel frame, marks that miss the window left out (the
                  pixel score renders them with `dsl.raster.render_marks`).
"""

from __future__ import annotations

import math

import numpy as np
from dsl.jit import njit

from dsl.raster import grey_level, ink_canvas
from search.kernels import _moved, _seen_score, _store


@njit(cache=True)
def window_l1_shifted(rendered: np.ndarray, image: np.ndarray, r0: int, c0: int, shift: int) -> float:
    """The least `window_l1` sum over placements of the window shifted by up to `shift` pixels.

    Sparse form: where the render is white the difference is the image's darkness, so each sum is the
    image's darkness over the (clipped) window, from an integral image, plus a correction over the
    rendered window's non-white pixels only."""
    rh, rw = rendered.shape
    integral = darkness_integral(image, r0 - shift, c0 - shift, rh + 2 * shift, rw + 2 * shift)
    count = 0
    for i in range(rh):
        for j in range(rw):
            if rendered[i, j] < 255:
                count += 1
    rows = np.empty(count, dtype=np.int64)
    cols = np.empty(count, dtype=np.int64)
    values = np.empty(count)
    k = 0
    for i in range(rh):
        for j in range(rw):
            if rendered[i, j] < 255:
                rows[k], cols[k], values[k] = i, j, float(rendered[i, j])
                k += 1
    return _least_shifted_l1(rows, cols, values, integral, image, r0, c0, rh, rw, shift)


@njit(cache=True)
def darkness_integral(image: np.ndarray, top: int, left: int, ph: int, pw: int) -> np.ndarray:
    """Integral (ph + 1, pw + 1) of the darkness 255 - grey over the ph x pw region at (top, left), 0 outside
    the image."""
    h, w = image.shape
    integral = np.zeros((ph + 1, pw + 1))
    for i in range(ph):
        ii = top + i
        run = 0.0
        for j in range(pw):
            jj = left + j
            if 0 <= ii < h and 0 <= jj < w:
                run += 255.0 - float(image[ii, jj])
            integral[i + 1, j + 1] = integral[i, j + 1] + run
    return integral


@njit(cache=True)
def _least_shifted_l1(
    rows: np.ndarray, cols: np.ndarray, values: np.ndarray, integral: np.ndarray, image: np.ndarray, r0: int, c0: int,
    rh: int, rw: int, shift: int,
) -> float:
    """`window_l1_shifted` from the render's non-white pixels (window rows, columns, grey values) and the
    darkness integral of the window padded by `shift`."""
    h, w = image.shape
    best = np.inf
    for dr in range(-shift, shift + 1):
        for dc in range(-shift, shift + 1):
            a, b = dr + shift, dc + shift
            total = integral[a + rh, b + rw] - integral[a, b + rw] - integral[a + rh, b] + integral[a, b]
            for q in range(rows.shape[0]):
                ii, jj = r0 + dr + rows[q], c0 + dc + cols[q]
                if ii < 0 or ii >= h or jj < 0 or jj >= w:
                    continue
                v = float(image[ii, jj])
                total += abs(values[q] - v) - (255.0 - v)
            if total < best:
                best = total
    return best


@njit(cache=True)
def rendered_l1_shifted(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, size: int, pen_radius: float, outline_radius: float,
    image: np.ndarray, r0: int, c0: int, shift: int, integral: np.ndarray,
) -> float:
    """`window_l1_shifted(render_marks(points, offsets, kinds, size, ...), image, r0, c0, shift)` without the
    window image: the non-white pixels are read from the marks' ink box; `integral`: `darkness_integral` of
    the window padded by `shift` (the same for every render in the window)."""
    if points.shape[0] == 0:
        empty = np.empty(0, dtype=np.int64)
        return _least_shifted_l1(empty, empty, np.empty(0), integral, image, r0, c0, size, size, shift)
    ink, br, bc = ink_canvas(points, offsets, kinds, size, pen_radius, outline_radius)
    count = 0
    for i in range(ink.shape[0]):
        for j in range(ink.shape[1]):
            if grey_level(ink[i, j]) < 255:
                count += 1
    rows = np.empty(count, dtype=np.int64)
    cols = np.empty(count, dtype=np.int64)
    values = np.empty(count)
    k = 0
    for i in range(ink.shape[0]):
        for j in range(ink.shape[1]):
            g = grey_level(ink[i, j])
            if g < 255:
                rows[k], cols[k], values[k] = br + i, bc + j, float(g)
                k += 1
    return _least_shifted_l1(rows, cols, values, integral, image, r0, c0, size, size, shift)


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


@njit(cache=True)
def window_darkness(image: np.ndarray, r0: int, c0: int, size: int) -> tuple[float, int]:
    """(sum of the darkness 255 - grey, pixels) over the part of the size x size window at (r0, c0) inside the
    image: `window_l1` of a white window."""
    h, w = image.shape
    total = 0.0
    count = 0
    for i in range(max(r0, 0), min(r0 + size, h)):
        for j in range(max(c0, 0), min(c0 + size, w)):
            total += 255.0 - float(image[i, j])
            count += 1
    return total, count


@njit(cache=True)
def rendered_l1(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, size: int, pen_radius: float, outline_radius: float,
    image: np.ndarray, r0: int, c0: int, darkness: float, count: int,
) -> tuple[float, int]:
    """`window_l1(render_marks(points, offsets, kinds, size, ...), image, r0, c0)` without the window image:
    the window's white pixels cost the image's darkness (`darkness`, `count`: `window_darkness` of the window),
    and the pixels of the marks' ink box correct it where the render is not white."""
    h, w = image.shape
    total = darkness
    if points.shape[0] == 0 or count == 0:
        return total, count
    ink, br, bc = ink_canvas(points, offsets, kinds, size, pen_radius, outline_radius)
    j_lo, j_hi = max(-(c0 + bc), 0), min(ink.shape[1], w - (c0 + bc))  # the box's columns inside the image
    for i in range(max(-(r0 + br), 0), min(ink.shape[0], h - (r0 + br))):
        ii = r0 + br + i
        for j in range(j_lo, j_hi):
            c = ink[i, j]
            if c > 0.0:
                g = float(image[ii, c0 + bc + j])
                total += abs(float(grey_level(c)) - g) - (255.0 - g)
    return total, count


@njit(cache=True)
def posed_marks(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, shape_marks: np.ndarray, affines: np.ndarray,
    dc: float, dr: float, size: int, reach: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Marks of posed shapes in a window's pixel frame, those whose box stays `reach` px outside the
    size x size window left out -> (points, offsets, kinds) for `dsl.raster.render_marks`. The shapes' marks
    are packed (`points`, `offsets`, `kinds`, as `render_marks` takes them); shape t owns marks
    shape_marks[t]:shape_marks[t + 1] and is posed by affines[t] = (cx, cy, a, b); (dc, dr) moves the
    crop frame to the window's. (An empty mark is left out: it draws nothing.)"""
    out = np.empty((points.shape[0], 2))
    out_offsets = np.zeros(offsets.shape[0], dtype=np.int64)
    out_kinds = np.empty(kinds.shape[0], dtype=kinds.dtype)
    n_points, n_marks = 0, 0
    for t in range(shape_marks.shape[0] - 1):
        cx, cy, a, b = affines[t, 0], affines[t, 1], affines[t, 2], affines[t, 3]
        for k in range(shape_marks[t], shape_marks[t + 1]):
            first = n_points
            low_c, high_c, low_r, high_r = np.inf, -np.inf, np.inf, -np.inf
            for q in range(offsets[k], offsets[k + 1]):
                x, y = points[q, 0], points[q, 1]
                col = cx + a * x - b * y + dc
                row = cy - (b * x + a * y) + dr
                low_c, high_c = min(low_c, col), max(high_c, col)
                low_r, high_r = min(low_r, row), max(high_r, row)
                out[n_points, 0], out[n_points, 1] = col, row
                n_points += 1
            if high_c > -reach and low_c < size + reach and high_r > -reach and low_r < size + reach:
                out_kinds[n_marks] = kinds[k]
                out_offsets[n_marks + 1] = n_points
                n_marks += 1
            else:
                n_points = first
    return out[:n_points], out_offsets[: n_marks + 1], out_kinds[:n_marks]


@njit(cache=True)
def _pixel_score(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, shape_marks: np.ndarray, affines: np.ndarray,
    window: np.ndarray, image: np.ndarray, darkness: float, count: int, radii: np.ndarray,
) -> float:
    """Mean |rendered - image| / 255 over the window of posed shapes (`posed_marks`, then `rendered_l1`);
    `window` = (r0, c0, size, dc, dr, reach) as `posed_marks` and `rendered_l1` take them, `radii` = (pen,
    outline)."""
    r0, c0, size = int(window[0]), int(window[1]), int(window[2])
    posed, posed_offsets, posed_kinds = posed_marks(
        points, offsets, kinds, shape_marks, affines, window[3], window[4], size, window[5]
    )
    total, n = rendered_l1(posed, posed_offsets, posed_kinds, size, radii[0], radii[1], image, r0, c0, darkness, count)
    return total / max(n, 1) / 255.0


@njit(cache=True)
def _affine_row(affines: np.ndarray, shape: int, params: np.ndarray) -> np.ndarray:
    """`affines` with shape's row posed by params (cx, cy, theta degrees, s), as `search.pose.Placement.affine`."""
    out = affines.copy()
    h = math.radians(params[2])
    out[shape, 0], out[shape, 1] = params[0], params[1]
    out[shape, 2], out[shape, 3] = params[3] * math.cos(h), params[3] * math.sin(h)
    return out


@njit(cache=True)
def pixel_pattern_search(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, shape_marks: np.ndarray, affines: np.ndarray,
    shape: int, params: np.ndarray, window: np.ndarray, image: np.ndarray, darkness: float, count: int,
    radii: np.ndarray, steps: np.ndarray, max_evals: int, min_step_fraction: float,
) -> tuple[np.ndarray, float]:
    """Pose polishing: `pattern_search` of one shape's params (cx, cy, theta, s) on the pixel score
    (`_pixel_score` of the shapes' packed marks posed by `affines`, that shape's row by the params, in a
    window: `window`, `darkness`, `count` as `_pixel_score` takes them). A trial equal to params scored
    before takes the score found then and counts as an evaluation. Returns (params, score)."""
    params = params.copy()
    best = _pixel_score(points, offsets, kinds, shape_marks, _affine_row(affines, shape, params), window, image,
                        darkness, count, radii)
    evals = 1
    step = steps.copy()
    seen = np.empty((max(max_evals, 1), 1, 4))  # the params scored so far, and their scores
    seen_scores = np.empty(max(max_evals, 1))
    for j in range(4):  # element by element (see `kernels._store`)
        seen[0, 0, j] = params[j]
    seen_scores[0] = best
    n_seen = 1
    row = np.empty((1, 4))
    while evals < max_evals:
        improved = False
        for param in range(4):
            for sign in (1.0, -1.0):
                for j in range(4):  # params as a one-row table (a reshape or a slice assignment here compiles
                    row[0, j] = params[j]  # Numba's shape-mismatch message: seconds of a first run)
                trial = _moved(row, 0, param, sign * step[param])
                value = _seen_score(seen, seen_scores, n_seen, trial)
                if math.isnan(value):
                    value = _pixel_score(points, offsets, kinds, shape_marks, _affine_row(affines, shape, trial[0]),
                                         window, image, darkness, count, radii)
                    if n_seen < seen.shape[0]:
                        _store(seen, n_seen, trial)
                        seen_scores[n_seen] = value
                        n_seen += 1
                evals += 1
                if value < best - 1e-12:
                    params, best, improved = trial[0], value, True
                    break
        if not improved:
            if step[0] < steps[0] * min_step_fraction:
                break
            step = step / 2.0
    return params, best
