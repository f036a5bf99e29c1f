"""Templates: a stroke variant's template made by swapping one action's marks is the template itself."""

import numpy as np
import pytest

from dsl.library import load_library
from dsl.types import Shape
from search.neighbourhood import stroke_variants
from search.template import template, with_action_marks

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
