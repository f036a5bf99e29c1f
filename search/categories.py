"""Shape categories of decoded programs: which human-designed library shapes a shape draws, with tolerance.

The exact categories (`dsl.categories.exact_shape_categories`) when the decoded program draws a library shape
exactly (as a correct decode does: about 1 ms), else the best group of `search.matching.match_shape` if its score
is at least MIN_MATCH_SCORE (`best_match_names`: about 6 ms); memoised per canonical shape key (strokes aside), so
a shape decoded again from another start point or direction is matched once.
"""

from __future__ import annotations

from dsl.canonical import shape_key
from dsl.categories import exact_shape_categories
from dsl.types import Shape
from search.settings import MIN_MATCH_SCORE


def matched_shape_categories(shape: Shape, min_score: float = MIN_MATCH_SCORE) -> tuple[str, ...]:
    """The library shapes `shape` draws exactly, else the best-matching library group of `shape` if it
    matches well enough."""
    exact = exact_shape_categories(shape)
    if exact:
        return exact
    key = _match_key(shape, min_score)
    if key not in _MATCHED:
        from search.matching import best_match_names  # loads the library index on first use

        _MATCHED[key] = best_match_names(shape, min_score)
    return _MATCHED[key]


_MATCHED: dict[tuple, tuple[str, ...]] = {}  # geometric matches by canonical shape key (`_match_key`)


def _match_key(shape: Shape, min_score: float) -> tuple:
    """The memo key of a shape's geometric match: its canonical key, strokes aside, and the score asked for."""
    return shape_key(shape, ignore_strokes=True), min_score


def known_categories(program) -> tuple:
    """`matched_shape_categories` of the shapes of `program` (an `ImageProgram`) that draw no library shape exactly,
    as (memo key, names) pairs: matched in a worker process (`solver.reading.verdicts.checked_many`), where the problem's
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
