"""The Numba kernels against their plain-Python twins on random inputs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from search import kernel_twins, kernels, pixel_kernels, trace_kernels


def _random_case(rng: np.random.Generator, shapes: int):
    h, w = rng.integers(20, 60, size=2)
    dt = rng.uniform(0.0, 12.0, size=(h, w))
    m = int(rng.integers(1, 40))
    points = rng.uniform(-1.0, 1.0, size=(m, 2))
    radii = rng.uniform(0.5, 3.0, size=m)
    owner = rng.integers(0, shapes, size=m).astype(np.int64)
    poses = np.column_stack([
        rng.uniform(0, w, shapes), rng.uniform(0, h, shapes), rng.uniform(-30, 30, shapes), rng.uniform(-30, 30, shapes)
    ])
    samples = rng.uniform(-5.0, max(h, w) + 5.0, size=(int(rng.integers(1, 50)), 2))
    return points, radii, owner, poses, dt, samples


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shapes=st.integers(1, 2))
def test_sparse_score_matches_reference(seed, shapes):
    case = _random_case(np.random.default_rng(seed), shapes)
    fast = kernels.sparse_score(*case, 8.0, 10.0)
    slow = kernel_twins.sparse_score_reference(*case, 8.0, 10.0)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_window_l1_matches_reference(seed):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, size=(30, 40)).astype(np.uint8)
    rendered = rng.integers(0, 256, size=(int(rng.integers(1, 20)),) * 2).astype(np.uint8)
    r0, c0 = (int(v) for v in rng.integers(-10, 35, size=2))
    expected = kernel_twins.window_l1_reference(rendered, image, r0, c0)
    assert pixel_kernels.window_l1(rendered, image, r0, c0) == pytest.approx(expected)
    assert pixel_kernels.window_l1_shifted(rendered, image, r0, c0, 1) == pytest.approx(
        kernel_twins.window_l1_shifted_reference(rendered, image, r0, c0, 1)
    )


def test_sparse_score_is_zero_for_points_on_ink():
    dt = np.zeros((20, 20))
    points = np.array([[0.0, 0.0]])
    samples = np.array([[10.5, 10.5]])
    forward, reverse = kernels.sparse_score(
        points, np.array([2.0]), np.zeros(1, dtype=np.int64), np.array([[10.5, 10.5, 1.0, 0.0]]), dt, samples, 8.0, 10.0
    )
    assert forward == 0.0 and reverse == 0.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), equal_radii=st.booleans())
def test_reverse_sum_is_exactly_the_plain_loop(seed, equal_radii):
    # the skipped blocks and the covered-sample shortcut must not change a bit of the sum: a centreline (points
    # along a walk, many blocks) and samples near it, on it and far from it
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 140))
    steps = rng.normal(0.0, 3.0, size=(m, 2))
    cols, rows = (np.cumsum(steps, axis=0) + 60.0).T.copy()
    radii = np.full(m, 2.6) if equal_radii else rng.uniform(0.5, 3.0, size=m)
    near = np.column_stack([cols, rows])[rng.integers(0, m, size=80)] + rng.normal(0.0, 3.0, size=(80, 2))
    samples = np.concatenate([near, rng.uniform(-20.0, 140.0, size=(int(rng.integers(0, 40)), 2))])
    total, whole = kernels._reverse_sum(cols, rows, radii, samples, 10.0, 0.0, np.inf, False, kernels.NO_LISTS,
                                        kernels.NO_LISTS)
    assert whole and total == kernel_twins.reverse_sum_reference(cols, rows, radii, samples, 10.0)
    bound = float(rng.uniform(0.0, 3.0))  # stopped early only where the whole sum exceeds the bound too
    partial, whole = kernels._reverse_sum(cols, rows, radii, samples, 10.0, 0.5, bound, False, kernels.NO_LISTS,
                                          kernels.NO_LISTS)
    assert partial <= total and (whole or 0.5 + total / len(samples) > bound)
    if whole:
        assert partial == total


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), moved=st.floats(0.0, 1.0))
def test_near_point_lists_give_exactly_the_plain_loop(seed, moved):
    # lists made at one pose, the sum taken at a pose whose points moved up to LIST_SLACK: the same sum to the bit
    from search.settings import LIST_SLACK

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 140))
    cols, rows = (np.cumsum(rng.normal(0.0, 3.0, size=(m, 2)), axis=0) + 60.0).T.copy()
    radii = rng.uniform(0.5, 3.0, size=m)
    samples = np.column_stack([cols, rows])[rng.integers(0, m, size=100)] + rng.normal(0.0, 4.0, size=(100, 2))
    starts, members = kernels._near_lists(cols, rows, radii, samples, 10.0, LIST_SLACK)
    angle = rng.uniform(0.0, 2.0 * np.pi, size=m)
    shift = moved * LIST_SLACK * rng.uniform(0.0, 1.0, size=m)
    cols, rows = cols + shift * np.cos(angle), rows + shift * np.sin(angle)
    assert kernels._moved_by(cols, rows, cols - shift * np.cos(angle), rows - shift * np.sin(angle)) <= LIST_SLACK + 1e-9
    total, whole = kernels._reverse_sum(cols, rows, radii, samples, 10.0, 0.0, np.inf, False, starts, members)
    assert whole and total == kernel_twins.reverse_sum_reference(cols, rows, radii, samples, 10.0)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shapes=st.integers(1, 2))
def test_pattern_search_matches_reference(seed, shapes):
    rng = np.random.default_rng(seed)
    points, radii, owner, _, dt, samples = _random_case(rng, shapes)
    h, w = dt.shape
    params = np.column_stack([rng.uniform(0, w, shapes), rng.uniform(0, h, shapes), rng.uniform(0, 360, shapes),
                              rng.uniform(5, 30, shapes)])
    movable = np.ones(shapes, dtype=np.bool_)
    steps = np.array([1.5, 1.5, 4.0, 0.04])
    args = (points, radii, owner, params, movable, dt, samples, 8.0, 10.0, steps, 30, 0.125, 8.0)
    fast = kernels.pattern_search(*args)
    slow = kernel_twins.pattern_search_reference(*args)
    np.testing.assert_allclose(fast[0], np.array(slow[0]), rtol=1e-9, atol=1e-9)
    assert fast[1] == pytest.approx(slow[1], rel=1e-9, abs=1e-12)


def test_sparse_scores_matches_reference():
    rng = np.random.default_rng(7)
    points, radii, owner, poses, dt, samples = _random_case(rng, 2)
    pose_sets = np.stack([poses, poses + 1.0, poses * 0.9])
    np.testing.assert_allclose(
        kernels.sparse_scores(points, radii, owner, pose_sets, dt, samples, 8.0, 10.0),
        kernel_twins.sparse_scores_reference(points, radii, owner, pose_sets, dt, samples, 8.0, 10.0),
    )


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), keep=st.integers(1, 4))
def test_best_sparse_scores_keeps_the_same_lowest(seed, keep):
    # the heading scan: the pruned scan must choose exactly the pose sets the full one does
    rng = np.random.default_rng(seed)
    points, radii, owner, poses, dt, samples = _random_case(rng, 1)
    turns = np.radians(np.arange(0.0, 360.0, 10.0))
    scale = np.hypot(poses[0, 2], poses[0, 3])
    pose_sets = np.stack([np.array([[poses[0, 0], poses[0, 1], scale * np.cos(t), scale * np.sin(t)]]) for t in turns])
    full = kernels.sparse_scores(points, radii, owner, pose_sets, dt, samples, 8.0, 10.0)
    pruned = kernels.best_sparse_scores(points, radii, owner, pose_sets, dt, samples, 8.0, 10.0, keep)
    chosen = np.argsort(full, kind="stable")[:keep]
    np.testing.assert_array_equal(np.argsort(pruned, kind="stable")[:keep], chosen)
    np.testing.assert_array_equal(pruned[chosen], full[chosen])
    assert np.all(np.isinf(pruned) | (pruned == full))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.integers(0, 3))
def test_window_l1_shifted_matches_reference_on_sparse_renders(seed, shift):
    # renders are mostly white: the sparse form (integral image + ink pixels) must give the same sums
    rng = np.random.default_rng(seed)
    image = np.where(rng.random((30, 40)) < 0.3, rng.integers(0, 256, size=(30, 40)), 255).astype(np.uint8)
    size = int(rng.integers(1, 25))
    rendered = np.where(rng.random((size, size)) < 0.2, rng.integers(0, 255, size=(size, size)), 255).astype(np.uint8)
    r0, c0 = (int(v) for v in rng.integers(-10, 35, size=2))
    assert pixel_kernels.window_l1_shifted(rendered, image, r0, c0, shift) == pytest.approx(
        kernel_twins.window_l1_shifted_reference(rendered, image, r0, c0, shift)
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_trace_step_matches_reference(seed):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(20, 60, size=2))
    dt = rng.uniform(0.0, 12.0, size=(h, w))
    local = rng.uniform(-1.0, 1.0, size=(int(rng.integers(1, 6)), int(rng.integers(2, 8)), 2))
    samples = rng.uniform(0.0, max(h, w), size=(int(rng.integers(1, 40)), 2))
    covered = rng.random(len(samples)) < 0.3
    x, y = rng.uniform(0, w), rng.uniform(0, h)
    theta, u = rng.uniform(-4, 4), rng.uniform(5, 30)
    max_forward = float(rng.uniform(0.05, 0.5))
    forward, new = trace_kernels.trace_step(local, x, y, theta, u, dt, samples, covered, 0.3, max_forward, 0.2)
    forward_ref, new_ref = kernel_twins.trace_step_reference(local, x, y, theta, u, dt, samples, covered, 0.3, max_forward, 0.2)
    np.testing.assert_allclose(forward, forward_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(new, np.array(new_ref, dtype=bool))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), arcs_agree=st.booleans())
def test_trace_beam_matches_reference(seed, arcs_agree):
    rng = np.random.default_rng(seed)
    ink = np.zeros((60, 70), dtype=bool)  # a few ink strokes, their distance transform (pixels) as the tracer's
    for _ in range(3):
        r, c = rng.integers(5, 55), rng.integers(5, 65)
        ink[r, c:c + int(rng.integers(5, 30))] = True
        ink[r:r + int(rng.integers(5, 30)), c] = True
    dt = ndimage.distance_transform_edt(~ink)
    samples = np.argwhere(ink)[:, ::-1] + 0.5
    moves = np.arange(6)
    local = np.cumsum(rng.uniform(-0.2, 0.4, size=(6, 5, 2)), axis=1)  # six moves of five points, in units
    tables = np.column_stack([rng.integers(-1, 2, 6), rng.integers(0, 2, 6), local[:, -1], rng.uniform(-2, 2, 6)])
    arc_side = rng.integers(-1, 2, 6)
    start = np.array([samples[0, 0], samples[0, 1], rng.uniform(-3, 3)])
    args = (local[:3].copy(), moves[:3].copy(), local, moves, start, 12.0, dt, samples, 0.3, 0.2, 0.2, tables.astype(float),
            arc_side, np.array([1.0, 0.05, 0.3]), arcs_agree, 4, 5)
    score, walked, count, state, covered, ints = trace_kernels.trace_beam(*args)
    reference = kernel_twins.trace_beam_reference(*args)
    assert len(reference) == len(score)
    for r, (s, done, x, y, theta, forward, union, side, deviations, arcs) in enumerate(reference):
        assert tuple(walked[r, :count[r]]) == done
        np.testing.assert_allclose([score[r], *state[r]], [s, x, y, theta, forward], rtol=1e-9, atol=1e-12)
        assert covered[r].tolist() == union and tuple(ints[r]) == (side, deviations, arcs)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shapes=st.integers(1, 3))
def test_posed_marks_matches_reference(seed, shapes):
    rng = np.random.default_rng(seed)
    marks = [int(rng.integers(0, 6)) for _ in range(shapes)]  # a shape may have no marks
    lengths = rng.integers(1, 8, size=sum(marks))
    lengths[rng.uniform(size=len(lengths)) < 0.1] = 0  # and a mark may be empty
    points = rng.uniform(-3.0, 3.0, size=(int(lengths.sum()), 2))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    kinds = rng.integers(0, 2, size=len(lengths)).astype(np.int64)
    shape_marks = np.concatenate([[0], np.cumsum(marks)]).astype(np.int64)
    affines = np.column_stack([rng.uniform(-20, 60, shapes), rng.uniform(-20, 60, shapes),
                               rng.uniform(-15, 15, shapes), rng.uniform(-15, 15, shapes)])
    dc, dr, size = float(rng.integers(-20, 20)), float(rng.integers(-20, 20)), int(rng.integers(5, 50))
    fast = pixel_kernels.posed_marks(points, offsets, kinds, shape_marks, affines, dc, dr, size, 3.0)
    slow = kernel_twins.posed_marks_reference(points, offsets, kinds, shape_marks, affines, dc, dr, size, 3.0)
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)  # the same arithmetic: bit for bit


def test_posed_marks_leaves_out_only_marks_that_miss_the_window():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [100.0, 0.0], [101.0, 0.0]])
    offsets = np.array([0, 2, 4], dtype=np.int64)
    kinds = np.array([0, 1], dtype=np.int64)
    identity = np.array([[5.0, 5.0, 1.0, 0.0]])  # column = 5 + x, row = 5 - y
    out, out_offsets, out_kinds = pixel_kernels.posed_marks(points, offsets, kinds, np.array([0, 2]), identity, 0.0, 0.0, 20, 3.0)
    np.testing.assert_array_equal(out, [[5.0, 5.0], [6.0, 5.0]])
    assert list(out_offsets) == [0, 2] and list(out_kinds) == [0]


@pytest.mark.parametrize("shape", [0, 1])
def test_pixel_pattern_search_matches_reference(shape):
    # a stamped and zigzag shape and a stamped line drawn small, one of them searched from off its pose
    from dsl.raster import render_marks
    from dsl.syntax import parse_image
    from search.pose import _packed_marks
    from search.template import template

    program = parse_image([["line_square_1.000-0.500", "arc_zigzag_0.500_0.625-0.750"], ["line_circle_1.000-0.500"]])
    points, offsets, kinds, shape_marks = _packed_marks([template(s) for s in program.shapes])
    true = np.array([[12.0, 40.0, 18.0 * np.cos(0.2), 18.0 * np.sin(0.2)], [34.0, 20.0, 15.0, 5.0]])
    image = render_marks(*pixel_kernels.posed_marks(points, offsets, kinds, shape_marks, true, 0.0, 0.0, 56, 5.0), 56, 1.2, 0.8)
    theta = np.degrees(np.arctan2(true[shape, 3], true[shape, 2])) + 4.0
    params = np.array([true[shape, 0] + 0.7, true[shape, 1] - 0.4, theta, np.hypot(*true[shape, 2:]) * 1.03])
    window = np.array([-2.0, 1.0, 54.0, -1.0, 2.0, 5.0])
    darkness, count = pixel_kernels.window_darkness(image, -2, 1, 54)
    args = (points, offsets, kinds, shape_marks, true, shape, params, window, image, darkness, count,
            np.array([1.2, 0.8]), np.array([0.5, 0.5, 1.0, 0.01]), 60, 0.125)
    fast = pixel_kernels.pixel_pattern_search(*args)
    slow = kernel_twins.pixel_pattern_search_reference(*args)
    np.testing.assert_array_equal(fast[0], slow[0])
    assert fast[1] == slow[1]
    assert not np.array_equal(fast[0], params)  # it moved


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.integers(0, 2))
def test_rendered_l1_shifted_is_window_l1_shifted_of_the_render(seed, shift):
    # rendered in place from the marks' ink box: the same least sum as rendering the window first, for windows
    # inside the image, running off its edges, and empty
    from dsl.raster import render_marks

    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, size=(40, 50)).astype(np.uint8)
    size = int(rng.integers(4, 30))
    r0, c0 = int(rng.integers(-10, 40)), int(rng.integers(-10, 45))
    lengths = rng.integers(1, 7, size=int(rng.integers(0, 5)))
    points = rng.uniform(-2.0, size + 2.0, size=(int(lengths.sum()), 2))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    kinds = rng.integers(0, 2, size=len(lengths)).astype(np.int64)
    rendered = render_marks(points, offsets, kinds, size, 1.3, 0.9)
    integral = pixel_kernels.darkness_integral(image, r0 - shift, c0 - shift, size + 2 * shift, size + 2 * shift)
    fast = pixel_kernels.rendered_l1_shifted(points, offsets, kinds, size, 1.3, 0.9, image, r0, c0, shift, integral)
    assert fast == pixel_kernels.window_l1_shifted(rendered, image, r0, c0, shift)


def test_stable_argsort_and_bisect_match_numpy():
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 3, 7, 64, 301):
        keys = np.round(rng.normal(size=n), 1)  # rounded: many equal keys, whose order must be kept
        assert np.array_equal(kernels.stable_argsort(keys), np.argsort(keys, kind="stable"))
        ordered = np.sort(keys)
        for value in list(keys[:5]) + [-9.0, 9.0, 0.05]:
            for right, side in ((False, "left"), (True, "right")):
                assert kernels.bisect(ordered, value, right) == np.searchsorted(ordered, value, side)
