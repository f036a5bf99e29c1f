"""The scoring kernels of the enumerator (Numba), each with its plain-Python reference twin.

A pose maps a template (scale-1 turtle units, `search.template`) into the pixel frame of an image crop by
a similarity transform, as a row (cx, cy, a, b):

    column = cx + a*x - b*y,    row = cy - (b*x + a*y)        (a = ppu*s*cos h, b = ppu*s*sin h)

Pixel coordinates are continuous (pixel (i, j) is the square [j, j+1) x [i, i+1)), as in `dsl.raster`.

Kernels
  `sparse_score`  the symmetric, truncated chamfer distance (pixels) of posed centreline samples against
                  the image: forward = mean distance transform of the image ink at the posed points
                  (bilinear, truncated at `cap`); reverse = mean over sampled ink pixels of the distance to
                  the nearest posed point minus the pen half-width (truncated at `reach`). Used for pose
                  fitting and for ranking structures (which are stroke-agnostic: the distance transform is
                  taken on the ink with small gaps closed).
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
  `sparse_scores` `sparse_score` of many pose sets; `best_sparse_scores` only those that can be among the
                  lowest few (the heading scan of the initial guesses: the same choice, fewer reverse terms).
  `pattern_search` pose refinement on the `sparse_score` (the search's inner loop, compiled whole).
  `posed_marks`   shapes' marks posed into a window's pixel frame, marks that miss the window left out (the
                  pixel score renders them with `dsl.raster.render_marks`).
  `trace_step`    one step of the free-form tracer (`search.trace`): every grid move from a turtle state,
                  its mean distance to the ink (forward term, in units) and which ink samples it newly
                  covers; `trace_steps` the same from several turtles at once.
The twins (`search.kernel_twins`, `*_reference`) use Python loops and the `math` module only; the tests
compare them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from dsl.raster import grey_level, ink_canvas


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
def _posed(points: np.ndarray, owner: np.ndarray, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Template points (point k posed by row owner[k] of `poses`) in pixel coordinates -> (columns, rows)."""
    m = points.shape[0]
    cols = np.empty(m)
    rows = np.empty(m)
    for k in range(m):
        x, y = points[k, 0], points[k, 1]
        o = owner[k]
        cols[k] = poses[o, 0] + poses[o, 2] * x - poses[o, 3] * y
        rows[k] = poses[o, 1] - (poses[o, 3] * x + poses[o, 2] * y)
    return cols, rows


@njit(cache=True)
def _forward_mean(cols: np.ndarray, rows: np.ndarray, dt: np.ndarray, cap: float) -> float:
    """`sparse_score`'s forward term: the mean distance transform at the posed points, each truncated at `cap`."""
    m = cols.shape[0]
    forward = 0.0
    for k in range(m):
        forward += _bilinear(dt, cols[k], rows[k], cap)
    return forward / max(m, 1)


@njit(cache=True)
def _reverse_mean(cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, samples: np.ndarray, reach: float) -> float:
    """`sparse_score`'s reverse term: per ink sample, the distance to the nearest posed point minus its radius
    (at most `reach`), averaged."""
    m = cols.shape[0]
    reverse = 0.0
    for q in range(samples.shape[0]):
        qx, qy = samples[q, 0], samples[q, 1]
        best = reach
        for k in range(m):
            dx, dy = cols[k] - qx, rows[k] - qy
            limit = best + radii[k]
            d2 = dx * dx + dy * dy
            if d2 < limit * limit:
                d = math.sqrt(d2) - radii[k]
                if d <= 0.0:
                    best = 0.0
                    break
                best = d
        reverse += best
    return reverse / max(samples.shape[0], 1)


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
    of `poses`) against sampled ink pixel centres
    (`samples` rows: column, row). The reverse term: distance to the nearest posed point minus its radius."""
    cols, rows = _posed(points, owner, poses)
    return _forward_mean(cols, rows, dt, cap), _reverse_mean(cols, rows, radii, samples, reach)


@njit(cache=True)
def sparse_scores(
    points: np.ndarray,
    radii: np.ndarray,
    owner: np.ndarray,
    pose_sets: np.ndarray,
    dt: np.ndarray,
    samples: np.ndarray,
    cap: float,
    reach: float,
) -> np.ndarray:
    """`sparse_score` totals for each pose set (P, S, 4) (the heading scan of the initial guesses)."""
    out = np.empty(pose_sets.shape[0])
    for p in range(pose_sets.shape[0]):
        f, r = sparse_score(points, radii, owner, pose_sets[p], dt, samples, cap, reach)
        out[p] = f + r
    return out


@njit(cache=True)
def best_sparse_scores(
    points: np.ndarray,
    radii: np.ndarray,
    owner: np.ndarray,
    pose_sets: np.ndarray,
    dt: np.ndarray,
    samples: np.ndarray,
    cap: float,
    reach: float,
    keep: int,
) -> np.ndarray:
    """`sparse_scores` where it matters for the `keep` lowest: the totals of the pose sets that can be among
    the `keep` lowest, inf for the others. The reverse term (the costly one) is never negative, so a pose
    set whose forward term alone exceeds the keep-th lowest total found so far cannot be among them; pose
    sets are taken in increasing forward term and the scan stops at the first such. The kept totals, and
    so a stable sort's first `keep`, are exactly `sparse_scores`'s."""
    n = pose_sets.shape[0]
    forward = np.empty(n)
    for p in range(n):
        cols, rows = _posed(points, owner, pose_sets[p])
        forward[p] = _forward_mean(cols, rows, dt, cap)
    out = np.full(n, np.inf)
    best = np.full(max(keep, 1), np.inf)  # the lowest totals so far, ascending
    for p in np.argsort(forward):
        if forward[p] > best[-1]:
            break
        cols, rows = _posed(points, owner, pose_sets[p])
        total = forward[p] + _reverse_mean(cols, rows, radii, samples, reach)
        out[p] = total
        if total < best[-1]:
            k = best.shape[0] - 1
            while k > 0 and best[k - 1] > total:
                best[k] = best[k - 1]
                k -= 1
            best[k] = total
    return out


@njit(cache=True)
def _poses_from_params(params: np.ndarray) -> np.ndarray:
    poses = np.empty((params.shape[0], 4))
    for k in range(params.shape[0]):
        h = math.radians(params[k, 2])
        poses[k, 0], poses[k, 1] = params[k, 0], params[k, 1]
        poses[k, 2], poses[k, 3] = params[k, 3] * math.cos(h), params[k, 3] * math.sin(h)
    return poses


@njit(cache=True)
def _moved(params: np.ndarray, shape: int, param: int, delta: float) -> np.ndarray:
    trial = params.copy()
    if param == 3:
        trial[shape, 3] *= math.exp(delta)
    else:
        trial[shape, param] += delta
    return trial


@njit(cache=True)
def _seen_score(seen: np.ndarray, scores: np.ndarray, n: int, params: np.ndarray) -> float:
    """The score of `params` if they are among the first `n` of `seen` (exactly), else nan."""
    for k in range(n - 1, -1, -1):
        same = True
        for i in range(params.shape[0]):
            for j in range(4):
                if seen[k, i, j] != params[i, j]:
                    same = False
                    break
            if not same:
                break
        if same:
            return scores[k]
    return np.nan


@njit(cache=True)
def pattern_search(
    points: np.ndarray,
    radii: np.ndarray,
    owner: np.ndarray,
    params: np.ndarray,
    movable: np.ndarray,
    dt: np.ndarray,
    samples: np.ndarray,
    cap: float,
    reach: float,
    steps: np.ndarray,
    max_evals: int,
    min_step_fraction: float,
) -> tuple[np.ndarray, float]:
    """Pose refinement: pattern search on the `sparse_score` total over the rows of `params` (cx, cy,
    theta degrees, s) whose `movable` flag is set: try +/- step on each parameter in turn, keep the first
    improvement; halve the steps after a round without one; stop below `min_step_fraction` of the first
    step or after `max_evals` scores. Returns (params, score). A trial equal to params scored before (a step
    back to where the last move came from) takes the score found then, and counts as an evaluation."""
    f, r = sparse_score(points, radii, owner, _poses_from_params(params), dt, samples, cap, reach)
    best = f + r
    evals = 1
    step = steps.copy()
    seen = np.empty((max(max_evals, 1), params.shape[0], 4))  # the params scored so far, and their scores
    seen_scores = np.empty(max(max_evals, 1))
    seen[0], seen_scores[0] = params, best
    n_seen = 1
    while evals < max_evals:
        improved = False
        for shape in range(params.shape[0]):
            if not movable[shape]:
                continue
            for param in range(4):
                for sign in (1.0, -1.0):
                    trial = _moved(params, shape, param, sign * step[param])
                    total = _seen_score(seen, seen_scores, n_seen, trial)
                    if math.isnan(total):
                        f, r = sparse_score(points, radii, owner, _poses_from_params(trial), dt, samples, cap, reach)
                        total = f + r
                        if n_seen < seen.shape[0]:
                            seen[n_seen], seen_scores[n_seen] = trial, total
                            n_seen += 1
                    evals += 1
                    if total < best - 1e-12:
                        params, best, improved = trial, total, True
                        break
        if not improved:
            if step[0] < steps[0] * min_step_fraction:
                break
            step = step / 2.0
    return params, best


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
    seen[0, 0], seen_scores[0] = params, best
    n_seen = 1
    while evals < max_evals:
        improved = False
        for param in range(4):
            for sign in (1.0, -1.0):
                trial = _moved(params.reshape(1, 4), 0, param, sign * step[param])
                value = _seen_score(seen, seen_scores, n_seen, trial)
                if math.isnan(value):
                    value = _pixel_score(points, offsets, kinds, shape_marks, _affine_row(affines, shape, trial[0]),
                                         window, image, darkness, count, radii)
                    if n_seen < seen.shape[0]:
                        seen[n_seen], seen_scores[n_seen] = trial, value
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


@njit(cache=True)
def trace_step(
    local: np.ndarray,
    x: float,
    y: float,
    theta: float,
    u: float,
    dt: np.ndarray,
    samples: np.ndarray,
    covered: np.ndarray,
    cap: float,
    max_forward: float,
    reach: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Every move of `local` (O, N, 2: centreline points of a move from the origin heading along +x, in
    units, pixel orientation) drawn from the turtle at (x, y) heading `theta` (radians) with `u` pixels per
    unit, in the crop frame -> (forward (O,): mean distance transform along the move in units, capped at
    `cap` units; new (O, K): ink samples within `reach` units of the move not yet `covered`, computed only
    for moves with forward <= max_forward)."""
    n_moves, n_points = local.shape[0], local.shape[1]
    c, s = math.cos(theta), math.sin(theta)
    forward = np.empty(n_moves)
    new = np.zeros((n_moves, samples.shape[0]), dtype=np.bool_)
    cols = np.empty(n_points)
    rows = np.empty(n_points)
    limit = reach * u
    for o in range(n_moves):
        total = 0.0
        for k in range(n_points):
            lx, ly = local[o, k, 0], local[o, k, 1]
            cols[k] = x + u * (c * lx - s * ly)
            rows[k] = y + u * (s * lx + c * ly)
            total += _bilinear(dt, cols[k], rows[k], cap * u)
        forward[o] = total / n_points / u
        if forward[o] > max_forward:
            continue
        low_c, high_c, low_r, high_r = cols.min() - limit, cols.max() + limit, rows.min() - limit, rows.max() + limit
        for q in range(samples.shape[0]):
            if covered[q]:
                continue
            qx, qy = samples[q, 0], samples[q, 1]
            if qx < low_c or qx > high_c or qy < low_r or qy > high_r:
                continue
            for k in range(n_points):
                dx, dy = cols[k] - qx, rows[k] - qy
                if dx * dx + dy * dy < limit * limit:
                    new[o, q] = True
                    break
    return forward, new


@njit(cache=True)
def trace_steps(
    local: np.ndarray,
    states: np.ndarray,
    u: float,
    dt: np.ndarray,
    samples: np.ndarray,
    covered: np.ndarray,
    cap: float,
    max_forward: float,
    reach: float,
) -> tuple[np.ndarray, np.ndarray]:
    """`trace_step` from each of several turtles (`states` (F, 3): x, y, theta; `covered` (F, K)) ->
    (forward (F, O), new (F, O, K))."""
    f = states.shape[0]
    forward = np.empty((f, local.shape[0]))
    new = np.zeros((f, local.shape[0], samples.shape[0]), dtype=np.bool_)
    for i in range(f):
        forward[i], new[i] = trace_step(
            local, states[i, 0], states[i, 1], states[i, 2], u, dt, samples, covered[i], cap, max_forward, reach
        )
    return forward, new
