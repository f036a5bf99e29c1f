"""Canonical forms of programs (start point, direction, first turn, shape order), shared with the decoder
and the solver. They live in `dsl.canonical` so that `perception` can use them without importing `search`;
this module re-exports them for the search's callers."""

from dsl.canonical import canonical_image, canonical_shape, image_key, same_image, same_shape, shape_key

__all__ = ["canonical_image", "canonical_shape", "image_key", "same_image", "same_shape", "shape_key"]
