import numpy as np

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import ActionKind, Pose
from search.near_miss import check, geometric_neighbours
from search.template import make_target

H = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.750", "line_normal_1.000-0.833",
                  "line_normal_1.000-0.667"]])


def _differences(a, b) -> int:
    return sum(x != y for sa, sb in zip(a.shapes, b.shapes) for x, y in zip(sa.actions, sb.actions))


def test_every_geometric_neighbour_changes_one_action_and_keeps_the_strokes():
    neighbours = geometric_neighbours(H)
    # 4 kind swaps, and 3 turns (actions 1-3) moved to each of the 11 other values of the 12-value grid
    assert len(neighbours) == 4 + 3 * 11
    for change, program in neighbours:
        assert _differences(program, H) == 1
        changed = program.shapes[0].actions[change.action]
        if change.what == "kind":
            assert changed.kind is not H.shapes[0].actions[change.action].kind
        assert changed.stroke is H.shapes[0].actions[change.action].stroke


def test_the_drawn_program_beats_its_neighbours_and_a_near_miss_is_found():
    pose = [Pose(-20.0, 15.0, 35.0, 110.0)]
    drawn = check(H, make_target(render_program(H, pose)))
    assert drawn.fit < 1.0 and drawn.geometric_margin > 0.2
    near_miss = next(p for c, p in geometric_neighbours(H) if c.what == "turn" and c.action == 2)
    found = check(H, make_target(render_program(near_miss, pose)))
    assert found.geometric_margin < 0
    assert same_image(found.neighbour, near_miss)
    assert (found.change.action, found.change.what) == (2, "turn")


def test_a_kind_change_is_found():
    pose = [Pose(10.0, -5.0, 200.0, 120.0)]
    near_miss = next(p for c, p in geometric_neighbours(H) if c.what == "kind" and c.action == 2)
    assert near_miss.shapes[0].actions[2].kind is ActionKind.ARC
    found = check(H, make_target(render_program(near_miss, pose)))
    assert found.change is not None and (found.change.action, found.change.what) == (2, "kind")
    assert np.isfinite(found.neighbour_fit) and found.neighbour_fit < found.fit


def test_the_judge_chooses_among_the_poses_a_symmetric_shape_fits_equally():
    from search.near_miss import stroke_placements

    straight = parse_image([["line_zigzag_1.000-0.500", "line_square_1.000-0.500"]])  # fits its ink either way round
    target = make_target(render_program(straight, [Pose(-30.0, 10.0, 60.0, 120.0)]))
    seen = []

    def judge(candidates):  # prefers the pose turned furthest from the first one offered
        seen.append(len(candidates))
        first = candidates[0][0].theta
        return [abs((c[0].theta - first + 180.0) % 360.0 - 180.0) for c in candidates]

    chosen = stroke_placements(straight, target, judge)[0]
    assert seen and seen[0] >= 2  # both ends offered
    other = stroke_placements(straight, target, lambda candidates: [-x for x in judge(candidates)])[0]
    assert abs((chosen.theta - other.theta + 180.0) % 360.0 - 180.0) > 150.0  # the judge decides which way round
