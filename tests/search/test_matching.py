from dataclasses import replace

from hypothesis import HealthCheck, given, settings, strategies as st

from dsl.library import load_library
from dsl.types import Action, ImageProgram, Shape
from search.matching import ShapeMatch, best_match_names, describe, distance, image_categories, library_index, match_shape
from tests.drawing import redrawn

NAMES = sorted(load_library())


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), seed=st.integers(0, 10**6), scale=st.floats(0.3, 3.0))
def test_redrawn_library_shapes_come_back_top1(name, seed, scale):
    matches = match_shape(redrawn(load_library()[name].shape, seed, scale), top=3)
    assert name in matches[0].names
    assert matches[0].score > 0.95


def test_identical_library_drawings_are_one_tied_group():
    groups = library_index().groups
    assert ("sector180", "closed_semi_circle") in groups  # a half disc, drawn two ways
    assert sum(len(g) for g in groups) == len(NAMES)


def test_scores_are_ordered_and_mirror_images_are_different_shapes():
    shape = load_library()["right_nonequi_triangle"].shape
    mirrored = Shape(tuple(a.with_turn(-a.turn) for a in shape.actions))
    matches = match_shape(mirrored, top=5)
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    assert all(isinstance(m, ShapeMatch) for m in matches)
    assert all(0.0 <= m.score <= 1.0 for m in matches)
    assert "right_nonequi_triangle" not in matches[0].names and matches[0].score < 0.95


def test_image_categories_per_shape():
    library = load_library()
    program = ImageProgram((library["equilateral_traingle"].shape, library["closed_circle"].shape))
    first, second = image_categories(program, top=2)
    assert "equilateral_traingle" in first[0].names and "closed_circle" in second[0].names
    assert len(first) == 2


def test_a_shape_that_draws_nothing_matches_nothing():
    assert match_shape(Shape((Action.line(0.0),))) == []


def test_compiled_chamfers_equal_the_tree_queries():
    """The compiled sweep finds the same nearest points as k-d tree queries, on library shapes (straight runs,
    whose points share one x, among them) and on random clouds, at any turn."""
    import numpy as np

    from search.matching import chamfers_at, chamfers_reference

    points = library_index().points
    rng = np.random.default_rng(7)
    clouds = [rng.normal(size=(int(rng.integers(1, 200)), 2)) for _ in range(20)]
    pairs = [(points[i], points[j]) for i, j in rng.integers(len(points), size=(200, 2))]
    pairs += list(zip(clouds, clouds[::-1]))
    for a, b in pairs:
        angles = rng.uniform(-7.0, 7.0, size=3)
        assert np.allclose(chamfers_at(a, b, angles), chamfers_reference(a, b, angles), rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), action=st.integers(0, 11), turn=st.sampled_from([-60.0, -20.0, -5.0, 0.0, 5.0, 30.0]),
       stretch=st.sampled_from([0.6, 0.95, 1.0, 1.3]), min_score=st.sampled_from([0.5, 0.9, 0.95]))
def test_best_match_names_answer_as_the_full_match(name, action, turn, stretch, min_score):
    """The match with its hopeless candidates left unrefined names the same group as the full match, for library
    shapes and shapes one action away from them (some near a library shape, some far)."""
    shape = load_library()[name].shape
    k = action % len(shape.actions)
    a = shape.actions[k]
    changed = replace(a, turn=a.turn + turn, length=a.length * stretch) if a.is_line else replace(
        a, turn=a.turn + turn, angle=a.angle * stretch)
    shape = Shape(shape.actions[:k] + (changed,) + shape.actions[k + 1:])
    full = match_shape(shape, top=1)
    expected = full[0].names if full and full[0].score >= min_score else ()
    assert best_match_names(shape, min_score) == expected


def test_distance_refines_whatever_may_come_within_reach():
    """A distance asked only up to `above` is exact when it is within it, and otherwise no lower than the exact one."""
    library = load_library()
    query = describe(redrawn(library["square"].shape, 3, 1.0))
    for name in ("square", "equilateral_traingle", "closed_circle"):
        target = describe(library[name].shape)
        exact = distance(query, target)
        rough = distance(query, target, above=0.025)
        assert rough == exact if exact <= 0.025 else rough >= exact
