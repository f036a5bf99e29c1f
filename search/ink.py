"""Which ink belongs to which shape of a two-shape program: the image's ink groups (`ink_groups`, what every
candidate's shapes are fitted to, `search.pose.fit`) and the other ways of splitting the ink in two (`other_splits`,
tried when a hypothesis fits the groups poorly, `search.pose._regrouped`)."""

from __future__ import annotations

import itertools

import numpy as np
from scipy import ndimage

from search.settings import REGROUP_CLUSTERS
from search.template import Target


def ink_groups(target: Target, n: int) -> list[np.ndarray]:
    """Ink pixel centres split into `n` groups: connected parts after closing small gaps (the two largest,
    the rest joined to the nearer), or two clusters (2-means) when the ink is one part."""
    pts = target.ink_points
    if n == 1:
        return [pts]
    if ("groups", n) not in target.memo:
        target.memo[("groups", n)] = _two_groups(target, pts)
    return target.memo[("groups", n)]


def _two_groups(target: Target, pts: np.ndarray) -> list[np.ndarray]:
    owner, count = _parts(target)
    if count >= 2:
        sizes = np.bincount(owner, minlength=count + 1)
        sizes[0] = 0
        big = np.argsort(-sizes, kind="stable")[:2]
        centres = np.array([pts[owner == g].mean(axis=0) for g in big])
        part_centres = np.array([pts[owner == g].mean(axis=0) if sizes[g] else np.zeros(2) for g in range(count + 1)])
        assignment = np.argmin(((part_centres[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)[owner]
    else:
        assignment = clusters(pts, 2, rounds=10)[0] - 1
    return [pts[assignment == g] for g in range(2)]


def ink_parts(target: Target) -> int:
    """How many parts the image's ink is in (connected after closing small gaps, as `ink_groups` finds them)."""
    return _parts(target)[1]


def _parts(target: Target) -> tuple[np.ndarray, int]:
    """(the part of each ink point, the number of parts): the ink's connected parts after closing small gaps
    (3 px), once an image."""
    if ("parts",) not in target.memo:
        pts = target.ink_points
        labels, count = ndimage.label(ndimage.binary_dilation(target.dt == 0, iterations=3))
        target.memo[("parts",)] = (labels[pts[:, 1].astype(int), pts[:, 0].astype(int)], count)
    return target.memo[("parts",)]


def other_splits(target: Target) -> list[list[np.ndarray]]:
    """The ink split in two in every way but `ink_groups`'s: the largest REGROUP_CLUSTERS parts (connected after
    closing small gaps, as `ink_groups` finds them; of ink in fewer than three parts, that many k-means clusters)
    put on two sides, each smaller part on the side whose parts' mean centre is nearer."""
    pts = target.ink_points
    owner, count = _parts(target)
    if count < 3:
        owner, count = clusters(pts, REGROUP_CLUSTERS)
    sizes = np.bincount(owner, minlength=count + 1)
    sizes[0] = 0
    big = [int(g) for g in np.argsort(-sizes, kind="stable")[:REGROUP_CLUSTERS] if sizes[g]]
    centres = np.array([pts[owner == g].mean(axis=0) if sizes[g] else np.zeros(2) for g in range(count + 1)])
    default = ink_groups(target, 2)
    out = []
    for r in range(len(big) - 1):
        for more in itertools.combinations(big[1:], r):
            side = {big[0], *more}  # the largest part on side 0: each split once
            centre0 = centres[sorted(side)].mean(axis=0)
            centre1 = centres[[g for g in big if g not in side]].mean(axis=0)
            near0 = ((centres - centre0) ** 2).sum(axis=1) <= ((centres - centre1) ** 2).sum(axis=1)
            on0 = np.array([g in side or (g not in big and bool(near0[g])) for g in range(count + 1)])[owner]
            groups = [pts[on0], pts[~on0]]
            if any(len(g) == 0 for g in groups) or any(
                    len(groups[0]) == len(d) and np.array_equal(groups[0], d) for d in default):
                continue
            out.append(groups)
    return out


def clusters(pts: np.ndarray, k: int, rounds: int = 20) -> tuple[np.ndarray, int]:
    """k-means of ink pixel centres (started from the points at evenly spaced ranks along x, `rounds` rounds) ->
    (owner 1..k per point, k); `_two_groups` splits one part in two with k = 2, 10 rounds."""
    order = np.argsort(pts[:, 0] + pts[:, 1] * 1e-3, kind="stable")
    centres = np.array([pts[order[(2 * j + 1) * len(order) // (2 * k)]] for j in range(k)])
    assignment = np.zeros(len(pts), dtype=np.int64)
    for _ in range(rounds):
        assignment = np.argmin(((pts[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        centres = np.array([pts[assignment == g].mean(axis=0) if np.any(assignment == g) else centres[g]
                            for g in range(k)])
    return assignment + 1, k
