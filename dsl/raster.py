"""The rasteriser: turtle geometry (`dsl.turtle.Drawing`) -> greyscale image, as the official PNGs look.

Conventions
  View       pixel coordinate = (origin_x + ppu * x, origin_y - ppu * y) for a turtle point (x, y), y up.
             Pixel coordinates are continuous: pixel (row i, column j) is the unit square [j, j+1) x [i, i+1),
             its centre at (j + 0.5, i + 0.5). So a size-n image spans [0, n] on both axes and a view scales
             to another image size by multiplying all three numbers by the size ratio.
  Image      uint8 (size, size), 255 = white background, 0 = full ink.
  Marks      composited in drawing order (spec §2.5): a PEN polyline (width 8 units, round caps and joins)
             inks its footprint; a STAMP polygon first whitens its footprint (fill plus outline), then inks
             its outline (width 2.5 units, centred on the polygon edge). Widths scale with the view.
             Both widths are drawn `RASTER_WIDENING` units wider, as the official PNGs show them: Ghostscript
             fills every device pixel a mark touches, ~1 device pixel (0.72 px per unit) more than the
             geometric width (fitted on official dev images by benchmarks/fidelity.py).
  Edges      anti-aliased by the exact 1-D box-filter coverage across the edge: a band of half-width r at
             distance d from a pixel centre covers max(0, min(d + 1/2, r) - max(d - 1/2, -r)) of it.

Layout for the kernels: all marks of a drawing as one (M, 2) float64 array of pixel coordinates, (K + 1)
offsets (mark k = points[offsets[k]:offsets[k+1]]) and K mark kinds (`PEN_KIND`, `STAMP_KIND`). The Numba
kernel (`render_marks`) only visits pixels near each mark; `render_marks_reference` is its plain-numpy twin
over the whole grid (slow, for tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from dsl.jit import njit

from dsl.settings import RASTER_WIDENING
from dsl.turtle import PEN_WIDTH, STAMP_OUTLINE_WIDTH, Drawing, MarkKind, execute_image
from dsl.types import ImageProgram, Pose

PEN_KIND = 0
STAMP_KIND = 1
_KIND_CODES = {MarkKind.PEN: PEN_KIND, MarkKind.STAMP: STAMP_KIND}

# Official PNG geometry (spec §2.7): the visible Tk window, ~783 units square around the origin, resized
# to 512 px. The origin (continuous pixel coordinates at 512 px) is measured on official dev images by
# benchmarks/fidelity.py: the official painter starts the first shape radially (heading = polar angle of
# the start point, spec §2.6), which pins the turtle origin in the fitted poses to +-0.02 px.
OFFICIAL_SIZE = 512
OFFICIAL_ORIGIN_X = 257.30
OFFICIAL_ORIGIN_Y = 257.62
OFFICIAL_PIXELS_PER_UNIT = 512.0 / 783.0
RENDER_PEN_WIDTH = PEN_WIDTH + RASTER_WIDENING
RENDER_OUTLINE_WIDTH = STAMP_OUTLINE_WIDTH + RASTER_WIDENING


@dataclass(frozen=True, slots=True)
class View:
    """Maps turtle units to continuous pixel coordinates: (origin_x + ppu*x, origin_y - ppu*y)."""

    origin_x: float
    origin_y: float
    pixels_per_unit: float

    def to_pixels(self, points: np.ndarray) -> np.ndarray:
        """(N, 2) turtle points -> (N, 2) pixel coordinates (column, row), continuous."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        out = np.empty_like(points)
        out[:, 0] = self.origin_x + self.pixels_per_unit * points[:, 0]
        out[:, 1] = self.origin_y - self.pixels_per_unit * points[:, 1]
        return out

    def scaled(self, factor: float) -> "View":
        """The same framing for an image `factor` times as large."""
        return View(self.origin_x * factor, self.origin_y * factor, self.pixels_per_unit * factor)


def official_view(size: int = OFFICIAL_SIZE) -> View:
    """The framing of the official PNGs (spec §2.7), scaled to a size x size image."""
    return View(OFFICIAL_ORIGIN_X, OFFICIAL_ORIGIN_Y, OFFICIAL_PIXELS_PER_UNIT).scaled(size / OFFICIAL_SIZE)


def drawing_extent(drawing: Drawing) -> tuple[float, float, float, float] | None:
    """(xmin, ymin, xmax, ymax) of all mark points in turtle units, widened by half the pen width."""
    marks = [m.points for m in drawing.marks if len(m.points)]
    if not marks:
        return None
    points = np.concatenate(marks)
    pad = RENDER_PEN_WIDTH / 2.0
    lo, hi = points.min(axis=0) - pad, points.max(axis=0) + pad
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


def fit_view(drawing: Drawing, size: int, margin: float = 0.1) -> View:
    """A square view centred on the drawing, its larger side spanning (1 - 2*margin) of the image."""
    extent = drawing_extent(drawing)
    if extent is None:
        return official_view(size)
    xmin, ymin, xmax, ymax = extent
    side = max(xmax - xmin, ymax - ymin, 1e-6)
    ppu = size * (1.0 - 2.0 * margin) / side
    cx, cy = (xmin + xmax) / 2.0, (ymin + ymax) / 2.0
    return View(size / 2.0 - ppu * cx, size / 2.0 + ppu * cy, ppu)


def pack_marks(drawing: Drawing, view: View) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The flat kernel layout: (points (M, 2) pixel coords, offsets (K+1,) int64, kinds (K,) int64)."""
    marks = drawing.marks
    offsets = np.zeros(len(marks) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(m.points) for m in marks])
    kinds = np.array([_KIND_CODES[m.kind] for m in marks], dtype=np.int64)
    if marks:
        points = view.to_pixels(np.concatenate([m.points for m in marks]))
    else:
        points = np.zeros((0, 2))
    return np.ascontiguousarray(points), offsets, kinds


def render_drawing(drawing: Drawing, size: int = OFFICIAL_SIZE, view: View | None = None) -> np.ndarray:
    """Rasterise a drawing: uint8 (size, size), white background, black ink (official framing by default)."""
    view = official_view(size) if view is None else view
    points, offsets, kinds = pack_marks(drawing, view)
    pen_radius = RENDER_PEN_WIDTH * view.pixels_per_unit / 2.0
    outline_radius = RENDER_OUTLINE_WIDTH * view.pixels_per_unit / 2.0
    return render_marks(points, offsets, kinds, size, pen_radius, outline_radius)


def render_program(
    program: ImageProgram, poses: list[Pose] | tuple[Pose, ...], size: int = OFFICIAL_SIZE, view: View | None = None
) -> np.ndarray:
    """Execute an image program with one pose per shape and rasterise it (see `render_drawing`)."""
    return render_drawing(execute_image(program, poses), size, view)


# ---------------------------------------------------------------------------------------------- kernels


@njit(cache=True, inline="always")
def _band_coverage(distance: float, radius: float) -> float:
    """Fraction of a unit pixel covered by the band |t| <= radius, the pixel centre at t = distance."""
    c = min(distance + 0.5, radius) - max(distance - 0.5, -radius)
    return c if c > 0.0 else 0.0


@njit(cache=True, inline="always")
def _segment_distance(px: float, py: float, x0: float, y0: float, dx: float, dy: float, inv_len2: float) -> float:
    t = ((px - x0) * dx + (py - y0) * dy) * inv_len2
    t = min(max(t, 0.0), 1.0)
    ex, ey = px - (x0 + t * dx), py - (y0 + t * dy)
    return math.sqrt(ex * ex + ey * ey)


@njit(cache=True)
def _ink_segment(ink: np.ndarray, x0: float, y0: float, x1: float, y1: float, radius: float) -> None:
    """Ink a round-capped segment (max-compositing), visiting per row only the columns near the segment."""
    n_rows, n_cols = ink.shape
    reach = radius + 0.5
    dx, dy = x1 - x0, y1 - y0
    len2 = dx * dx + dy * dy
    inv_len2 = 1.0 / len2 if len2 > 0.0 else 0.0
    row_lo = max(int(math.floor(min(y0, y1) - reach - 0.5)), 0)
    row_hi = min(int(math.ceil(max(y0, y1) + reach - 0.5)), n_rows - 1)
    for i in range(row_lo, row_hi + 1):
        py = i + 0.5
        # the part of the centre segment within `reach` of this row, in x
        if abs(dy) > 1e-12:
            ta, tb = (py - reach - y0) / dy, (py + reach - y0) / dy
            t_lo, t_hi = max(min(ta, tb), 0.0), min(max(ta, tb), 1.0)
            if t_lo > t_hi:
                continue
        else:
            t_lo, t_hi = 0.0, 1.0
        xa, xb = x0 + t_lo * dx, x0 + t_hi * dx
        col_lo = max(int(math.floor(min(xa, xb) - reach - 0.5)), 0)
        col_hi = min(int(math.ceil(max(xa, xb) + reach - 0.5)), n_cols - 1)
        for j in range(col_lo, col_hi + 1):
            d = _segment_distance(j + 0.5, py, x0, y0, dx, dy, inv_len2)
            if d < reach:
                c = _band_coverage(d, radius)
                if c > ink[i, j]:
                    ink[i, j] = c


@njit(cache=True)
def _ink_polyline(ink: np.ndarray, pts: np.ndarray, radius: float) -> None:
    if pts.shape[0] == 1:
        _ink_segment(ink, pts[0, 0], pts[0, 1], pts[0, 0], pts[0, 1], radius)
    for k in range(pts.shape[0] - 1):
        _ink_segment(ink, pts[k, 0], pts[k, 1], pts[k + 1, 0], pts[k + 1, 1], radius)


@njit(cache=True)
def _polygon_edges(pts: np.ndarray) -> np.ndarray:
    """Per edge of the closed polygon: start x, start y, dx, dy, 1 / length^2 (0 for a degenerate edge)."""
    n = pts.shape[0]
    edges = np.empty((n, 5))
    for k in range(n):
        x0, y0 = pts[k, 0], pts[k, 1]
        dx, dy = pts[(k + 1) % n, 0] - x0, pts[(k + 1) % n, 1] - y0
        len2 = dx * dx + dy * dy
        edges[k, 0], edges[k, 1], edges[k, 2], edges[k, 3] = x0, y0, dx, dy
        edges[k, 4] = 1.0 / len2 if len2 > 0.0 else 0.0
    return edges


@njit(cache=True)
def _polygon_signed_distance(px: float, py: float, edges: np.ndarray) -> float:
    """Distance to the closed polygon's boundary, negative inside (even-odd rule)."""
    best = 1e30
    inside = False
    for k in range(edges.shape[0]):
        x0, y0, dx, dy = edges[k, 0], edges[k, 1], edges[k, 2], edges[k, 3]
        t = min(max(((px - x0) * dx + (py - y0) * dy) * edges[k, 4], 0.0), 1.0)
        ex, ey = px - (x0 + t * dx), py - (y0 + t * dy)
        d2 = ex * ex + ey * ey
        if d2 < best:
            best = d2
        if (y0 > py) != (y0 + dy > py):
            if px < x0 + (py - y0) * dx / dy:
                inside = not inside
    best = math.sqrt(best)
    return -best if inside else best


@njit(cache=True)
def _stamp_discs(pts: np.ndarray, edges: np.ndarray) -> tuple[float, float, float, float]:
    """(centre x, centre y, r_in, r_out) around the mean of the polygon's vertices: no boundary point lies
    nearer than r_in (0 when the centre is not inside), every point lies within r_out."""
    cx, cy = pts[:, 0].mean(), pts[:, 1].mean()
    r_out = 0.0
    for k in range(pts.shape[0]):
        r_out = max(r_out, math.hypot(pts[k, 0] - cx, pts[k, 1] - cy))
    centre = _polygon_signed_distance(cx, cy, edges)
    return cx, cy, -centre if centre < 0.0 else 0.0, r_out


@njit(cache=True)
def _stamp_polygon(ink: np.ndarray, pts: np.ndarray, outline_radius: float) -> None:
    """Whiten the polygon's footprint (fill + outline), then ink its outline band. Pixels surely farther than
    the band's reach from the boundary skip the distance: outside they are left alone, inside whitened (the
    value the full computation gives them: footprint 1, band 0)."""
    n_rows, n_cols = ink.shape
    reach = outline_radius + 0.5
    edges = _polygon_edges(pts)
    cx, cy, r_in, r_out = _stamp_discs(pts, edges)
    far_out = (r_out + reach + 1e-6) ** 2  # squared distances from the centre: beyond, no part of the band
    deep_in = (r_in - reach - 1e-6) ** 2 if r_in > reach + 1e-6 else -1.0  # within, whitened
    row_lo = max(int(math.floor(pts[:, 1].min() - reach - 0.5)), 0)
    row_hi = min(int(math.ceil(pts[:, 1].max() + reach - 0.5)), n_rows - 1)
    col_lo = max(int(math.floor(pts[:, 0].min() - reach - 0.5)), 0)
    col_hi = min(int(math.ceil(pts[:, 0].max() + reach - 0.5)), n_cols - 1)
    for i in range(row_lo, row_hi + 1):
        for j in range(col_lo, col_hi + 1):
            d2 = (j + 0.5 - cx) ** 2 + (i + 0.5 - cy) ** 2
            if d2 > far_out:
                continue
            if d2 < deep_in:
                ink[i, j] = 0.0
                continue
            s = _polygon_signed_distance(j + 0.5, i + 0.5, edges)
            if s >= reach:
                continue
            footprint = min(max(outline_radius + 0.5 - s, 0.0), 1.0)
            outline = _band_coverage(abs(s), outline_radius)
            ink[i, j] = ink[i, j] * (1.0 - footprint) + outline


@njit(cache=True)
def _ink_box(points: np.ndarray, size: int, reach: float) -> tuple[int, int, int, int]:
    """Rows [r0, r1) and columns [c0, c1) of the image that marks within `reach` of the points can touch."""
    r0 = max(int(math.floor(points[:, 1].min() - reach)), 0)
    r1 = min(int(math.ceil(points[:, 1].max() + reach)) + 1, size)
    c0 = max(int(math.floor(points[:, 0].min() - reach)), 0)
    c1 = min(int(math.ceil(points[:, 0].max() + reach)) + 1, size)
    return r0, max(r1, r0), c0, max(c1, c0)


@njit(cache=True)
def _ink_to_image(ink: np.ndarray, size: int, r0: int, c0: int) -> np.ndarray:
    image = np.full((size, size), 255, dtype=np.uint8)
    for i in range(ink.shape[0]):
        for j in range(ink.shape[1]):
            image[r0 + i, c0 + j] = grey_level(ink[i, j])
    return image


@njit(cache=True)
def render_marks(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, size: int, pen_radius: float, outline_radius: float
) -> np.ndarray:
    """Numba kernel: rasterise packed marks (pixel coordinates) in order -> uint8 (size, size) image.

    Works on a canvas cut to the marks' box; shifting by whole pixels keeps pixel centres at +0.5."""
    if points.shape[0] == 0:
        return np.full((size, size), 255, dtype=np.uint8)
    ink, r0, c0 = ink_canvas(points, offsets, kinds, size, pen_radius, outline_radius)
    return _ink_to_image(ink, size, r0, c0)


@njit(cache=True)
def ink_canvas(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, size: int, pen_radius: float, outline_radius: float
) -> tuple[np.ndarray, int, int]:
    """The ink coverage (0-1, float32) of packed marks on the canvas cut to their box -> (ink, top row, left
    column of the box in the size x size image); `grey_level` turns a coverage into the pixel `render_marks`
    draws. At least one point."""
    r0, r1, c0, c1 = _ink_box(points, size, max(pen_radius, outline_radius) + 1.0)
    local = points.copy()
    for q in range(local.shape[0]):  # element by element: a slice's in-place update compiles Numba's
        local[q, 0] -= c0  # shape-mismatch message (seconds of a first run)
        local[q, 1] -= r0
    ink = np.zeros((r1 - r0, c1 - c0), dtype=np.float32)
    for k in range(kinds.shape[0]):
        pts = local[offsets[k] : offsets[k + 1]]
        if pts.shape[0] == 0:
            continue
        if kinds[k] == PEN_KIND:
            _ink_polyline(ink, pts, pen_radius)
        else:
            _stamp_polygon(ink, pts, outline_radius)
    return ink, r0, c0


@njit(cache=True, inline="always")
def grey_level(coverage: float) -> np.uint8:
    """The grey level (255 = white) of a pixel with this ink coverage, as `render_marks` draws it."""
    return np.uint8(255.0 - 255.0 * min(coverage, 1.0) + 0.5)


# ------------------------------------------------------------------------------------ reference twin


def _grid_segment_distance(px: np.ndarray, py: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    len2 = float(d @ d)
    t = np.zeros_like(px) if len2 == 0.0 else np.clip(((px - a[0]) * d[0] + (py - a[1]) * d[1]) / len2, 0.0, 1.0)
    return np.hypot(px - (a[0] + t * d[0]), py - (a[1] + t * d[1]))


def _grid_band_coverage(distance: np.ndarray, radius: float) -> np.ndarray:
    return np.maximum(np.minimum(distance + 0.5, radius) - np.maximum(distance - 0.5, -radius), 0.0)


def _grid_polygon_signed_distance(px: np.ndarray, py: np.ndarray, pts: np.ndarray) -> np.ndarray:
    closed = np.vstack([pts, pts[:1]])
    dist = np.min([_grid_segment_distance(px, py, a, b) for a, b in zip(closed[:-1], closed[1:])], axis=0)
    inside = np.zeros(px.shape, dtype=bool)
    for (x0, y0), (x1, y1) in zip(closed[:-1], closed[1:]):
        if y0 == y1:
            continue
        crosses = (y0 > py) != (y1 > py)
        inside ^= crosses & (px < x0 + (py - y0) * (x1 - x0) / (y1 - y0))
    return np.where(inside, -dist, dist)


def render_marks_reference(
    points: np.ndarray, offsets: np.ndarray, kinds: np.ndarray, size: int, pen_radius: float, outline_radius: float
) -> np.ndarray:
    """Plain-numpy twin of `render_marks`: the same compositing, evaluated on every pixel."""
    py, px = np.mgrid[0:size, 0:size] + 0.5
    ink = np.zeros((size, size))
    for k, kind in enumerate(kinds):
        pts = points[offsets[k] : offsets[k + 1]]
        if len(pts) == 0:
            continue
        if kind == PEN_KIND:
            segments = zip(pts[:-1], pts[1:]) if len(pts) > 1 else [(pts[0], pts[0])]
            dist = np.min([_grid_segment_distance(px, py, a, b) for a, b in segments], axis=0)
            ink = np.maximum(ink, _grid_band_coverage(dist, pen_radius))
        else:
            s = _grid_polygon_signed_distance(px, py, pts)
            footprint = np.clip(outline_radius + 0.5 - s, 0.0, 1.0)
            ink = ink * (1.0 - footprint) + _grid_band_coverage(np.abs(s), outline_radius)
    return np.floor(255.0 - 255.0 * np.minimum(ink, 1.0) + 0.5).astype(np.uint8)
