from hypothesis import HealthCheck, given, settings, strategies as st

from dsl.features import image_features
from dsl.library import ATTRIBUTES, load_library
from dsl.types import Action, ImageProgram, Shape, StrokeType
from tests.drawing import redrawn


def features(*actions: Action):
    return image_features(ImageProgram((Shape(tuple(actions)),)))


SQUARE = (Action.line(1.0), Action.line(1.0, 90), Action.line(1.0, 90), Action.line(1.0, 90))
ZIGZAG_TRIANGLE = tuple(Action.line(1.0, turn, StrokeType.ZIGZAG) for turn in (0, 120, 120))
# Two straight lines crossing at right angles, one stroke: out along x, back to the middle, up, down.
CROSSING_LINES = (Action.line(2.0), Action.line(1.0, 180), Action.line(1.0, 90), Action.line(2.0, 180))
# A quarter-circle sector with a middle spoke: two 45-degree sectors sharing a radius.
FAN = (Action.line(1.0), Action.arc(1.0, 90, 90), Action.line(1.0, 90), Action.line(1.0, 135))
CIRCLE = (Action.arc(0.5, 360),)


def test_square():
    f = features(*SQUARE)
    expected = dict(straight_lines=4, arcs=0, acute_angles=0, right_angles=4, obtuse_angles=0, parts=1,
                    crossings=0, closed_loops=1, corners=4)  # fmt: skip
    assert {k: f.counts[k] for k in expected} == expected
    on = {a for a, v in f.attributes.items() if v == 1}
    assert on == {"convex", "has_straight_line", "symmetric", "self_transposed", "has_four_straight_lines",
                  "closed_shape", "has_angle", "exist_regular", "exist_quadrangle", "symmetric_transposed"}  # fmt: skip


def test_zigzag_triangle_ignores_the_stroke_type():
    f = features(*ZIGZAG_TRIANGLE)
    expected = dict(straight_lines=3, arcs=0, acute_angles=3, right_angles=0, obtuse_angles=0, parts=1,
                    crossings=0, closed_loops=1)  # fmt: skip
    assert {k: f.counts[k] for k in expected} == expected
    on = {a for a, v in f.attributes.items() if v == 1}
    assert on == {"convex", "has_straight_line", "symmetric", "has_three_straight_lines", "closed_shape",
                  "has_acute_angle", "has_angle", "exist_regular", "exist_triangle"}  # fmt: skip
    assert f == features(*(a.with_stroke(StrokeType.NORMAL) for a in ZIGZAG_TRIANGLE))


def test_two_crossing_lines():
    f = features(*CROSSING_LINES)
    expected = dict(straight_lines=2, straight_segments=4, arcs=0, acute_angles=0, right_angles=4,
                    obtuse_angles=0, parts=1, crossings=1, proper_crossings=1, closed_loops=0, free_ends=4)  # fmt: skip
    assert {k: f.counts[k] for k in expected} == expected
    a = f.attributes
    assert a["has_line_crossing"] == 1 and a["closed_shape"] == 0 and a["convex"] is None
    assert a["symmetric"] == 1 and a["self_transposed"] == 1 and a["has_two_parts"] == 0


def test_fan():
    f = features(*FAN)
    expected = dict(straight_lines=3, arcs=1, acute_angles=2, right_angles=5, obtuse_angles=0, parts=2,
                    crossings=1, proper_crossings=0, junctions=2, closed_loops=2, free_ends=0)  # fmt: skip
    assert {k: f.counts[k] for k in expected} == expected
    a = f.attributes
    assert a["exist_sector"] == 1 and a["has_two_parts"] == 1 and a["balanced_two"] == 1
    assert a["symmetric"] == 1 and a["self_transposed"] == 0 and a["has_curve"] == 1
    assert a["has_three_straight_lines"] == 1 and a["exist_triangle"] == 0


def test_circle():
    f = features(*CIRCLE)
    expected = dict(straight_lines=0, arcs=1, corners=0, acute_angles=0, right_angles=0, obtuse_angles=0,
                    parts=1, crossings=0, closed_loops=1)  # fmt: skip
    assert {k: f.counts[k] for k in expected} == expected
    on = {a for a, v in f.attributes.items() if v == 1}
    assert on == {"convex", "has_curve", "symmetric", "self_transposed", "closed_shape", "exist_regular",
                  "symmetric_transposed"}  # fmt: skip


def test_a_circle_drawn_as_four_quarter_arcs_is_the_same_circle():
    assert features(*(Action.arc(0.5, 90) for _ in range(4))).attributes == features(*CIRCLE).attributes
    assert features(*(Action.arc(0.5, 90) for _ in range(4))).counts["arcs"] == 1


def test_every_attribute_is_reported():
    f = features(*SQUARE)
    assert set(f.attributes) == set(ATTRIBUTES)
    assert all(v in (0, 1, None) for v in f.attributes.values())


def test_a_shape_that_draws_nothing_has_no_attributes():
    f = features(Action.line(0.0), Action.arc(0.5, 0.0, 90))
    assert all(v is None for v in f.attributes.values())
    assert f.counts["straight_lines"] == 0 and f.counts["shapes"] == 1


def test_two_shapes_add_their_counts():
    one = image_features(ImageProgram((Shape(SQUARE),)))
    two = image_features(ImageProgram((Shape(SQUARE), Shape(CIRCLE))))
    assert two.counts["straight_lines"] == 4 and two.counts["arcs"] == 1 and two.counts["shapes"] == 2
    assert two.attributes["has_curve"] == 1 and one.attributes["has_curve"] == 0


LIBRARY_NAMES = sorted(load_library())


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(LIBRARY_NAMES),
    seed=st.integers(0, 10**6),
    scale=st.floats(0.3, 3.0),
)
def test_features_are_invariant_to_pose_scale_start_and_direction(name, seed, scale):
    shape = load_library()[name].shape
    original = image_features(ImageProgram((shape,)))
    other = image_features(ImageProgram((redrawn(shape, seed, scale),)))
    assert other.counts | {"actions": 0} == original.counts | {"actions": 0}
    assert other.attributes == original.attributes


@settings(max_examples=40, deadline=None)
@given(
    shape=st.sampled_from([SQUARE, ZIGZAG_TRIANGLE, CROSSING_LINES, FAN, CIRCLE]),
    seed=st.integers(0, 10**6),
    scale=st.floats(0.05, 20.0),
)
def test_hand_made_shapes_are_invariant_too(shape, seed, scale):
    original = features(*shape)
    other = image_features(ImageProgram((redrawn(Shape(shape), seed, scale),)))
    assert other.attributes == original.attributes
    assert other.counts | {"actions": 0} == original.counts | {"actions": 0}


def test_agreement_with_the_shape_table_stays_above_the_bar():
    from benchmarks.attributes import attribute_agreement

    result = attribute_agreement()
    assert result["agreement_overall"] >= 0.97
    assert min(result["agreement_per_attribute"].values()) >= 0.90
