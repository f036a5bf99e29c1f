"""The scoring kernels of the enumerator (Numba), each with its plain-Python reference twin; the
kernels of the pixel score are in `search.pixel_kernels`.

A pose maps a template (scale-1 turtle units, `search.template`) into the pixel frame of an image crop by
a similarity transform, as a row (cx, cy, a, b):

    column = cx + a*x - b*y,    row = cy - (b*x + a*y)        (a = ppu*s*cos h, b = ppu*s*sin h)

Pixel coordinates are continuous (pixel (i, j) is the square [j, j+1) x [i, i+1)), as in `dsl.raster`. Kernels:
  `sparse_score`  the symmetric, truncated chamfer distance (pixels) of posed centreline samples against
                  the image: forward = mean distance transform of the image ink at the posed points
                  (bilinear, truncated at `cap`); reverse = mean over sampled ink pixels of the distance to
                  the nearest posed point minus the pen half-width (truncated at `reach`). Used for pose
                  fitting and for ranking structures (which are stroke-agnostic: the distance transform is
                  taken on the ink with small gaps closed). The reverse term visits, per sample, only the
                  points that can be nearer than the best so far (boxes of BLOCK points; in a pattern search,
                  near-point lists made at a nearby pose), in order, with the plain loop's test: the same sum
                  to the bit (`search.kernel_twins.reverse_sum_reference`).
  `sparse_scores` `sparse_score` of many pose sets; `best_sparse_scores` only those that can be among the
                  lowest few (the heading scan of the initial guesses: the same choice, fewer reverse terms).
  `pattern_search` pose refinement on the `sparse_score` (the search's inner loop, compiled whole).
The free-form tracer's kernels are in `search.trace_kernels`. The twins (`search.kernel_twins`, `*_reference`)
use Python loops and the `math` module only; the tests compare them.
"""

from __future__ import annotations

import math

import numpy as np
from dsl.jit import njit

from search.settings import BLOCK, LIST_SLACK, SKIP_MARGIN

RUN = 16  # stable_argsort's insertion-sorted runs (elements): any size sorts the same; 16 is the usual cut-off


@njit(cache=True)
def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """The indices that sort the 1-D `keys` ascending, equal keys in their order (as np.argsort(kind="stable")
    gives, NaN not expected): a merge sort written out (runs of RUN sorted by insertion, then merged bottom-up,
    the keys moved with their indices), because Numba's np.argsort compiles for seconds on a first run (its
    quicksort and its mergesort each about 2.5 s of CPU in every kernel using them, issue 53)."""
    n = keys.shape[0]
    order, key = np.arange(n), keys.copy()
    for low in range(0, n, RUN):
        for k in range(low + 1, min(low + RUN, n)):
            v, i, j = key[k], order[k], k
            while j > low and key[j - 1] > v:
                key[j], order[j] = key[j - 1], order[j - 1]
                j -= 1
            key[j], order[j] = v, i
    spare, spare_key = np.empty(n, dtype=np.int64), np.empty(n)
    width = RUN
    while width < n:
        for low in range(0, n, 2 * width):
            middle, high = min(low + width, n), min(low + 2 * width, n)
            i, j = low, middle
            for k in range(low, high):
                if i < middle and (j >= high or key[i] <= key[j]):
                    spare[k], spare_key[k] = order[i], key[i]
                    i += 1
                else:
                    spare[k], spare_key[k] = order[j], key[j]
                    j += 1
        order, spare, key, spare_key = spare, order, spare_key, key
        width *= 2
    return order


@njit(cache=True, inline="always")
def bisect(sorted_keys: np.ndarray, value: float, right: bool) -> int:
    """np.searchsorted(sorted_keys, value, "right" if right else "left"), written out for the compile time."""
    low, high = 0, sorted_keys.shape[0]
    while low < high:
        mid = (low + high) // 2
        if sorted_keys[mid] < value or (right and sorted_keys[mid] == value):
            low = mid + 1
        else:
            high = mid
    return low


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


NO_LISTS = np.zeros(0, dtype=np.int64)  # `_reverse_sum` without near-point lists, called from Python (a kernel
# makes its own empty array: a global one is typed read-only there, another compile)


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
        best = _nearer(cols, rows, radii, k, qx, qy, best)
        if best == 0.0:
            return 0.0, k
    return best, -1


@njit(cache=True, inline="always")
def _nearer(cols: np.ndarray, rows: np.ndarray, radii: np.ndarray, k: int, qx: float, qy: float, best: float) -> float:
    """The plain loop's test of point k for the sample (qx, qy): its distance less its radius when that is below
    `best` (0.0 when it covers the sample), else `best`."""
    dx, dy = cols[k] - qx, rows[k] - qy
    limit = best + radii[k]
    d2 = dx * dx + dy * dy
    if d2 < limit * limit:
        return max(math.sqrt(d2) - radii[k], 0.0)
    return best


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
            best = _nearer(cols, rows, radii, k, qx, qy, best)
            if best == 0.0:
                return 0.0, k
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
                 forward: float, bound: float, inclusive: bool, starts: np.ndarray, members: np.ndarray
                 ) -> tuple[float, bool]:
    """The sum over ink samples of `_sample_distance` -> (sum, whole). It stops early (whole False, the sum so far)
    once forward + sum / n exceeds `bound` (or reaches it, `inclusive`): the terms are never negative, so the whole
    sum would too. A sample covered by the point that covered the previous one is 0 without a search (a covered
    sample is 0 whichever point covers it). With near-point lists (`starts`, `members` of `_near_lists`, made at
    a pose no point has moved more than LIST_SLACK from), each sample visits only its list; with empty ones, the
    blocks. The lists have no default: a call leaving them out compiled a variant of its own (issue 53)."""
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
    (`samples` rows: column, row). The reverse term: per ink sample, the distance to the nearest posed point minus
    its radius (at most `reach`), averaged."""
    cols, rows = _posed(points, owner, poses)
    no_lists = np.empty(0, dtype=np.int64)
    reverse, _ = _reverse_sum(cols, rows, radii, samples, reach, 0.0, np.inf, False, no_lists, no_lists)
    return _forward_mean(cols, rows, dt, cap), reverse / max(samples.shape[0], 1)


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
    no_lists = np.empty(0, dtype=np.int64)
    for p in stable_argsort(forward):
        if forward[p] > best[-1]:
            break
        cols, rows = _posed(points, owner, pose_sets[p])
        reverse, whole = _reverse_sum(cols, rows, radii, samples, reach, forward[p], best[-1], False, no_lists,
                                      no_lists)
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
def _moved_about(params: np.ndarray, shape: int, param: int, delta: float, centroids: np.ndarray) -> np.ndarray:
    """`_moved`, a turn or a scaling made about the shape's centroid (template frame) instead of its start."""
    trial = _moved(params, shape, param, delta)
    if param >= 2:
        gx, gy = centroids[shape, 0], centroids[shape, 1]
        h = math.radians(params[shape, 2])
        a, b = params[shape, 3] * math.cos(h), params[shape, 3] * math.sin(h)
        x, y = params[shape, 0] + a * gx - b * gy, params[shape, 1] - (b * gx + a * gy)
        h = math.radians(trial[shape, 2])
        a, b = trial[shape, 3] * math.cos(h), trial[shape, 3] * math.sin(h)
        trial[shape, 0], trial[shape, 1] = x - (a * gx - b * gy), y + (b * gx + a * gy)
    return trial


@njit(cache=True)
def _store(seen: np.ndarray, k: int, params: np.ndarray) -> None:
    """seen[k] = params (a table of rows) element by element: an array assigned to a slice compiles Numba's
    shape-mismatch message (string formatting: about 4 s of CPU on a first run), a loop does not."""
    for i in range(params.shape[0]):
        for j in range(params.shape[1]):
            seen[k, i, j] = params[i, j]


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
    growth: float,
) -> tuple[np.ndarray, float]:
    """Pose refinement: pattern search on the `sparse_score` total over the rows of `params` (cx, cy, theta
    degrees, s) whose `movable` flag is set: try +/- step on each parameter in turn (turns and scalings about the
    shape's centroid), keep the first improvement and try it again at twice the step while it improves, up to
    `growth` times the step; halve the steps after a round without one; stop below `min_step_fraction` of the first
    step or after `max_evals` scores (a move's first trial is always made). A trial equal to params scored before
    (a step back) takes the score found then, and counts as an evaluation; another trial's reverse sum stops as
    soon as the trial cannot improve (`_reverse_sum`): the same moves as scoring every trial whole; a trial whose
    points moved at most LIST_SLACK from the pose the near-point lists were made at visits only those (lists made
    again after an accepted move of more than half that). Returns (params, score)."""
    f, r = sparse_score(points, radii, owner, _poses_from_params(params), dt, samples, cap, reach)
    best = f + r
    evals, step = 1, steps.copy()
    seen = np.empty((max(max_evals, 1), params.shape[0], 4))  # the params scored so far, and their scores
    seen_scores = np.empty(max(max_evals, 1))
    _store(seen, 0, params)
    seen_scores[0] = best
    n_seen = 1
    anchor_cols, anchor_rows = _posed(points, owner, _poses_from_params(params))
    starts, members = _near_lists(anchor_cols, anchor_rows, radii, samples, reach, LIST_SLACK)
    no_lists = np.empty(0, dtype=np.int64)
    centroids, counts = np.zeros((params.shape[0], 2)), np.zeros(params.shape[0])  # element by element (`_store`)
    for k in range(points.shape[0]):
        centroids[owner[k], 0] += points[k, 0]
        centroids[owner[k], 1] += points[k, 1]
        counts[owner[k]] += 1.0
    for i in range(params.shape[0]):
        centroids[i, 0], centroids[i, 1] = centroids[i, 0] / max(counts[i], 1.0), centroids[i, 1] / max(counts[i], 1.0)
    while evals < max_evals:
        improved = False
        for shape in range(params.shape[0]):
            if not movable[shape]:
                continue
            for param in range(4):
                for sign in (1.0, -1.0):
                    factor, accepted = 1.0, False
                    while factor == 1.0 or evals < max_evals:
                        trial = _moved_about(params, shape, param, sign * step[param] * factor, centroids)
                        total = _seen_score(seen, seen_scores, n_seen, trial)
                        evals += 1
                        moved = 0.0
                        if math.isnan(total):
                            cols, rows = _posed(points, owner, _poses_from_params(trial))
                            f = _forward_mean(cols, rows, dt, cap)
                            moved = _moved_by(cols, rows, anchor_cols, anchor_rows)
                            bound = best - 1e-12
                            near = moved <= LIST_SLACK  # the lists hold every point that can count
                            reverse, whole = _reverse_sum(cols, rows, radii, samples, reach, f, bound, True,
                                                          starts if near else no_lists, members if near else no_lists)
                            if not whole:  # it cannot improve: not kept as a score seen
                                break
                            total = f + reverse / max(samples.shape[0], 1)
                            if n_seen < seen.shape[0]:
                                _store(seen, n_seen, trial)
                                seen_scores[n_seen] = total
                                n_seen += 1
                        if total < best - 1e-12:
                            params, best, improved, accepted = trial, total, True, True
                            if moved > LIST_SLACK / 2.0:  # lists about the new pose
                                anchor_cols, anchor_rows = cols, rows
                                starts, members = _near_lists(cols, rows, radii, samples, reach, LIST_SLACK)
                            if factor >= growth:
                                break
                            factor *= 2.0
                        else:
                            break
                    if accepted:
                        break
        if not improved:
            if step[0] < steps[0] * min_step_fraction:
                break
            step = step / 2.0
    return params, best
