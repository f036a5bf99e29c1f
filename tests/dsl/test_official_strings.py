"""Every official action string still parses under the strict reading of numbers (issue 54): ASCII digits, at most
MAX_ACTION_NUMBER_TEXT characters a number; official_dev's 8,851 and official_val's, each read the same as
`float()` reads it."""

from __future__ import annotations

import json
import re

import pytest

from dsl.syntax import format_action, parse_action

from tests.official import OFFICIAL_DEV

OFFICIAL_VAL = OFFICIAL_DEV.parent / "official_val"


def action_strings(root) -> list[str]:
    strings = []
    for kind in ("ff", "bd", "hd"):
        path = root / kind / f"{kind}_action_programs.json"
        if path.exists():
            for positives, negatives in json.loads(path.read_text()).values():
                strings += [action for image in positives + negatives for shape in image for action in shape]
    return strings


@pytest.mark.parametrize("root, at_least", [(OFFICIAL_DEV, 8851), (OFFICIAL_VAL, 60_000)], ids=["dev", "val"])
def test_every_official_action_string_parses_to_its_numbers(root, at_least):
    strings = action_strings(root)
    if not strings:
        pytest.skip(f"official data not present at {root.name} (BONGARD_OFFICIAL_DEV)")
    assert len(strings) >= at_least
    for text in sorted(set(strings)):
        action = parse_action(text)
        assert format_action(action) == text
        numbers = [float(n) for n in re.findall(r"[0-9.]+", text)]
        assert all(0.0 <= n <= 1.0 for n in numbers)
