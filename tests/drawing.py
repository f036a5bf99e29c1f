"""Helpers shared by tests: the same drawing traced differently."""

import random

from dsl.canonical import from_travel_form, travel_variants
from dsl.types import DATASET_STROKE_TYPES, Action, Shape


def redrawn(shape: Shape, seed: int, scale: float = 1.0) -> Shape:
    """Random stroke types, start point, tracing direction, heading and size; the same drawing."""
    rng = random.Random(seed)
    variant = from_travel_form(rng.choice(travel_variants(shape)))
    actions = []
    for i, a in enumerate(variant.actions):
        turn = rng.uniform(-180, 180) if i == 0 else a.turn
        actions.append(
            Action(a.kind, rng.choice(DATASET_STROKE_TYPES), turn, a.length * scale, a.radius * scale, a.angle)
        )
    return Shape(tuple(actions))
