"""Forming H: where the best hypothesis from the images decoded first fits set A poorly, the other set-A images'
readings are asked for and chosen among alike (`solver.reading.form._chosen`, `_more_readings`)."""

from __future__ import annotations

from types import SimpleNamespace

from dsl.canonical import image_key
from dsl.syntax import parse_image
from solver.reading.form import _candidate, _chosen, _more_readings
from solver.reading.jobs import Stages

POOR = [SimpleNamespace(fit=1.5)] * 6  # every set-A image explained, worse than most true programs fit (1.0 px)
GOOD = [SimpleNamespace(fit=0.4)] * 6
ONE_PART = [SimpleNamespace(fit=0.3, parts=1)] * 6  # a two-shape hypothesis's checks on set A whose ink is one part
TWO_PARTS = [SimpleNamespace(fit=0.3, parts=2)] * 6
FAIR = [SimpleNamespace(fit=0.8)] * 6  # every set-A image explained, not so poorly that a completion is tried

SQUARE = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.750", "line_normal_1.000-0.750",
                       "line_circle_1.000-0.750"]])
HOOK = parse_image([["line_normal_1.000-0.500", "arc_square_0.500_0.625-0.500", "line_normal_1.000-0.500"]])
BROKEN_HOOK = parse_image([["line_normal_1.000-0.500", "arc_square_0.500_0.625-0.500"], ["line_normal_1.000-0.500"]])


class CornerFitsNothing:
    """The hook's arc drawn as a corner (`solver.reading.form.corners`), checked on set A: it explains no image."""

    @staticmethod
    def map(function, jobs):
        return [SimpleNamespace(fit=9.0, parts=1) for _ in jobs]


CORNER = CornerFitsNothing()


def test_more_readings_are_asked_for_when_the_best_fits_set_a_poorly_and_the_better_one_wins():
    asked = []

    def more():
        asked.append(True)
        return [(HOOK, 0, GOOD)]

    formed = _chosen(CORNER, [None] * 12, 6, [(SQUARE, 0, POOR)], Stages(), more)
    assert asked == [True] and formed.hypothesis == HOOK


def test_no_more_readings_where_the_best_fits_set_a_well():
    def more():
        raise AssertionError("asked for more readings")

    assert _chosen(CORNER, [None] * 12, 6, [(SQUARE, 0, GOOD)], Stages(), more).hypothesis == SQUARE


def test_more_readings_are_the_undecoded_images_top_readings_not_seen_each_checked_on_set_a():
    decoded_images = []

    class Perception:
        def decode_each(self, images, beam):
            decoded_images.extend(images)
            return [[SimpleNamespace(program=SQUARE if image == "a2" else HOOK)] for image in images]

        def map(self, function, jobs):
            return [SimpleNamespace(fit=0.3 if program == HOOK_CANDIDATE else 0.9) for _, program, _ in jobs]

    images = ["a0", "a1", "a2", "a3", "a4", "a5"]
    seen = {image_key(_candidate(SQUARE)[1])}  # read already from an image decoded first
    HOOK_CANDIDATE = _candidate(HOOK)[1]
    found = _more_readings(Perception(), images, 6, [0, 1], seen, Stages())
    assert decoded_images == ["a2", "a3", "a4", "a5"]  # the set-A images not decoded first
    assert [program for program, _, _ in found] == [HOOK_CANDIDATE]  # the square was a candidate already; the hook
    # read from three images is one candidate
    assert [check.fit for check in found[0][2]] == [0.3] * 6


def test_a_one_shape_reading_wins_over_two_shapes_that_set_a_ink_does_not_bear_out():
    # the hook read as an arc and a separate line fits set A closer (a pose and scale per piece), but every set-A
    # image is one part of ink: the one shape that draws it is H
    checked = [(BROKEN_HOOK, 0, ONE_PART), (HOOK, 0, FAIR)]
    assert _chosen(CORNER, [None] * 12, 6, checked, Stages()).hypothesis == HOOK


def test_two_shapes_lying_apart_in_set_a_still_win_by_their_closer_fit():
    checked = [(BROKEN_HOOK, 0, TWO_PARTS), (HOOK, 0, FAIR)]
    assert _chosen(CORNER, [None] * 12, 6, checked, Stages()).hypothesis == BROKEN_HOOK


def test_more_readings_are_asked_for_when_the_best_is_two_shapes_on_one_part_of_ink():
    asked = []

    def more():
        asked.append(True)
        return [(HOOK, 0, FAIR)]

    formed = _chosen(CORNER, [None] * 12, 6, [(BROKEN_HOOK, 0, ONE_PART)], Stages(), more)
    assert asked == [True] and formed.hypothesis == HOOK
