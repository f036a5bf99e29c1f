"""`bongard-solver bench fidelity`: how closely `dsl.raster` reproduces official Bongard-LOGO images.

For a fixed selection of official dev images (ff, bd, hd; stamped and zigzag strokes included) the known
program is parsed, the pose of every shape (start x, y, heading, scale) is fitted so that our render
matches the official PNG, and the stroke masks (pixels darker than 128) are compared by IoU.

Fitting, per image:
  1. split the ink into one group per shape (connected parts of the dilated ink, merged by proximity);
  2. per shape and group: scale from the RMS radius of the ink, translation from its centroid, heading by
     a coarse search (10 degree steps) on a truncated symmetric chamfer distance between the shape's
     centrelines/stamp outlines and the ink, then Nelder-Mead on that distance;
  3. all shapes together: Nelder-Mead on the squared difference of the blurred official and rendered images.
Programs are read with exact values recovered where the 3-decimal strings lose them (library shapes:
the table's values; free-form turns: multiples of 30 degrees), as the official images were drawn from them.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage, optimize
from scipy.spatial import cKDTree
from tqdm import tqdm

from dsl.library import load_library
from dsl.options import count
from dsl.owned import check_output_file, marked_json
from dsl.raster import official_view, render_program
from dsl.syntax import format_action, parse_image
from dsl.turtle import MarkKind, execute_shape
from dsl.types import ImageProgram, Pose, Shape, StrokeType

KINDS = ("ff", "bd", "hd")
INK_THRESHOLD = 128
VIEW = official_view(512)
CHAMFER_TRUNCATION = 40.0  # px
BLUR_SIGMA = 1.2  # px, for the image objective


@dataclass(frozen=True)
class Sample:
    kind: str
    problem: str
    label: int
    index: int
    path: Path
    program: ImageProgram


# ------------------------------------------------------------------------------------------- selection


def select_samples(root: Path, n: int) -> list[Sample]:
    """A fixed spread of n images over the three types: problems in name order, alternating labels."""
    samples = []
    for t, kind in enumerate(KINDS):
        programs = json.loads((root / kind / f"{kind}_action_programs.json").read_text())
        names = sorted(programs)
        for k in range(n // len(KINDS) + (t < n % len(KINDS))):
            name, label, index = names[(3 * k) % len(names)], (k + k // len(names)) % 2, (5 * k + t) % 7
            shapes = programs[name][0 if label == 1 else 1][index]
            path = root / kind / "images" / name / str(label) / f"{index}.png"
            samples.append(Sample(kind, name, label, index, path, exact_program(parse_image(shapes))))
    return samples


def _normal_signature(shape: Shape) -> tuple[str, ...]:
    return tuple(format_action(a.with_stroke(StrokeType.NORMAL)) for a in shape.actions)


def _library_by_signature() -> dict[tuple[str, ...], Shape]:
    return {_normal_signature(entry.shape): entry.shape for entry in load_library().values()}


def exact_program(program: ImageProgram) -> ImageProgram:
    """Undo the 3-decimal rounding: library values for library shapes, else turns snapped to 30 degrees
    where the snapped value prints to the same string."""
    library = _library_by_signature()
    shapes = []
    for shape in program.shapes:
        exact = library.get(_normal_signature(shape))
        if exact is not None:
            shapes.append(Shape(tuple(e.with_stroke(a.stroke) for e, a in zip(exact.actions, shape.actions))))
            continue
        actions = []
        for action in shape.actions:
            snapped = action.with_turn(30.0 * round(action.turn / 30.0))
            actions.append(snapped if format_action(snapped) == format_action(action) else action)
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))


def load_grey(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("L"))


# ---------------------------------------------------------------------------------------- ink groups


def ink_points(mask: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(mask)
    return np.column_stack([cols + 0.5, rows + 0.5])


def ink_groups(mask: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """Split the ink into n_groups point sets: parts of the ink dilated by 6 px, merged by single linkage."""
    if n_groups == 1:
        return [ink_points(mask)]
    labels, count = ndimage.label(ndimage.distance_transform_edt(~mask) <= 6.0)
    parts = [ink_points(mask & (labels == k)) for k in range(1, count + 1)]
    parts = [p for p in parts if len(p)]
    if len(parts) < n_groups:
        return _two_means(ink_points(mask))
    while len(parts) > n_groups:
        trees = [cKDTree(p) for p in parts]
        pairs = [(i, j) for i in range(len(parts)) for j in range(i + 1, len(parts))]
        _, a, b = min((trees[i].query(parts[j])[0].min(), i, j) for i, j in pairs)
        parts[a] = np.vstack([parts[a], parts[b]])
        del parts[b]
    return parts


def _two_means(points: np.ndarray) -> list[np.ndarray]:
    centres = points[[np.argmin(points[:, 0]), np.argmax(points[:, 0])]]
    for _ in range(20):
        nearest = np.argmin(((points[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        centres = np.array([points[nearest == k].mean(0) if np.any(nearest == k) else centres[k] for k in range(2)])
    return [points[nearest == 0], points[nearest == 1]]


# ------------------------------------------------------------------------------------ chamfer fitting


def densify(points: np.ndarray, closed: bool, spacing: float = 1.0) -> np.ndarray:
    if closed:
        points = np.vstack([points, points[:1]])
    if len(points) == 1:
        return points
    starts, steps = points[:-1], np.diff(points, axis=0)
    counts = np.maximum(np.ceil(np.hypot(steps[:, 0], steps[:, 1]) / spacing).astype(int), 1)
    t = np.concatenate([np.arange(c) / c for c in counts])
    index = np.repeat(np.arange(len(counts)), counts)
    return np.vstack([starts[index] + t[:, None] * steps[index], points[-1:]])


def model_points(shape: Shape, pose: Pose) -> np.ndarray:
    """Centrelines of pen strokes and outlines of stamps, in official 512-px coordinates, ~1 px apart."""
    marks = execute_shape(shape, pose).marks
    return np.vstack([densify(VIEW.to_pixels(m.points), m.kind is MarkKind.STAMP) for m in marks])


class Chamfer:
    """Truncated symmetric chamfer distance between model points and one group of ink points."""

    def __init__(self, ink: np.ndarray, size: int = 512, max_ink: int = 1500) -> None:
        mask = np.zeros((size, size), dtype=bool)
        mask[(ink[:, 1] - 0.5).astype(int), (ink[:, 0] - 0.5).astype(int)] = True
        self.distance = np.minimum(ndimage.distance_transform_edt(~mask), CHAMFER_TRUNCATION)
        step = max(1, len(ink) // max_ink)
        self.ink = ink[::step]
        self.size = size

    def __call__(self, points: np.ndarray) -> float:
        cols = np.clip(points[:, 0].astype(int), 0, self.size - 1)
        rows = np.clip(points[:, 1].astype(int), 0, self.size - 1)
        to_ink = self.distance[rows, cols].mean()
        to_model = np.minimum(cKDTree(points).query(self.ink)[0], CHAMFER_TRUNCATION).mean()
        return float(to_ink + to_model)


def initial_pose(shape: Shape, ink: np.ndarray, heading: float) -> Pose:
    """Scale from the ink's RMS radius, translation from its centroid, for a given start heading."""
    probe = model_points(shape, Pose(0.0, 0.0, heading, 200.0))
    rms = lambda p: math.sqrt(((p - p.mean(0)) ** 2).sum(1).mean())  # noqa: E731
    scale = 200.0 * rms(ink) / max(rms(probe), 1e-6)
    placed = model_points(shape, Pose(0.0, 0.0, heading, scale))
    shift = (ink.mean(0) - placed.mean(0)) / VIEW.pixels_per_unit
    return Pose(float(shift[0]), float(-shift[1]), heading, scale)


def _pose_of(params: np.ndarray) -> Pose:
    return Pose(float(params[0]), float(params[1]), float(params[2]), float(math.exp(params[3])))


def _params_of(pose: Pose) -> np.ndarray:
    return np.array([pose.x, pose.y, pose.heading, math.log(max(pose.scale, 1e-3))])


def _distinct_headings(ranked: list[tuple[float, Pose]], count: int, apart: float = 40.0) -> list[Pose]:
    chosen: list[Pose] = []
    for _, pose in ranked:
        if all(abs((pose.heading - c.heading + 180.0) % 360.0 - 180.0) >= apart for c in chosen):
            chosen.append(pose)
        if len(chosen) == count:
            break
    return chosen


def chamfer_candidates(shape: Shape, ink: np.ndarray, count: int = 6) -> list[Pose]:
    """Coarse heading search (10 degree steps), then Nelder-Mead on the chamfer distance from the best
    `count` distinct headings: symmetric outlines fit in several ways that only the strokes tell apart."""
    chamfer = Chamfer(ink)
    cost = lambda params: chamfer(model_points(shape, _pose_of(params)))  # noqa: E731
    guesses = [initial_pose(shape, ink, h) for h in range(0, 360, 10)]
    ranked = sorted(((cost(_params_of(p)), p) for p in guesses), key=lambda r: r[0])
    candidates = []
    for pose in _distinct_headings(ranked, count):
        start = _params_of(pose)
        simplex = np.vstack([start, start + np.diag([6.0, 6.0, 6.0, 0.06])])
        options = {"initial_simplex": simplex, "maxfev": 250, "xatol": 0.05, "fatol": 1e-3}
        candidates.append(_pose_of(optimize.minimize(cost, start, method="Nelder-Mead", options=options).x))
    return candidates


def _ink(grey: np.ndarray) -> np.ndarray:
    return 1.0 - grey.astype(np.float64) / 255.0


class BlurredDifference:
    """The image objective: squared difference of the blurred official image and our render in a box."""

    def __init__(self, official: np.ndarray, rows: np.ndarray, cols: np.ndarray, pad: int = 12) -> None:
        self.box = (slice(max(int(rows.min()) - pad, 0), int(rows.max()) + pad + 1),
                    slice(max(int(cols.min()) - pad, 0), int(cols.max()) + pad + 1))
        self.target = ndimage.gaussian_filter(_ink(official[self.box]), BLUR_SIGMA)

    @classmethod
    def around_points(cls, official: np.ndarray, points: np.ndarray) -> "BlurredDifference":
        return cls(official, points[:, 1].astype(int), points[:, 0].astype(int))

    def __call__(self, program: ImageProgram, poses: tuple[Pose, ...]) -> float:
        rendered = ndimage.gaussian_filter(_ink(render_program(program, poses)[self.box]), BLUR_SIGMA)
        return float(((rendered - self.target) ** 2).sum())


def fit_shape(shape: Shape, ink: np.ndarray, official: np.ndarray) -> Pose:
    """The chamfer candidate whose render best matches the official image around this ink group."""
    objective = BlurredDifference.around_points(official, ink)
    program = ImageProgram((shape,))
    return min(chamfer_candidates(shape, ink), key=lambda pose: objective(program, (pose,)))


def fit_groups(program: ImageProgram, official: np.ndarray) -> tuple[Pose, ...]:
    """Per-shape fits; with two shapes both assignments of shapes to ink groups are tried."""
    mask = official < INK_THRESHOLD
    groups = ink_groups(mask, len(program.shapes))
    orders = [(0,)] if len(groups) == 1 else [(0, 1), (1, 0)]
    objective = BlurredDifference.around_points(official, ink_points(mask))
    fits = [tuple(fit_shape(shape, groups[g], official) for shape, g in zip(program.shapes, order)) for order in orders]
    return min(fits, key=lambda poses: objective(program, poses))


def refine_poses(program: ImageProgram, poses: tuple[Pose, ...], official: np.ndarray) -> tuple[Pose, ...]:
    """Nelder-Mead on the image objective within the box around both images' ink."""
    ours = render_program(program, poses)
    rows, cols = np.nonzero((official < 250) | (ours < 250))
    objective = BlurredDifference(official, rows, cols)
    cost = lambda flat: objective(program, tuple(_pose_of(p) for p in flat.reshape(-1, 4)))  # noqa: E731
    start = np.concatenate([_params_of(p) for p in poses])
    simplex = np.vstack([start, start + np.diag(np.tile([1.0, 1.0, 0.5, 0.005], len(poses)))])
    options = {"initial_simplex": simplex, "maxfev": 300 * len(poses), "xatol": 0.01, "fatol": 1e-4}
    result = optimize.minimize(cost, start, method="Nelder-Mead", options=options)
    return tuple(_pose_of(p) for p in result.x.reshape(-1, 4))


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


@dataclass
class Fit:
    sample: Sample
    poses: tuple[Pose, ...]
    iou: float
    official: np.ndarray
    ours: np.ndarray


def fit_sample(sample: Sample, refine: bool = True) -> Fit:
    official = load_grey(sample.path)
    poses = fit_groups(sample.program, official)
    if refine:
        poses = refine_poses(sample.program, poses, official)
    ours = render_program(sample.program, poses)
    return Fit(sample, poses, mask_iou(official < INK_THRESHOLD, ours < INK_THRESHOLD), official, ours)


# --------------------------------------------------------------------------------------------- picture


def _crop_box(*images: np.ndarray, pad: int = 12) -> tuple[slice, slice]:
    rows, cols = np.nonzero(np.logical_or.reduce([im < 250 for im in images]))
    side = max(rows.max() - rows.min(), cols.max() - cols.min()) + 2 * pad
    r0 = int(np.clip((rows.min() + rows.max() - side) // 2, 0, max(512 - side, 0)))
    c0 = int(np.clip((cols.min() + cols.max() - side) // 2, 0, max(512 - side, 0)))
    return slice(r0, r0 + side), slice(c0, c0 + side)


def overlay(official: np.ndarray, ours: np.ndarray) -> np.ndarray:
    """RGB: official ink in red, ours in blue, both (agreement) in black."""
    a, b = official < INK_THRESHOLD, ours < INK_THRESHOLD
    rgb = np.full(official.shape + (3,), 255, dtype=np.uint8)
    rgb[a & ~b] = (230, 40, 40)
    rgb[b & ~a] = (40, 90, 230)
    rgb[a & b] = (0, 0, 0)
    return rgb


def _detail_box(official: np.ndarray, window: int = 64) -> tuple[slice, slice]:
    """The window x window box holding the most official ink (for a zoomed detail)."""
    ink = ndimage.uniform_filter(_ink(official), window, mode="constant")
    row, col = np.unravel_index(np.argmax(ink), ink.shape)
    r0 = int(np.clip(row - window // 2, 0, official.shape[0] - window))
    c0 = int(np.clip(col - window // 2, 0, official.shape[1] - window))
    return slice(r0, r0 + window), slice(c0, c0 + window)


def _panel(image: np.ndarray, size: int, resample: int) -> np.ndarray:
    rgb = image if image.ndim == 3 else np.stack([image] * 3, -1)
    return np.asarray(Image.fromarray(rgb).resize((size, size), resample))


def write_picture(fits: list[Fit], path: Path, panel: int = 256) -> None:
    """Rows official | ours | overlay (cropped around the ink), then official | ours | overlay zoomed on
    the densest 64 x 64 px of ink. Overlay: official-only ink red, ours-only blue, both black."""
    rows = []
    for fit in fits:
        both = overlay(fit.official, fit.ours)
        box, zoom = _crop_box(fit.official, fit.ours), _detail_box(fit.official)
        panels = [_panel(im[box], panel, Image.LANCZOS) for im in (fit.official, fit.ours, both)]
        panels += [_panel(im[zoom], panel, Image.NEAREST) for im in (fit.official, fit.ours, both)]
        gap = np.full((panel, 6, 3), 200, dtype=np.uint8)
        row = [panels[0]]
        for p in panels[1:]:
            row += [gap, p]
        rows.append(np.hstack(row))
        rows.append(np.full((6, rows[-1].shape[1], 3), 200, dtype=np.uint8))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.vstack(rows[:-1])).save(path)


def picture_rows(fits: list[Fit], per_kind: int = 2) -> list[Fit]:
    """Per type: the first fitted image, then the worst others."""
    chosen = []
    for kind in KINDS:
        of_kind = [f for f in fits if f.sample.kind == kind]
        if of_kind:
            others = sorted(of_kind[1:], key=lambda f: f.iou)
            chosen += [of_kind[0]] + others[: per_kind - 1]
    return chosen


# ------------------------------------------------------------------------------------------------ main


def radial_start_check(fits: list[Fit], min_radius: float = 60.0) -> dict[str, object]:
    """The official painter starts the first shape at the polar angle of its start point (spec §2.6).
    Over fitted first poses at least `min_radius` units out: the RMS deviation of heading from polar angle,
    and the shift of official_view's origin (px at 512; x right, y down) that best explains the deviations
    (about 0 when the origin is right)."""
    starts = np.array([[f.poses[0].x, f.poses[0].y, f.poses[0].heading] for f in fits])
    starts = starts[np.hypot(starts[:, 0], starts[:, 1]) >= min_radius]
    if len(starts) < 3:
        return {"radial_heading_rms_deg": None, "origin_shift_px": None}

    def deviation(origin: np.ndarray) -> np.ndarray:
        polar = np.degrees(np.arctan2(starts[:, 1] - origin[1], starts[:, 0] - origin[0]))
        return (starts[:, 2] - polar + 180.0) % 360.0 - 180.0

    shift = optimize.least_squares(deviation, np.zeros(2)).x * VIEW.pixels_per_unit
    return {
        "radial_heading_rms_deg": float(np.sqrt(np.mean(deviation(np.zeros(2)) ** 2))),
        "origin_shift_px": [float(shift[0]), float(-shift[1])],
        "radial_starts": int(len(starts)),
    }


def summarise(fits: list[Fit]) -> dict[str, object]:
    by_kind = {k: [f.iou for f in fits if f.sample.kind == k] for k in KINDS}
    return {
        "n_images": len(fits),
        "mean_iou": float(np.mean([f.iou for f in fits])),
        "min_iou": float(np.min([f.iou for f in fits])),
        "mean_iou_by_type": {k: float(np.mean(v)) for k, v in by_kind.items() if v},
        **radial_start_check(fits),
        "images": [
            {
                "path": str(f.sample.path),
                "iou": f.iou,
                "poses": [[p.x, p.y, p.heading, p.scale] for p in f.poses],
            }
            for f in fits
        ],
    }


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench fidelity", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="official dataset root (ff/bd/hd folders)")
    parser.add_argument("--n", type=count(1), default=40, help="number of official images")
    parser.add_argument("--no-refine", action="store_true", help="skip the image-based refinement")
    parser.add_argument("--picture", type=Path, default=None, help="write official | ours | overlay rows here")
    parser.add_argument("--json", type=str, default=None, help="write the figures to this JSON file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args([] if argv is None else argv)
    if args.json:
        check_output_file(args.json, "--json")
    samples = select_samples(args.root, args.n)
    fits = [fit_sample(s, refine=not args.no_refine) for s in tqdm(samples, desc="fitting poses")]
    results = summarise(fits)
    print(f"mean IoU {results['mean_iou']:.4f} (min {results['min_iou']:.4f}) over {len(fits)} images")
    for kind, value in results["mean_iou_by_type"].items():
        print(f"  {kind}: {value:.4f}")
    print(f"first-shape heading vs polar angle of its start: RMS {results['radial_heading_rms_deg']} deg, "
          f"implied origin shift {results['origin_shift_px']} px")
    if args.picture:
        write_picture(picture_rows(fits), args.picture)
        results["picture"] = str(args.picture)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(marked_json(results, indent=2))
    return 0
