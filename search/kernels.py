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
                  taken on the ink with small gaps closed). The reverse term visits, per sample, only the
                  points that can be nearer than the best so far (boxes of BLOCK points; in a pattern search,
                  near-point lists made at a nearby pose), in order, with the plain loop's test: the same sum
                  to the bit (`search.kernel_twins.reverse_sum_reference`).
  `window_l1`     sum of |rendered - image| over a rendered window placed in the image: the pixel score
                  that decides stroke types and polishes poses; `window_l1_shifted` the least such sum
                  over shifts of the window by up to a few pixels (tolerates residual misalignment);
                  `rendered_l1` the same sum for marks rendered in place, without the window's image: the
                  white part of the window is the image's darkness (`window_darkness`, once per window: a polish
                  renders many poses in one), only the rendered ink box is visited (the same total: every term
                  is a whole grey level).
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
from search.settings import BLOCK, LIST_SLACK, SKIP_MARGIN


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


NO_LISTS = np.zeros(0, dtype=np.int64)


@njit(cache=True)
def _near_lists(cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, samples: np.ndarray, reach: float,
                slack: float) -> tuple[np.ndarray, np.ndarray]:
    """Per ink sample, the posed points nearer than `reach` + the largest radius + `slack` (and SKIP_MARGIN), in
    order -> (starts (n + 1,), members): sample q's are members[starts[q]:starts[q + 1]]. At any pose whose points
    lie within `slack` of these, every other point is farther from the sample than any distance that could count."""
    n, m = samples.shape[0], cols.shape[0]
    far = reach + (radii.max() if m else 0.0) + slack + SKIP_MARGIN
    starts = np.zeros(n + 1, dtype=np.int64)
    members = np.empty(n * m, dtype=np.int64)
    count = 0
    for q in range(n):
        qx, qy = samples[q, 0], samples[q, 1]
        for k in range(m):
            dx, dy = cols[k] - qx, rows[k] - qy
            if dx * dx + dy * dy < far * far:
                members[count] = k
                count += 1
        starts[q + 1] = count
    return starts, members[:count]


@njit(cache=True)
def _listed_distance(
    cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, near: np.ndarray, qx: float, qy: float, reach: float
) -> tuple[float, int]:
    """`_sample_distance` visiting only the points `near` (in order): the others fail its test."""
    best = reach
    for t in range(near.shape[0]):
        k = near[t]
        dx, dy = cols[k] - qx, rows[k] - qy
        limit = best + radii[k]
        d2 = dx * dx + dy * dy
        if d2 < limit * limit:
            d = math.sqrt(d2) - radii[k]
            if d <= 0.0:
                return 0.0, k
            best = d
    return best, -1


@njit(cache=True)
def _moved_by(cols: np.ndarray, rows: np.ndarray, anchor_cols: np.ndarray, anchor_rows: np.ndarray) -> float:
    """The largest distance (px) a posed point moved from the anchor pose's."""
    most = 0.0
    for k in range(cols.shape[0]):
        d2 = (cols[k] - anchor_cols[k]) ** 2 + (rows[k] - anchor_rows[k]) ** 2
        most = max(most, d2)
    return math.sqrt(most)


@njit(cache=True)
def _sample_distance(
    cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, boxes: np.ndarray, widest: float, qx: float, qy: float,
    reach: float,
) -> tuple[float, int]:
    """One ink sample's reverse term: the distance to the nearest posed point minus its radius, in [0, reach]
    (the points in order, each one nearer than the best so far taken, stopping at one that covers the sample)
    -> (term, the covering point's index, or -1). The points go in blocks of BLOCK with their boxes (`boxes`
    rows: low column, high column, low row, high row): a block whose box lies farther than the best so far plus
    `widest` (the largest radius) has no point that could be taken, and is skipped; the others' points are
    visited in order as before, so the result is the same as visiting every point."""
    best = reach
    m = cols.shape[0]
    for block in range(boxes.shape[0]):
        dx = max(boxes[block, 0] - qx, qx - boxes[block, 1], 0.0)
        dy = max(boxes[block, 2] - qy, qy - boxes[block, 3], 0.0)
        far = best + widest + SKIP_MARGIN
        if dx * dx + dy * dy > far * far:
            continue
        for k in range(block * BLOCK, min(block * BLOCK + BLOCK, m)):
            dx, dy = cols[k] - qx, rows[k] - qy
            limit = best + radii[k]
            d2 = dx * dx + dy * dy
            if d2 < limit * limit:
                d = math.sqrt(d2) - radii[k]
                if d <= 0.0:
                    return 0.0, k
                best = d
    return best, -1


@njit(cache=True)
def _blocks(cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The box of each BLOCK consecutive posed points -> (B, 4): low column, high column, low row, high row."""
    m = cols.shape[0]
    boxes = np.empty(((m + BLOCK - 1) // BLOCK, 4))
    for block in range(boxes.shape[0]):
        start = block * BLOCK
        boxes[block, 0], boxes[block, 1], boxes[block, 2], boxes[block, 3] = cols[start], cols[start], rows[start], rows[start]
        for k in range(start + 1, min(start + BLOCK, m)):
            boxes[block, 0], boxes[block, 1] = min(boxes[block, 0], cols[k]), max(boxes[block, 1], cols[k])
            boxes[block, 2], boxes[block, 3] = min(boxes[block, 2], rows[k]), max(boxes[block, 3], rows[k])
    return boxes


@njit(cache=True)
def _reverse_sum(cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, samples: np.ndarray, reach: float,
                 forward: float, bound: float, inclusive: bool, starts: np.ndarray = NO_LISTS,
                 members: np.ndarray = NO_LISTS) -> tuple[float, bool]:
    """The sum over ink samples of `_sample_distance` -> (sum, whole). It stops early (whole False, the sum so far)
    once forward + sum / n exceeds `bound` (or reaches it, `inclusive`): the terms are never negative, so the whole
    sum would too. A sample covered by the point that covered the previous one is 0 without a search (a covered
    sample is 0 whichever point covers it). With near-point lists (`starts`, `members` of `_near_lists`, made at
    a pose no point has moved more than LIST_SLACK from), each sample visits only its list."""
    m, n = cols.shape[0], samples.shape[0]
    if m == 0:
        return reach * n, True
    listed = starts.shape[0] > 0
    boxes = _blocks(cols, rows) if not listed else np.empty((0, 4))
    widest = radii.max()
    total, hint = 0.0, 0
    for q in range(n):
        qx, qy = samples[q, 0], samples[q, 1]
        dx, dy = cols[hint] - qx, rows[hint] - qy
        if dx * dx + dy * dy < radii[hint] * radii[hint]:
            continue  # covered: 0, and no bound to test (the sum did not grow)
        if listed:
            found, covering = _listed_distance(cols, rows, radii, members[starts[q]:starts[q + 1]], qx, qy, reach)
        else:
            found, covering = _sample_distance(cols, rows, radii, boxes, widest, qx, qy, reach)
        if covering >= 0:
            hint = covering
        total += found
        score = forward + total / n
        if score > bound or (inclusive and score >= bound):
            return total, False
    return total, True


@njit(cache=True)
def _reverse_mean(cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, samples: np.ndarray, reach: float) -> float:
    """`sparse_score`'s reverse term: per ink sample, the distance to the nearest posed point minus its radius
    (at most `reach`), averaged."""
    total, _ = _reverse_sum(cols, rows, radii, samples, reach, 0.0, np.inf, False)
    return total / max(samples.shape[0], 1)


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
    sets are taken in increasing forward term and the scan stops at the first such; a pose set's reverse sum
    stops as soon as its total exceeds that total (`_reverse_sum`). The kept totals, and so a stable sort's
    first `keep`, are exactly `sparse_scores`'s."""
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
        reverse, whole = _reverse_sum(cols, rows, radii, samples, reach, forward[p], best[-1], False)
        if not whole:
            continue  # its total exceeds the keep-th lowest so far
        total = forward[p] + reverse / max(samples.shape[0], 1)
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
    step or after `max_evals` scores. A trial's reverse sum stops as soon as the trial cannot improve
    (`_reverse_sum`): the same moves as scoring every trial whole; a trial whose points moved at most LIST_SLACK
    from the pose the near-point lists were made at visits only those (lists made again after an accepted move of
    more than half that). Returns (params, score)."""
    f, r = sparse_score(points, radii, owner, _poses_from_params(params), dt, samples, cap, reach)
    best = f + r
    evals = 1
    step = steps.copy()
    anchor_cols, anchor_rows = _posed(points, owner, _poses_from_params(params))
    starts, members = _near_lists(anchor_cols, anchor_rows, radii, samples, reach, LIST_SLACK)
    while evals < max_evals:
        improved = False
        for shape in range(params.shape[0]):
            if not movable[shape]:
                continue
            for param in range(4):
                for sign in (1.0, -1.0):
                    trial = _moved(params, shape, param, sign * step[param])
                    evals += 1
                    cols, rows = _posed(points, owner, _poses_from_params(trial))
                    f = _forward_mean(cols, rows, dt, cap)
                    moved = _moved_by(cols, rows, anchor_cols, anchor_rows)
                    if moved <= LIST_SLACK:
                        reverse, whole = _reverse_sum(cols, rows, radii, samples, reach, f, best - 1e-12, True, starts, members)
                    else:
                        reverse, whole = _reverse_sum(cols, rows, radii, samples, reach, f, best - 1e-12, True)
                    if whole and f + reverse / max(samples.shape[0], 1) < best - 1e-12:
                        params, best, improved = trial, f + reverse / max(samples.shape[0], 1), True
                        if moved > LIST_SLACK / 2.0:  # lists about the new pose
                            anchor_cols, anchor_rows = cols, rows
                            starts, members = _near_lists(cols, rows, radii, samples, reach, LIST_SLACK)
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
    h, w = image.shape
    rh, rw = rendered.shape
    top, left = r0 - shift, c0 - shift
    ph, pw = rh + 2 * shift, rw + 2 * shift
    # integral of darkness (255 - image) over the padded region (0 outside the image)
    integral = np.zeros((ph + 1, pw + 1))
    for i in range(ph):
        ii = top + i
        run = 0.0
        for j in range(pw):
            jj = left + j
            if 0 <= ii < h and 0 <= jj < w:
                run += 255.0 - float(image[ii, jj])
            integral[i + 1, j + 1] = integral[i, j + 1] + run
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
    best = np.inf
    for dr in range(-shift, shift + 1):
        for dc in range(-shift, shift + 1):
            a, b = dr + shift, dc + shift
            total = integral[a + rh, b + rw] - integral[a, b + rw] - integral[a + rh, b] + integral[a, b]
            for q in range(count):
                ii, jj = r0 + dr + rows[q], c0 + dc + cols[q]
                if ii < 0 or ii >= h or jj < 0 or jj >= w:
                    continue
                v = float(image[ii, jj])
                total += abs(values[q] - v) - (255.0 - v)
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
    for i in range(ink.shape[0]):
        ii = r0 + br + i
        if ii < 0 or ii >= h:
            continue
        for j in range(ink.shape[1]):
            jj = c0 + bc + j
            if jj < 0 or jj >= w or ink[i, j] <= 0.0:
                continue
            g = float(image[ii, jj])
            total += abs(float(grey_level(ink[i, j])) - g) - (255.0 - g)
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
