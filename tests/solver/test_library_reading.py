"""Problem perception when set A looks like library shapes: which strategy reads it, and which strokes are chosen."""


import numpy as np
import pytest

from dsl.canonical import same_image
from dsl.library import load_library
from dsl.syntax import parse_image
from search.refine import Proposal
from solver.reading.perception import PixelPerception

from tests.solver.test_hypotheses import CIRCLE, CIRCLE_NEAR_MISS, TURNED, ZIGZAG, H, FixedDecoder, _drawn


def _unsure_classifier(monkeypatch):
    import solver.reading.library
    import solver.reading.workers

    for module in (solver.reading.library, solver.reading.workers):  # the classifier is sure of no image
        monkeypatch.setattr(module, "TRACE_BELOW_CONFIDENCE", 1.01)


OBLONG = parse_image([["line_normal_1.000-0.500", "line_normal_0.450-0.750", "line_normal_1.000-0.750",
                        "line_normal_0.450-0.750"]])  # a rectangle no free-form program draws


def test_an_unsure_set_a_of_a_library_shape_no_free_form_program_draws_is_not_decoded(monkeypatch):
    # the basic generator draws a shape that takes no stamps with normal strokes in every image (spec 3.3): its
    # strokes do not vary, as a free-form program's do not, but no free-form program draws that shape
    _unsure_classifier(monkeypatch)
    rng = np.random.default_rng(5)
    images = [_drawn(OBLONG, rng) for _ in range(14)]
    with FixedDecoder(OBLONG) as perception:
        results = perception.perceive(images, positives=6, negatives=6)
        assert perception.decoded == 0
    assert [(r.evidence or {}).get("verdict") for r in results] == ["library"] * 14


class _EveryName:
    """A set that holds every library shape's name."""

    def __contains__(self, name) -> bool:
        return True


def test_a_problem_whose_set_a_reads_as_no_free_form_program_is_read_as_library_shapes(monkeypatch):
    import solver.reading.library
    import solver.reading.traced

    _unsure_classifier(monkeypatch)
    monkeypatch.setattr(solver.reading.traced, "TRACE", False)  # and the full readings stay as searched (no free-form trace)
    # as if a free-form program could draw the rectangle: set A, its strokes alike, is decoded first
    monkeypatch.setattr(solver.reading.library, "drawable_names", lambda: _EveryName())
    oblong = OBLONG
    off_grid = parse_image([["line_normal_0.550-0.500", "line_normal_0.400-0.700"]])  # no value on the free-form grid
    rng = np.random.default_rng(5)
    images = [_drawn(oblong, rng) for _ in range(14)]
    with FixedDecoder(off_grid) as perception:
        results = perception.perceive(images, positives=6, negatives=6)
        assert perception.decoded == 2  # only the free-form attempt's two set-A images
    # the decoder proposed no free-form program for the two set-A images it read, none near the grid: they are not
    # read in full to form one (`free_form_proposed`), every image is read as library shapes
    assert sum((r.evidence or {}).get("verdict") == "library" for r in results) == 14
    assert all(r.program is not None for r in results)


def _square(strokes: list[str]):
    turns = ["0.500", "0.750", "0.750", "0.750"]
    return parse_image([[f"line_{stroke}_1.000-{turn}" for stroke, turn in zip(strokes, turns)]])


def _stamped_square_problem() -> tuple:
    """A free-form problem whose program draws a square: (program, its stroke near miss, set A, set B and the two
    queries drawn)."""
    program = _square(["normal", "circle", "circle", "triangle"])
    near_miss = _square(["normal", "circle", "zigzag", "triangle"])
    rng = np.random.default_rng(11)
    return program, near_miss, [_drawn(p, rng) for p in [program] * 6 + [near_miss] * 2 + [program, near_miss]]


def test_a_set_a_of_library_shapes_sharing_one_stamped_program_is_read_as_free_form():
    # a free-form program may draw a library shape the classifier is sure of (here a square): set A drawing it
    # with the same strokes in every image is the free-form generator's mark, and the problem is checked against it
    program, near_miss, images = _stamped_square_problem()
    with PixelPerception() as perception:
        results = perception.perceive(images, positives=6, negatives=2)
        assert "decode" not in perception.stage_seconds  # the classifier is sure of set A: nothing was decoded
    assert [r.evidence["verdict"] for r in results] == ["hypothesis"] * 6 + ["stroke"] * 2 + ["hypothesis", "stroke"]
    assert same_image(results[8].program, program) and same_image(results[9].program, near_miss)


def test_a_set_a_of_one_library_shape_drawn_with_strokes_at_random_stays_library_shapes():
    rng = np.random.default_rng(12)
    strokes = ["normal", "zigzag", "circle", "square", "triangle"]
    programs = [_square(list(rng.choice(strokes, 4))) for _ in range(10)]  # the basic generator's strokes
    images = [_drawn(p, rng) for p in programs]
    with PixelPerception() as perception:
        rounds, reads = [], perception.library_reads
        perception.library_reads = lambda images, *args: rounds.append(len(images)) or reads(images, *args)
        results = perception.perceive(images, positives=6, negatives=2)
    assert all(r.evidence["verdict"] == "library" for r in results)
    assert rounds == [10]  # every image read in one round of jobs
    # no rule of a library problem asks for the strokes of the images outside set A: they are left normal
    assert all(action.stroke.value == "normal" for r in results[6:] for shape in r.program.shapes for action in shape.actions)
    assert any(action.stroke.value != "normal" for r in results[:6] for shape in r.program.shapes for action in shape.actions)


def _random_stroke_rectangles() -> list:
    """Ten images of a rectangle (no free-form program draws one), each action's stroke at random per image, as the
    basic generator draws a shape that takes stamps."""
    rng = np.random.default_rng(12)
    strokes = ["normal", "zigzag", "circle", "square", "triangle"]
    sides = ["1.000-0.500", "0.450-0.750", "1.000-0.750", "0.450-0.750"]
    rectangles = [parse_image([[f"line_{stroke}_{side}" for stroke, side in zip(rng.choice(strokes, 4), sides)]])
                  for _ in range(10)]
    return [_drawn(rectangle, rng) for rectangle in rectangles]


def _library_rounds(images: list) -> tuple[list, list]:
    """(each round of library reads: images, stroke types chosen or not per image; the readings)"""
    with PixelPerception() as perception:
        rounds, reads = [], perception.library_reads
        perception.library_reads = lambda images, *args: rounds.append((len(images), args[2])) or reads(images, *args)
        results = perception.perceive(images, positives=6, negatives=2)
        assert "decode" not in perception.stage_seconds
    assert all(r.evidence["verdict"] == "library" for r in results)
    return rounds, results


def test_set_a_strokes_are_not_chosen_when_no_shape_the_classifier_offers_is_drawn_by_a_free_form_program():
    # a rectangle (no free-form program draws one) with each action's stroke at random per image, as the basic
    # generator draws it: its stroke types cannot show a free-form program, and no rule of a library problem reads
    # them, so no image's are chosen (every action normal), in one round of library reads
    rounds, results = _library_rounds(_random_stroke_rectangles())
    assert rounds == [(10, [False] * 10)]
    assert all(action.stroke.value == "normal" for r in results for shape in r.program.shapes for action in shape.actions)


def test_set_a_strokes_are_chosen_when_enough_of_set_a_may_draw_a_free_form_program(monkeypatch):
    import solver.reading.library

    offered = iter([True, True, True] + [False] * 3)  # three set-A images offered a shape a free-form program draws
    monkeypatch.setattr(solver.reading.library, "free_form_offered", lambda found: next(offered))
    assert _library_rounds(_random_stroke_rectangles())[0] == [(10, [False] * 10)]  # under MIN_A_EXPLAINED
    offered = iter([True] * 4 + [False] * 2)
    rounds, results = _library_rounds(_random_stroke_rectangles())
    assert rounds == [(10, [True] * 6 + [False] * 4)]
    assert any(action.stroke.value != "normal" for r in results[:6] for shape in r.program.shapes for action in shape.actions)


def test_the_classifier_offers_a_free_form_shape_when_one_of_its_first_names_is_drawable():
    from solver.reading.library import drawable_names, free_form_offered

    drawable = sorted(drawable_names())[0]
    other = next(name for name in sorted(load_library()) if name not in drawable_names())
    found = {"whole": [((other,), 0.9), ((other,), 0.05), ((drawable,), 0.01)], "parts": [], "part_images": []}
    assert not free_form_offered(found)  # the drawable shape is third: not offered (OFFERED_NAMES = 2)
    found["whole"][1] = ((drawable,), 0.05)
    assert free_form_offered(found)
    assert free_form_offered({"whole": [((other,), 0.9)], "parts": [[((other,), 0.9)], [((drawable,), 0.6)]],
                               "part_images": [None, None]})  # an ink part's names count too


def test_an_unsure_set_a_of_one_library_shape_with_strokes_at_random_is_not_decoded(monkeypatch):
    # the basic generator: one library shape in every set-A image (a rectangle, which no free-form program draws),
    # each action's stroke at random per image
    _unsure_classifier(monkeypatch)
    images = _random_stroke_rectangles()
    with PixelPerception() as perception:
        results = perception.perceive(images, positives=6, negatives=2)
        assert "decode" not in perception.stage_seconds
    assert all(r.evidence["verdict"] == "library" for r in results)


def test_an_unsure_set_a_of_one_library_shape_with_the_same_strokes_is_decoded(monkeypatch):
    # the free-form generator: set A's one program, here a square, with the same strokes in every image
    _unsure_classifier(monkeypatch)
    _, _, images = _stamped_square_problem()
    with PixelPerception() as perception:
        results = perception.perceive(images, positives=6, negatives=2)
        assert "decode" in perception.stage_seconds
    assert [r.evidence["verdict"] for r in results] == ["hypothesis"] * 6 + ["stroke"] * 2 + ["hypothesis", "stroke"]


def test_the_library_key_names_each_ink_part_or_the_whole_image():
    from solver.reading.library import library_key

    whole = [(("square", "square_alt"), 0.6), (("rectangle",), 0.3)]
    assert library_key({"whole": whole, "parts": [], "part_images": []}) == ("square",)
    parts = [[(("triangle",), 0.7)], [(("circle",), 0.8)]]
    assert library_key({"whole": whole, "parts": parts, "part_images": [None, None]}) == ("circle", "triangle")


def test_a_set_a_of_one_library_shape_drawn_normal_gets_the_other_images_strokes_read():
    # a free-form program drawing a square with normal strokes: set B differs from it in a stroke, which a
    # second round of library reads chooses (`strokes_asked`)
    rng = np.random.default_rng(14)
    square, zigzag = _square(["normal"] * 4), _square(["normal", "zigzag", "normal", "normal"])
    images = [_drawn(p, rng) for p in [square] * 6 + [zigzag] * 4]
    with PixelPerception() as perception:
        rounds, reads = [], perception.library_reads
        perception.library_reads = lambda images, *args: rounds.append(len(images)) or reads(images, *args)
        results = perception.perceive(images, positives=6, negatives=2)
    assert rounds == [10, 4]
    assert all(same_image(r.program, square) for r in results[:6])
    assert sum(same_image(r.program, zigzag) for r in results[6:]) >= 3


def test_a_set_a_of_stamped_circles_the_classifier_is_sure_of_is_decoded_as_free_form():
    # the classifier reads a circle of four stamped quarter arcs as the library's one-arc circle, whose reading
    # cannot hold four strokes: set A is decoded, and its strokes all read as the decoded program's
    rng = np.random.default_rng(13)
    images = [_drawn(p, rng) for p in [CIRCLE] * 6 + [CIRCLE_NEAR_MISS] * 2 + [CIRCLE, CIRCLE_NEAR_MISS]]
    with PixelPerception() as perception:
        results = perception.perceive(images, positives=6, negatives=2)
    assert [r.evidence["verdict"] for r in results] == ["hypothesis"] * 6 + ["stroke"] * 2 + ["hypothesis", "stroke"]
    assert same_image(results[8].program, CIRCLE)


OFF_GRID = parse_image([["line_normal_0.550-0.500", "line_normal_0.400-0.700"]])  # no value on the free-form grid


class _FirstTwoMisread(FixedDecoder):
    """The decoder reads the first two images it is given as OFF_GRID (two shapes touching, say), the others right."""

    def proposals(self, images):
        found = [(Proposal(OFF_GRID if self.decoded + k < 2 else self.reading, 0.0),) for k in range(len(images))]
        self.decoded += len(images)
        return found


@pytest.mark.parametrize("decoder", ["reads every image right", "misreads the first two"])
def test_a_problem_read_as_library_shapes_is_perceived_again_as_free_form_from_all_of_set_a(decoder):
    # `perceive_free_form`: asked when the library readings' rule misclassifies context images; every set-A image
    # decoded (the classifier may have been sure of them, or the images decoded first the hard ones: then the other
    # four are decoded all the same, and H formed from them)
    rng = np.random.default_rng(3)
    images = [_drawn(p, rng) for p in [H] * 6 + [TURNED, ZIGZAG] + [H, TURNED]]
    with (FixedDecoder if decoder == "reads every image right" else _FirstTwoMisread)(H) as perception:
        rounds, decode_each = [], perception.decode_each
        perception.decode_each = lambda images, beam=None: rounds.append(len(images)) or decode_each(images, beam)
        results = perception.perceive_free_form(images, positives=6, negatives=2)
        assert perception.decoded == 6
        assert rounds == [6]  # the classifier is not sure of set A: all six decoded in one round
        assert {"decode", "check"} <= set(perception.stage_seconds)
    assert [r.evidence["verdict"] for r in results] == ["hypothesis"] * 6 + ["neighbour", "stroke", "hypothesis", "neighbour"]
    assert same_image(results[9].program, TURNED)


def test_a_problem_whose_set_a_proposes_no_free_form_program_is_not_perceived_again():
    rng = np.random.default_rng(5)
    images = [_drawn(OFF_GRID, rng) for _ in range(10)]
    with FixedDecoder(OFF_GRID) as perception:
        assert perception.perceive_free_form(images, positives=6, negatives=2) is None
        assert perception.decoded == 6  # judged on all of set A, then nothing more
    with FixedDecoder(H, per_problem=False) as perception:  # the ablation reads every image on its own
        assert perception.perceive_free_form(images, positives=6, negatives=2) is None
        assert perception.decoded == 0


def test_a_library_problem_the_classifier_is_sure_of_is_not_decoded_further_when_its_first_images_propose_nothing():
    from solver.reading.library_check import library_program

    shapes = library_program(("closed_circle",))  # a library shape the classifier is sure of
    rng = np.random.default_rng(7)
    images = [_drawn(shapes, rng) for _ in range(10)]
    with FixedDecoder(OFF_GRID) as perception:
        rounds, decode_each = [], perception.decode_each
        perception.decode_each = lambda images, beam=None: rounds.append(len(images)) or decode_each(images, beam)
        assert perception.perceive_free_form(images, positives=6, negatives=2) is None
        assert perception.decoded == 2  # the classifier is sure of set A: the other four are not decoded
        assert rounds == [2]
