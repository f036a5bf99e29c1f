"""Images that cannot be drawings are left out at the input boundary (`solver.reading.evidence`); the API checks
what it is given."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.syntax import parse_image
from dsl.types import Action, ImageProgram, Shape
from solver.solving.api import ProblemInput, SolverError, solve_problem
from solver.reading.evidence import EvidenceError, unreadable_reason

LINE = parse_image([["line_normal_1.000-0.500"]])
ARC = parse_image([["arc_normal_0.500_0.625-0.500"]])


def drawing() -> np.ndarray:
    image = np.full((64, 64), 255, np.uint8)
    image[32, 8:56] = 0
    return image


def reads_a_line(images, **_):
    return [LINE] * len(images)


@pytest.mark.parametrize("array, reason", [
    (np.full((64, 64), 255, np.uint8), "blank"), (np.zeros((64, 64), np.uint8), "not a line drawing"),
    ((np.random.default_rng(0).random((64, 64)) * 255).astype(np.uint8), "not a line drawing"),
    (np.where(np.random.default_rng(1).random((256, 256)) < 0.02, 0, 255).astype(np.uint8), "isolated specks"),
    (np.full(64, 255, np.uint8), "not a greyscale image"), (np.full((8, 8), np.nan), "NaN"),
    (np.zeros((0, 5)), "no pixels"), (np.array([["a"]]), "not an image"),
])
def test_unreadable_images_are_named_with_the_reason(array, reason):
    assert reason in unreadable_reason(array)


def test_a_drawing_is_readable():
    assert unreadable_reason(drawing()) is None


def test_one_unreadable_image_is_left_out_and_lowers_the_confidence():
    blank = np.full((64, 64), 255, np.uint8)
    given = ProblemInput([blank] + [LINE] * 5, [ARC] * 6, [drawing(), ARC])
    solution = solve_problem(given, perception=reads_a_line)
    assert solution.labels == (True, False)
    assert solution.confidence[0] == pytest.approx(11 / 12)
    assert any("set A image 0: blank image" in w for w in solution.warnings)


def test_an_unreadable_query_is_b_at_confidence_0():
    given = ProblemInput([LINE] * 6, [ARC] * 6, [np.full((64, 64), 255, np.uint8), LINE])
    solution = solve_problem(given, perception=reads_a_line)
    assert solution.labels == (False, True) and solution.confidence[0] == 0.0


def test_a_problem_of_noise_says_so():
    noise = (np.random.default_rng(0).random((64, 64)) * 255).astype(np.uint8)
    with pytest.raises(EvidenceError, match="set A: only 0 of 6 context images could be read"):
        solve_problem(ProblemInput([noise] * 6, [noise] * 6, [noise, noise]), perception=reads_a_line)


@pytest.mark.parametrize("sides", [(8, 8), (100, 100), (0, 0), (6, 6), (7, 6)])
def test_pairs_need_exactly_seven_images_a_side(sides):
    with pytest.raises(SolverError, match="expected 7 positive and 7 negative images"):
        solve_problem(([LINE] * sides[0], [ARC] * sides[1]))


@pytest.mark.parametrize("given, match", [
    (ProblemInput([], [ARC] * 6), "set A: no images"), (ProblemInput("abcdef", [ARC] * 6), "expected a sequence"),
    (ProblemInput([LINE] * 100, [ARC] * 6), "over the limit"),
    (ProblemInput([ImageProgram((Shape((Action.line(1.0),) * 100),))] * 6, [ARC] * 6), "100 actions"),
])
def test_odd_inputs_are_refused(given, match):
    with pytest.raises(SolverError, match=match):
        solve_problem(given)


SHAPES = [["line_normal_1.000-0.500"], ["line_zigzag_1.000-0.833", "arc_normal_0.500_0.625-0.500"]]


@settings(max_examples=30, deadline=None)
@given(st.recursive(st.none() | st.integers() | st.text("lineacrz_.0123456789-", max_size=30) | st.sampled_from(SHAPES[0]),
                    lambda inner: st.lists(inner, max_size=4), max_leaves=20),
       st.integers(0, 6))
def test_a_fuzzed_program_in_a_problem_is_a_clear_error_or_a_solution(value, index):
    positives = [[SHAPES[0]]] * 7
    negatives = [[SHAPES[1]]] * 7
    positives = positives[:index] + [value] + positives[index + 1:]
    try:
        solution = solve_problem((positives, negatives), time_limit=5.0)
    except SolverError as error:
        assert str(error).startswith("queries image 0" if index == 6 else f"set A image {index}")
        return
    assert len(solution.labels) == 2


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0005, 0.05))
def test_the_speck_share_is_the_share_of_ink_pixels_with_no_inked_neighbour(seed, density):
    from scipy import ndimage

    from solver.reading.evidence import _isolated_share

    rng = np.random.default_rng(seed)
    ink = rng.random((64, 80)) < density
    ink[rng.integers(64), rng.integers(80)] = True
    neighbours = ndimage.convolve(ink.astype(np.uint8), np.ones((3, 3), np.uint8), mode="constant") - ink
    assert _isolated_share(ink) == pytest.approx(float((ink & (neighbours == 0)).sum()) / float(ink.sum()))
