"""`bongard-solver bench shapes`: how well the shape classifier names the library shapes of an image.

    bongard-solver bench shapes --data ROOT --split dev_bd --json OUT
    bongard-solver bench shapes --data generated --limit 2000 --json OUT   # our renders, a fresh seed

Every image of the split whose program draws library shapes only (free-form images are skipped). The truth
is the library group of each true shape (`dsl.categories.exact_shape_categories`). Figures:
  one_shape_top1, one_shape_top5     images of one shape: the true group is the whole image's top-1 / in its top 5
  two_shapes_parts_top3              images of two shapes split into two ink parts: each shape's group is
                                     in the top 3 of its part (the parts matched to the shapes either way)
  two_shapes_whole_top4              images of two shapes: both groups among the whole image's top 4
  parts_found                        share of two-shape images split into two parts (one-shape images: `parts_false`)
  ms_per_image                       classifier time per image (one thread), parts included
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from dsl.options import count, seed
from dsl.owned import check_output_file, marked_json

import numpy as np
import torch
from tqdm import tqdm


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench shapes", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="dataset root in the released layout, or 'generated'")
    parser.add_argument("--split", default="dev_bd", help="split name (dataset data)")
    parser.add_argument("--limit", type=count(1), default=None, help="problems (dataset) or images (generated)")
    parser.add_argument("--seed", type=seed, default=20261121, help="seed of generated images")
    parser.add_argument("--checkpoint", default=None, help="shape classifier (default: the shipped one)")
    parser.add_argument("--threads", type=count(1, 64), default=1)
    parser.add_argument("--json", type=Path, default=None)
    return parser.parse_args(argv)


def _items(args: argparse.Namespace) -> list[tuple[np.ndarray, tuple[int, ...]]]:
    from perception.shapes import group_of, sample_library_image
    from dsl.categories import exact_shape_categories

    index = group_of()
    if args.data == "generated":
        rng = np.random.default_rng(args.seed)
        items = []
        for _ in range(args.limit or 1000):
            image, names = sample_library_image(rng)
            items.append((image, tuple(index[n] for n in names)))
        return items
    from dsl.dataset import load_split

    items = []
    for problem in load_split(args.data, args.split)[: args.limit]:
        for image in problem.positives + problem.negatives:
            groups = [exact_shape_categories(s) for s in image.program.shapes]
            if all(groups):
                items.append((image.load(), tuple(index[g[0]] for g in groups)))
    return items


def main(argv: list[str] | None = None) -> int:
    from perception.shapes import library_guesses, load_classifier

    args = parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    torch.set_num_threads(args.threads)
    model = load_classifier(args.checkpoint)
    rank = {g: k for k, g in enumerate(model.groups)}
    items = _items(args)
    one1, one5, parts3, whole4, found, spurious, times = [], [], [], [], [], [], []
    for image, truth in tqdm(items, desc="bench shapes", mininterval=5):
        started = time.perf_counter()
        guesses = library_guesses(model, image, top=5)
        times.append((time.perf_counter() - started) * 1000)
        whole = [rank[g] for g, _ in guesses["whole"]]
        parts = [[rank[g] for g, _ in part] for part in guesses["parts"]]
        if len(truth) == 1:
            one1.append(whole[0] == truth[0])
            one5.append(truth[0] in whole)
            spurious.append(bool(parts))
        else:
            whole4.append(set(truth) <= set(whole[:4]))
            found.append(bool(parts))
            if parts:
                a, b = parts[0][:3], parts[1][:3]
                parts3.append((truth[0] in a and truth[1] in b) or (truth[1] in a and truth[0] in b))

    def share(values: list) -> float | None:
        return float(np.mean(values)) if values else None

    result = {
        "data": args.data, "split": None if args.data == "generated" else args.split, "images": len(items),
        "one_shape_images": len(one1), "two_shape_images": len(whole4),
        "one_shape_top1": share(one1), "one_shape_top5": share(one5),
        "two_shapes_parts_top3": share(parts3), "two_shapes_whole_top4": share(whole4),
        "parts_found": share(found), "parts_false": share(spurious),
        "ms_per_image": float(np.median(times)) if times else None,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(marked_json(result))
    return 0
