"""search.template: the closing of a target's ink against scipy's."""

import numpy as np
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from search.template import closing


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), iterations=st.integers(1, 3))
def test_closing_is_scipys(seed, iterations):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 40, size=2))
    mask = rng.random((h, w)) < rng.uniform(0.02, 0.6)
    np.testing.assert_array_equal(closing(mask, iterations), ndimage.binary_closing(mask, iterations=iterations, border_value=0))
