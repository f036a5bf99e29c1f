"""Target tracings: which action each traced action is, and the pose a tracing starts from."""

import numpy as np

from dsl.canonical import from_travel_form, to_travel_form
from dsl.raster import official_view
from dsl.turtle import execute_shape
from dsl.walk import state_pose, target_tracing, traced_actions, variant_starts, walk_shape
from perception.data import sample_training_program


def test_traced_actions_name_the_action_each_traced_segment_draws():
    rng = np.random.default_rng(11)
    for _ in range(60):
        program, poses = sample_training_program(rng)
        traced = [segment for segments, _ in target_tracing(list(program.shapes), list(poses)) for segment in segments]
        where = traced_actions(list(program.shapes), list(poses))
        assert sorted(where) == [(s, i) for s, shape in enumerate(program.shapes) for i in range(len(shape.actions))]
        for segment, (s, i) in zip(traced, where):
            own = to_travel_form(program.shapes[s])[i]
            assert segment.kind is own.kind and segment.stroke is own.stroke
            assert np.isclose(segment.length, own.length) and np.isclose(segment.radius, own.radius)
            assert np.isclose(abs(segment.curvature), abs(own.curvature))


def test_a_variant_drawn_from_its_state_pose_walks_as_the_variant():
    rng = np.random.default_rng(12)
    view = official_view(512)
    for _ in range(30):
        program, poses = sample_training_program(rng)
        for segments, start in variant_starts(program.shapes[0], poses[0]):
            variant = from_travel_form(segments)
            drawn = view.to_pixels(execute_shape(variant, state_pose(start, variant), magnifier=False).end_points)
            states, _ = walk_shape(start, segments)
            assert np.allclose(drawn, [(state.x, state.y) for state in states], atol=1e-6)
