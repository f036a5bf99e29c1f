"""search.template: a stroke variant's template made by swapping one action's marks is the template itself; the
closing of a target's ink is scipy's."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from dsl.library import load_library
from dsl.types import Shape
from search.neighbourhood import stroke_variants
from search.template import closing, template, with_action_marks

FIELDS = ("centroid", "coarse", "coarse_action", "mark_points", "mark_offsets", "mark_kinds", "mark_action", "joints",
          "joint_headings")


@pytest.mark.parametrize("name", ["square", "closed_circle", "sector90", "open_semi_circle", "crescent_moon"])
def test_a_stroke_variant_with_its_marks_swapped_is_its_template_to_the_bit(name):
    shape = load_library()[name].shape
    for i, action in enumerate(shape.actions):
        for variant in stroke_variants(action):
            got = with_action_marks(template(shape), shape, i, variant)
            want = template(Shape(shape.actions[:i] + (variant,) + shape.actions[i + 1:]))
            for field in FIELDS:
                a, b = getattr(got, field), getattr(want, field)
                assert a.dtype == b.dtype and np.array_equal(a, b), field
            assert got.rms == want.rms


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), iterations=st.integers(1, 3))
def test_closing_is_scipys(seed, iterations):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 40, size=2))
    mask = rng.random((h, w)) < rng.uniform(0.02, 0.6)
    np.testing.assert_array_equal(closing(mask, iterations), ndimage.binary_closing(mask, iterations=iterations, border_value=0))


def test_a_target_reads_every_image_as_one_array_type_and_leaves_the_callers_alone():
    """Images from a file (read-only) and from the renderer (writable) give the kernels the same array type (each
    type is a compilation of every pixel kernel on a first run), and the caller's array keeps its flags."""
    from search import pixel_kernels
    from search.template import make_target

    drawn = np.full((64, 64), 255, dtype=np.uint8)
    drawn[20:40, 30:33] = 0
    from_file = drawn.copy()
    from_file.flags.writeable = False
    targets = [make_target(drawn), make_target(from_file), make_target(np.dstack([drawn] * 3))]
    assert drawn.flags.writeable and not from_file.flags.writeable
    assert {(t.image.dtype, t.image.flags.c_contiguous, t.image.flags.writeable) for t in targets} == {
        (np.dtype(np.uint8), True, False)}
    assert {t.grey.flags.writeable for t in targets} == {True}  # the crop: a copy of its own
    import numba

    assert len({numba.typeof(t.image) for t in targets}) == 1  # one Numba signature for all three
    for t in targets:
        np.testing.assert_array_equal(t.image, drawn)
    assert pixel_kernels.window_darkness(targets[0].image, 0, 0, 64) == pixel_kernels.window_darkness(drawn, 0, 0, 64)


def test_stamp_hollows_are_ink_and_a_shapes_own_inside_is_not():
    """A circle-stamped stroke's hollow stamps are filled (`stamps_filled`), a closed shape's inside is left white,
    and so is every pixel of an image without stamps."""
    from dsl.raster import render_program
    from dsl.types import ImageProgram, Pose, StrokeType
    from search.template import make_target, stamp_hollows

    library = load_library()
    pose = [Pose(-100.0, 0.0, 0.0, 200.0)]
    for stroke, filled_some in ((StrokeType.CIRCLE, True), (StrokeType.SQUARE, True), (StrokeType.NORMAL, False)):
        image = render_program(ImageProgram((library["closed_circle"].shape.with_strokes(stroke),)), pose)
        plain, filled = make_target(image), make_target(image, stamps_filled=True)
        assert ((filled.dt == 0).sum() > (plain.dt == 0).sum()) == filled_some
        assert len(filled.ink_points) >= len(plain.ink_points)
        assert filled.dt[filled.dt.shape[0] // 2, filled.dt.shape[1] // 2] > 20  # the circle's inside stays white
    ring = np.zeros((60, 60), dtype=bool)
    ring[10:50, 10:50], ring[12:48, 12:48] = True, False  # a hollow of 1,296 px^2: a shape's, not a stamp's
    ring[30:34, 30:34], ring[31:33, 31:33] = True, False  # ... holding a hollow of 4 px^2
    hollows = stamp_hollows(ring)
    assert hollows.sum() == 4 and hollows[31:33, 31:33].all()


@pytest.mark.parametrize("stroke", ["CIRCLE", "SQUARE"])
def test_a_stamped_shape_fits_itself_better_than_its_look_alike_once_its_stamps_are_ink(stroke):
    """open_s3 drawn with hollow stamps: on the stamps' outlines its centreline fits no better than that of its
    look-alike open_line_s3 (the outline lies a stamp's radius off both); with the hollows filled it fits every
    image better (`bias` probe, 12 poses: circle 8 -> 12 of 12, square 4 -> 11)."""
    from dsl.raster import render_program
    from dsl.types import ImageProgram, Pose, StrokeType
    from search.near_miss import centreline_fit
    from search.template import make_target
    from solver.reading.library_check import library_program

    library = load_library()
    rng = np.random.default_rng(0)
    wins = []
    for _ in range(4):
        pose = Pose(rng.uniform(-150, -50), rng.uniform(-50, 50), rng.uniform(0, 360), rng.uniform(150, 220))
        image = render_program(ImageProgram((library["open_s3"].shape.with_strokes(StrokeType[stroke]),)), [pose])
        fits = [centreline_fit(library_program((name,)), make_target(image, stamps_filled=True))[0]
                for name in ("open_s3", "open_line_s3")]
        assert fits[0] < 1.5
        wins.append(fits[0] < fits[1])
    assert all(wins)
