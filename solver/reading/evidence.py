"""What a problem's images are worth as evidence, checked at the input boundary before perception.

An image that cannot be a Bongard-LOGO drawing (`unreadable_reason`: blank, not 2-D, NaN, mostly ink, or
speckle noise) or that perception could not read is left out, with a warning that names it; the problem
is still solved from the rest when each side keeps at least MIN_READABLE context images, and the
confidence of every label is scaled by the share of context images read. A query that cannot be read is
labelled B with confidence 0. A side with fewer readable images is an `EvidenceError` naming the images.

The thresholds are wide margins over the official images (official dev, every third of its 1162 images):
ink covers at most 3.4 % of an image (median 1.3 %), and no ink pixel is isolated (none of its 8
neighbours ink); uniform noise of any density breaks one test or the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dsl.limits import MAX_IMAGE_PIXELS

from solver.settings import INK_BELOW, MAX_INK_SHARE, MAX_ISOLATED_SHARE, MIN_READABLE


class EvidenceError(ValueError):
    """Too few readable images on one side of a problem to induce a rule."""


def unreadable_reason(pixels: object) -> str | None:
    """Why `pixels` cannot be read as a Bongard-LOGO drawing, or None when it can."""
    array = np.asarray(pixels)
    if array.dtype.kind not in "uif" and array.dtype != bool:
        return f"not an image: an array of {array.dtype}"
    if array.ndim != 2:
        return f"not a greyscale image: an array of shape {array.shape}"
    if array.size == 0:
        return "an image of no pixels"
    if array.size > MAX_IMAGE_PIXELS:
        return f"an image of {array.shape[1]} x {array.shape[0]} pixels is over the limit of {MAX_IMAGE_PIXELS}"
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        return "the image holds NaN or infinite values"
    ink = array < INK_BELOW
    if not ink.any():
        return "blank image: no ink"
    share = float(ink.mean())
    if share > MAX_INK_SHARE:
        return f"not a line drawing: {100 * share:.0f} % of the pixels are ink (drawings: under 4 %)"
    isolated = _isolated_share(ink)
    if isolated > MAX_ISOLATED_SHARE:
        return f"noise, not a line drawing: {100 * isolated:.0f} % of the ink pixels are isolated specks"
    return None


def _isolated_share(ink: np.ndarray) -> float:
    """The share of ink pixels none of whose 8 neighbours is ink, in the ink's box (outside it no ink): the
    neighbours counted by adding the eight shifted boxes (a 3 x 3 convolution cost several times as much)."""
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    padded = np.pad(ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1], 1).view(np.uint8)
    h, w = padded.shape[0] - 2, padded.shape[1] - 2
    neighbours = np.zeros((h, w), np.uint8)
    for dr in (0, 1, 2):
        for dc in (0, 1, 2):
            if (dr, dc) != (1, 1):
                neighbours += padded[dr:dr + h, dc:dc + w]
    box = padded[1:-1, 1:-1].astype(bool)
    return float((box & (neighbours == 0)).sum()) / float(box.sum())


@dataclass(slots=True)
class Evidence:
    """The readable images of a problem: context sides without the unreadable ones, queries in place
    (None where unreadable), the warnings, and the weight of the labels (share of context read)."""

    context_a: list
    context_b: list
    queries: list
    weight: float = 1.0
    warnings: list[str] = field(default_factory=list)

    @property
    def readable_queries(self) -> list:
        return [q for q in self.queries if q is not None]

    def labels(self, labels: Sequence[bool], confidence: Sequence[float]) -> tuple[tuple, tuple]:
        """Labels and confidences of the readable queries put back in place; an unreadable query is B
        at confidence 0, and every confidence is scaled by the evidence's weight."""
        given = iter(zip(labels, confidence))
        out = [next(given) if q is not None else (False, 0.0) for q in self.queries]
        return tuple(label for label, _ in out), tuple(c * self.weight for _, c in out)


def gather(context_a: Sequence, context_b: Sequence, queries: Sequence, notes: Sequence[str] = ()) -> Evidence:
    """The Evidence of a problem whose unreadable images are None (`notes`: what is known about them)."""
    warnings = list(notes)
    sides = {"set A": [i for i in context_a if i is not None], "set B": [i for i in context_b if i is not None]}
    for (side, readable), given in zip(sides.items(), (context_a, context_b)):
        if len(readable) < min(MIN_READABLE, len(given)) or (given and not readable):
            detail = f" ({'; '.join(warnings[:2])})" if warnings else ""
            raise EvidenceError(f"{side}: only {len(readable)} of {len(given)} context images could be read, too few "
                                f"to induce a rule{detail}")
    total = len(context_a) + len(context_b)
    read = len(sides["set A"]) + len(sides["set B"])
    weight = read / total if total else 1.0
    if read < total:
        warnings.append(f"{total - read} of {total} context images could not be read: the rule rests on the other "
                        f"{read}, confidence scaled by {weight:.2f}")
    if any(q is None for q in queries):
        warnings.append("an unreadable query is labelled B with confidence 0")
    return Evidence(sides["set A"], sides["set B"], list(queries), weight, warnings)


def readable_weighting(confidence: Sequence[float], context: Sequence, queries: Sequence) -> tuple[float, ...]:
    """Confidences computed elsewhere (`solver.solving.confidence`) put on the evidence's footing: scaled by the
    share of context images read (None: unreadable), 0 for an unreadable query."""
    weight = sum(p is not None for p in context) / len(context) if context else 1.0
    return tuple(0.0 if q is None else c * weight for c, q in zip(confidence, queries))
