"""How the shapes of two-shape images lie: the share of images whose ink is one connected part (the two shapes touch
or cross), and the distance between the two largest parts' centroids, for a root's problems of two shapes.

    bongard-solver bench layout --data ROOT [--kind bd] [--limit N] [--json OUT]

Compares our generator's painter with the official one (spec 2.6) on images alone: `--data` an official root and a
`generate` root. Two-shape problems are read from the names as the generators write them (`bd_<shape>-<shape>_0000`;
free-form `ff_nactA_B_0000`); the names are not used to solve anything.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from scipy import ndimage

from dsl.dataset import DatasetError, read_image
from dsl.owned import check_output_file
from search.settings import INK_THRESHOLD


def two_shapes(name: str) -> bool:
    return "-" in name if name.startswith("bd_") else re.fullmatch(r"ff_nact\d+_\d+_\d{4}", name) is not None


def measure(data: Path, kind: str, limit: int | None = None) -> dict:
    folders = sorted(p for p in (data / kind / "images").iterdir() if two_shapes(p.name))[:limit]
    one, distances, images = 0, [], 0
    for folder in folders:
        for path in sorted(folder.glob("[01]/*.png")):
            ink = read_image(path) < INK_THRESHOLD
            labels, parts = ndimage.label(ink, structure=np.ones((3, 3)))
            images += 1
            one += parts == 1
            if parts >= 2:
                sizes = np.bincount(labels.ravel())[1:]
                big = np.argsort(sizes)[-2:] + 1
                centres = [np.argwhere(labels == k).mean(axis=0) for k in big]
                distances.append(float(np.hypot(*(centres[0] - centres[1]))))
    return {"data": str(data), "kind": kind, "problems": len(folders), "images": images,
            "one_part": round(one / images, 4) if images else None,
            "centroid_distance_px_median": round(float(np.median(distances)), 1) if distances else None,
            "centroid_distance_px_p10": round(float(np.percentile(distances, 10)), 1) if distances else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench layout", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="dataset root (released layout)")
    parser.add_argument("--kind", default="bd", choices=("bd", "ff"))
    parser.add_argument("--limit", type=int, default=None, help="first N two-shape problems")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.json is not None:
        check_output_file(args.json, "--json")
    if not (args.data / args.kind / "images").is_dir():
        raise SystemExit(f"bench layout: {args.data / args.kind / 'images'}: no such folder")
    try:
        found = measure(args.data, args.kind, args.limit)
    except DatasetError as error:  # a corrupt image named with its fault
        raise SystemExit(f"bench layout: {error}") from None
    print(f"{found['problems']} two-shape problems, {found['images']} images: one ink part in "
          f"{100 * (found['one_part'] or 0):.2f} %; centroid distance of the two largest parts median "
          f"{found['centroid_distance_px_median']} px, 10th percentile {found['centroid_distance_px_p10']} px")
    if args.json is not None:
        args.json.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return 0
