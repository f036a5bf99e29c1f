"""The free-form tracer's kernels (Numba; `search.trace`), each with its plain-Python reference twin in
`search.kernel_twins`.

  `trace_step`  every grid move from a turtle state: its mean distance to the ink (forward term, in units) and which
                ink samples it newly covers.
  `trace_beam`  the tracer's whole beam search from one turtle, compiled as one kernel.
"""

from __future__ import annotations

import math

import numpy as np
from dsl.jit import njit

from search.kernels import _bilinear, bisect, stable_argsort

RAD_TO_DEG = 180.0 / math.pi  # as Python's math.degrees multiplies (the tracer's end keys, `trace_beam`)


@njit(cache=True, inline="always")
def _near(cols: np.ndarray, rows: np.ndarray, n: int, qx: float, qy: float, reach2: float) -> bool:
    """Whether the point (qx, qy) lies within sqrt(reach2) of any of the first `n` points (cols, rows): an ink sample a
    move covers."""
    for p in range(n):
        dx, dy = cols[p] - qx, rows[p] - qy
        if dx * dx + dy * dy < reach2:
            return True
    return False


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
            new[o, q] = _near(cols, rows, n_points, qx, qy, limit * limit)
    return forward, new


@njit(cache=True)
def trace_beam(
    local_first: np.ndarray,
    moves_first: np.ndarray,
    local_all: np.ndarray,
    moves_all: np.ndarray,
    start: np.ndarray,
    u: float,
    dt: np.ndarray,
    samples: np.ndarray,
    cap: float,
    max_forward: float,
    reach: float,
    tables: np.ndarray,
    arc_side: np.ndarray,
    weights: np.ndarray,
    arcs_agree: bool,
    beam: int,
    max_actions: int,
):
    """The tracer's beam search from one turtle (`search.trace.trace_shape`, compiled whole): per step, every allowed
    move of every walk of the frontier scored (its forward term and the ink it newly covers as `trace_step` finds
    them; the first step's moves `local_first` / `moves_first`, the others' `local_all` / `moves_all`), and the `beam`
    best walks whose ends differ kept. `start` (3,): x, y, theta; `tables` (S, 5) per move index: grammar side,
    off-grammar (0 / 1), end x, end y, end heading; `arc_side` (S,); `weights`: forward, action and deviation costs;
    arcs turning both ways are not allowed when `arcs_agree`. -> every walk kept on the way, in the order kept: score
    (W,), moves (W, max_actions) with their count (W,), x, y, theta, forward (W, 4), covered (W, K), side,
    deviations, arc side (W, 3)."""
    n = samples.shape[0]
    most = beam * max_actions
    k_score = np.empty(most)
    k_moves = np.zeros((most, max_actions), dtype=np.int64)
    k_count = np.zeros(most, dtype=np.int64)
    k_state = np.empty((most, 4))
    k_covered = np.zeros((most, n), dtype=np.bool_)
    k_ints = np.zeros((most, 3), dtype=np.int64)
    kept = 0
    x_order = stable_argsort(samples[:, 0].copy())  # the samples by x: a move's box is a slice of them
    by_x = samples[x_order, 0].copy()
    # the frontier: rows of the kept arrays (the start is no kept walk: its own arrays)
    f_rows = np.empty(0, dtype=np.int64)
    for step in range(max_actions):
        local = local_first if step == 0 else local_all
        moves = moves_first if step == 0 else moves_all
        f = 1 if step == 0 else f_rows.shape[0]
        states = np.empty((f, 3))
        covered = np.zeros((f, n), dtype=np.bool_)
        past = np.zeros(f)
        sides = np.zeros(f, dtype=np.int64)
        devs = np.zeros(f, dtype=np.int64)
        arcs = np.zeros(f, dtype=np.int64)
        if step == 0:
            states[0, 0], states[0, 1], states[0, 2] = start[0], start[1], start[2]
        else:
            for i in range(f):
                r = f_rows[i]
                states[i, 0], states[i, 1], states[i, 2] = k_state[r, 0], k_state[r, 1], k_state[r, 2]
                for q in range(n):  # a loop: an array assigned to a row compiles Numba's shape-mismatch message
                    covered[i, q] = k_covered[r, q]
                past[i] = k_state[r, 3]
                sides[i], devs[i], arcs[i] = k_ints[r, 0], k_ints[r, 1], k_ints[r, 2]
        m, points = moves.shape[0], local.shape[1]
        forward = np.empty((f, m))  # as `trace_step`: the mean distance transform along each move, in units
        for i in range(f):
            c, s = math.cos(states[i, 2]), math.sin(states[i, 2])
            for k in range(m):
                total = 0.0
                for p in range(points):
                    lx, ly = local[k, p, 0], local[k, p, 1]
                    total += _bilinear(dt, states[i, 0] + u * (c * lx - s * ly), states[i, 1] + u * (s * lx + c * ly),
                                       cap * u)
                forward[i, k] = total / points / u
        owner = np.empty(f * m, dtype=np.int64)
        pick = np.empty(f * m, dtype=np.int64)
        a = 0
        for i in range(f):
            for k in range(m):
                if forward[i, k] > max_forward:
                    continue
                if arcs_agree and arcs[i] * arc_side[moves[k]] < 0:  # an arc turning the other way from the walk's
                    continue
                owner[a], pick[a] = i, k
                a += 1
        if a == 0:
            break
        # the ink samples each allowed move newly covers (as `trace_step`, for the allowed moves only)
        new = np.zeros((a, n), dtype=np.bool_)
        cols = np.empty(points)
        rows_p = np.empty(points)
        limit = reach * u
        for j in range(a):
            i, k = owner[j], pick[j]
            c, s = math.cos(states[i, 2]), math.sin(states[i, 2])
            for p in range(points):
                lx, ly = local[k, p, 0], local[k, p, 1]
                cols[p] = states[i, 0] + u * (c * lx - s * ly)
                rows_p[p] = states[i, 1] + u * (s * lx + c * ly)
            low_c, high_c = cols.min() - limit, cols.max() + limit
            low_r, high_r = rows_p.min() - limit, rows_p.max() + limit
            for t in range(bisect(by_x, low_c, False), bisect(by_x, high_c, True)):
                q = x_order[t]  # the samples with low_c <= x <= high_c, by x
                if covered[i, q]:
                    continue
                qx, qy = samples[q, 0], samples[q, 1]
                if qy < low_r or qy > high_r:
                    continue
                new[j, q] = _near(cols, rows_p, points, qx, qy, limit * limit)
        base = np.empty(f, dtype=np.int64)
        for i in range(f):
            base[i] = covered[i].sum()
        score = np.empty(a)
        count = np.empty(a, dtype=np.int64)
        dev = np.empty(a, dtype=np.int64)
        ends = np.empty((a, 3))
        for j in range(a):
            i, k = owner[j], pick[j]
            move = moves[k]
            side = int(tables[move, 0])
            count[j] = base[i] + new[j].sum()
            clash = 1 if (side != 0 and sides[i] != 0 and side != sides[i]) else 0
            dev[j] = devs[i] + int(tables[move, 1]) + clash
            score[j] = (weights[0] * (past[i] + forward[i, k]) + weights[1] * (step + 1) + weights[2] * dev[j]
                        - count[j] / n)
            c, s = math.cos(states[i, 2]), math.sin(states[i, 2])
            ex, ey = tables[move, 2], tables[move, 3]
            ends[j, 0] = states[i, 0] + u * (c * ex - s * ey)
            ends[j, 1] = states[i, 1] + u * (s * ex + c * ey)
            ends[j, 2] = states[i, 2] + tables[move, 4]
        order = stable_argsort(score)
        seen = np.empty((beam, 4), dtype=np.int64)
        taken = 0
        rows = np.empty(beam, dtype=np.int64)
        for j in order:
            key0 = int(np.rint(ends[j, 0] / 3.0))
            key1 = int(np.rint(ends[j, 1] / 3.0))
            key2 = int(np.rint(ends[j, 2] * RAD_TO_DEG / 10.0)) % 36
            key3 = count[j] // 3
            fresh = True
            for t in range(taken):
                if seen[t, 0] == key0 and seen[t, 1] == key1 and seen[t, 2] == key2 and seen[t, 3] == key3:
                    fresh = False
                    break
            if not fresh:
                continue
            seen[taken, 0], seen[taken, 1], seen[taken, 2], seen[taken, 3] = key0, key1, key2, key3
            i, k = owner[j], pick[j]
            move = moves[k]
            side = int(tables[move, 0])
            if step > 0:
                r = f_rows[i]
                for t in range(step):  # a loop, not a slice assigned: that compiles Numba's shape-mismatch message
                    k_moves[kept, t] = k_moves[r, t]
            k_moves[kept, step] = move
            k_count[kept] = step + 1
            k_state[kept, 0], k_state[kept, 1], k_state[kept, 2] = ends[j, 0], ends[j, 1], ends[j, 2]
            k_state[kept, 3] = past[i] + forward[i, k]
            for q in range(n):
                k_covered[kept, q] = covered[i, q] or new[j, q]
            k_ints[kept, 0] = sides[i] if sides[i] != 0 else side
            k_ints[kept, 1] = dev[j]
            k_ints[kept, 2] = arcs[i] if arcs[i] != 0 else arc_side[move]
            k_score[kept] = score[j]
            rows[taken] = kept
            kept += 1
            taken += 1
            if taken >= beam:
                break
        f_rows = rows[:taken].copy()
    return (k_score[:kept], k_moves[:kept], k_count[:kept], k_state[:kept], k_covered[:kept], k_ints[:kept])
