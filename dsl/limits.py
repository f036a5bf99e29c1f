"""Size limits on what the tool reads, so that a hostile or broken file fails with a clear error instead of
exhausting memory, recursion or time.

Each limit is the released dataset's own maximum with a wide margin (spec §3): a shape of the dataset has
at most 9 actions (free-form settings k <= 9, the human-designed shapes at most 9), an image at most 2
shapes, an image is 512 x 512 pixels, and an action-program JSON nests 4 deep (file -> problem -> side
-> image -> shape -> action).
"""

from __future__ import annotations

import json
import re

MAX_ACTIONS_PER_SHAPE = 32  # the dataset's maximum is 9
MAX_SHAPES_PER_IMAGE = 2  # the dataset's maximum (spec §3.2: one or two shapes)
MAX_IMAGE_PIXELS = 4096 * 4096  # the dataset's images are 512 x 512
MAX_JSON_DEPTH = 64  # the action-program JSON nests 5 deep, a report a little more
MAX_JSON_BYTES = 512 * 1024 * 1024  # the released free-form action-program JSON is a few MB


class LimitError(ValueError):
    """An input over one of the limits above; the message says which and by how much."""


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    for token in _BRACKETS.findall(text):
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def loads_limited(text: str, max_depth: int = MAX_JSON_DEPTH) -> object:
    """`json.loads` that refuses a text nested deeper than `max_depth` (a LimitError) rather than hitting
    Python's recursion limit; a bad text raises json.JSONDecodeError as usual."""
    if len(text) > MAX_JSON_BYTES:
        raise LimitError(f"JSON text of {len(text)} bytes is over the limit of {MAX_JSON_BYTES}")
    if text.count("[") + text.count("{") > max_depth:  # only then can it be nested deeper: count exactly
        depth = json_depth(text)
        if depth > max_depth:
            raise LimitError(f"JSON nested {depth} deep, over the limit of {max_depth}")
    try:
        return json.loads(text)
    except RecursionError:
        raise LimitError(f"JSON nested too deep (the limit is {max_depth})") from None


def check_pixels(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise LimitError(f"image of {width} x {height} pixels has no pixels")
    if width * height > MAX_IMAGE_PIXELS:
        raise LimitError(f"image of {width} x {height} pixels is over the limit of {MAX_IMAGE_PIXELS} pixels "
                         "(the dataset's images are 512 x 512)")


def check_program(program) -> None:
    """An `ImageProgram` built in code (not parsed) within the limits on shapes and actions."""
    shapes = program.shapes
    if not 1 <= len(shapes) <= MAX_SHAPES_PER_IMAGE:
        raise LimitError(f"a program of {len(shapes)} shapes; an image has 1 to {MAX_SHAPES_PER_IMAGE}")
    for shape in shapes:
        if not 1 <= len(shape.actions) <= MAX_ACTIONS_PER_SHAPE:
            raise LimitError(f"a shape of {len(shape.actions)} actions; the limit is 1 to {MAX_ACTIONS_PER_SHAPE}")
