"""Size limits on what the tool reads, so that a hostile or broken file fails with a clear error instead of
exhausting memory, recursion or time; and the checks of every number the tool is given (the command line's
options through `dsl.options`, the API's arguments through `solver.solving.api` and `solver.facts_in.solve`).

Each limit is the released dataset's own maximum with a wide margin (spec §3): a shape of the dataset has
at most 9 actions (free-form settings k <= 9, the human-designed shapes at most 9), an image at most 2
shapes, an image is 512 x 512 pixels, and an action-program JSON nests 4 deep (file -> problem -> side
-> image -> shape -> action).
"""

from __future__ import annotations

import json
import math
import numbers
import re

MAX_ACTIONS_PER_SHAPE = 32  # the dataset's maximum is 9
MAX_SHAPES_PER_IMAGE = 2  # the dataset's maximum (spec §3.2: one or two shapes)
MAX_IMAGE_PIXELS = 4096 * 4096  # the dataset's images are 512 x 512
MAX_JSON_DEPTH = 64  # the action-program JSON nests 5 deep, a report a little more
MAX_JSON_BYTES = 512 * 1024 * 1024  # the released free-form action-program JSON is a few MB
MAX_ACTION_TEXT = 64  # characters of an action string (the official ones: at most 30)
MAX_ACTION_NUMBER_TEXT = 12  # characters of an action string's number (the official format writes 5: 0.500)
MAX_NUMBER_TEXT = 40  # characters of a number given as text (an option's value)
MAX_SECONDS = 86_400.0  # a time limit over a day is a typo
MAX_SEED = 2**32 - 1  # numpy's seeds


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


# --------------------------------------------------------------------------------------------------
# Numbers given to the tool. Each check raises a LimitError whose message says what was expected and
# what came, without the option's name (argparse and the API add it).

_WHOLE = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) or len(value) <= limit else repr(value[:limit]) + "..."
    return text if len(text) <= limit + 5 else text[:limit] + "..."


def number_from_text(text: str, integer: bool = False) -> int | float:
    """A number written in ASCII decimals, at most MAX_NUMBER_TEXT characters. Python's `int()` and `float()`
    take more (other scripts' digits, `_`, surrounding spaces, `nan`, `inf`, any length); a LimitError says so."""
    if not isinstance(text, str):
        raise LimitError(f"expected a number written as text, got {type(text).__name__}")
    if len(text) > MAX_NUMBER_TEXT:
        raise LimitError(f"a number of {len(text)} characters, over the limit of {MAX_NUMBER_TEXT}")
    if not (_WHOLE if integer else _DECIMAL).fullmatch(text):
        what = "a whole number" if integer else "a number"
        raise LimitError(f"expected {what} in ASCII digits, got {_shown(text)}")
    return int(text) if integer else float(text)


def _range(minimum: float | None, maximum: float | None, above: bool) -> str:
    low = "" if minimum is None else f"above {minimum:g}" if above else f"at least {minimum:g}"
    high = "" if maximum is None else f"at most {maximum:g}"
    if minimum is not None and maximum is not None and not above:
        return f"from {minimum:g} to {maximum:g}"
    return " and ".join(part for part in (low, high) if part)


def check_number(value: object, minimum: float | None = None, maximum: float | None = None, *,
                 integer: bool = False, above: bool = False, unit: str = "") -> int | float:
    """`value` as an int (`integer`) or a float if it is a real number (not a bool, not a string; numpy's
    numbers are), finite, and from `minimum` (exclusive when `above`) to `maximum`; else a LimitError."""
    kind = "a whole number" if integer else "a number"
    kind += f" of {unit}" if unit else ""
    wanted = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, wanted):
        raise LimitError(f"expected {kind}, got {type(value).__name__} {_shown(value)}")
    if not integer and not math.isfinite(value):
        raise LimitError(f"expected a finite {kind[2:]}, got {_shown(value)}")
    low_ok = minimum is None or (value > minimum if above else value >= minimum)
    if not low_ok or (maximum is not None and value > maximum):
        raise LimitError(f"must be {_range(minimum, maximum, above)}, got {_shown(value)}")
    return int(value) if integer else float(value)


def check_seconds(value: object) -> float:
    """A time limit: a finite number of seconds above 0 and at most MAX_SECONDS."""
    return check_number(value, 0.0, MAX_SECONDS, above=True, unit="seconds")


def check_count(value: object, minimum: int = 0, maximum: int | None = None) -> int:
    """A whole number from `minimum` to `maximum`."""
    return check_number(value, minimum, maximum, integer=True)


def check_flag(value: object) -> bool:
    """A yes/no argument: True or False (numpy's bool too), not any value Python reads as true."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise LimitError(f"expected True or False, got {type(value).__name__} {_shown(value)}")
