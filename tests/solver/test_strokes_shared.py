"""Set A's strokes tell a free-form problem from a basic one: the free-form generator draws set A's one program with the
same strokes in every image, the basic generator each image's strokes afresh. A second look's H must have set A's strokes
(`solver.reading.pipeline.strokes_shared`): H drawn with stamps is read from one image; where most of set A, read along
H, prefers other strokes, set A is no one free-form program and the second look gives no reading. Set A's library
readings sharing a shape's stamps ask for a second look (`solver.solving.folder._shared_stamps`)."""

from __future__ import annotations

from types import SimpleNamespace

from dsl.canonical import same_image
from dsl.syntax import parse_image
from solver.reading import form
from solver.reading.form import Formed
from solver.reading.pipeline import strokes_shared
from solver.solving.folder import _shared_stamps

from tests.solver.test_hypotheses import H, ZIGZAG
from tests.solver.test_voted_strokes import TRIANGLE, _read


def _shared(monkeypatch, hypothesis, readings):
    monkeypatch.setattr(form, "set_a_readings", lambda perception, images, hypothesis, fitted: readings)
    checks = [SimpleNamespace(placements=()) for _ in readings]
    return strokes_shared(SimpleNamespace(checkpoint=None), [None] * len(readings),
                          Formed(hypothesis, list(range(len(readings))), checks))


def test_set_a_reading_h_s_strokes_keeps_h(monkeypatch):
    readings = [_read(5.0, ZIGZAG)] * 4 + [_read(-9.0, TRIANGLE, doubted=2)] * 2  # two images in doubt: not most
    formed = _shared(monkeypatch, ZIGZAG, readings)
    assert formed is not None and same_image(formed.hypothesis, ZIGZAG) and formed.strokes_read == tuple(readings)


def test_most_of_set_a_preferring_other_strokes_at_several_actions_is_no_free_form_program(monkeypatch):
    rejecting = [_read(-20.0, TRIANGLE, doubted=3)] * 2 + [_read(-14.0, H, doubted=2)] * 2
    assert _shared(monkeypatch, ZIGZAG, rejecting + [_read(5.0, ZIGZAG)]) is None  # four of five reject H's strokes
    assert _shared(monkeypatch, ZIGZAG, rejecting[1:] + [_read(5.0, ZIGZAG)] * 3) is not None  # three of six


def _image(*shapes):
    return parse_image([list(shape) for shape in shapes])


SQUARE = ["line_triangle_1.000-0.500", "line_normal_1.000-0.750", "line_square_1.000-0.750", "line_circle_1.000-0.750"]
FROM_ANOTHER_CORNER = SQUARE[2:] + SQUARE[:2]


def test_set_a_sharing_three_stamps_of_a_shape_is_read_as_a_free_form_problem_s():
    arc = ["arc_zigzag_0.500_1.000-0.500"]
    shared = [_image(SQUARE, arc), _image(FROM_ANOTHER_CORNER), _image(arc, SQUARE), _image(SQUARE), None,
              _image(["line_normal_1.000-0.500"] * 4)]
    assert _shared_stamps(shared)  # four of six, the square written from any corner
    assert not _shared_stamps(shared[1:])  # three
    drawn_afresh = [_image(["line_zigzag_1.000-0.500", "line_square_1.000-0.750", "line_normal_1.000-0.750",
                            "line_circle_1.000-0.750"])] * 2 + shared[2:4]
    assert not _shared_stamps(drawn_afresh + [None, None])
    assert not _shared_stamps([_image(arc)] * 6)  # one stamp shared: chance, not a free-form program
