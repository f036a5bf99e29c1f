"""`bongard-solver bench decoder`: how well the decoder reads programs from images.

    bongard-solver bench decoder --data ../shared/data/official_dev --split dev_ff --json OUT
    bongard-solver bench decoder --data generated --split ff --limit 24 --json OUT   # our own renders

`--data generated` makes held-out images with our generator and renderer instead of reading a dataset:
split `ff` = official free-form problems (`dsl.generate.generate_free_form`, the 12 official settings in
turn, seed `--seed`), split `train` = the decoder's own training distribution under another seed.
`--limit` counts problems (14 images each) or, for `train`, images.

Figures (all images of all problems):
  kind_accuracy, type_accuracy   teacher-forced, as in the official program-synthesis model (spec §6.3):
                                 per step, argmax action kind (line/arc/next/stop) and argmax stroke type
                                 given the true kind, the previous steps being the truth; the truth is
                                 taken in the tracing (start, direction, shape order) the model finds
                                 most likely among up to 48 equivalent ones
  turn_error_deg, length_error, arc_angle_error_deg, radius_error
                                 teacher-forced mean absolute error of the heaviest mixture component
  exact_top1, exact_topk         the top-1 / any of the top-k decoded programs equals the truth up to
                                 pose, start point, direction and shape order (`dsl.canonical.same_image`).
                                 Free-form splits (name containing "ff"): decoded values are first
                                 snapped to the free-form grid (turns to 30 deg, arcs to 90 deg / radius
                                 0.5, lines to length 1), then compared with length_tol 0.02 and angle_tol
                                 2 deg (the official strings have 3 decimals: L120 is stored as 119.88).
                                 Other splits: no snapping, length_tol 0.05, angle_tol 5 deg.
  exact_top1_unsnapped, exact_topk_unsnapped   the same without snapping (length_tol 0.05, 5 deg)
  exact_top1_strokes_ignored     top-1 equal when stroke types are ignored
With `--refine`, `benchmarks.refine_metrics.measure(items)` (the search side's render-and-compare
refinement of these proposals) adds its keys to the output.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from dsl.canonical import canonical_image, same_image
from dsl.types import ImageProgram
from perception.data import collate, sample_training_program, variant_targets
from perception.decode import decode_images, load_decoder, prepare_batch, snap_free_form
from perception.model import ARC, CURVE, LENGTH, LINE, RADIUS, TURN, Decoder, mixture_options

SNAPPED_TOLERANCE = {"length_tol": 0.02, "angle_tol": 2.0}
RAW_TOLERANCE = {"length_tol": 0.05, "angle_tol": 5.0}
MAX_TRUTH_VARIANTS = 48


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench decoder", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="dataset root (official layout) or 'generated'")
    parser.add_argument("--split", required=True, help="split name (e.g. dev_ff); with --data generated: ff or train")
    parser.add_argument("--limit", type=int, default=None, help="at most this many problems (images for train)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--beam", type=int, default=None, help="beam width (default max(top-k, 8))")
    parser.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    parser.add_argument("--seed", type=int, default=20261121, help="seed of generated held-out images")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--refine", action="store_true", help="also run benchmarks.refine_metrics.measure")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    return parser.parse_args(argv)


def generated_images(split: str, limit: int | None, seed: int) -> list[tuple[np.ndarray, ImageProgram]]:
    from dsl.generate import FREE_FORM_SETTINGS, generate_free_form
    from dsl.raster import render_program

    rng = np.random.default_rng(seed)
    if split == "train":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            drawn = [sample_training_program(rng) for _ in range(limit or 336)]
        return [(render_program(p, q), p) for p, q in drawn]
    if split != "ff":
        raise SystemExit(f"bench decoder: generated split must be 'ff' or 'train', got {split!r}")
    out = []
    for number in range(limit or 24):
        problem = generate_free_form(rng, FREE_FORM_SETTINGS[number % len(FREE_FORM_SETTINGS)], number)
        for programs, poses in ((problem.positives, problem.positive_poses), (problem.negatives, problem.negative_poses)):
            out += [(render_program(p, q), p) for p, q in zip(programs, poses)]
    return out


def dataset_images(root: str, split: str, limit: int | None) -> list[tuple[np.ndarray, ImageProgram]]:
    from dsl.dataset import load_split

    problems = load_split(root, split)[:limit]
    return [(image.load(), image.program) for p in problems for image in p.positives + p.negatives]


@torch.no_grad()
def teacher_forced(model: Decoder, images: list[np.ndarray], truths: list[ImageProgram], rng) -> dict[str, list]:
    """Per-step correctness of kind / stroke and absolute argument errors, on each image's likeliest tracing."""
    crops, sides = prepare_batch(model, images)
    batch = collate([{"image": c.numpy()[0], "side": float(s), "variants": variant_targets(
        t, rng, MAX_TRUTH_VARIANTS, model.config.max_steps)} for c, s, t in zip(crops, sides, truths)])
    out, _ = model({"image": batch["image"], "side": batch["side"]}, batch)
    owner, seq = batch["owner"], out["sequence_logp"]
    best = torch.stack([torch.nonzero(owner == i)[seq[owner == i].argmax()][0] for i in range(len(images))])
    kind, stroke, values, has_turn = (batch[k][best] for k in ("kind", "stroke", "values", "has_turn"))
    ctx = model.teacher_forced(out["memory"], out["feature"], kind, stroke, values)
    valid, action = kind >= 0, (kind == LINE) | (kind == ARC)
    pred_kind = model.kind_dist(ctx[valid]).logits.argmax(-1)
    a_ctx, a_kind, a_stroke, a_val = ctx[action], kind[action], stroke[action], values[action]
    pred_stroke = model.stroke_dist(a_ctx, a_kind).logits.argmax(-1)
    mode = lambda mix: mixture_options(mix, 1)[0][:, 0]  # noqa: E731 - the heaviest component's mean
    turn = mode(model.turn_dist(a_ctx, a_kind, a_stroke))
    line, arc, free_turn = a_kind == LINE, a_kind == ARC, has_turn[action]
    turn_error = ((turn - a_val[:, TURN]) * 180 + 180) % 360 - 180
    args = (a_ctx, a_kind, a_stroke, a_val[:, TURN])
    length = mode(model.length_dist(*args))
    curve = mode(model.curve_dist(*args))
    radius = mode(model.radius_dist(*args, a_val[:, CURVE]))
    return {
        "kind": (pred_kind == kind[valid]).tolist(),
        "type": (pred_stroke == a_stroke).tolist(),
        "turn_error_deg": turn_error[free_turn].abs().tolist(),
        "length_error": (length - a_val[:, LENGTH])[line].abs().tolist(),
        "arc_angle_error_deg": ((curve - a_val[:, CURVE]) * 360)[arc].abs().tolist(),
        "radius_error": (radius - a_val[:, RADIUS])[arc].abs().tolist(),
    }


def exact(proposals, truth: ImageProgram, free_form: bool) -> dict[str, list[bool]]:
    raw = [same_image(p.program, truth, **RAW_TOLERANCE) for p in proposals]
    snapped = [same_image(snap_free_form(p.program), truth, **SNAPPED_TOLERANCE) for p in proposals] if free_form else raw
    return {
        "exact_top1": snapped[:1] == [True],
        "exact_topk": any(snapped),
        "exact_top1_unsnapped": raw[:1] == [True],
        "exact_topk_unsnapped": any(raw),
        "exact_top1_strokes_ignored": bool(proposals) and same_image(
            snap_free_form(proposals[0].program) if free_form else proposals[0].program, truth,
            **(SNAPPED_TOLERANCE if free_form else RAW_TOLERANCE), ignore_strokes=True),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    model = load_decoder(args.checkpoint)
    if args.data == "generated":
        items = generated_images(args.split, args.limit, args.seed)
    else:
        items = dataset_images(args.data, args.split, args.limit)
    free_form = "ff" in args.split
    rng = np.random.default_rng(0)
    steps: dict[str, list] = {}
    per_image: dict[str, list] = {}
    proposals_all = []
    start = time.time()
    chunk = 16
    for i in tqdm(range(0, len(items), chunk), desc="bench decoder", mininterval=5):
        images, truths = [im for im, _ in items[i : i + chunk]], [canonical_image(t) for _, t in items[i : i + chunk]]
        for key, value in teacher_forced(model, images, truths, rng).items():
            steps.setdefault(key, []).extend(value)
        proposals = decode_images(model, images, top_k=args.top_k, beam_width=args.beam)
        proposals_all += proposals
        for props, truth in zip(proposals, truths):
            for key, value in exact(props, truth, free_form).items():
                per_image.setdefault(key, []).append(bool(value))
    seconds = time.time() - start
    result = {
        "data": args.data, "split": args.split, "images": len(items), "top_k": args.top_k,
        "checkpoint": str(args.checkpoint or "shipped"),
        "kind_accuracy": float(np.mean(steps["kind"])), "type_accuracy": float(np.mean(steps["type"])),
        **{k: float(np.mean(v)) if v else None for k, v in steps.items() if k not in ("kind", "type")},
        **{k: float(np.mean(v)) for k, v in per_image.items()},
        "tolerances": {"snapped": SNAPPED_TOLERANCE if free_form else None, "raw": RAW_TOLERANCE},
        "seconds_per_image": seconds / max(1, len(items)),
    }
    if args.refine:
        from benchmarks import refine_metrics

        refined = refine_metrics.measure([(im, t, p) for (im, t), p in zip(items, proposals_all)],
                                         basic=args.split.endswith("bd"))
        result.update({k if k not in result else f"refine_{k}": v for k, v in refined.items()})
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
    return 0
