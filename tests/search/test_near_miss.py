import numpy as np

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import ActionKind, ImageProgram, Pose, StrokeType
from search.near_miss import check, geometric_neighbours
from search.template import make_target

H = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.750", "line_normal_1.000-0.833",
                  "line_normal_1.000-0.667"]])


def _differences(a, b) -> int:
    return sum(x != y for sa, sb in zip(a.shapes, b.shapes) for x, y in zip(sa.actions, sb.actions))


def test_every_geometric_neighbour_changes_one_action_and_keeps_the_strokes():
    neighbours = geometric_neighbours(H)
    # 4 kind swaps, and 3 turns (actions 1-3: L90, L120, L60) each moved to the 8 values of the generator's 11-value
    # turn set that depart from it by more than 45 degrees (spec 3.2)
    assert len(neighbours) == 4 + 3 * 8
    turns = {c.action: set() for c, _ in neighbours if c.what == "turn"}
    for change, program in neighbours:
        if change.what == "turn":
            turns[change.action].add(round(program.shapes[0].actions[change.action].turn))
    assert turns == {1: {-150, -120, -90, -60, -30, 0, 30, 150}, 2: {-150, -120, -90, -60, -30, 0, 30, 60},
                     3: {-150, -120, -90, -60, -30, 0, 120, 150}}
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


def test_every_pose_of_a_circle_is_judged_when_none_of_the_first_is_enough():
    # a circle of four quarter arcs fits its ink at every turn; the judge is asked about the SYMMETRY_JUDGED poses
    # best by the pixel score, and about all of them when none of those scores `enough`
    from search.near_miss import stroke_placements_many
    from search.settings import SYMMETRY_JUDGED

    circle = parse_image([["arc_triangle_0.500_0.625-0.500"] + ["arc_zigzag_0.500_0.625-0.500"] * 3])
    target = make_target(render_program(circle, [Pose(-30.0, 10.0, 60.0, 110.0)]))
    offered = []

    def judge(asked, first_enough: bool):  # the first pose offered scores 0 (or none does), and the last of all
        scores = []
        for _, candidates in asked:
            offered.append(len(candidates))
            scores.append([0.0 if (j == 0 and first_enough) or j == SYMMETRY_JUDGED else -30.0
                           for j in range(len(candidates))])
        return scores

    first = stroke_placements_many(circle, [target], lambda asked: judge(asked, True), polish_evals=0, enough=-2.0)
    assert offered == [SYMMETRY_JUDGED]  # the first pose scores enough: no more asked
    offered.clear()
    every = stroke_placements_many(circle, [target], lambda asked: judge(asked, False), polish_evals=0, enough=-2.0)
    assert offered[0] == SYMMETRY_JUDGED and len(offered) == 2 and offered[1] > SYMMETRY_JUDGED  # all asked again
    assert every[0][0].theta != first[0][0].theta  # the pose after the first SYMMETRY_JUDGED, scored 0, chosen
    offered.clear()
    alone = stroke_placements_many(circle, [target], lambda asked: judge(asked, False), polish_evals=0)
    assert offered == [SYMMETRY_JUDGED] and alone[0][0].theta == first[0][0].theta  # without `enough`, as before


def test_the_judge_tells_which_of_two_shapes_of_one_walk_lies_where():
    # two shapes of three quarter arcs each (spec 3.2 may draw one move sequence twice), their strokes differing: the
    # centreline fit cannot tell which ink part is which shape's, the strokes can
    from search.near_miss import _one_walk, stroke_placements_many
    from search.pose import Placement

    quarter = "arc_{}_0.500_0.625-0.500"
    twins = parse_image([[quarter.format(s) for s in ("circle", "triangle", "normal")],
                         [quarter.format(s) for s in ("triangle", "triangle", "normal")]])
    assert _one_walk(twins) and not _one_walk(H)
    target = make_target(render_program(twins, [Pose(-120.0, 0.0, 30.0, 90.0), Pose(110.0, 20.0, 200.0, 90.0)]))
    where = [tuple(np.mean(part, axis=0)) for part in ([p for p in target.ink_points if p[0] < target.dt.shape[1] / 2],
                                                      [p for p in target.ink_points if p[0] >= target.dt.shape[1] / 2])]
    offered = []

    def judge(asked, first_on_left: bool = True):  # prefers the assignment putting shape 0 on the left ink part
        offered.extend(len(candidates) for _, candidates in asked)
        return [[-abs(c[0].cx - where[0 if first_on_left else 1][0]) for c in candidates] for _, candidates in asked]

    left = stroke_placements_many(twins, [target], judge, polish_evals=0)[0]
    right = stroke_placements_many(twins, [target], lambda asked: judge(asked, False), polish_evals=0)[0]
    assert 2 in offered  # both assignments offered
    assert isinstance(left[0], Placement) and left[0].cx < left[1].cx and right[0].cx > right[1].cx


def test_two_shapes_of_one_picture_written_from_other_ends_are_told_apart_by_the_judge():
    # an L of three lines twice, one of them written from its other end (as H read from set A may write it): the
    # centreline fit cannot tell which ink part is which shape's; the assignment swapped places each shape over the
    # other's ink, started where its own writing starts, and the judge decides between the two
    from dsl.canonical import reversed_shape
    from search.near_miss import _one_walk, stroke_placements_many
    from search.pose import SparseProblem
    from search.template import template

    shapes = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "line_circle_1.000-0.500"],
                          ["line_triangle_1.000-0.500", "line_zigzag_1.000-0.750", "line_triangle_1.000-0.500"]])
    drawn = ImageProgram(shapes.shapes)
    read = ImageProgram((shapes.shapes[0], reversed_shape(shapes.shapes[1])))
    assert _one_walk(read) and read.shapes[0].with_strokes(StrokeType.NORMAL) != read.shapes[1].with_strokes(StrokeType.NORMAL)
    target = make_target(render_program(drawn, [Pose(-130.0, 0.0, 30.0, 80.0), Pose(100.0, 20.0, 200.0, 80.0)]))
    middle = target.dt.shape[1] / 2
    offered = []

    def judge(asked, first_on_left: bool = True):  # prefers the assignment putting shape 0 on the left ink part
        scores = []
        for _, candidates in asked:
            offered.append(candidates)
            scores.append([0.0 if (_centre(c[0], 0) < middle) == first_on_left else -30.0 for c in candidates])
        return scores

    def _centre(place, s):  # px: where shape s's centroid lies at `place`
        cx, cy, a, b = place.affine()
        gx, gy = normal[s].centroid
        return cx + a * gx - b * gy

    normal = [template(shape.with_strokes(StrokeType.NORMAL)) for shape in read.shapes]
    left = stroke_placements_many(read, [target], judge, polish_evals=0)[0]
    options = offered[0]
    assert len(options) == 2 and all(SparseProblem(normal, target).cost(o) < 1.0 for o in options)  # both fit the ink
    right = stroke_placements_many(read, [target], lambda asked: judge(asked, False), polish_evals=0)[0]
    assert _centre(left[0], 0) < middle < _centre(left[1], 1) and _centre(right[1], 1) < middle < _centre(right[0], 0)


def test_two_shapes_of_one_walk_are_assigned_to_their_ink_at_their_judged_poses():
    # two circles of four quarter arcs, one stamp each (generated seed 61101, ff_nact4_4_0037): which circle lies on
    # which ink part is judged after each circle's turn is, not at the arbitrary turns the centreline fit gives them
    from search.near_miss import stroke_placements_many
    from search.pose import fit
    from search.template import template

    quarter = "arc_{}_0.500_0.625-0.500"
    twins = parse_image([[quarter.format(s) for s in ("triangle", "normal", "normal", "normal")],
                         [quarter.format(s) for s in ("square", "normal", "normal", "normal")]])
    target = make_target(render_program(twins, [Pose(-120.0, 0.0, 30.0, 90.0), Pose(110.0, 20.0, 200.0, 90.0)]))
    normal = [template(shape.with_strokes(StrokeType.NORMAL)) for shape in twins.shapes]
    middle = target.dt.shape[1] / 2

    def centre(place):  # px: where a circle's centroid lies at `place`
        cx, cy, a, b = place.affine()
        gx, gy = normal[0].centroid
        return cx + a * gx - b * gy

    def apart(a, b):  # degrees between two headings
        return abs((a - b + 180.0) % 360.0 - 180.0)

    fitted = fit(normal, target)[0]
    want = next(p for p in fitted if centre(p) < middle).theta + 90.0  # a quarter turn from the fit's, on the left

    def judge(asked):  # shape 0 on the left at `want`: best; shape 0 on the right at any turn: second
        return [[(0.0 if apart(c[0].theta, want) < 10.0 else -30.0) if centre(c[0]) < middle else -5.0
                 for c in candidates] for _, candidates in asked]

    chosen = stroke_placements_many(twins, [target], judge, polish_evals=0, enough=-2.0)[0]
    assert centre(chosen[0]) < middle < centre(chosen[1]) and apart(chosen[0].theta, want) < 10.0


def test_a_change_that_draws_the_same_centreline_is_no_neighbour():
    # an L of two equal arms turned right instead of left is the same L (walked the other way): spec 3.2 may make
    # that negative, but no centreline fit can tell it from H
    ell = parse_image([["line_zigzag_1.000-0.500", "line_zigzag_1.000-0.750"]])
    turns = {round(p.shapes[0].actions[1].turn) for c, p in geometric_neighbours(ell) if c.what == "turn"}
    assert turns == {-150, -120, -60, -30, 0, 30, 150}  # not -90 (nor 60, 90, 120: within 45 degrees)


def test_a_shape_of_lines_has_its_lines_swapped_for_arcs_turning_either_way():
    # lines only: which way the generator walked it, no arc tells; its near miss swaps a line for an arc turning
    # left in the generator's direction, which is an arc turning right when the shape is read the other way
    zag = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.833", "line_normal_1.000-0.250"]])
    walked_back = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "arc_normal_0.500_0.625-0.167"]])
    own_way = [parse_image([[f"{'arc_normal_0.500_0.625' if j == i else 'line_normal_1.000'}-{turn}"
                             for j, turn in enumerate(("0.500", "0.833", "0.250"))]]) for i in range(3)]
    assert not any(same_image(p, walked_back) for p in own_way)  # not a line swapped for a left arc zag's way
    kinds = [p for c, p in geometric_neighbours(zag) if c.what == "kind"]
    assert len(kinds) == 6 and any(same_image(p, walked_back) for p in kinds)
    assert all(any(same_image(p, q) for p in kinds) for q in own_way)


def test_the_screen_in_two_tiers_finds_the_near_miss_that_refining_every_neighbour_finds(monkeypatch):
    # the neighbours ranked first by the sparse score at their heading guess, only the best SCREEN_REFINED refined:
    # the same nearest neighbour here as when every neighbour is refined (SCREEN_REFINED = 0)
    import search.near_miss as near_miss
    from search.near_miss import nearest_neighbour, neighbours_drawn

    pose = [Pose(-20.0, 15.0, 35.0, 110.0)]
    for change in ("turn", "kind"):
        drawn = next(p for c, p in geometric_neighbours(H) if c.what == change and c.action == 2)
        found = nearest_neighbour(neighbours_drawn(H), make_target(render_program(drawn, pose)))
        monkeypatch.setattr(near_miss, "SCREEN_REFINED", 0)
        every = nearest_neighbour(neighbours_drawn(H), make_target(render_program(drawn, pose)))
        monkeypatch.undo()
        assert same_image(found[0][1], drawn) and same_image(every[0][1], drawn)
        assert found[1] < 1.0 and abs(found[1] - every[1]) < 1e-9
    assert nearest_neighbour([], make_target(render_program(H, pose))) is None


def test_a_program_refitted_from_placements_keeps_the_fit_they_start_from():
    from dsl.generate import ProblemKind, place
    from dsl.library import load_library
    from dsl.types import ImageProgram, StrokeType
    from search.near_miss import centreline_fit, centreline_refit

    library = load_library()
    drawn = ImageProgram((library["closed_threequarter_circle"].shape.with_strokes(StrokeType.NORMAL),
                          library["open_s1"].shape.with_strokes(StrokeType.NORMAL)))
    look_alike = ImageProgram((library["closed_circle"].shape.with_strokes(StrokeType.NORMAL), drawn.shapes[1]))
    target = make_target(render_program(drawn, place(np.random.default_rng(4), drawn, ProblemKind.BASIC.scale_range)))
    fit, placements = centreline_fit(drawn, target)
    refit, again = centreline_refit(drawn, target, list(reversed(placements)))  # each way of giving them out
    assert fit < 2.5 and refit <= fit + 1e-9 and len(again) == 2
    from_other = centreline_refit(drawn, target, centreline_fit(look_alike, target)[1])
    assert np.isfinite(from_other[0]) and len(from_other[1]) == 2
    assert centreline_refit(drawn, target, placements[:1]) == (float("inf"), [])


def test_a_program_laid_on_a_look_alikes_ink_finds_the_pose_its_start_point_does_not():
    """A half-circle on a rectangle with stamped and zigzag strokes (the basic generator's drawing), read as a
    hexagon: started at the hexagon's placement, or from scratch, the shape lands far from its ink; laid on the
    hexagon's ink (centroid and size, every heading scanned) it fits as well as the hexagon."""
    from dsl.generate import ProblemKind, place
    from dsl.library import load_library
    from dsl.types import Shape
    from search.near_miss import centreline_fit, centreline_laid_on, centreline_refit

    library = load_library()
    strokes = (StrokeType.SQUARE, StrokeType.CIRCLE, StrokeType.SQUARE, StrokeType.ZIGZAG)
    shape = library["rec_symm_arc180"].shape
    drawn = ImageProgram((Shape(tuple(a.with_stroke(s) for a, s in zip(shape.actions, strokes))),))
    h = drawn.with_strokes(StrokeType.NORMAL)
    reading = ImageProgram((library["right_hexagon"].shape,))
    target = make_target(render_program(drawn, place(np.random.default_rng(0), drawn, ProblemKind.BASIC.scale_range)))
    read_fit, read_placements = centreline_fit(reading, target)
    laid, placements = centreline_laid_on(h, reading, target, read_placements)
    assert laid < read_fit + 0.2 and len(placements) == 1
    assert laid < centreline_fit(h, target)[0] - 2.0 and laid < centreline_refit(h, target, read_placements)[0] - 2.0
    assert centreline_laid_on(h, reading, target, read_placements * 2) == (float("inf"), [])


def test_two_crossing_shapes_are_fitted_each_on_the_ink_the_other_leaves():
    """Two library shapes drawn across each other (one ink part, stamped and zigzag strokes): every split of the
    ink by place cuts through both, and the fit from scratch misplaces one of them; fitted again on the ink the
    well-placed one leaves, both fit as well as shapes drawn apart."""
    from dsl.library import load_library
    from dsl.types import Pose, Shape
    from search.ink import ink_parts
    from search.near_miss import centreline_fit, explained_apart, retried

    library = load_library()
    rng = np.random.default_rng(0)
    kinds = [StrokeType.NORMAL, StrokeType.ZIGZAG, StrokeType.CIRCLE, StrokeType.SQUARE, StrokeType.TRIANGLE]
    shapes = tuple(Shape(tuple(a.with_stroke(kinds[rng.integers(5)]) for a in library[name].shape.actions))
                   for name in ("open_band_three_arcs6", "necked_six_lines7"))
    first = Pose(float(rng.uniform(-150, 0)), float(rng.uniform(-100, 100)), float(rng.uniform(0, 360)), 200.0)
    second = Pose(first.x + float(rng.uniform(0, 150)), first.y + float(rng.uniform(-80, 80)),
                  float(rng.uniform(0, 360)), 180.0)
    drawn = ImageProgram(shapes)
    target = make_target(render_program(drawn, (first, second)))
    h = drawn.with_strokes(StrokeType.NORMAL)
    assert ink_parts(target) == 1
    fit, placements = centreline_fit(h, target, regroup=True)
    apart, found = explained_apart(h, target, fit, placements)
    assert fit > 4.0 and apart < 2.5 and len(found) == 2
    assert retried(h, target, fit, placements)[0] == fit  # more headings alone do not find it
    assert retried(h, target, fit, placements, apart=True)[0] == apart == retried(h, target, fit, [], apart=True)[0]
    one = ImageProgram(h.shapes[:1])
    assert explained_apart(one, target, *centreline_fit(one, target)) == centreline_fit(one, target)


def test_ink_the_hypothesis_does_not_draw_is_its_stray_share():
    pose = [Pose(-20.0, 15.0, 35.0, 110.0)]
    assert check(H, make_target(render_program(H, pose)), False).stray <= 0.01  # H draws all of its own ink
    longer = parse_image([["line_normal_1.000-0.500", "arc_normal_0.500_0.625-0.750", "line_normal_1.000-0.833",
                           "line_normal_1.000-0.667", "arc_normal_0.500_0.625-0.750"]])  # H and one more action
    assert check(H, make_target(render_program(longer, pose)), False).stray >= 0.05
