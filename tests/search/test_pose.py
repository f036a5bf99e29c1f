"""Pose fitting recovers a known pose on a rendered image."""

import math

import numpy as np
import pytest

from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from search import pose
from search.template import make_target, template

OPEN_SHAPE = [["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.750", "line_zigzag_1.000-0.667"]]


@pytest.mark.parametrize("true_pose", [Pose(-60.0, 40.0, 35.0, 110.0), Pose(80.0, -120.0, 250.0, 140.0)])
def test_fit_recovers_a_known_pose(true_pose):
    program = parse_image(OPEN_SHAPE)
    image = render_program(program, [true_pose])
    target = make_target(image)
    templates = [template(s) for s in program.shapes]
    placements, score = pose.fit(templates, target)
    placements = pose.polish(templates, placements, target)
    got = placements[0].pose(target)
    assert math.hypot(got.x - true_pose.x, got.y - true_pose.y) < 4.0
    assert abs((got.heading - true_pose.heading + 180.0) % 360.0 - 180.0) < 3.0
    assert got.scale == pytest.approx(true_pose.scale, rel=0.03)
    assert score < 1.0


def test_anchored_placement_keeps_the_joint():
    program = parse_image(OPEN_SHAPE)
    edited = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.833", "line_zigzag_1.000-0.667"]])
    parent, child = template(program.shapes[0]), template(edited.shapes[0])
    place = pose.Placement(100.0, 120.0, 20.0, 70.0)
    moved = pose.anchored(parent, place, child, 2, 2)

    def pixel(tpl, p, joint):
        cx, cy, a, b = p.affine()
        x, y = tpl.joints[joint]
        return np.array([cx + a * x - b * y, cy - (b * x + a * y)])

    np.testing.assert_allclose(pixel(child, moved, 2), pixel(parent, place, 2), atol=1e-9)
