"""Pose and scale fitting: where each shape of a candidate sits in the image.

A shape's pose in the crop frame is a `Placement(cx, cy, theta, s)`: start point in pixels, heading in
degrees, pixels per scale-1 unit. Fitting:
  1. initial guess: the shape's ink (all of it, or one of two ink groups for two shapes) fixes the scale
     (ratio of root-mean-square radii of ink and centreline) and the centroid; headings every 10 degrees
     are scanned with the sparse chamfer score, the best FIT_GUESSES kept;
  2. local refinement (of each kept guess): pattern search on (cx, cy, theta, log s) with the sparse
     chamfer score, steps halved when no move improves (`refine`);
  3. polishing (`polish`): the same pattern search on the pixel score of the rendered candidate, which is
     sensitive to what stroke types draw (the position of each stamp, the phase of a zigzag).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import ndimage

from dsl.raster import render_marks
from dsl.types import ImageProgram, Pose, Shape
from search import kernels, pixel_kernels
from search.ink import ink_groups, other_splits
from search.retrace import action_paths
from search.settings import (CAP, FIT_EVALS, FIT_GUESSES, HEADINGS, MIN_STEP_FRACTION, NEAR_HEADINGS, ORDER_REUSE_LIMIT,
                             ORDER_REUSE_TOLERANCE, POLISH_STEPS, REACH, REGROUP_ABOVE_PX, RENDER_OUTLINE_RADIUS,
                             STEP_GROWTH, STEPS)
from search.template import PEN_RADIUS_PX, Target, Template, affine_to_pose, template

RENDER_PEN_RADIUS = PEN_RADIUS_PX


@dataclass(frozen=True, slots=True)
class Placement:
    cx: float
    cy: float
    theta: float
    s: float

    def affine(self) -> tuple[float, float, float, float]:
        h = math.radians(self.theta)
        return self.cx, self.cy, self.s * math.cos(h), self.s * math.sin(h)

    def moved(self, index: int, delta: float) -> "Placement":
        if index == 0:
            return replace(self, cx=self.cx + delta)
        if index == 1:
            return replace(self, cy=self.cy + delta)
        if index == 2:
            return replace(self, theta=self.theta + delta)
        return replace(self, s=self.s * math.exp(delta))

    def pose(self, target: Target) -> Pose:
        return affine_to_pose(*self.affine(), target)


def reversed_placement(shape: Shape, place: Placement, backwards: Shape) -> Placement:
    """Where `backwards` (`dsl.canonical.reversed_shape` of `shape`) draws over `shape` drawn at `place`:
    it starts at `shape`'s end, heading against `shape`'s last direction of travel."""

    def heading(path: np.ndarray, at_end: bool) -> float:
        ends = path[::-1] if at_end else path
        step = next(p - ends[0] for p in ends[1:] if np.hypot(*(p - ends[0])) > 1e-9)
        return math.degrees(math.atan2(step[1], step[0]))

    path, back = action_paths(shape)[-1], action_paths(backwards)[0]
    turn = heading(path, at_end=True) - heading(back, at_end=False)  # the end's direction reversed, less
    # `backwards`' own first direction
    cx, cy, a, b = place.affine()
    x, y = path[-1]
    return Placement(cx + a * x - b * y, cy - (b * x + a * y), place.theta + turn, place.s)


class SparseProblem:
    """A candidate's centreline samples laid out for `kernels.sparse_score`."""

    def __init__(self, templates: list[Template], target: Target) -> None:
        self.points = np.ascontiguousarray(np.concatenate([t.coarse for t in templates]))
        self.radii = np.ascontiguousarray(np.concatenate([t.coarse_radii for t in templates]))
        self.owner = np.concatenate([np.full(len(t.coarse), i, dtype=np.int64) for i, t in enumerate(templates)])
        self.target = target

    def terms(self, placements: list[Placement]) -> tuple[float, float]:
        """(forward, reverse) sparse chamfer terms."""
        poses = np.array([p.affine() for p in placements])
        return kernels.sparse_score(
            self.points, self.radii, self.owner, poses, self.target.dt, self.target.samples, CAP, REACH
        )

    def cost(self, placements: list[Placement]) -> float:
        f, r = self.terms(placements)
        return f + r


def _posed(points: np.ndarray, place: Placement) -> np.ndarray:
    """A template's points (its coarse centreline, its joints) where `place` puts them in the crop frame (px)."""
    cx, cy, a, b = place.affine()
    return np.column_stack([cx + a * points[:, 0] - b * points[:, 1], cy - (b * points[:, 0] + a * points[:, 1])])


def stray_share(templates: list[Template], placements: list[Placement], target: Target) -> float:
    """The share of the image's sampled ink (`Target.samples`) that lies farther than CAP px beyond the pen's edge
    from every posed centreline (each shape's coarse points joined in order): ink the placed shapes do not draw,
    where the fit's forward term counts it only as far as CAP."""
    samples = target.samples
    if len(samples) == 0:
        return 0.0
    nearest = np.full(len(samples), np.inf)
    for tpl, place in zip(templates, placements):
        pts = _posed(tpl.coarse, place)
        if len(pts) == 1:
            nearest = np.minimum(nearest, np.sqrt(((samples - pts[0]) ** 2).sum(-1)))
            continue
        start, step = pts[:-1], pts[1:] - pts[:-1]  # segments between consecutive points
        length2 = np.maximum((step ** 2).sum(-1), 1e-12)
        t = np.clip((((samples[:, None, :] - start[None]) * step[None]).sum(-1)) / length2[None], 0.0, 1.0)
        gap = samples[:, None, :] - (start[None] + t[..., None] * step[None])
        nearest = np.minimum(nearest, np.sqrt((gap ** 2).sum(-1)).min(axis=1))
    return float((nearest > PEN_RADIUS_PX + CAP).mean())


def unexplained_near_joints(
    templates: list[Template], placements: list[Placement], target: Target, far: float = 4.0
) -> list[np.ndarray]:
    """Per shape, per joint: the share of the sampled ink that lies farther than `far` px from every
    posed centreline and nearer to that joint than one unit of the shape's length (where an action is
    missing)."""
    pts = np.concatenate([_posed(tpl.coarse, place) for tpl, place in zip(templates, placements)])
    samples = target.samples
    nearest = np.sqrt(((samples[:, None, :] - pts[None]) ** 2).sum(-1)).min(axis=1)
    lost = samples[nearest > PEN_RADIUS_PX + far]
    out = []
    for tpl, place in zip(templates, placements):
        joints = _posed(tpl.joints, place)
        if len(lost) == 0:
            out.append(np.zeros(len(joints)))
            continue
        near = np.sqrt(((lost[:, None, :] - joints[None]) ** 2).sum(-1)) < place.s
        out.append(near.sum(axis=0) / max(len(samples), 1))
    return out


def action_residuals(templates: list[Template], placements: list[Placement], target: Target) -> list[np.ndarray]:
    """Per shape, per action: mean distance (px, truncated) from the posed centreline to the ink."""
    out = []
    for tpl, place in zip(templates, placements):
        cx, cy, a, b = place.affine()
        x, y = tpl.coarse[:, 0], tpl.coarse[:, 1]
        cols, rows = cx + a * x - b * y, cy - (b * x + a * y)
        values = ndimage.map_coordinates(target.dt, [rows - 0.5, cols - 0.5], order=1, mode="constant", cval=CAP)
        values = np.minimum(values, CAP)
        n = int(tpl.coarse_action.max()) + 1
        counts = np.maximum(np.bincount(tpl.coarse_action, minlength=n), 1)
        out.append(np.bincount(tpl.coarse_action, weights=values, minlength=n) / counts)
    return out


def guesses(
    tpl: Template, ink: np.ndarray, target: Target, keep: int = 2, headings: np.ndarray = HEADINGS
) -> list[Placement]:
    """Initial placements from moments: scale and centroid from the ink, headings scanned."""
    centre, rms_ink = _ink_moments(ink, target)
    return _scanned(tpl, centre, max(rms_ink / tpl.rms, 1e-3), headings, target, keep)


def turned(tpl: Template, place: Placement, target: Target, keep: int, headings: np.ndarray = HEADINGS) -> list[Placement]:
    """`place` turned about its drawn centreline's centroid by each of `headings` (degrees), the `keep` whose
    centreline fits the ink best (as `guesses` ranks them): the poses a shape with a rotational symmetry (a
    straight run of lines, a circle, a square) draws its centreline in as well."""
    return _scanned(tpl, drawn_centroid(tpl, place), place.s, place.theta + headings, target, keep)


def turned_to(tpl: Template, other: Template, place: Placement, target: Target, headings: np.ndarray) -> Placement:
    """`tpl` at `other`'s scale with its centroid where `other`'s lies drawn at `place`, at the one of `headings`
    whose centreline fits the ink best: a shape drawing the same picture as `other` laid on it."""
    return _scanned(tpl, drawn_centroid(other, place), place.s, headings, target, 1)[0]


def drawn_centroid(tpl: Template, place: Placement) -> tuple[float, float]:
    """Where `tpl`'s drawn centreline's centroid lies at `place` (pixels)."""
    gx, gy = tpl.centroid
    cx, cy, a, b = place.affine()
    return cx + a * gx - b * gy, cy - (b * gx + a * gy)


def turned_about(place: Placement, centre, degrees: float) -> Placement:
    """`place` turned by `degrees` about the image point `centre` (pixels): the same drawing, turned."""
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    dx, dy = place.cx - centre[0], centre[1] - place.cy  # y up, as the placement's angles turn
    return Placement(centre[0] + c * dx - s * dy, centre[1] - (s * dx + c * dy), place.theta + degrees, place.s)


def _scanned(tpl: Template, centre, s: float, headings: np.ndarray, target: Target, keep: int) -> list[Placement]:
    """The placements of `tpl` at scale `s` with its centroid at `centre` (pixels) heading each of `headings`
    (degrees): the `keep` whose centreline fits the ink best (`kernels.best_sparse_scores`), best first."""
    gx, gy = tpl.centroid
    h = np.radians(headings)
    a, b = s * np.cos(h), s * np.sin(h)
    cx, cy = centre[0] - (a * gx - b * gy), centre[1] + (b * gx + a * gy)
    pose_sets = np.ascontiguousarray(np.stack([cx, cy, a, b], axis=1)[:, None, :])
    costs = kernels.best_sparse_scores(
        tpl.coarse, tpl.coarse_radii, np.zeros(len(tpl.coarse), dtype=np.int64), pose_sets, target.dt,
        target.samples, CAP, REACH, keep,
    )
    best = np.argsort(costs, kind="stable")[:keep]
    return [Placement(float(cx[k]), float(cy[k]), float(headings[k]), s) for k in best]


def _ink_moments(ink: np.ndarray, target: Target) -> tuple[np.ndarray, float]:
    """(centroid, rms distance to it) of ink pixel centres, memoised on the target (the ink is one of its
    `ink_groups`, the same for every candidate fitted to the image; kept in the memo with its moments, so its id
    cannot be reused while the entry stands)."""
    key = ("moments", id(ink))
    found = target.memo.get(key)
    if found is None:
        centre = ink.mean(axis=0)
        found = target.memo[key] = (ink, centre, float(np.sqrt(((ink - centre) ** 2).sum(axis=1).mean())))
    return found[1], found[2]


def anchored(parent: Template, place: Placement, child: Template, parent_joint: int, child_joint: int,
             turn: float = 0.0) -> Placement:
    """The placement of `child` that puts its joint `child_joint` (position and heading) where the parent's
    joint `parent_joint` is drawn: the pose that keeps the part after an edit in place; `turn`: degrees the child is
    turned more about that joint (180: walked the other way from it)."""
    theta = place.theta + parent.joint_headings[parent_joint] - child.joint_headings[child_joint] + turn
    c, s = math.cos(math.radians(place.theta)), math.sin(math.radians(place.theta))
    px, py = parent.joints[parent_joint]
    wx, wy = place.cx + place.s * (c * px - s * py), -place.cy + place.s * (s * px + c * py)
    c, s = math.cos(math.radians(theta)), math.sin(math.radians(theta))
    nx, ny = child.joints[child_joint]
    return Placement(wx - place.s * (c * nx - s * ny), -(wy - place.s * (s * nx + c * ny)), theta, place.s)


def refit_near(
    templates: list[Template], placements: list[Placement], target: Target, shape: int,
    extra: list[Placement] = (), max_evals: int = 20,
) -> tuple[list[Placement], float]:
    """Refit one shape after an edit: moment guesses with headings near its current one, the current
    placement and `extra` starts; the best refined by pattern search."""
    tpl, place = templates[shape], placements[shape]
    groups = ink_groups(target, len(templates))
    if len(templates) > 1:
        cx, cy, a, b = place.affine()
        gx, gy = tpl.centroid
        centre = np.array([cx + a * gx - b * gy, cy - (b * gx + a * gy)])
        group = groups[int(np.argmin([np.sum((g.mean(axis=0) - centre) ** 2) if len(g) else np.inf for g in groups]))]
    else:
        group = groups[0]
    starts = [place, *extra]
    if len(group):
        starts += guesses(tpl, group, target, keep=1, headings=place.theta + NEAR_HEADINGS)
    problem = SparseProblem(templates, target)
    trials = [placements[:shape] + [p] + placements[shape + 1:] for p in starts]
    best = min(trials, key=problem.cost)
    return refine(templates, best, target, max_evals, (shape,))


def refine(
    templates: list[Template], placements: list[Placement], target: Target, max_evals: int = 60,
    movable: tuple[int, ...] | None = None,
):
    """Pattern search with the sparse chamfer score (moving the shapes `movable`, default all), compiled
    as one kernel (`kernels.pattern_search`) -> (placements, score)."""
    problem = SparseProblem(templates, target)
    params = np.array([[p.cx, p.cy, p.theta, p.s] for p in placements], dtype=np.float64)
    flags = np.zeros(len(placements), dtype=np.bool_)
    flags[list(range(len(placements)) if movable is None else movable)] = True
    params, value = kernels.pattern_search(
        problem.points, problem.radii, problem.owner, params, flags, target.dt, target.samples, CAP, REACH,
        np.array(STEPS), max_evals, MIN_STEP_FRACTION, STEP_GROWTH,
    )
    return [Placement(*map(float, row)) for row in params], float(value)


def fit_one(tpl: Template, ink: np.ndarray, target: Target, max_evals: int = 60,
            keep: int = FIT_GUESSES) -> tuple[Placement, float]:
    """One shape fitted from scratch to one ink group: the best `keep` heading guesses refined."""
    starts = guesses(tpl, ink, target, keep=keep)
    placements, cost = min((refine([tpl], [start], target, max_evals) for start in starts),
                           key=lambda r: r[1])
    return placements[0], cost


def _fit_one_memo(tpl: Template, group: int, n_groups: int, target: Target, max_evals: int,
                  keep: int = FIT_GUESSES) -> Placement:
    key = ("fit", id(tpl), keep, group, n_groups)
    if key not in target.memo:  # the template is stored with the result, so its id is not reused
        ink = ink_groups(target, n_groups)[group]
        target.memo[key] = (tpl, fit_one(tpl, ink, target, max_evals, keep)[0] if len(ink) else Placement(0, 0, 0, 1))
    return target.memo[key][1]


def fit(templates: list[Template], target: Target, max_evals: int = FIT_EVALS,
        regroup: bool = False, keep: int = FIT_GUESSES) -> tuple[list[Placement], float]:
    """Fit every shape's pose from scratch: each shape to each ink group on its own (memoised per image,
    so shapes shared by many candidates are fitted once), the best assignment refined jointly. `regroup`: the
    shapes are a problem's hypothesis checked on the image, and which ink is whose is decided by them when the ink
    groups explain the image poorly (`_regrouped`), once an image. `keep`: the heading guesses refined for each
    shape on each ink group (`fit_one`)."""
    n = len(templates)
    if n == 1:
        place = _fit_one_memo(templates[0], 0, 1, target, max_evals, keep)
        return [place], SparseProblem(templates, target).cost([place])
    found = _fit_grouped(templates, target, max_evals, keep)
    if regroup and n == 2 and ("grouping decided", n) not in target.memo:
        target.memo[("grouping decided", n)] = True
        if found[1] > REGROUP_ABOVE_PX:
            return _regrouped(templates, target, max_evals, found, keep)
    return found


def _regrouped(templates: list[Template], target: Target, max_evals: int,
               found: tuple, keep: int = FIT_GUESSES) -> tuple[list[Placement], float]:
    """Which ink belongs to which shape, decided by a two-shape hypothesis: when its fit on the image's ink groups
    (`ink_groups`: the two largest parts, or 2-means of one part) explains the ink poorly (above REGROUP_ABOVE_PX),
    the other ways of splitting the ink in two are tried (`search.ink.other_splits`), each shape fitted to each side
    and the pair refined jointly; the split that explains the ink best becomes the image's ink groups for every
    candidate fitted after (the memos that depend on the groups are dropped), if it beats `found`."""
    problem_best = found
    best_groups = None
    for groups in other_splits(target):
        fits = [[fit_one(tpl, ink, target, max_evals, keep)[0] for ink in groups] for tpl in templates]
        for order in ((0, 1), (1, 0)):
            placements, value = refine(templates, [fits[0][order[0]], fits[1][order[1]]], target, max_evals // 2)
            if value < problem_best[1] - 1e-9:
                problem_best, best_groups = (placements, value), groups
    if best_groups is None:
        return found
    for key in [key for key in target.memo if isinstance(key, tuple) and key[0] in ("fit", "order", "screen start")
                and key[-1] == 2]:
        del target.memo[key]
    target.memo[("groups", 2)] = best_groups
    return problem_best


def _fit_grouped(templates: list[Template], target: Target, max_evals: int,
                 keep: int = FIT_GUESSES) -> tuple[list[Placement], float]:
    """`fit` of several shapes on the image's ink groups as they stand."""
    n = len(templates)
    problem = SparseProblem(templates, target)
    orders = list(itertools.permutations(range(n)))
    known = target.memo.get(("order", n))  # the assignment that won for an earlier candidate: tried first
    if known is not None:
        placements = [_fit_one_memo(tpl, g, n, target, max_evals, keep) for tpl, g in zip(templates, known[0])]
        cost = problem.cost(placements)
        if cost <= known[1] * ORDER_REUSE_TOLERANCE and cost <= ORDER_REUSE_LIMIT:
            return refine(templates, placements, target, max_evals // 2)
    starts = [[_fit_one_memo(tpl, g, n, target, max_evals, keep) for tpl, g in zip(templates, order)]
              for order in orders]
    costs = [problem.cost(p) for p in starts]
    best = int(np.argmin(costs))
    target.memo[("order", n)] = (orders[best], costs[best])
    start = starts[best]
    return refine(templates, start, target, max_evals // 2)


# ----------------------------------------------------------------------------------------- pixel score


def render_window(
    templates: list[Template], placements: list[Placement], target: Target, r0: int, c0: int, size: int,
    actions: tuple[int, int] | None = None,
) -> np.ndarray:
    """Render the posed candidate into a size x size window whose top-left is image pixel (r0, c0)."""
    points, offsets, kinds = posed_window_marks(templates, placements, target, r0, c0, size)
    if len(kinds) == 0:
        return np.full((size, size), 255, dtype=np.uint8)
    return render_marks(points, offsets, kinds, size, RENDER_PEN_RADIUS, RENDER_OUTLINE_RADIUS)


def posed_window_marks(
    templates: list[Template], placements: list[Placement], target: Target, r0: int, c0: int, size: int
):
    """The posed candidate's marks in the frame of the size x size window at image pixel (r0, c0), only those
    whose box meets the window (the others cannot change a pixel of it) -> (points, offsets, kinds)."""
    points, offsets, kinds, shape_marks = _packed_marks(templates)
    affines = np.array([place.affine() for place in placements], dtype=np.float64).reshape(-1, 4)
    reach = max(RENDER_PEN_RADIUS, RENDER_OUTLINE_RADIUS) + 2.0
    return pixel_kernels.posed_marks(
        points, offsets, kinds, shape_marks, affines, float(target.origin[1] - c0), float(target.origin[0] - r0),
        size, reach,
    )


_PACKED: dict[tuple, tuple] = {}  # id(template), ... -> (templates, packed marks); an entry keeps its templates
# alive, so no other template can take their ids while it stands
PACKED_KEEP = 512


def _packed_marks(templates: list[Template]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The templates' marks packed as `pixel_kernels.posed_marks` takes them (memoised: a candidate is rendered
    many times while its pose is polished)."""
    key = tuple(id(t) for t in templates)
    hit = _PACKED.get(key)
    if hit is not None:
        return hit[1]
    points = np.ascontiguousarray(np.concatenate([t.mark_points for t in templates]).reshape(-1, 2))
    lengths = [np.diff(t.mark_offsets) for t in templates]
    offsets = np.zeros(sum(len(x) for x in lengths) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.concatenate(lengths))
    kinds = np.concatenate([t.mark_kinds for t in templates]).astype(np.int64)
    shape_marks = np.zeros(len(templates) + 1, dtype=np.int64)
    shape_marks[1:] = np.cumsum([len(x) for x in lengths])
    if len(_PACKED) >= PACKED_KEEP:
        _PACKED.clear()
    _PACKED[key] = (tuple(templates), (points, offsets, kinds, shape_marks))
    return points, offsets, kinds, shape_marks


def shape_window(tpl: Template, place: Placement, target: Target, margin: int = 6) -> tuple[int, int, int]:
    """The square window (image frame: top row, left column, size) around a posed shape's marks."""
    cx, cy, a, b = place.affine()
    pts = tpl.mark_points
    cols = cx + a * pts[:, 0] - b * pts[:, 1] + target.origin[1]
    rows = cy - (b * pts[:, 0] + a * pts[:, 1]) + target.origin[0]
    r0, c0 = int(math.floor(rows.min())) - margin, int(math.floor(cols.min())) - margin
    size = int(math.ceil(max(rows.max() - rows.min(), cols.max() - cols.min()))) + 2 * margin + 1
    return r0, c0, size


def crop_window(target: Target) -> tuple[int, int, int]:
    h, w = target.grey.shape
    return target.origin[0], target.origin[1], max(h, w)


def pixel_cost(
    templates: list[Template], placements: list[Placement], target: Target, window: tuple[int, int, int] | None = None
) -> float:
    """Mean absolute grey difference (0-1) between the rendered candidate and the image in a window."""
    r0, c0, size = crop_window(target) if window is None else window
    points, offsets, kinds = posed_window_marks(templates, placements, target, r0, c0, size)
    total, count = pixel_kernels.rendered_l1(points, offsets, kinds, size, RENDER_PEN_RADIUS, RENDER_OUTLINE_RADIUS,
                                       target.image, r0, c0, *_white(target, r0, c0, size))
    return total / max(count, 1) / 255.0


def _white(target: Target, r0: int, c0: int, size: int) -> tuple[float, int]:
    """The window's cost rendered white (`pixel_kernels.window_darkness`), once per window of an image."""
    white = target.memo.get(("white", r0, c0, size))
    if white is None:
        white = target.memo[("white", r0, c0, size)] = pixel_kernels.window_darkness(target.image, r0, c0, size)
    return white


def polish(
    templates: list[Template], placements: list[Placement], target: Target, max_evals: int = 30
) -> list[Placement]:
    """Pattern search with the pixel score (`pixel_cost`), one shape at a time in the window around it,
    compiled as one kernel per shape (`pixel_kernels.pixel_pattern_search`)."""
    placements = list(placements)
    points, offsets, kinds, shape_marks = _packed_marks(templates)
    radii = np.array([RENDER_PEN_RADIUS, RENDER_OUTLINE_RADIUS])
    reach = max(RENDER_PEN_RADIUS, RENDER_OUTLINE_RADIUS) + 2.0
    for s in range(len(placements)):
        r0, c0, size = shape_window(templates[s], placements[s], target)
        darkness, count = _white(target, r0, c0, size)
        window = np.array([r0, c0, size, target.origin[1] - c0, target.origin[0] - r0, reach], dtype=np.float64)
        affines = np.array([place.affine() for place in placements], dtype=np.float64).reshape(-1, 4)
        p = placements[s]
        params, _ = pixel_kernels.pixel_pattern_search(
            points, offsets, kinds, shape_marks, affines, s, np.array([p.cx, p.cy, p.theta, p.s]), window,
            target.image, darkness, count, radii, np.array(POLISH_STEPS), max_evals, MIN_STEP_FRACTION,
        )
        placements[s] = Placement(*map(float, params))
    return placements


def fit_polished(program: ImageProgram, target: Target, polish_evals: int) -> tuple[list[Template], list[Placement]]:
    """A known program's templates and placements in an image: `fit`, then `polish` on the pixel score."""
    templates = [template(s) for s in program.shapes]
    placements, _ = fit(templates, target)
    return templates, polish(templates, placements, target, polish_evals)


def fit_poses(program: ImageProgram, target: Target, polish_evals: int = 30) -> tuple[Pose, ...]:
    """The poses of a known program in an image: `fit`, then `polish` on the pixel score."""
    _, placements = fit_polished(program, target, polish_evals)
    return tuple(p.pose(target) for p in placements)


def fitted_pixel_cost(program: ImageProgram, target: Target, polish_evals: int = 30) -> tuple[float, tuple[Pose, ...]]:
    """`fit_poses`, and the `pixel_cost` of the program (stroke types included) drawn at those poses."""
    templates, placements = fit_polished(program, target, polish_evals)
    return pixel_cost(templates, placements, target), tuple(p.pose(target) for p in placements)
