"""The decoder: token targets round-trip, a tiny model trains and decodes on CPU, the shipped checkpoint
reads an official image."""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
import pytest
import torch

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.types import ImageProgram
from dsl.raster import official_view
from dsl.turtle import execute_shape
from perception.data import (apply_correction, crop_box, example_steps, jitter, prepare_image, sample_training_program,
                             steps_program, tracing_tokens)
from dsl.walk import State, target_tracing, variant_starts, walk_shape
from perception.decode import DEFAULT_CHECKPOINT, Proposal, decode_images, load_decoder, snap_free_form
from perception.commands import add_arguments
from perception.train import train

from tests.official import OFFICIAL_DEV


def test_the_taught_tracing_encodes_the_program():
    rng = np.random.default_rng(3)
    for _ in range(30):
        program, poses = sample_training_program(rng)
        steps = example_steps(program, poses, render_program(program, poses), rng)
        assert steps["kind"][0] == 2 and steps["kind"][-1] == 3  # NEXT first, STOP last
        assert same_image(steps_program(steps), program)


def test_the_tokens_teacher_forcing_reads_are_the_taught_steps_tokens():
    """`tracing_tokens` (what reading strokes along a program feeds the decoder, nothing drawn) gives exactly the
    kind, stroke, values and start arrays of `example_steps`, one and two shapes alike."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        program, poses = sample_training_program(rng)
        image = render_program(program, poses)
        steps = example_steps(program, poses, image, None)
        tokens = tracing_tokens(target_tracing(list(program.shapes), list(poses)), crop_box(image))
        assert tokens.keys() == {"kind", "stroke", "values", "start"}
        for key, value in tokens.items():
            assert value.dtype == steps[key].dtype and np.array_equal(value, steps[key])


def test_walking_a_tracing_from_its_start_redraws_the_shape():
    rng = np.random.default_rng(4)
    view = official_view(512)
    for k in range(40):
        program, poses = sample_training_program(rng)
        shape, pose = program.shapes[0], poses[0]
        ends = view.to_pixels(execute_shape(shape, pose, magnifier=False).end_points)
        for segments, start in variant_starts(shape, pose):
            states, _ = walk_shape(start, segments)
            for s in states:
                assert np.min(np.hypot(ends[:, 0] - s.x, ends[:, 1] - s.y)) < 1.0


def test_a_correction_undoes_its_jitter():
    rng = np.random.default_rng(6)
    true = State(200.0, 310.0, 1.2, 60.0)
    for _ in range(10):
        seen, corr = jitter(true, rng)
        back = apply_correction(seen, corr)
        assert np.allclose(back.as_tuple(), true.as_tuple(), atol=1e-4)


def test_prepare_image_crops_to_the_ink():
    rng = np.random.default_rng(5)
    program, poses = sample_training_program(rng)
    crop, side = prepare_image(render_program(program, poses), 96)
    assert crop.shape == (96, 96) and crop.dtype == np.float32
    assert 0.0 < side <= 1.2 and crop.max() > 0.5
    assert crop[0].max() < 0.2 and crop[-1].max() < 0.2  # a margin of background around the drawing


def test_snap_free_form_rounds_to_the_grid():
    from dsl.types import Action, Shape

    rough = ImageProgram((Shape((Action.line(0.93, 0.0), Action.arc(0.47, 84.0, 118.0))),))
    exact = ImageProgram((Shape((Action.line(1.0, 0.0), Action.arc(0.5, 90.0, 120.0))),))
    assert same_image(snap_free_form(rough), exact, length_tol=1e-6, angle_tol=1e-6)


def test_tiny_model_trains_and_decodes(tmp_path):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "tiny.pt"
    args = parser.parse_args([
        "--out", str(out), "--steps", "3", "--batch-size", "4", "--warmup", "1",
        "--feature", "16", "--hidden", "32", "--channels", "4,8,8,8", "--val-every", "3",
        "--val-size", "4", "--workers", "0", "--threads", "1",
    ])
    metrics = train(args)
    assert math.isfinite(metrics["loss"]) and 0.0 <= metrics["kind_accuracy"] <= 1.0
    assert torch.load(out, weights_only=True)["step"] == 3
    model = load_decoder(out)
    rng = np.random.default_rng(11)
    images = [render_program(*sample_training_program(rng)) for _ in range(2)]
    results = decode_images(model, images, top_k=3, beam_width=3)
    assert len(results) == 2
    for proposals in results:
        assert 1 <= len(proposals) <= 3
        assert all(isinstance(p, Proposal) and isinstance(p.program, ImageProgram) for p in proposals)
        logps = [p.logp for p in proposals]
        assert logps == sorted(logps, reverse=True) and all(math.isfinite(x) for x in logps)
    sampled = decode_images(model, images[:1], top_k=5, beam_width=2, sample=4)
    assert 1 <= len(sampled[0]) <= 5


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.is_file(), reason="no shipped decoder checkpoint")
@pytest.mark.skipif(not OFFICIAL_DEV.is_dir(), reason="shared official_dev data absent")
def test_shipped_checkpoint_decodes_an_official_image():
    from dsl.dataset import load_split

    assert DEFAULT_CHECKPOINT.stat().st_size < 20 * 2**20
    model = load_decoder()
    problem = load_split(OFFICIAL_DEV, "dev_ff")[0]
    image = problem.positives[0]
    proposals = decode_images(model, [image.load()], top_k=10)[0]
    assert 1 <= len(proposals) <= 10
    assert proposals[0].logp >= proposals[-1].logp
    # the decoder is trained for this: some proposal has the right number of shapes
    assert any(len(p.program.shapes) == len(image.program.shapes) for p in proposals)


def test_teacher_forcing_walks_every_true_step():
    from perception.beam import teacher_forced
    from perception.config import DecoderConfig
    from perception.model import Decoder

    torch.manual_seed(0)
    model = Decoder(DecoderConfig(feature=16, hidden=32, channels=(4, 8, 8, 8), head_hidden=16)).eval()
    rng = np.random.default_rng(8)
    drawn = [sample_training_program(rng) for _ in range(3)]
    images = [render_program(p, q) for p, q in drawn]
    steps = [example_steps(p, q, im, None) for (p, q), im in zip(drawn, images)]
    out = teacher_forced(model, images, steps)
    for s, o in zip(steps, out):
        n_actions = int(np.isin(s["kind"], (0, 1)).sum())
        assert len(o["kind"]) == len(s["kind"])
        assert len(o["stroke"]) == len(o["turn"]) == len(o["value"]) == n_actions
        assert all(0 <= k < 4 for k in o["kind"]) and all(0 <= x < 5 for x in o["stroke"])
    strokes = teacher_forced(model, images, steps, strokes_only=True)  # the other heads skipped: the same strokes
    assert [o["stroke_logp"] for o in strokes] == [o["stroke_logp"] for o in out]
    assert [o["stroke"] for o in strokes] == [o["stroke"] for o in out]


def test_within_a_block_the_decoder_walks_each_tracing_in_an_image_once(monkeypatch):
    import perception.beam as beam
    from perception.config import DecoderConfig
    from perception.beam import work_remembered
    from perception.decode import read_strokes
    from perception.model import Decoder

    torch.manual_seed(0)
    model = Decoder(DecoderConfig(feature=16, hidden=32, channels=(4, 8, 8, 8), head_hidden=16)).eval()
    rng = np.random.default_rng(8)
    (p, q), (p2, q2) = sample_training_program(rng), sample_training_program(rng)
    image, other = render_program(p, q), render_program(p2, q2)
    walked = []
    real = beam.teacher_forced
    monkeypatch.setattr(beam, "teacher_forced", lambda m, images, steps, **kw: walked.append(len(images)) or real(
        m, images, steps, **kw))
    fresh = read_strokes(model, [image, other], [p, p2], [q, q2])
    with work_remembered():
        first = read_strokes(model, [image, image.copy(), other], [p, p, p2], [q, q, q2])  # the copy: the same pixels
        with work_remembered():  # a block inside another keeps its work
            again = read_strokes(model, [other, image], [p2, p], [q2, q])
        moved = read_strokes(model, [image], p, [[dataclasses.replace(pose, x=pose.x + 5) for pose in q]])
    outside = read_strokes(model, [image], p, [q])
    assert walked == [2, 2, 1, 1]  # (fresh) two rows; then two new rows, none new, one new; outside: walked again
    assert first[0] == first[1] and again == [first[2], first[0]]
    logps = lambda readings: np.concatenate([np.ravel(r.logps) for r in readings])  # noqa: E731
    assert np.allclose(logps(first[::2]), logps(fresh), atol=1e-4)  # the batch's other rows: about 1e-6 apart
    assert not np.allclose(logps(moved), logps(first[:1])) and np.allclose(logps(outside), logps(fresh[:1]), atol=1e-4)


def test_head_options_are_the_mixtures_options_exactly():
    """Decoding reads the heads' heaviest components without building the distributions: the same numbers."""
    from perception.config import DecoderConfig
    from perception.model import ARC, Decoder, mixture_options

    torch.manual_seed(0)
    model = Decoder(DecoderConfig(feature=16, hidden=32, channels=(4, 8, 8, 8), head_hidden=16)).eval()
    rows = 5
    ctx = torch.randn(rows, 32 + 2 * 16)
    kind = torch.full((rows,), ARC)
    turn, curve = torch.randn(rows), torch.randn(rows)
    feature, theta = torch.randn(rows, 16), torch.randn(rows)
    global_view = torch.rand(rows, 2, 64, 64)
    head = model.start_head
    kind_context = model.kind_context(ctx, kind)
    turn_context = model.turn_context(kind_context, turn)
    pairs = [
        (model.turn_options(kind_context, 3), mixture_options(model.turn_dist(ctx, kind), 3)),
        (model.length_options(turn_context, 2), mixture_options(model.length_dist(ctx, kind, turn), 2)),
        (model.curve_options(turn_context, 2), mixture_options(model.curve_dist(ctx, kind, turn), 2)),
        (model.radius_options(turn_context, curve, 1), mixture_options(model.radius_dist(ctx, kind, turn, curve), 1)),
        (head.position_options(ctx, global_view, 12), mixture_options(head.position_dist(ctx, global_view), 12)),
        (head.direction_options(ctx, feature, 2, 0.05), mixture_options(head.direction_dist(ctx, feature), 2, tolerance=0.05)),
        (head.unit_options(ctx, feature, theta, 1), mixture_options(head.unit_dist(ctx, feature, theta), 1)),
        ((model.correction_mean(ctx),), (model.correction_dist(ctx).mean,)),
    ]
    for fast, slow in pairs:
        assert all(torch.equal(a, b) for a, b in zip(fast, slow))


def test_top_components_without_close_components_is_the_merged_answer():
    """Rows with no two components within the tolerance take a short cut: the same numbers as when merged."""
    from perception.model import normalised, top_components

    torch.manual_seed(1)
    spread = torch.arange(5.0).repeat(4, 1) / 10 + torch.rand(4, 1)  # components 0.1 apart
    close = spread[:1].clone()
    close[0, 1] = close[0, 0] + 0.001  # one row with a close pair: every row merged
    logits = normalised(torch.randn(5, 5))
    short = top_components(spread, logits[:4], 3)
    merged = top_components(torch.cat([spread, close]), logits, 3)
    assert torch.equal(short[0], merged[0][:4]) and torch.equal(short[1], merged[1][:4])
    w = logits[4].log_softmax(-1)
    assert torch.isclose(merged[1][4], torch.logaddexp(w[0], w[1])).any()  # the close pair's weights added


def test_a_model_trains_after_decoding_in_the_same_process():
    """Decoding runs under torch.inference_mode; what it caches (glimpse offsets) must stay usable for training."""
    from perception.beam import search
    from perception.config import DecoderConfig
    from perception.glimpse import _offsets
    from perception.model import Decoder

    _offsets.cache_clear()
    torch.manual_seed(0)
    model = Decoder(DecoderConfig(feature=16, hidden=32, channels=(4, 8, 8, 8), head_hidden=16, max_steps=4)).eval()
    program, pose = sample_training_program(np.random.default_rng(3))
    image = render_program(program, pose)
    search(model, [image], beam=2)
    states = torch.tensor([[256.0, 256.0, 0.3, 40.0]], requires_grad=True)
    from perception.glimpse import glimpse_grid
    from perception.settings import LOCAL_REACH

    size = (model.config.local_size,) * 2  # the local glimpse decoding asked for
    grid = glimpse_grid(states, (LOCAL_REACH, LOCAL_REACH), size, torch.tensor([[0.0, 0.0, 512.0]]))
    grid.sum().backward()
    assert states.grad is not None
