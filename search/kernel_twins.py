"""The plain-Python reference twins of the scoring kernels (`search.kernels`, `search.pixel_kernels`,
`search.trace_kernels`): the same functions with Python loops and the `math` module only (numpy for arrays in and
out), slow and easy to read. The tests compare each kernel with its twin; the decoder benchmark times `sparse_score`
against `sparse_score_reference`."""

from __future__ import annotations

import math

import numpy as np


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


def sparse_score_reference(points, radii, owner, poses, dt, samples, cap, reach) -> tuple[float, float]:
    posed = []
    for (x, y), o in zip(points, owner):
        cx, cy, a, b = poses[o]
        posed.append((cx + a * x - b * y, cy - (b * x + a * y)))
    forward = sum(_bilinear_reference(dt, col, row, cap) for col, row in posed)
    reverse = 0.0
    for qx, qy in samples:
        distances = [max(math.hypot(col - qx, row - qy) - r, 0.0) for (col, row), r in zip(posed, radii)]
        reverse += min([reach] + distances)
    return forward / max(len(points), 1), reverse / max(len(samples), 1)


def reverse_sum_reference(cols, rows, radii, samples, reach) -> float:
    """The sum over ink samples of the distance to the nearest posed point minus its radius (at most `reach`, at
    least 0), the points visited in order with `search.kernels`' test and arithmetic: the kernels' reverse term
    (with its skips and shortcuts) must give exactly this sum."""
    total = 0.0
    for qx, qy in samples:
        best = reach
        for col, row, r in zip(cols, rows, radii):
            dx, dy = float(col) - float(qx), float(row) - float(qy)
            limit = best + float(r)
            d2 = dx * dx + dy * dy
            if d2 < limit * limit:
                best = math.sqrt(d2) - float(r)
                if best <= 0.0:
                    best = 0.0
                    break
        total += best
    return total


def sparse_scores_reference(points, radii, owner, pose_sets, dt, samples, cap, reach) -> list[float]:
    return [sum(sparse_score_reference(points, radii, owner, poses, dt, samples, cap, reach)) for poses in pose_sets]


def pattern_search_reference(points, radii, owner, params, movable, dt, samples, cap, reach, steps, max_evals,
                             min_step_fraction, growth):
    def score(p):
        poses = []
        for cx, cy, theta, scale in p:
            poses.append((cx, cy, scale * math.cos(math.radians(theta)), scale * math.sin(math.radians(theta))))
        return sum(sparse_score_reference(points, radii, owner, poses, dt, samples, cap, reach))

    centroids = []
    for k in range(len(params)):
        mine = [points[i] for i in range(len(points)) if owner[i] == k]
        gx = sum(float(p[0]) for p in mine) / max(len(mine), 1)
        gy = sum(float(p[1]) for p in mine) / max(len(mine), 1)
        centroids.append((gx, gy))
    return pattern_search_loop(score, params, movable, steps, max_evals, min_step_fraction, centroids, growth)


def _moved_reference(row: list, param: int, delta: float, centroid) -> list:
    """One parameter of a row (cx, cy, theta degrees, s) moved by `delta` (s by a factor exp(delta)); with a
    `centroid` (template frame), a turn or scaling keeps that point where it is drawn."""
    trial = list(row)
    if param == 3:
        trial[3] *= math.exp(delta)
    else:
        trial[param] += delta
    if centroid is None or param < 2:
        return trial
    gx, gy = centroid
    h = math.radians(row[2])
    a, b = row[3] * math.cos(h), row[3] * math.sin(h)
    x, y = row[0] + a * gx - b * gy, row[1] - (b * gx + a * gy)
    h = math.radians(trial[2])
    a, b = trial[3] * math.cos(h), trial[3] * math.sin(h)
    trial[0], trial[1] = x - (a * gx - b * gy), y + (b * gx + a * gy)
    return trial


def pattern_search_loop(score, params, movable, steps, max_evals, min_step_fraction, centroids=None,
                        expand_limit: float = 1.0) -> tuple[list, float]:
    """The pattern search of `kernels.pattern_search` and `pixel_kernels.pixel_pattern_search` with every trial
    scored by `score` (rows of cx, cy, theta degrees, s -> a number): try +/- step on each parameter of each
    `movable` row in turn, keep the first improvement; halve the steps after a round without one; stop below
    `min_step_fraction` of the first step or after `max_evals` scores -> (rows, score). `centroids` (per row, in
    the template frame): turns and scalings about them; `expand_limit` > 1: an improving move is tried again at
    twice the step, and again, up to that many times the step, while it improves."""
    params = [list(row) for row in params]
    best, evals, step = score(params), 1, list(steps)
    while evals < max_evals:
        improved = False
        for shape in (k for k in range(len(params)) if movable[k]):
            for param in range(4):
                for sign in (1.0, -1.0):
                    factor, accepted = 1.0, False
                    while factor == 1.0 or evals < max_evals:  # the first trial of a move always
                        trial = [list(row) for row in params]
                        trial[shape] = _moved_reference(params[shape], param, sign * step[param] * factor,
                                                        None if centroids is None else centroids[shape])
                        value = score(trial)
                        evals += 1
                        if value >= best - 1e-12:
                            break
                        params, best, improved, accepted = trial, value, True, True
                        if factor >= expand_limit:
                            break
                        factor *= 2.0
                    if accepted:
                        break
        if not improved:
            if step[0] < steps[0] * min_step_fraction:
                break
            step = [v / 2.0 for v in step]
    return params, best


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


def trace_step_reference(local, x, y, theta, u, dt, samples, covered, cap, max_forward, reach):
    c, s = math.cos(theta), math.sin(theta)
    forward, new = [], []
    for move in local:
        posed = [(x + u * (c * lx - s * ly), y + u * (s * lx + c * ly)) for lx, ly in move]
        forward.append(sum(_bilinear_reference(dt, col, row, cap * u) for col, row in posed) / len(posed) / u)
        new.append([
            forward[-1] <= max_forward and not done
            and any(math.hypot(col - qx, row - qy) < reach * u for col, row in posed)
            for (qx, qy), done in zip(samples, covered)
        ])
    return forward, new


def trace_beam_reference(local_first, moves_first, local_all, moves_all, start, u, dt, samples, cap, max_forward, reach,
                         tables, arc_side, weights, arcs_agree, beam, max_actions):
    """`trace_kernels.trace_beam` as a list of the walks kept, in the order kept: (score, moves, x, y, theta, forward,
    covered, side, deviations, arc side)."""
    n = len(samples)
    frontier = [((), float(start[0]), float(start[1]), float(start[2]), 0.0, [False] * n, 0, 0, 0)]
    kept = []
    for step in range(max_actions):
        local, moves = (local_first, moves_first) if step == 0 else (local_all, moves_all)
        options = []
        for walk in frontier:
            done, x, y, theta, past, covered, side, deviations, arcs = walk
            forward, new = trace_step_reference(local, x, y, theta, u, dt, samples, covered, cap, max_forward, reach)
            for k, move in enumerate(int(m) for m in moves):
                if forward[k] > max_forward or (arcs_agree and arcs * int(arc_side[move]) < 0):
                    continue
                move_side, off, ex, ey, eheading = (float(v) for v in tables[move])
                union = [a or b for a, b in zip(covered, new[k])]
                clash = move_side != 0 and side != 0 and move_side != side
                dev = deviations + int(off) + int(clash)
                score = weights[0] * (past + forward[k]) + weights[1] * (step + 1) + weights[2] * dev - sum(union) / n
                c, s = math.cos(theta), math.sin(theta)
                end = (x + u * (c * ex - s * ey), y + u * (s * ex + c * ey), theta + eheading)
                options.append((score, (done + (move,), *end, past + forward[k], union, side or int(move_side), dev,
                                        arcs or int(arc_side[move]))))
        if not options:
            break
        frontier, seen = [], set()
        for score, walk in sorted(options, key=lambda o: o[0]):  # stable: ties in the order of the options
            key = (round(walk[1] / 3.0), round(walk[2] / 3.0), round(math.degrees(walk[3]) / 10.0) % 36, sum(walk[5]) // 3)
            if key in seen:
                continue
            seen.add(key)
            frontier.append(walk)
            kept.append((score, *walk))
            if len(frontier) >= beam:
                break
    return kept


def posed_marks_reference(points, offsets, kinds, shape_marks, affines, dc, dr, size, reach):
    out, out_offsets, out_kinds = [], [0], []
    for t in range(len(shape_marks) - 1):
        cx, cy, a, b = (float(v) for v in affines[t])
        for k in range(int(shape_marks[t]), int(shape_marks[t + 1])):
            posed = [(cx + a * x - b * y + dc, cy - (b * x + a * y) + dr) for x, y in points[offsets[k]:offsets[k + 1]]]
            if not posed:
                continue
            cols, rows = [c for c, _ in posed], [r for _, r in posed]
            if max(cols) > -reach and min(cols) < size + reach and max(rows) > -reach and min(rows) < size + reach:
                out += posed
                out_offsets.append(out_offsets[-1] + len(posed))
                out_kinds.append(kinds[k])
    return np.array(out).reshape(-1, 2), np.array(out_offsets, dtype=np.int64), np.array(out_kinds, dtype=kinds.dtype)


def pixel_pattern_search_reference(points, offsets, kinds, shape_marks, affines, shape, params, window, image, darkness,
                                   count, radii, steps, max_evals, min_step_fraction):
    """Every trial scored: the shapes posed (`posed_marks_reference`), rendered (`dsl.raster.render_marks`, the
    renderer with its own twin) and compared pixel by pixel (`window_l1_reference`); `darkness` and `count`
    are the kernel's shortcut, not needed here."""
    from dsl.raster import render_marks

    r0, c0, size, dc, dr, reach = (float(v) for v in window)

    def score(p):
        posed = [list(map(float, row)) for row in affines]
        h = math.radians(p[2])
        posed[shape] = [p[0], p[1], p[3] * math.cos(h), p[3] * math.sin(h)]
        marks = posed_marks_reference(points, offsets, kinds, shape_marks, np.array(posed), dc, dr, int(size), reach)
        rendered = render_marks(np.ascontiguousarray(marks[0]), marks[1], marks[2], int(size), radii[0], radii[1])
        total, n = window_l1_reference(rendered, image, int(r0), int(c0))
        return total / max(n, 1) / 255.0

    rows, best = pattern_search_loop(lambda rows: score(rows[0]), [[float(v) for v in params]], [True],
                                     [float(v) for v in steps], max_evals, min_step_fraction)
    return rows[0], best
