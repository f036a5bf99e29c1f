"""Shape categories: which human-designed library shapes a shape draws.

Two ways, by where the programs come from:
  * exact (ground-truth programs): a shape is in category S when it draws the library shape S exactly,
    stroke types aside, up to the rounding of the action strings (`dsl.canonical.same_shape`). Library
    shapes are bucketed by action count, arc count and total line length, so a look-up checks only a
    few candidates (the 3-decimal rounding of action strings moves a total length by < 0.005, a tenth of
    a bucket; neighbouring buckets are checked too).
  * matched (programs from perception): the exact categories when the decoded program draws a library
    shape exactly (as a correct decode does: about 1 ms), else the best group of `search.matching.match_shape`
    if its score is at least MIN_MATCH_SCORE (`best_match_names`: about 6 ms); memoised per
    canonical shape key (strokes aside), so a shape decoded again from another start point or
    direction is matched once.
A geometric tie (library shapes with identical drawings) gives every name of the tie.
"""

from __future__ import annotations

import functools

from dsl.canonical import same_shape, shape_key
from dsl.library import load_library
from dsl.types import Shape, StrokeType

from solver.settings import LENGTH_BUCKET, MIN_MATCH_SCORE


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


def matched_shape_categories(shape: Shape, min_score: float = MIN_MATCH_SCORE) -> tuple[str, ...]:
    """The library shapes `shape` draws exactly, else the best-matching library group of `shape` if it
    matches well enough."""
    exact = exact_shape_categories(shape)
    if exact:
        return exact
    key = _match_key(shape, min_score)
    if key not in _MATCHED:
        from search.matching import best_match_names

        _MATCHED[key] = best_match_names(shape, min_score)
    return _MATCHED[key]


_MATCHED: dict[tuple, tuple[str, ...]] = {}  # geometric matches by canonical shape key (`_match_key`)


def _match_key(shape: Shape, min_score: float) -> tuple:
    """The memo key of a shape's geometric match: its canonical key, strokes aside, and the score asked for."""
    return shape_key(shape, ignore_strokes=True), min_score


def known_categories(program) -> tuple:
    """`matched_shape_categories` of the shapes of `program` (an `ImageProgram`) that draw no library shape exactly,
    as (memo key, names) pairs: matched in a worker process (`solver.hypotheses._checked_many`), where the problem's
    images are checked side by side, and remembered by the process that writes the problem's facts
    (`remember_categories`), which would otherwise match them one after another."""
    out = []
    for shape in program.shapes:
        if not exact_shape_categories(shape):
            out.append((_match_key(shape, MIN_MATCH_SCORE), matched_shape_categories(shape)))
    return tuple(out)


def remember_categories(known) -> None:
    """Categories another process matched (`known_categories`)."""
    _MATCHED.update(known)
