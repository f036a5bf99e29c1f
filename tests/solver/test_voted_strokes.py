"""H's strokes voted by set A (`solver.reading.form.voted_strokes`): H read from one image may carry a stroke that
image shows unclearly; where most set-A images, read along H, prefer one other stroke for one action, H takes it,
also when that is found only once a query's strokes are judged (`solver.reading.check.check_problem`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from dsl.canonical import same_image
from dsl.syntax import parse_image
from solver.reading.form import voted_strokes

from tests.solver.test_hypotheses import H, ZIGZAG, FixedDecoder, _drawn

TRIANGLE = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.750", "line_triangle_1.000-0.833",
                         "line_normal_1.000-0.667", "arc_normal_0.500_0.625-0.500"]])  # action 3 triangle-stamped


def _read(margin: float, program, doubted: int = 1) -> tuple:
    """A set-A image's stroke reading along H: its worst margin, the program it prefers, and at how many of H's
    five actions it prefers another stroke by more than STROKE_LOGP_SLACK."""
    margins = (margin,) * doubted + (6.0,) * (5 - doubted) if margin < 0 else (margin,) * 5
    return ("poses", SimpleNamespace(margin=margin, program=program, margins=margins))


def test_the_change_half_of_set_a_names_is_voted_for():
    readings = [_read(-9.0, ZIGZAG)] * 3 + [_read(5.0, H)] * 3
    assert same_image(voted_strokes(H, readings), ZIGZAG)


def test_no_vote_where_fewer_than_half_name_one_change_or_the_doubt_is_within_the_slack():
    split = [_read(-9.0, ZIGZAG)] * 2 + [_read(-9.0, TRIANGLE)] * 2 + [_read(5.0, H)] * 2
    assert voted_strokes(H, split) is None
    assert voted_strokes(H, [_read(-1.5, ZIGZAG)] * 6) is None  # preferred by less than STROKE_LOGP_SLACK
    assert voted_strokes(H, []) is None


def test_an_image_doubting_several_of_h_s_strokes_names_no_change_when_it_must_be_the_one_doubt():
    readings = [_read(-9.0, ZIGZAG)] * 3 + [_read(-9.0, ZIGZAG, doubted=3)] * 3  # H's geometry read wrong in three
    assert same_image(voted_strokes(H, readings), ZIGZAG)
    assert same_image(voted_strokes(H, readings, alone=True), ZIGZAG)  # three of six name it alone
    assert voted_strokes(H, readings[1:], alone=True) is None  # two of five


def test_h_read_with_a_stroke_set_a_does_not_show_takes_set_a_s_and_the_queries_are_checked_against_it():
    rng = np.random.default_rng(5)
    images = [_drawn(p, rng) for p in [ZIGZAG] * 6 + [H, H] + [ZIGZAG, H]]
    with FixedDecoder(H) as perception:  # every image read with action 3 plain: set A draws it zigzag
        results = perception.perceive(images, positives=6, negatives=2)
    assert all(same_image(r.program, ZIGZAG) for r in results[:6])
    assert results[8].evidence["verdict"] == "hypothesis" and same_image(results[8].program, ZIGZAG)
    assert results[9].evidence["verdict"] == "stroke" and same_image(results[9].program, H)
