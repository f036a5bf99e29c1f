import json

import pytest
from hypothesis import given, strategies as st

from dsl.syntax import ActionStringError, format_action, parse_action, parse_image
from dsl.types import ActionKind, StrokeType

from tests.official import OFFICIAL_DEV


def official_action_strings():
    for kind in ("ff", "bd", "hd"):
        path = OFFICIAL_DEV / kind / f"{kind}_action_programs.json"
        if not path.exists():
            continue
        for positives, negatives in json.loads(path.read_text()).values():
            for image in positives + negatives:
                for shape in image:
                    yield from shape


def test_every_official_dev_action_string_round_trips():
    strings = list(official_action_strings())
    if not strings:
        pytest.skip("official dev data not present (BONGARD_OFFICIAL_DEV)")
    assert len(strings) > 8000
    mismatches = [s for s in strings if format_action(parse_action(s)) != s]
    assert mismatches == []


def test_parse_values_follow_the_normalisation_of_spec_1_2():
    line = parse_action("line_zigzag_1.000-0.833")
    assert line.kind is ActionKind.LINE and line.stroke is StrokeType.ZIGZAG
    assert line.length == 1.0 and line.turn == pytest.approx(119.88)
    arc = parse_action("arc_square_0.500_0.625-0.250")
    assert arc.kind is ActionKind.ARC and arc.radius == 0.5
    assert arc.angle == pytest.approx(90.0) and arc.turn == pytest.approx(-90.0)
    assert parse_action("arc_normal_0.500_0.375-0.500").angle == pytest.approx(-90.0)
    assert parse_action("line_normal_0.500-0.000").turn == pytest.approx(-180.0)
    assert parse_action("line_normal_0.500-1.000").turn == pytest.approx(180.0)


@pytest.mark.parametrize(
    "text, fault",
    [
        ("line_wiggly_1.000-0.500", "unknown stroke type 'wiggly'"),
        ("line_normal_1.000", "malformed"),
        ("arc_normal_0.500-0.500", "malformed"),
        ("line_normal_1.500-0.500", r"length 1\.500 out of \[0, 1\]"),
        ("", "malformed"),
    ],
)
def test_bad_strings_are_named_with_their_fault(text, fault):
    with pytest.raises(ActionStringError, match=fault):
        parse_action(text)


def test_image_program_needs_one_or_two_shapes():
    with pytest.raises(ActionStringError):
        parse_image([])
    with pytest.raises(ActionStringError):
        parse_image([["line_normal_1.000-0.500"]] * 3)


unit = st.integers(min_value=0, max_value=1000).map(lambda k: f"{k / 1000:.3f}")
types = st.sampled_from([t.value for t in StrokeType])


@given(types, unit, unit)
def test_line_round_trip(stroke, length, turn):
    text = f"line_{stroke}_{length}-{turn}"
    assert format_action(parse_action(text)) == text


@given(types, unit, unit, unit)
def test_arc_round_trip(stroke, radius, angle, turn):
    text = f"arc_{stroke}_{radius}_{angle}-{turn}"
    assert format_action(parse_action(text)) == text


def test_printing_matches_the_official_percent_3f_on_exact_ties():
    from dsl.types import Action

    assert format_action(Action.arc(0.5, 45.0)) == "arc_normal_0.500_0.562-0.500"
