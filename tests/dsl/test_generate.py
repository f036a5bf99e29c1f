import collections
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dsl.free_form import FREE_FORM_SETTINGS, FREE_FORM_TURNS, perturb_shape, sample_free_form_shape, spread_ok
from dsl.generate import (
    ProblemKind,
    abstract_concepts,
    abstract_strokes,
    basic_concepts,
    generate_abstract,
    generate_basic,
    generate_free_form,
    generate_problem,
    plan_problems,
    problem_rng,
    sample_pose,
    sample_training_image,
)
from dsl.dataset import load_split
from dsl.library import ATTRIBUTES, load_library
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, Action, ImageProgram, Shape, StrokeType
from tests.official import OFFICIAL_DEV

# Appendix A: number of valid pairs per first attribute.
APPENDIX_A_COUNTS = {
    "convex": 9, "has_curve": 23, "has_straight_line": 9, "symmetric": 21, "self_transposed": 14,
    "has_three_straight_lines": 10, "has_four_straight_lines": 13, "has_five_straight_lines": 13,
    "has_six_straight_lines": 15, "has_seven_straight_lines": 10, "has_eight_straight_lines": 10,
    "thin_shape": 6, "closed_shape": 3, "has_acute_angle": 3, "has_obtuse_angle": 6, "has_line_crossing": 8,
    "has_two_parts": 5, "balanced_two": 5, "unbalanced_two": 4, "necked": 1, "exist_regular": 3,
    "exist_triangle": 1, "exist_quadrangle": 2,
}


def rng(i=0):
    return np.random.default_rng(i)


def library_name(shape: Shape) -> str:
    """The library shape a drawn shape is (the table has no two identical shapes)."""
    by_shape = {s.shape: n for n, s in load_library().items()}
    return by_shape[shape.with_strokes(StrokeType.NORMAL)]


def strokes(programs) -> set[StrokeType]:
    return {a.stroke for p in programs for s in p.shapes for a in s.actions}


# ---- abstract ------------------------------------------------------------------------------------


def test_exactly_220_abstract_concepts_match_appendix_a():
    concepts = abstract_concepts()
    assert len(concepts) == 220 and len(set(concepts)) == 220
    assert concepts[:26] == [(a,) for a in ATTRIBUTES]
    pairs = concepts[26:]
    assert collections.Counter(a for a, _ in pairs) == APPENDIX_A_COUNTS
    assert pairs[:2] == [("convex", "has_curve"), ("convex", "symmetric")]
    assert pairs[-1] == ("exist_quadrangle", "symmetric_transposed")
    for pair in [("has_curve", "exist_quadrangle"), ("necked", "symmetric_transposed"),
                 ("has_eight_straight_lines", "necked"), ("exist_triangle", "exist_quadrangle")]:
        assert pair in pairs
    for pair in [("convex", "has_straight_line"), ("has_curve", "exist_sector"), ("closed_shape", "thin_shape")]:
        assert pair not in pairs
    order = {a: i for i, a in enumerate(ATTRIBUTES)}
    assert all(order[a] < order[b] for a, b in pairs)


def test_abstract_single_attribute_problem():
    problem = generate_abstract(rng(1), ("necked",), number=3)
    assert problem.name == "hd_necked_0003" and problem.kind is ProblemKind.ABSTRACT
    library = load_library()
    positive = [library_name(p.shapes[0]) for p in problem.positives]
    negative = [library_name(p.shapes[0]) for p in problem.negatives]
    assert len(set(positive)) == 7 and len(set(negative)) == 7
    assert all(library[n].attributes["necked"] == 1 for n in positive)
    assert all(library[n].attributes["necked"] == 0 for n in negative)
    assert all(len(p.shapes) == 1 for p in problem.positives + problem.negatives)


@pytest.mark.parametrize("seed", range(4))
def test_abstract_pair_negatives_violate_one_attribute_three_or_four_times(seed):
    a, b = "has_curve", "has_two_parts"
    problem = generate_abstract(rng(seed), (a, b))
    assert problem.name == "hd_has_curve-has_two_parts_0000"
    library = load_library()
    for program in problem.positives:
        assert {library[library_name(program.shapes[0])].attributes[x] for x in (a, b)} == {1}
    values = [tuple(library[library_name(p.shapes[0])].attributes[x] for x in (a, b)) for p in problem.negatives]
    counts = collections.Counter(values)
    assert set(counts) == {(0, 1), (1, 0)} and sorted(counts.values()) == [3, 4]
    assert len({library_name(p.shapes[0]) for p in problem.negatives}) == 7


def test_abstract_stroke_type_restrictions():
    normal_zigzag = {StrokeType.NORMAL, StrokeType.ZIGZAG}
    assert set(abstract_strokes(("exist_regular",))) == normal_zigzag
    assert set(abstract_strokes(("exist_triangle",))) == normal_zigzag | {StrokeType.CIRCLE, StrokeType.SQUARE}
    quadrangle = set(abstract_strokes(("has_curve", "exist_quadrangle")))
    assert quadrangle == normal_zigzag | {StrokeType.CIRCLE, StrokeType.TRIANGLE}
    assert set(abstract_strokes(("exist_triangle", "exist_quadrangle"))) == normal_zigzag | {StrokeType.CIRCLE}
    assert abstract_strokes(("symmetric",)) == DATASET_STROKE_TYPES
    used = set()
    for seed in range(6):
        problem = generate_abstract(rng(seed), ("exist_triangle",))
        used |= strokes(problem.positives + problem.negatives)
    assert used <= set(abstract_strokes(("exist_triangle",))) and StrokeType.SQUARE in used


def test_abstract_shapes_without_if_stamp_are_drawn_normal():
    library = load_library()
    for seed in range(3):
        problem = generate_abstract(rng(seed), ("has_curve",))
        for program in problem.positives + problem.negatives:
            if not library[library_name(program.shapes[0])].if_stamp:
                assert strokes([program]) == {StrokeType.NORMAL}


# ---- basic ---------------------------------------------------------------------------------------


def test_basic_concepts_are_627_singles_then_3373_distinct_pairs():
    concepts = basic_concepts()
    names = list(load_library())
    assert len(concepts) == 4000 and concepts[:627] == tuple((n,) for n in names)
    pairs = concepts[627:]
    assert len(set(pairs)) == 3373 and all(names.index(a) < names.index(b) for a, b in pairs)


@pytest.mark.parametrize("concept", [("equilateral_traingle",), basic_concepts()[700], basic_concepts()[1500]])
def test_basic_negatives_replace_one_shape_by_its_super_class(concept):
    library = load_library()
    problem = generate_basic(rng(5), concept)
    assert problem.name == f"bd_{'-'.join(concept)}_0000"
    for program in problem.positives:
        assert tuple(library_name(s) for s in program.shapes) == concept
    turned_off = collections.Counter()
    for program in problem.negatives:
        drawn = [library_name(s) for s in program.shapes]
        changed = [i for i, (d, c) in enumerate(zip(drawn, concept)) if d != c]
        assert len(changed) == 1
        i = changed[0]
        assert library[drawn[i]].super_class == library[concept[i]].super_class
        turned_off[i] += 1
    assert all(turned_off[i] >= 3 for i in range(len(concept)))


def test_basic_stroke_types_follow_if_stamp():
    library = load_library()
    unstampable = next(n for n, s in library.items() if not s.if_stamp)
    stampable = next(n for n, s in library.items() if s.if_stamp)
    problem = generate_basic(rng(2), (unstampable, stampable))
    for program in problem.positives + problem.negatives:
        assert strokes([ImageProgram(program.shapes[:1])]) == {StrokeType.NORMAL}
    second = [ImageProgram(p.shapes[1:]) for p in problem.positives]
    assert len(strokes(second)) > 1
    for program in problem.negatives:
        drawn = library_name(program.shapes[1])
        if not library[drawn].if_stamp:
            assert strokes([ImageProgram(program.shapes[1:])]) == {StrokeType.NORMAL}


# ---- free-form -----------------------------------------------------------------------------------


def differing_actions(a: ImageProgram, b: ImageProgram) -> list[tuple[Action, Action]]:
    assert [len(s) for s in a.shapes] == [len(s) for s in b.shapes]
    return [(x, y) for sa, sb in zip(a.shapes, b.shapes) for x, y in zip(sa.actions, sb.actions) if x != y]


@pytest.mark.parametrize("setting", FREE_FORM_SETTINGS)
def test_free_form_negatives_differ_in_exactly_one_action(setting):
    problem = generate_free_form(rng(sum(setting)), setting, number=12)
    assert problem.name == f"ff_nact{'_'.join(map(str, setting))}_0012"
    assert len(set(problem.positives)) == 1
    positive = problem.positives[0]
    assert tuple(len(s) for s in positive.shapes) == setting
    for action in (a for s in positive.shapes for a in s.actions):
        if action.is_line:
            assert action.length == 1.0 and action.turn in (0.0, 90.0, 120.0)
        else:
            assert (action.radius, action.angle, action.turn) == (0.5, 90.0, 0.0)
    for negative in problem.negatives:
        [(old, new)] = differing_actions(positive, negative)
        changed = [old.kind != new.kind, old.turn != new.turn, old.stroke != new.stroke]
        assert sum(changed) == 1
        if old.turn != new.turn:
            assert new.turn in FREE_FORM_TURNS and abs(new.turn - old.turn) > 45


def test_free_form_first_turn_is_never_perturbed():
    for seed in range(5):
        problem = generate_free_form(rng(seed), (4,))
        for negative in problem.negatives:
            assert all(s.actions[0].turn == 0.0 for s in negative.shapes)


def test_spread_check():
    back_and_forth = Shape(tuple(Action.line(1.0, 180.0 if i else 0.0) for i in range(6)))
    assert not spread_ok(back_and_forth)
    assert spread_ok(Shape((Action.line(1.0), Action.line(1.0, 90.0))))
    circle = Shape((Action.arc(0.5, 90.0),) * 4)
    assert spread_ok(circle)


# ---- poses, placement, reproducibility -----------------------------------------------------------


SEEDS = st.integers(0, 2**32 - 1)


@settings(deadline=None)
@given(SEEDS)
def test_one_shape_pose_starts_on_its_heading_ray(seed):
    (pose,) = sample_pose(rng(seed), 1, (80.0, 140.0))
    radius = math.hypot(pose.x, pose.y)
    assert 1.0 <= radius <= 250.0 and 80.0 <= pose.scale <= 140.0 and 0.0 <= pose.heading <= 360.0
    assert math.cos(math.radians(pose.heading)) * radius == pytest.approx(pose.x)
    assert math.sin(math.radians(pose.heading)) * radius == pytest.approx(pose.y)


@settings(deadline=None)
@given(SEEDS)
def test_two_shape_poses_follow_the_rejection_rules(seed):
    first, second = sample_pose(rng(seed), 2, (150.0, 320.0))
    assert 125.0 <= math.hypot(first.x, first.y) <= 250.0
    dx, dy = second.x - first.x, second.y - first.y
    assert math.hypot(dx, dy) >= 300.0 and abs(dx) >= 45.0 and abs(dy) >= 45.0
    assert max(abs(second.x), abs(second.y)) <= 300.0
    assert abs(second.heading - first.heading) <= 60.0
    assert all(150.0 <= p.scale <= 320.0 for p in (first, second))


@settings(max_examples=40, deadline=None)
@given(SEEDS, st.integers(1, 11))
def test_a_perturbed_shape_differs_in_exactly_one_action(seed, k):
    generator = rng(seed)
    shape = sample_free_form_shape(generator, k)
    assert len(shape) == k
    [(old, new)] = differing_actions(ImageProgram((shape,)), ImageProgram((perturb_shape(generator, shape),)))
    assert sum([old.kind != new.kind, old.turn != new.turn, old.stroke != new.stroke]) == 1


@pytest.mark.parametrize("kind", list(ProblemKind))
def test_problems_are_placed_validly_and_reproducibly(kind):
    spec = plan_problems(kind, 3, seed=9)[2]
    problem = generate_problem(spec, seed=9)
    assert problem == generate_problem(spec, seed=9)
    assert problem.name == spec.name
    assert problem != generate_problem(spec, seed=10)
    images = zip(problem.positives + problem.negatives, problem.positive_poses + problem.negative_poses)
    assert all(execute_image(program, poses).valid for program, poses in images)


def test_plan_mixes_concepts_and_numbers_repeat_passes():
    plan = plan_problems(ProblemKind.FREE_FORM, 25, seed=0)
    assert [s.concept for s in plan[:12]] == list(FREE_FORM_SETTINGS)
    assert plan[12].name == "ff_nact4_0001" and plan[24].name == "ff_nact4_0002"
    abstract = plan_problems(ProblemKind.ABSTRACT, 221, seed=0)
    assert len({s.name for s in abstract}) == 221 and abstract[220].number == 1
    assert plan_problems(ProblemKind.BASIC, 5, seed=0) == plan_problems(ProblemKind.BASIC, 5, seed=0)


def test_problem_rng_depends_on_seed_kind_and_index_only():
    draw = lambda *key: problem_rng(*key).random()  # noqa: E731
    assert draw(1, ProblemKind.BASIC, 4) == draw(1, ProblemKind.BASIC, 4)
    assert len({draw(1, ProblemKind.BASIC, 4), draw(1, ProblemKind.ABSTRACT, 4), draw(1, ProblemKind.BASIC, 5),
                draw(2, ProblemKind.BASIC, 4)}) == 4


@pytest.mark.parametrize("kind", ["ff", "bd", "hd"])
def test_training_images(kind):
    generator = rng(3)
    for _ in range(20):
        program, poses = sample_training_image(generator, kind)
        assert len(poses) == len(program.shapes)
        assert execute_image(program, poses).valid
        if kind == "ff":
            assert 1 <= program.n_actions <= 10
        if kind == "hd":
            assert len(program.shapes) == 1


# ---- the official sample obeys the same rules ----------------------------------------------------



def nearest_library_name(shape: Shape) -> str:
    """Official strings are rounded to 3 decimals: match the library shape within that rounding."""
    def values(s):
        return np.array([[a.is_line, a.length, a.radius, a.angle / 360, a.turn / 180] for a in s.actions])
    target = values(shape)
    candidates = [
        (np.abs(values(s.shape) - target).max(), n) for n, s in load_library().items() if len(s.shape) == len(shape)
    ]
    distance, name = min(candidates)
    assert distance < 0.01
    return name


@pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official dev data not present (BONGARD_OFFICIAL_DEV)")
def test_official_dev_problems_follow_the_rules_implemented_here():
    library = load_library()
    for problem in load_split(OFFICIAL_DEV, "dev_ff"):
        positive = problem.positives[0].program
        assert all(i.program == positive for i in problem.positives)
        assert all(len(differing_actions(positive, i.program)) <= 1 for i in problem.negatives)
    for problem in load_split(OFFICIAL_DEV, "dev_bd")[:6]:
        concept = [nearest_library_name(s) for s in problem.positives[0].program.shapes]
        for image in problem.negatives:
            drawn = [nearest_library_name(s) for s in image.program.shapes]
            [i] = [i for i, (d, c) in enumerate(zip(drawn, concept)) if d != c]
            assert library[drawn[i]].super_class == library[concept[i]].super_class
    for problem in load_split(OFFICIAL_DEV, "dev_hd")[:12]:
        attributes = tuple(problem.name[3:-5].split("-"))
        assert attributes in abstract_concepts()
        for image in problem.positives:
            assert all(library[nearest_library_name(image.program.shapes[0])].attributes[a] == 1 for a in attributes)
        allowed = set(abstract_strokes(attributes))
        assert strokes(i.program for i in problem.positives + problem.negatives) <= allowed
