"""argparse types for the command line's numbers and paths: negative, NaN, infinite, non-ASCII and
out-of-range values are usage errors (exit code 2) naming the option, before any work starts. The checks
themselves are `dsl.limits`'s, the same the API's arguments go through."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from dsl.limits import (MAX_SECONDS, MAX_SEED, LimitError, check_count, check_number,  # noqa: F401 (re-exported)
                        check_seconds, number_from_text)


def _argparse_type(name: str, read: Callable[[str], object]) -> Callable[[str], object]:
    """`read` as an argparse type: a LimitError becomes argparse's usage error."""
    def parse(text: str):
        try:
            return read(text)
        except LimitError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = name
    return parse


def count(minimum: int = 0, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum]."""
    return _argparse_type("count", lambda text: check_count(number_from_text(text, integer=True), minimum, maximum))


seconds = _argparse_type("seconds", lambda text: check_seconds(number_from_text(text)))
seconds.__doc__ = "An argparse type: a finite positive number of seconds, at most a day."
positive_number = _argparse_type("positive_number", lambda text: check_number(number_from_text(text), 0.0, above=True))
positive_number.__doc__ = "An argparse type: a finite number above 0."
non_negative = _argparse_type("non_negative", lambda text: check_number(number_from_text(text), 0.0))
non_negative.__doc__ = "An argparse type: a finite number of at least 0."
fraction = _argparse_type("fraction", lambda text: check_number(number_from_text(text), 0.0, 1.0))
fraction.__doc__ = "An argparse type: a number from 0 to 1."
seed = count(0, MAX_SEED)
workers = count(1, 64)
whole_number = _argparse_type("whole_number", lambda text: number_from_text(text, integer=True))
whole_number.__doc__ = "An argparse type: a whole number in ASCII digits (what the command line reads for `int`)."
finite_number = _argparse_type("finite_number", lambda text: check_number(number_from_text(text)))
finite_number.__doc__ = "An argparse type: a finite number in ASCII digits (what the command line reads for `float`)."


def path_text(text: str) -> str:
    """An argparse type: a non-empty path."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text
