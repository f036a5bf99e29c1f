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
