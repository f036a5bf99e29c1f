"""`bongard-solver bench refine`: the refinement stage alone, on a split with known programs.

    bongard-solver bench refine --data ROOT --split NAME [--limit N] [--proposals synthetic|decoder]
                                --json OUT [--picture docs/refined.png]

Proposals: `synthetic` (default) imitates a noisy decoder from the true program
(`benchmarks.refine_metrics.synthetic_proposals`: five proposals, each the truth with one or two errors);
`decoder` runs the shipped decoder (`perception.decode`). Basic-shape splits (problems named `bd_*`)
also get the library-category figure. Figures: see `benchmarks/refine_metrics.py`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from benchmarks.refine_metrics import measure, synthetic_proposals
from dsl.canonical import same_image
from dsl.dataset import load_split
from dsl.options import count, positive_number, seed
from dsl.owned import check_output_file, marked_json
from dsl.raster import render_program


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench refine", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="dataset root (official layout)")
    parser.add_argument("--split", required=True, help="split name, e.g. dev_ff")
    parser.add_argument("--limit", type=count(1), default=None, help="at most this many images (every k-th image)")
    parser.add_argument("--proposals", choices=("synthetic", "decoder"), default="synthetic")
    parser.add_argument("--top-k", type=count(1, 100), default=5, help="proposals per image")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the synthetic proposals")
    parser.add_argument("--budget-ms", type=positive_number, default=None,
                        help="time for the whole refinement per image (default: refine_image's, 140 ms)")
    parser.add_argument("--json", required=True, help="write the figures here")
    parser.add_argument("--picture", default=None, help="draw a few refined programs over their images (PNG)")
    return parser.parse_args(argv)


def load_items(root: str, split: str, limit: int | None) -> tuple[list, bool]:
    """(image, true program) of every image of the split (every k-th one to keep `limit`)."""
    problems = load_split(root, split)
    images = [im for p in problems for im in p.positives + p.negatives]
    if limit is not None and limit < len(images):
        step = len(images) / limit
        images = [images[int(k * step)] for k in range(limit)]
    basic = all(p.kind == "bd" for p in problems)
    return [(im.load(), im.program) for im in images], basic


def with_proposals(pairs: list, source: str, top_k: int, seed: int) -> list:
    if source == "synthetic":
        rng = np.random.default_rng(seed)
        return [(image, truth, synthetic_proposals(truth, rng, top_k)) for image, truth in pairs]
    from perception.decode import decode_images, load_decoder

    model = load_decoder()
    proposals = []
    for start in range(0, len(pairs), 32):
        proposals += decode_images(model, [image for image, _ in pairs[start:start + 32]], top_k=top_k)
    return [(image, truth, props) for (image, truth), props in zip(pairs, proposals)]


def draw_picture(items: list, refinements: list, path: str, count: int = 8) -> None:
    """A grid of crops of `count` images spread over the split: the image's ink in grey, the refined
    program rendered at its fitted poses in light red, both in dark red; a caption with the verdict
    (exact / structure ok / wrong) and the refinement time."""
    tiles = []
    picked = [int(k * len(items) / count) for k in range(min(count, len(items)))]  # spread over the split
    for (image, truth, _), refinement in [(items[k], refinements[k]) for k in picked]:
        rendered = (render_program(refinement.program, refinement.poses) if refinement.poses is not None
                    else np.full(image.shape[:2], 255, np.uint8))  # a failed image: its ink alone
        grey = image if image.ndim == 2 else image[..., 0]
        image_ink = (255.0 - grey.astype(np.float64)) / 255.0
        program_ink = (255.0 - rendered.astype(np.float64)) / 255.0
        # grey: the image's ink; light red: the refined program's; dark red: both
        base = 255.0 * (1.0 - 0.55 * image_ink)
        rgb = np.stack([base, base * (1.0 - 0.85 * program_ink), base * (1.0 - 0.85 * program_ink)], axis=-1)
        rows, cols = np.nonzero((grey < 128) | (rendered < 128))
        r0, r1 = max(rows.min() - 12, 0), min(rows.max() + 12, grey.shape[0])
        c0, c1 = max(cols.min() - 12, 0), min(cols.max() + 12, grey.shape[1])
        side = max(r1 - r0, c1 - c0)
        tile = Image.fromarray(rgb[r0:r0 + side, c0:c0 + side].astype(np.uint8)).resize((256, 256))
        canvas = Image.new("RGB", (256, 280), "white")
        canvas.paste(tile, (0, 24))
        verdict = "exact" if same_image(refinement.program, truth) else (
            "structure ok" if same_image(refinement.program, truth, ignore_strokes=True) else "wrong")
        took = getattr(refinement, "milliseconds", None)
        ImageDraw.Draw(canvas).text((4, 6), verdict + (f"  {took:.0f} ms" if took is not None else ""), fill=(0, 0, 0))
        tiles.append(canvas)
    columns = 4
    rows = (len(tiles) + columns - 1) // columns
    grid = Image.new("RGB", (256 * columns, 280 * rows + 20), "white")
    for k, tile in enumerate(tiles):
        grid.paste(tile, ((k % columns) * 256, (k // columns) * 280))
    legend = "grey: the image's ink   light red: the refined program at its fitted poses   dark red: both"
    ImageDraw.Draw(grid).text((4, 280 * rows + 4), legend, fill=(0, 0, 0))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    grid.save(path)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    pairs, basic = load_items(args.data, args.split, args.limit)
    items = with_proposals(pairs, args.proposals, args.top_k, args.seed)
    refinements: list = []
    figures = measure(items, basic=basic, budget_ms=args.budget_ms, results=refinements)
    figures.update({
        "split": args.split, "proposals": args.proposals, "top_k": args.top_k, "seed": args.seed,
        "budget_ms": args.budget_ms if args.budget_ms is not None else "refine_image default",
    })
    for name, value in figures.items():
        print(f"{name:40s} {value}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(marked_json(figures, indent=2) + "\n")
    if args.picture:
        draw_picture(items, refinements, args.picture)
    return 0
