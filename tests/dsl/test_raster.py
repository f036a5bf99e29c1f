"""The rasteriser: output format, official framing, compositing order, anti-aliasing, fit_view, and the
Numba kernel against its plain-numpy twin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.library import load_library
from dsl.raster import (
    OFFICIAL_PIXELS_PER_UNIT,
    RENDER_OUTLINE_WIDTH,
    RENDER_PEN_WIDTH,
    View,
    fit_view,
    official_view,
    pack_marks,
    render_drawing,
    render_marks,
    render_marks_reference,
    render_program,
)
from dsl.syntax import parse_image
from dsl.turtle import Drawing, Mark, MarkKind, ShapeGeometry, execute_image
from dsl.types import Action, ImageProgram, Pose, Shape, StrokeType

FREE_FORM = parse_image(
    [
        ["line_zigzag_1.000-0.500", "arc_circle_0.500_0.625-0.750", "line_square_1.000-0.750"],
        ["arc_triangle_0.500_0.875-0.500", "line_normal_1.000-0.667"],
    ]
)
FREE_FORM_POSES = (Pose(-100.0, 50.0, 30.0, 120.0), Pose(150.0, -100.0, 0.0, 110.0))


def _line_program(length: float = 1.0, stroke: StrokeType = StrokeType.NORMAL) -> ImageProgram:
    return ImageProgram((Shape((Action.line(length, 0.0, stroke),)),))


def _drawing(*marks: tuple[MarkKind, list[tuple[float, float]]]) -> Drawing:
    return Drawing([ShapeGeometry(marks=[Mark(kind, np.array(points, dtype=float)) for kind, points in marks])])


def _square(cx: float, cy: float, half: float) -> list[tuple[float, float]]:
    return [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half), (cx - half, cy + half)]


def _kernel_and_reference(drawing: Drawing, size: int, view: View) -> tuple[np.ndarray, np.ndarray]:
    packed = pack_marks(drawing, view)
    radii = (RENDER_PEN_WIDTH * view.pixels_per_unit / 2.0, RENDER_OUTLINE_WIDTH * view.pixels_per_unit / 2.0)
    return render_marks(*packed, size, *radii), render_marks_reference(*packed, size, *radii)


@pytest.mark.parametrize("size", [512, 128, 37])
def test_output_is_uint8_square_white_background(size):
    image = render_program(FREE_FORM, FREE_FORM_POSES, size=size)
    assert image.shape == (size, size) and image.dtype == np.uint8
    assert image[0, 0] == 255 and image.min() < 160  # thin strokes never reach full ink at 37 px


def test_empty_drawing_is_white():
    image = render_drawing(Drawing([]), size=64)
    assert np.all(image == 255)


def test_official_view_scales_with_size():
    big, small = official_view(512), official_view(128)
    assert small.pixels_per_unit == pytest.approx(big.pixels_per_unit / 4)
    assert small.origin_x == pytest.approx(big.origin_x / 4)
    assert big.pixels_per_unit == pytest.approx(OFFICIAL_PIXELS_PER_UNIT)
    np.testing.assert_allclose(big.to_pixels([[100.0, 100.0]]), [[258 + 65.4, 258 - 65.4]], atol=2.0)


def test_horizontal_line_lands_where_official_view_says():
    # from (0, 0) east, 150 units: pixels x in [258, 356], y = 258, pen 8 (+ widening) units ~ 6 px wide
    image = render_program(_line_program(1.0), [Pose(0.0, 0.0, 0.0, 150.0)])
    view = official_view(512)
    (x0, y), (x1, _) = view.to_pixels([[0.0, 0.0], [150.0, 0.0]])
    row = int(y)
    dark_columns = np.nonzero(image[row] < 128)[0]
    half_width = RENDER_PEN_WIDTH * view.pixels_per_unit / 2
    assert dark_columns.min() == pytest.approx(x0 - half_width, abs=1.5)
    assert dark_columns.max() == pytest.approx(x1 + half_width, abs=1.5)
    column = int((x0 + x1) / 2)
    dark_rows = np.nonzero(image[:, column] < 128)[0]
    assert len(dark_rows) == pytest.approx(2 * half_width, abs=1.5)
    assert abs(dark_rows.mean() + 0.5 - y) < 1.0
    assert np.all(image[: row - 10] == 255) and np.all(image[row + 10 :] == 255)


def test_stamp_fill_hides_earlier_stroke_and_later_stroke_covers_stamp():
    view = View(0.0, 64.0, 1.0)  # turtle (x, y) -> pixel (x, 64 - y)
    line = (MarkKind.PEN, [(4.0, 32.0), (60.0, 32.0)])
    stamp = (MarkKind.STAMP, _square(32.0, 32.0, 12.0))
    stamp_over = render_drawing(_drawing(line, stamp), size=64, view=view)
    line_over = render_drawing(_drawing(stamp, line), size=64, view=view)
    centre = (31, 32)
    assert stamp_over[centre] == 255  # white fill hides the line
    assert stamp_over[31, 8] == 0  # the line outside the stamp stays
    assert stamp_over[31, 20] < 128  # the stamp's outline (x = 20) is inked
    assert line_over[centre] == 0
    assert stamp_over[25, 32] == 255 and line_over[25, 32] == 255  # inside the stamp, off the line


def test_edges_are_anti_aliased():
    view = View(0.3, 64.3, 1.0)
    image = render_drawing(_drawing((MarkKind.PEN, [(5.0, 20.0), (55.0, 41.0)])), size=64, view=view)
    grey = (image > 0) & (image < 255)
    assert grey.sum() > 50
    assert (image == 0).sum() > 50


def test_thin_lines_keep_their_ink_at_small_sizes():
    image = render_program(FREE_FORM, FREE_FORM_POSES, size=64)
    ink = (255 - image.astype(float)).sum() / 255
    big = render_program(FREE_FORM, FREE_FORM_POSES, size=512)
    big_ink = (255 - big.astype(float)).sum() / 255 / 64  # area scales with size squared
    assert ink == pytest.approx(big_ink, rel=0.25)


@pytest.mark.parametrize("size,margin", [(128, 0.1), (64, 0.05), (200, 0.2)])
def test_fit_view_frames_the_drawing(size, margin):
    drawing = execute_image(FREE_FORM, FREE_FORM_POSES)
    view = fit_view(drawing, size, margin=margin)
    image = render_drawing(drawing, size=size, view=view)
    rows, cols = np.nonzero(image < 255)
    lo, hi = size * margin, size * (1 - margin)
    assert rows.min() >= lo - 2 and cols.min() >= lo - 2
    assert rows.max() <= hi + 1 and cols.max() <= hi + 1
    assert max(rows.max() - rows.min(), cols.max() - cols.min()) >= (hi - lo) - 3


def _library_drawings() -> list[Drawing]:
    library = load_library()
    names = ["equilateral_traingle", "regular_pentagon"]
    names = [n for n in names if n in library] + list(library)[100:103]
    strokes = [StrokeType.ZIGZAG, StrokeType.CIRCLE, StrokeType.TRIANGLE, StrokeType.SQUARE, StrokeType.NORMAL]
    return [
        execute_image(
            ImageProgram((library[name].shape.with_strokes(strokes[k % 5]),)),
            [Pose(-120.0 + 20 * k, -60.0, 15.0 * k, 190.0)],
        )
        for k, name in enumerate(names)
    ]


@pytest.mark.parametrize("case", range(5))
def test_kernel_matches_numpy_reference(case):
    drawing = _library_drawings()[case]
    for size in (96, 160):
        kernel, reference = _kernel_and_reference(drawing, size, official_view(size))
        assert np.abs(kernel.astype(int) - reference).max() <= 1
        assert (kernel < 255).sum() > 20


def test_kernel_matches_reference_on_free_form_and_fit_view():
    drawing = execute_image(FREE_FORM, FREE_FORM_POSES)
    kernel, reference = _kernel_and_reference(drawing, 128, fit_view(drawing, 128))
    assert np.abs(kernel.astype(int) - reference).max() <= 1


_coordinate = st.floats(-10.0, 60.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(
    points=st.lists(st.tuples(_coordinate, _coordinate), min_size=1, max_size=5),
    stamp=st.booleans(),
    ppu=st.floats(0.3, 2.0),
)
def test_kernel_matches_reference_on_random_marks(points, stamp, ppu):
    kind = MarkKind.STAMP if stamp and len(points) >= 3 else MarkKind.PEN
    drawing = _drawing((MarkKind.PEN, [(0.0, 0.0), (50.0, 45.0)]), (kind, points))
    kernel, reference = _kernel_and_reference(drawing, 48, View(2.0, 46.0, ppu))
    assert np.abs(kernel.astype(int) - reference).max() <= 1


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), corners=st.integers(3, 12), convex=st.booleans())
def test_stamp_fast_paths_give_every_pixel_its_full_computation(seed, corners, convex):
    # `_stamp_polygon` skips the distance for pixels surely outside the band and whitens those surely inside
    # it: the canvas is the one the full per-pixel computation gives, to the bit
    from dsl.raster import _band_coverage, _polygon_edges, _polygon_signed_distance, _stamp_polygon

    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, corners))
    radius = rng.uniform(1.0, 12.0) * (1.0 if convex else rng.uniform(0.3, 1.0, corners))
    pts = np.column_stack([20.0 + radius * np.cos(angles), 18.0 + radius * np.sin(angles)])
    canvas = rng.uniform(0.0, 1.0, (40, 44)).astype(np.float32) * (rng.uniform(size=(40, 44)) < 0.5)
    outline = float(rng.uniform(0.5, 2.0))
    fast = canvas.copy()
    _stamp_polygon(fast, pts, outline)
    full, edges = canvas.copy(), _polygon_edges(pts)
    for i in range(full.shape[0]):
        for j in range(full.shape[1]):
            s = _polygon_signed_distance(j + 0.5, i + 0.5, edges)
            if s < outline + 0.5:
                footprint = min(max(outline + 0.5 - s, 0.0), 1.0)
                full[i, j] = float(full[i, j]) * (1.0 - footprint) + _band_coverage(abs(s), outline)
    assert np.array_equal(fast, full)
