"""Exact shape categories: which human-designed library shapes a program's shape draws.

A shape is in category S when it draws the library shape S exactly, stroke types aside, up to the rounding of
the action strings (`dsl.canonical.same_shape`). Library shapes are bucketed by action count, arc count and total
line length, so a look-up checks only a few candidates (the 3-decimal rounding of action strings moves a total
length by < 0.005, a tenth of a bucket; neighbouring buckets are checked too). A geometric tie (library shapes with
identical drawings) gives every name of the tie. Categories matched with tolerance, for decoded programs, are
`search.categories`.
"""

from __future__ import annotations

import functools

from dsl.canonical import same_shape
from dsl.library import load_library
from dsl.settings import LENGTH_BUCKET
from dsl.types import Shape, StrokeType


def _bucket(shape: Shape) -> tuple[int, int, int]:
    arcs = sum(not a.is_line for a in shape.actions)
    total = sum(a.length for a in shape.actions if a.is_line)
    return len(shape), arcs, round(total / LENGTH_BUCKET)


@functools.cache
def _library_buckets() -> dict[tuple[int, int, int], tuple[str, ...]]:
    buckets: dict[tuple[int, int, int], list[str]] = {}
    for name, entry in load_library().items():
        buckets.setdefault(_bucket(entry.shape), []).append(name)
    return {key: tuple(names) for key, names in buckets.items()}


@functools.lru_cache(maxsize=8192)
def exact_shape_categories(shape: Shape) -> tuple[str, ...]:
    """Names of the library shapes that `shape` draws (normal strokes assumed), in library order."""
    shape = shape.with_strokes(StrokeType.NORMAL)
    n, arcs, total = _bucket(shape)
    library, buckets = load_library(), _library_buckets()
    candidates = [name for t in (total - 1, total, total + 1) for name in buckets.get((n, arcs, t), ())]
    return tuple(name for name in candidates if same_shape(shape, library[name].shape, ignore_strokes=True))
