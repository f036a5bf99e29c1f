"""`solver.reading.verdicts.revealed`: of an image's readings at the poses its shape fits alike, the one where H's
strokes are likeliest in sum is kept unless its worst action is in doubt while another pose, as sure of as many
actions, reads a stroke near miss."""

from __future__ import annotations

from perception.decode import StrokeReading
from solver.reading.verdicts import revealed
from solver.settings import STROKE_LOGP_SLACK


def reading(*margins: float) -> StrokeReading:
    return StrokeReading(min(margins), None, sum(margins), tuple(margins))


def test_a_change_read_in_doubt_at_the_chosen_pose_is_taken_from_the_pose_that_reads_it():
    chosen = reading(12.0, 11.0, 8.0, 11.0, -0.7)  # the changed action walked last, read in doubt
    other = reading(-10.2, 14.9, 11.6, 9.6, 5.5)  # the other way round: read against H
    assert revealed(chosen, [chosen, other]) is other


def test_the_chosen_reading_stays_when_sure_or_already_against_h_or_the_other_pose_is_less_sure():
    sure = reading(12.0, 11.0, 8.0, STROKE_LOGP_SLACK + 0.1)
    against = reading(12.0, -5.0, 8.0, 9.0)
    other = reading(-10.0, 14.0, 11.0, 9.0)
    assert revealed(sure, [sure, other]) is sure
    assert revealed(against, [against, other]) is against
    doubtful = reading(12.0, 11.0, 8.0, 0.5)
    wrong_pose = reading(-10.0, -8.0, 11.0, -6.0)  # a positive query's other pose: H's strokes where others lie
    assert revealed(doubtful, [doubtful, wrong_pose]) is doubtful
    assert revealed(doubtful, [doubtful]) is doubtful
