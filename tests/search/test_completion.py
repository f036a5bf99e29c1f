"""search.completion: a free-form hypothesis completed on set A by one-action edits."""

import numpy as np

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from search.completion import completed
from search.near_miss import centreline_fit
from search.template import make_target

POSES = [Pose(-60.0, 40.0, 0.0, 110.0), Pose(30.0, -50.0, 75.0, 95.0), Pose(-20.0, 10.0, 160.0, 120.0),
         Pose(50.0, 60.0, 230.0, 100.0), Pose(-70.0, -30.0, 300.0, 90.0), Pose(10.0, 0.0, 35.0, 130.0)]


def _set_a(truth, hypothesis):
    """The truth drawn at six poses, and the hypothesis's centreline fitted to each image."""
    targets = [make_target(render_program(truth, [pose])) for pose in POSES]
    found = [centreline_fit(hypothesis, target) for target in targets]
    return targets, [placements for _, placements in found], [fit for fit, _ in found]


def test_a_missed_last_action_is_added():
    truth = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "arc_normal_0.500_0.625-0.500",
                          "line_normal_1.000-0.833"]])
    hypothesis = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "arc_normal_0.500_0.625-0.500"]])
    targets, placements, fits = _set_a(truth, hypothesis)
    found = completed(hypothesis, targets, placements, fits)
    assert same_image(found.program, truth, ignore_strokes=True) and found.added == 1
    assert np.mean(found.fits) < np.mean(fits) - 0.3


def test_a_line_leaving_a_circle_is_added_where_set_a_draws_it():
    # the circle's loop is started where the decoder began it, not at the line: the line goes where the ink says
    circle = ["arc_normal_0.500_0.625-0.500"] * 4
    truth = parse_image([["line_normal_1.000-0.500"] + circle])
    hypothesis = parse_image([circle])
    targets, placements, fits = _set_a(truth, hypothesis)
    found = completed(hypothesis, targets, placements, fits)
    assert same_image(found.program, truth, ignore_strokes=True) and found.added == 1


def test_a_right_hypothesis_is_left_alone():
    truth = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.667", "line_normal_1.000-0.833"],
                         ["arc_normal_0.500_0.625-0.500", "line_normal_1.000-0.500"]])
    poses = [[pose, Pose(pose.x + 150.0, pose.y - 120.0, pose.heading + 40.0, 90.0)] for pose in POSES[:4]]
    targets = [make_target(render_program(truth, two)) for two in poses]
    found = [centreline_fit(truth, target) for target in targets]
    result = completed(truth, targets, [p for _, p in found], [f for f, _ in found])
    assert same_image(result.program, truth) and result.added == 0
