"""`bongard-solver bench decoder`: how well the decoder reads programs from images.

    bongard-solver bench decoder --data ROOT --split dev_ff --json OUT
    bongard-solver bench decoder --data generated --split ff --limit 24 --json OUT   # our own renders

`--data generated` makes held-out images with our generator and renderer instead of reading a dataset:
split `ff` = official free-form problems (`dsl.generate.generate_free_form`, the 12 official settings in
turn, seed `--seed`), split `train` = the decoder's own training distribution under another seed.
`--limit` counts problems (14 images each) or, for `train`, images.

Figures (all images of all problems):
  kind_accuracy, type_accuracy   teacher-forced, as in the official program-synthesis model (spec §6.3):
                                 per step, argmax action kind (line/arc/next/stop) and argmax stroke type
                                 given the true action, the previous steps being the truth in the
                                 tracing the decoder is taught (top-most start, rightward direction);
                                 the turtle walks the true actions from its own re-centred state.
                                 Official images: the true poses are fitted by `search.pose` (the
                                 dataset does not store them); generated images: the true poses.
  kind_well_fitted, type_well_fitted   the same on the images whose fitted poses reproduce the image
                                 (ink IoU >= 0.85; `images_well_fitted` of them, `fit_iou_mean`): a poor
                                 fit starts the turtle in the wrong place, which is not the decoder's fault
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
refinement of these proposals) adds its keys to the output. `--product` decodes and refines as the
product does (`solver.reading.perception.PixelPerception`): its top-k and beam, each problem's 14 images decoded
in the order and batches the product decodes them in, then `refine_perceived` per image.
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
from dsl.options import count, seed
from dsl.owned import check_output_file, marked_json
from dsl.types import ImageProgram
from perception.data import sample_training_program
from perception.decode import decode_images, load_decoder, snap_free_form
from perception.model import ARC, CURVE, LENGTH, LINE, RADIUS, TURN, Decoder

FIT_POLISH_EVALS = 300  # pixel-polish evaluations of the fitted poses of official images
WELL_FITTED_IOU = 0.85  # teacher-forced figures are also given on images fitted at least this well
PROBLEM_IMAGES = 14  # images of one problem: 7 positives, then 7 negatives (`dataset_images`, `generated_images`)
SOLVING_ORDER = (0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 6, 13)  # ... as the product takes them (`Problem.in_solving_order`)
SNAPPED_TOLERANCE = {"length_tol": 0.02, "angle_tol": 2.0}
RAW_TOLERANCE = {"length_tol": 0.05, "angle_tol": 5.0}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench decoder", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="dataset root (official layout) or 'generated'")
    parser.add_argument("--split", required=True, help="split name (e.g. dev_ff); with --data generated: ff or train")
    parser.add_argument("--limit", type=count(1), default=None, help="at most this many problems (images for train)")
    parser.add_argument("--top-k", type=count(1, 100), default=None, help="programs kept per image (default 10; the product's 6 with --product)")
    parser.add_argument("--beam", type=count(1, 128), default=None,
                        help="beam width (default max(top-k, 8); the product's 6 with --product)")
    parser.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    parser.add_argument("--seed", type=seed, default=20261121, help="seed of generated held-out images")
    parser.add_argument("--threads", type=count(1, 64), default=2)
    parser.add_argument("--refine", action="store_true", help="also run benchmarks.refine_metrics.measure")
    parser.add_argument("--product", action="store_true",
                        help="decode and, with --refine, refine as the product does (solver.reading.perception: its top-k and "
                             "beam, a problem's images decoded together; a free-form top reading is kept and fitted, "
                             "other images are searched from the shape classifier's library shapes)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--picture", type=Path, default=None,
                        help="with --refine: draw 8 refined programs over their images (spread over the split) here")
    return parser.parse_args(argv)


def generated_images(split: str, limit: int | None, seed: int) -> list[tuple[np.ndarray, ImageProgram, tuple]]:
    from dsl.free_form import FREE_FORM_SETTINGS
    from dsl.generate import generate_free_form
    from dsl.raster import render_program

    rng = np.random.default_rng(seed)
    if split == "train":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            drawn = [sample_training_program(rng) for _ in range(limit or 336)]
        return [(render_program(p, q), p, q) for p, q in drawn]
    if split != "ff":
        raise SystemExit(f"bench decoder: generated split must be 'ff' or 'train', got {split!r}")
    out = []
    for number in range(limit or 24):
        problem = generate_free_form(rng, FREE_FORM_SETTINGS[number % len(FREE_FORM_SETTINGS)], number)
        for programs, poses in ((problem.positives, problem.positive_poses), (problem.negatives, problem.negative_poses)):
            out += [(render_program(p, q), p, q) for p, q in zip(programs, poses)]
    return out


def dataset_images(root: str, split: str, limit: int | None) -> list[tuple[np.ndarray, ImageProgram, None]]:
    from dsl.dataset import load_split

    problems = load_split(root, split)[:limit]
    return [(image.load(), image.program, None) for p in problems for image in p.positives + p.negatives]


def fitted_poses(image: np.ndarray, program: ImageProgram) -> tuple[ImageProgram, tuple, float]:
    """The true program and its poses in an official image (poses are not stored in the dataset): the
    search's pose fit and pixel polish (`search.pose`). A symmetric outline fits equally well from several
    start points, and only the stroke types tell them apart, so every tracing of each shape
    (`dsl.canonical.travel_variants`: same picture) is fitted and the one whose render matches the image
    best is kept, shape by shape. Returns the program, its poses and their `fit_iou`."""
    from dsl.canonical import from_travel_form, travel_variants
    from search.pose import fit_poses
    from search.template import make_target

    target = make_target(image)

    def fitted(prog: ImageProgram) -> tuple[float, tuple]:
        poses = fit_poses(prog, target, FIT_POLISH_EVALS)
        return fit_iou(image, prog, poses), poses

    best_iou, best_poses = fitted(program)
    for i, shape in enumerate(program.shapes):
        for variant in travel_variants(shape)[1:]:
            shapes = list(program.shapes)
            shapes[i] = from_travel_form(variant)
            candidate = ImageProgram(tuple(shapes))
            iou, poses = fitted(candidate)
            if iou > best_iou + 1e-3:
                best_iou, best_poses, program = iou, poses, candidate
    return program, best_poses, best_iou


def fit_iou(image: np.ndarray, program: ImageProgram, poses) -> float:
    """IoU of the ink masks of the image and of the program drawn at `poses` (how good a pose fit is)."""
    from benchmarks.fidelity import INK_THRESHOLD, mask_iou
    from dsl.raster import render_program

    return mask_iou(image < INK_THRESHOLD, render_program(program, poses) < INK_THRESHOLD)


def teacher_forced(model: Decoder, items: list[tuple]) -> dict[str, list]:
    """Per-step correctness of kind / stroke and absolute argument errors, the previous steps being the
    truth in the tracing the decoder is taught (`dsl.walk.target_tracing`), its turtle walking
    the true actions (`perception.beam.teacher_forced`)."""
    from benchmarks.fidelity import exact_program
    from perception.beam import teacher_forced as run
    from perception.data import example_steps

    images, steps, fits = [], [], []
    for image, truth, poses in items:
        program = exact_program(truth)
        if poses is None:
            program, poses, iou = fitted_poses(image, program)
            fits.append(iou)
        else:
            program = truth
            fits.append(1.0)
        images.append(image)
        steps.append(example_steps(program, poses, image, None))
    out = {"kind": [], "type": [], "turn_error_deg": [], "length_error": [], "arc_angle_error_deg": [], "radius_error": [],
           "kind_well_fitted": [], "type_well_fitted": [], "fit_iou": fits}
    for s, pred, fit in zip(steps, run(model, images, steps), fits):
        kind = s["kind"]
        out["kind"] += [int(p == k) for p, k in zip(pred["kind"][1:], kind[1:])]
        if fit >= WELL_FITTED_IOU:
            out["kind_well_fitted"] += out["kind"][len(out["kind"]) - len(kind) + 1 :]
        act = [t for t, k in enumerate(kind) if k in (LINE, ARC)]
        for j, t in enumerate(act):
            v = s["values"][t]
            out["type"].append(int(pred["stroke"][j] == s["stroke"][t]))
            if fit >= WELL_FITTED_IOU:
                out["type_well_fitted"].append(out["type"][-1])
            if s["has_turn"][t]:
                out["turn_error_deg"].append(abs((pred["turn"][j] * 180 - v[TURN] * 180 + 180) % 360 - 180))
            if kind[t] == LINE:
                out["length_error"].append(abs(pred["value"][j] - v[LENGTH]))
            else:
                out["arc_angle_error_deg"].append(abs(pred["value"][j] - v[CURVE]) * 360)
                out["radius_error"].append(abs(pred["radius"][j] - v[RADIUS]))
    return out


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


def decoded(model: Decoder, images: list[np.ndarray], args: argparse.Namespace) -> list:
    """The decoder's proposals for `images`; with --product, one problem's images in the product's order
    and batches (`solver.reading.perception.decoded_in_batches`: an image's readings depend a little on the images
    it is decoded with)."""
    if not args.product:
        return decode_images(model, images, top_k=args.top_k, beam_width=args.beam)
    from solver.reading.workers import decoded_in_batches

    order = SOLVING_ORDER if len(images) == PROBLEM_IMAGES else range(len(images))
    out = decoded_in_batches(model, [images[k] for k in order], args.top_k, args.beam)
    return [out[list(order).index(k)] for k in range(len(images))]


def product_refiner():
    """(image, decoder proposals) -> the product's `Perceived` (`solver.reading.perception`, one process)."""
    from solver.reading.perception import PixelPerception
    from solver.reading.workers import refine_perceived

    perception = PixelPerception()

    def run(image: np.ndarray, proposals: list):
        proposals = tuple(proposals)
        return refine_perceived(image, proposals, perception.budget_ms, perception.library([image], [proposals])[0])

    return run


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    if args.product:  # the product's decoding (`solver.reading.perception.PixelPerception`, one worker)
        from solver.settings import BEAM, TOP_K

        args.top_k = args.top_k or TOP_K
        args.beam = args.beam or BEAM
    args.top_k = args.top_k or 10
    torch.set_num_threads(args.threads)
    model = load_decoder(args.checkpoint)
    if args.data == "generated":
        items = generated_images(args.split, args.limit, args.seed)
    else:
        items = dataset_images(args.data, args.split, args.limit)
    free_form = "ff" in args.split
    steps: dict[str, list] = {}
    per_image: dict[str, list] = {}
    proposals_all = []
    start = time.time()
    chunk = PROBLEM_IMAGES if args.product else 16  # the product decodes a problem's images together
    for i in tqdm(range(0, len(items), chunk), desc="bench decoder", mininterval=5):
        images, truths = [im for im, _, _ in items[i : i + chunk]], [canonical_image(t) for _, t, _ in items[i : i + chunk]]
        for key, value in teacher_forced(model, items[i : i + chunk]).items():
            steps.setdefault(key, []).extend(value)
        proposals = decoded(model, images, args)
        proposals_all += proposals
        for props, truth in zip(proposals, truths):
            for key, value in exact(props, truth, free_form).items():
                per_image.setdefault(key, []).append(bool(value))
    seconds = time.time() - start
    result = {
        "data": args.data, "split": args.split, "images": len(items), "top_k": args.top_k,
        "checkpoint": str(args.checkpoint or "shipped"),
        "kind_accuracy": float(np.mean(steps["kind"])), "type_accuracy": float(np.mean(steps["type"])),
        **{k: float(np.mean(v)) if v else None for k, v in steps.items() if k not in ("kind", "type", "fit_iou")},
        "fit_iou_mean": float(np.mean(steps["fit_iou"])),
        "images_well_fitted": int(np.sum(np.array(steps["fit_iou"]) >= WELL_FITTED_IOU)),
        **{k: float(np.mean(v)) for k, v in per_image.items()},
        "tolerances": {"snapped": SNAPPED_TOLERANCE if free_form else None, "raw": RAW_TOLERANCE},
        "seconds_per_image": seconds / max(1, len(items)),
    }
    if args.refine:
        from benchmarks import refine_metrics

        triples = [(im, canonical_image(t), p) for (im, t, _), p in zip(items, proposals_all)]
        results: list = []
        refined = refine_metrics.measure(triples, basic=args.split.endswith("bd"),
                                         refine=product_refiner() if args.product else None, results=results)
        if args.picture:
            from benchmarks.refine import draw_picture

            draw_picture(triples, results, str(args.picture))
        refined["refine_path"] = "product" if args.product else "search"
        result.update({k if k not in result else f"refine_{k}": v for k, v in refined.items()})
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(marked_json(result))
    return 0
