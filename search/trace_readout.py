"""From a traced reading (`search.trace.Traced`) to what the stroke stage needs: where its shapes are placed,
and which stroke the decoder drew where each of its actions lies.

    traced_placements(traced)                      the `search.pose.Placement` of every traced shape
    with_decoded_strokes(traced, decoded, target)  the traced program with the decoded strokes, and them
"""

from __future__ import annotations

import math

import numpy as np

from dsl.canonical import Segment, from_travel_form
from dsl.types import ActionKind, ImageProgram, StrokeType
from dsl.walk import State, walk_shape
from search.settings import MATCH_REACH
from search.template import Target
from search.trace import Traced, starts


def traced_placements(traced: Traced) -> list:
    """The `search.pose.Placement` of each traced shape: where its walk started (crop frame)."""
    from search.pose import Placement

    out = []
    for shape, start in zip(traced.program.shapes, traced.starts):
        first = shape.actions[0]
        backwards = 180.0 if first.kind is ActionKind.ARC and first.angle < 0 else 0.0  # as `variant_starts`
        out.append(Placement(start.x, start.y, -math.degrees(start.theta) - backwards, start.u))
    return out


def _midpoints(segments: list[Segment], start: State) -> np.ndarray:
    """Pixel midpoints (crop frame) of a travel-form shape walked from `start`."""
    _, paths = walk_shape(start, segments)
    return np.array([path[len(path) // 2] if seg.kind is ActionKind.ARC else path.mean(0)
                     for seg, path in zip(segments, paths)])


def with_decoded_strokes(traced: Traced, decoded: ImageProgram, target: Target) -> tuple[ImageProgram, list]:
    """The traced program with each action given the stroke type of the decoded action drawn where it is
    (midpoints within MATCH_REACH units, the decoded reading's poses fitted), and those strokes per action
    (None where no decoded action lies: the action is left normal, with no preference)."""
    from dsl.canonical import to_travel_form

    decoded_marks = []
    for shape_starts, shape in zip(starts(decoded, target), decoded.shapes):
        segments, state = shape_starts[0]
        decoded_marks += list(zip(_midpoints(segments, state), [seg.stroke for seg in segments]))
    shapes, prior = [], []
    for shape, start in zip(traced.program.shapes, traced.starts):
        segments = to_travel_form(shape)
        strokes = []
        for mid in _midpoints(segments, start):
            near = [(float(np.hypot(*(mid - m))), stroke) for m, stroke in decoded_marks]
            distance, stroke = min(near, key=lambda o: o[0]) if near else (np.inf, None)
            strokes.append(stroke if distance <= MATCH_REACH * start.u else None)
        shapes.append(from_travel_form([seg.with_stroke(s or StrokeType.NORMAL) for seg, s in zip(segments, strokes)]))
        prior.append(strokes)
    return ImageProgram(tuple(shapes)), prior
