"""A loop of arcs walked on past its start: the queries taken as H checked against H walked on by one arc, the
strokes laid over each other read from set A (`solver.reading.overlaid`)."""

from types import SimpleNamespace

import numpy as np
import pytest

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.turtle import execute_shape
from dsl.types import Pose
from search.near_miss import check
from search.template import make_target
from solver.reading.overlaid import overlaid_job, turned_alike, walked_on_writings, writing_poses
from solver.reading.verdicts import judged_readings


def _circle(*strokes):
    return parse_image([[f"arc_{stroke}_0.500_0.625-0.500" for stroke in strokes]])


# generated seed 73111, ff_nact5_0037: five quarter arcs, the last over the first; its negative query changes the stroke
# of the first, under the last; H read from set A draws the circle once, the first arc's stroke read as the last's
WALKED = _circle("zigzag", "zigzag", "square", "normal", "circle")
CHANGED = _circle("square", "zigzag", "square", "normal", "circle")
H = _circle("circle", "zigzag", "square", "normal")


def test_every_start_and_way_round_of_a_circle_is_walked_on():
    found = walked_on_writings(H)
    assert len(found) == 8  # four starts, each way round
    assert sorted(over for *_, over in found) == [0, 0, 1, 1, 2, 2, 3, 3]
    pose = (Pose(-80, 20, 35, 120),)
    joints = execute_shape(H.shapes[0], pose[0], magnifier=False).end_points
    for s, v, writing, over in found:
        assert len(writing.shapes[0].actions) == 5
        drawn = execute_shape(writing.shapes[0], writing_poses(H, s, v, writing, pose)[0], magnifier=False).end_points
        assert np.allclose(drawn[-1], drawn[1], atol=1e-6)  # walked on past its start: ends where its first arc ends
        for x, y in drawn:  # every joint of the writing is a joint of H drawn at its pose
            assert np.min(np.hypot(joints[:, 0] - x, joints[:, 1] - y)) < 1e-6
    assert walked_on_writings(parse_image([["line_normal_1.000-0.500"] * 3])) == []


def _problem(truth, queries, seed: int):
    rng = np.random.default_rng(seed)

    def pose():
        return (Pose(rng.uniform(-150, 50), rng.uniform(-100, 100), rng.uniform(0, 360), rng.uniform(90, 150)),)

    set_a = [render_program(truth, pose()) for _ in range(6)]
    images = [render_program(query, pose()) for query in queries]
    return (None, set_a, [check(H, make_target(image), False).placements for image in set_a], None, H, images,
            [poses for poses, _ in judged_readings(None, images, H)])


@pytest.mark.parametrize("seed", [0, 1])
def test_a_stroke_changed_under_the_arc_walked_on_is_a_near_miss(seed):
    positive, negative = overlaid_job(_problem(WALKED, [WALKED, CHANGED], seed))
    assert positive is None
    program, _, margin = negative
    assert margin < -2.0 and len(program.shapes[0].actions) == 5


def test_a_circle_drawn_once_keeps_its_positive_queries():
    assert overlaid_job(_problem(H, [H, H], 2)) == [None, None]


# generated seed 101555, ff_nact3_5_0029: H's strokes (square, zigzag, square, zigzag) read alike turned half round
TWOFOLD_H = _circle("square", "zigzag", "square", "zigzag")


def _same_poses(poses, other) -> bool:
    return all(np.allclose([p.x, p.y, p.heading % 360, p.scale], [q.x, q.y, q.heading % 360, q.scale], atol=1e-6)
               for p, q in zip(poses, other))


def test_only_the_poses_where_h_draws_the_same_picture_strokes_and_all_are_turned_alike():
    pose = (Pose(-40, 10, 70, 110),)
    turns = turned_alike(TWOFOLD_H, 0, pose)
    assert len(turns) == 2 and turns[0] == pose  # the pose judged, and the circle started half round
    joints = execute_shape(TWOFOLD_H.shapes[0], pose[0], magnifier=False).end_points
    drawn = execute_shape(TWOFOLD_H.shapes[0], turns[1][0], magnifier=False).end_points
    assert not np.allclose(drawn[0], joints[0], atol=1e-3)  # it starts elsewhere, on the same circle
    for x, y in drawn:
        assert np.min(np.hypot(joints[:, 0] - x, joints[:, 1] - y)) < 1e-6
    assert len(turned_alike(_circle("square", "square", "square", "square"), 0, pose)) == 4
    assert turned_alike(H, 0, pose) == [pose]  # four strokes: no turn draws the same
    hook = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.500"]])
    assert turned_alike(hook, 0, pose) == [pose]


def test_a_query_is_read_along_the_writing_at_the_turn_alike_where_its_strokes_are_likeliest(monkeypatch):
    """The decoder faked: it reads the writing well where the arc walked on lies where set A shows it (the query's
    pose turned half round from the one judged along H), badly elsewhere; a query read badly at both is a near miss."""
    import solver.reading.overlaid as overlaid

    s, v, writing, _ = walked_on_writings(TWOFOLD_H)[0]
    monkeypatch.setattr(overlaid, "overlaid_writing", lambda *args: (s, v, writing))
    judged = (Pose(-40, 10, 70, 110),)
    right = writing_poses(TWOFOLD_H, s, v, writing, turned_alike(TWOFOLD_H, s, judged)[1])

    def read(job):
        _, images, _, poses = job
        return [SimpleNamespace(margin=3.0, logp=-1.0, program=writing) if image != "negative" and
                (image == "a" or _same_poses(drawn, right)) else SimpleNamespace(margin=-20.0, logp=-30.0, program=writing)
                for image, drawn in zip(images, poses)]

    monkeypatch.setattr(overlaid, "strokes_chunk", read)
    set_a = [((Pose(0, 0, 0, 100),), None)] * 6
    found = overlaid.overlaid_near_misses(None, ["a"] * 6, set_a, TWOFOLD_H, ["positive", "negative"], [judged, judged])
    assert found[0] is None  # read at the turn alike where the writing's strokes are likeliest
    program, drawn, margin = found[1]
    assert margin == -20.0 and same_image(program, writing)
