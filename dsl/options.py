"""argparse types for the command line's numbers and paths: negative, NaN, infinite and out-of-range
values are usage errors (exit code 2) naming the option, before any work starts."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_SECONDS = 86_400.0  # a time limit over a day is a typo
MAX_SEED = 2**32 - 1  # numpy's seeds


def count(minimum: int = 0, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum]."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def seconds(text: str) -> float:
    """An argparse type: a finite positive number of seconds, at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or not 0.0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most {MAX_SECONDS:.0f}, "
                                         f"got {text!r}")
    return value


def positive_number(text: str) -> float:
    """An argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


seed = count(0, MAX_SEED)
workers = count(1, 64)


def path_text(text: str) -> str:
    """An argparse type: a non-empty path."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


def fraction(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text!r}")
    return value
