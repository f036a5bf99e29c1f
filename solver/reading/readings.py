"""What perception makes of an image (`Perceived`), and how well a program draws an image (`pixel_fit`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsl.types import ImageProgram, Pose


class PerceptionError(RuntimeError):
    """The images of a problem could not be perceived at all (e.g. no decoder checkpoint)."""


@dataclass(frozen=True, slots=True)
class Perceived:
    """What perception made of one image."""

    program: ImageProgram | None
    poses: tuple[Pose, ...] | None = None
    score: float | None = None
    proposals: tuple = ()
    error: str | None = None
    evidence: dict | None = None  # what decided the reading when the problem was perceived as a whole
    # (`solver.reading.pipeline`): fits, margins, verdict; the confidence of a query's label is computed from it


def pixel_fit(image: np.ndarray, program: ImageProgram) -> tuple[float, tuple[Pose, ...]]:
    """How well `program` draws `image`: the mean absolute grey difference (0-1) of its render (stroke
    types included) in the image's ink crop, lower is better, and its fitted poses
    (`search.pose.fitted_pixel_cost`)."""
    from search.pose import fitted_pixel_cost
    from search.template import make_target

    return fitted_pixel_cost(program, make_target(image))


def require_programs(results: list[Perceived], names: list[str]) -> list[ImageProgram]:
    """The programs of `results`; a PerceptionError naming the first image that has none."""
    missing = [k for k, r in enumerate(results) if r.program is None]
    if missing:
        first = missing[0]
        raise PerceptionError(f"no program for {len(missing)} images, first {names[first]}: {results[first].error}")
    return [r.program for r in results]
