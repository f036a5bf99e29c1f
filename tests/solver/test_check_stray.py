"""A query taken as H that holds ink H does not draw, beyond what set A shows, is read in full
(`solver.reading.check.stray_beyond`)."""

from solver.reading.check import stray_beyond
from solver.settings import STRAY_SHARE


def test_a_query_with_more_undrawn_ink_than_set_a_shows_is_read_in_full():
    assert stray_beyond({"verdict": "hypothesis", "stray": 0.06}, 0.0)
    assert not stray_beyond({"verdict": "hypothesis", "stray": 0.06}, 0.06 - STRAY_SHARE / 2)  # set A strays as far


def test_only_a_query_taken_as_h_is_judged_by_its_stray_ink():
    assert not stray_beyond({"verdict": "neighbour", "stray": 0.5}, 0.0)
    assert not stray_beyond({"verdict": "hypothesis"}, 0.0)  # evidence made without the stray share
