import numpy as np
import pytest
import torch

from dsl.library import load_library
from dsl.raster import render_program
from dsl.types import Action, ImageProgram, Pose, Shape, StrokeType
from perception.shapes import (
    DEFAULT_CHECKPOINT, ShapeClassifier, ShapeConfig, group_of, ink_parts, library_guesses, load_classifier, shape_groups,
    soft_targets,
)
from solver.reading.plans import library_plan, library_proposals


def test_every_library_shape_is_in_exactly_one_group():
    names = [n for group in shape_groups() for n in group]
    assert sorted(names) == sorted(load_library())
    assert len(shape_groups()) < len(load_library())  # geometric twins share a class
    assert all(shape_groups()[group_of()[n]] for n in names)


def test_soft_targets_split_a_pair_evenly():
    target = soft_targets(torch.tensor([[3, -1], [1, 4]]), 6)
    assert torch.allclose(target.sum(1), torch.ones(2))
    assert target[0, 3] == 1.0 and target[1, 1] == 0.5 and target[1, 4] == 0.5


def test_classifier_outputs_one_logit_per_group():
    model = ShapeClassifier(ShapeConfig(channels=(8, 8, 8, 8, 8), hidden=16), classes=7)
    assert model(torch.zeros(3, 1, 96, 96)).shape == (3, 7)


def _shape(name: str):
    return load_library()[name].shape


def test_two_separate_shapes_are_two_parts_and_one_shape_is_none():
    square, circle = _shape("square"), _shape("closed_circle")
    two = render_program(ImageProgram((square, circle)), [Pose(-250, 100, 0, 150), Pose(120, -100, 0, 150)])
    parts = ink_parts(two)
    assert len(parts) == 2
    ink = (255 - two) > 48
    covered = sum(((255 - p) > 48) for p in parts)
    assert covered[ink].min() == 1  # every inked pixel lies in exactly one part
    one = render_program(ImageProgram((square,)), [Pose(-40, 20, 15, 200)])
    assert ink_parts(one) == []


def test_library_proposals_make_singles_and_pairs_when_two_shapes_are_read():
    square, circle, triangle = ("square",), ("closed_circle",), ("equilateral_traingle",)
    whole = [(square, 0.6), (circle, 0.3), (triangle, 0.1)]
    singles = library_proposals(whole)
    assert [p.program.shapes for p in singles] == [(_shape(n),) for n in ("square", "closed_circle", "equilateral_traingle")]
    assert [p.logp for p in singles] == sorted((p.logp for p in singles), reverse=True)
    with_pairs = library_proposals(whole, whole)
    assert sum(len(p.program.shapes) == 2 for p in with_pairs) == 3


def test_an_image_of_two_parts_is_planned_part_by_part():
    square, circle = ("square",), ("closed_circle",)
    part_images = [np.zeros((4, 4), np.uint8), np.ones((4, 4), np.uint8)]
    guesses = {"whole": [(square, 0.5)], "parts": [[(square, 0.9)], [(circle, 0.8)]], "part_images": part_images}
    plan = library_plan(guesses, shapes_read=1)
    assert [image is given for (image, _), given in zip(plan.parts, part_images)] == [True, True]
    assert [props[0].program.shapes for _, props in plan.parts] == [(_shape("square"),), (_shape("closed_circle"),)]
    whole_only = library_plan(dict(guesses, parts=[], part_images=[]), shapes_read=2)
    assert whole_only.parts == () and len(whole_only.whole) == 1  # one group: no pair to make


def test_the_classifier_confidence_is_the_plans():
    from solver.reading.plans import classifier_confidence

    square, circle = ("square",), ("closed_circle",)
    guesses = {"whole": [(square, 0.5)], "parts": [[(square, 0.9)], [(circle, 0.8)]],
               "part_images": [np.zeros((4, 4), np.uint8)] * 2}
    for found in (guesses, dict(guesses, parts=[], part_images=[]), dict(guesses, whole=[(square, 0.95)])):
        assert classifier_confidence(found) == library_plan(found, shapes_read=1).confidence
    assert classifier_confidence(guesses) == 0.8  # the less sure part
    assert classifier_confidence(dict(guesses, parts=[], part_images=[])) == 0.5


def test_the_plan_prices_every_library_shape_by_the_classifier():
    from math import log

    from solver.settings import LIBRARY_LOGP_SCALE
    from solver.reading.plans import scaled_logp

    square, circle = ("square",), ("closed_circle",)
    guesses = {"whole": [(square, 0.5), (circle, 0.25)], "parts": [[(square, 0.9)], [(circle, 0.8)]],
               "part_images": [np.zeros((4, 4), np.uint8)] * 2}
    prior = library_plan(dict(guesses, parts=[], part_images=[]), shapes_read=1).whole_prior
    assert prior(_shape("square")) == pytest.approx(LIBRARY_LOGP_SCALE * log(0.5))
    zigzag_circle = _shape("closed_circle").with_strokes(StrokeType.ZIGZAG)
    assert prior(zigzag_circle) == pytest.approx(LIBRARY_LOGP_SCALE * log(0.25))
    assert prior(_shape("regular_hexagon")) == scaled_logp(0.0)  # not guessed: the floor
    assert prior(Shape((Action.line(1.0), Action.line(1.0, 30.0)))) is None  # not a library shape
    parts = library_plan(guesses, shapes_read=1).part_priors
    assert [p(_shape("square")) for p in parts] == pytest.approx([LIBRARY_LOGP_SCALE * log(0.9), scaled_logp(0.0)])


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped shape classifier")
def test_the_shipped_classifier_names_plain_library_shapes():
    model = load_classifier()
    rng = np.random.default_rng(3)
    hits = 0
    names = ["square", "closed_circle", "equilateral_traingle", "regular_hexagon", "closed_semi_circle"]
    for name in names:
        image = render_program(ImageProgram((_shape(name),)), [Pose(rng.uniform(-60, 60), 0, rng.uniform(0, 360), 220)])
        top = [group for group, _ in library_guesses(model, image)["whole"]]
        hits += any(name in group for group in top)
    assert hits >= 4


def test_train_shapes_writes_a_checkpoint_that_loads(tmp_path):
    from solver.app.cli import main

    out = tmp_path / "shapes.pt"
    assert main(["train-shapes", "--out", str(out), "--images", "80", "--epochs", "1", "--batch", "16",
                 "--workers", "1", "--threads", "1"]) == 0
    model = load_classifier(out)
    assert model.classes == len(shape_groups()) and model.groups == shape_groups()


def test_guesses_in_a_batch_are_the_guesses_of_each_image():
    from perception.shapes import library_guesses_many

    square, circle = _shape("square"), _shape("closed_circle")
    images = [render_program(ImageProgram((square, circle)), [Pose(-250, 100, 0, 150), Pose(120, -100, 0, 150)]),
              render_program(ImageProgram((circle,)), [Pose(-30, 10, 40, 180)]),
              render_program(ImageProgram((square,)), [Pose(300, 300, 0, 60)])]  # near the frame's corner
    model = load_classifier()
    for one, batched in zip([library_guesses(model, image) for image in images], library_guesses_many(model, images)):
        assert [names for names, _ in one["whole"]] == [names for names, _ in batched["whole"]]
        assert [p for _, p in one["whole"]] == pytest.approx([p for _, p in batched["whole"]], abs=1e-5)
        assert len(one["parts"]) == len(batched["parts"])
        assert all(np.array_equal(a, b) for a, b in zip(one["part_images"], batched["part_images"]))
