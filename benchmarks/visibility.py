"""How much a free-form near miss shows: for each negative image of a root's free-form problems, the ink by which the
one shape it changes differs from that shape in the problem's program, both drawn from one pose.

    bongard-solver bench visibility --data ROOT [--limit N] [--json OUT]

A free-form negative changes one action of the positives' program (spec 3.2), and some changes hardly show: a stroke
changed on an arc another arc of the shape draws over again (a circle walked on past its start). Each changed shape and its original are drawn with the official painter at the same pose
(scale `--scale`, the middle of the free-form painter's range, on the official 512 px canvas) and compared pixel by
pixel: the sum of |difference| / 255, in pixels of full ink. Counted for each negative image and for the negative
query (image 6) apart, for one-shape and two-shape problems (read from the names as the generator writes them:
`ff_nactA_B_0000` is two shapes): how many differ by fewer than each `--below` pixels, a bound on what a reader of
pixels can tell (a bound from above: a change that draws the original turned or mirrored, an L of two equal arms
turned the other way, differs here by all its ink and not at all to a reader who cannot know the pose). Needs the programs file of the released layout (`ff/ff_action_programs.json`).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from dsl.owned import check_output_file
from dsl.raster import render_drawing
from dsl.syntax import ActionStringError, parse_shape
from dsl.turtle import Drawing, execute_shape
from dsl.types import Pose

SCALE = 110.0  # the free-form painter's scale range is (80, 140) (spec 3.2)
BELOW = (10.0, 40.0, 100.0)  # pixels of full ink


def _drawn(shape: tuple[str, ...], scale: float) -> np.ndarray:
    """A shape drawn from the origin at `scale` on the official canvas, grey as float."""
    return render_drawing(Drawing([execute_shape(parse_shape(list(shape)), Pose(scale=scale))])).astype(np.float64)


def shown(original: list[str], changed: list[str], scale: float = SCALE, drawn: np.ndarray | None = None) -> float:
    """Pixels of full ink (sum of |grey difference| / 255) between two shapes drawn from one pose at `scale`;
    `drawn`: the original as `_drawn` draws it, when already drawn."""
    before = _drawn(tuple(original), scale) if drawn is None else drawn
    return float(np.abs(before - _drawn(tuple(changed), scale)).sum() / 255.0)


def near_misses(programs: dict, scale: float = SCALE, limit: int | None = None) -> list[dict]:
    """Per negative image of each problem: its name, index, whether the problem draws two shapes, and how much its
    change shows (`shown`; 0.0 when it draws the positives' program, as two negatives may)."""
    rows = []
    for name in sorted(programs)[:limit]:
        positives, negatives = programs[name]
        program = positives[0]
        two = len(program) == 2
        originals: dict[int, np.ndarray] = {}  # each shape of the program drawn once for all its negatives
        for index, image in enumerate(negatives):
            if len(image) != len(program):
                raise ValueError(f"{name}: negative {index} draws {len(image)} shapes, the positives {len(program)}")
            value = 0.0
            for k in (k for k in range(len(program)) if image[k] != program[k]):
                if k not in originals:
                    originals[k] = _drawn(tuple(program[k]), scale)
                value += shown(program[k], image[k], scale, originals[k])
            rows.append({"problem": name, "image": index, "two_shapes": two, "shown_px": round(value, 1)})
    return rows


def summary(rows: list[dict], below: tuple[float, ...] = BELOW) -> dict:
    out = {}
    for part, chosen in (("one_shape", [r for r in rows if not r["two_shapes"]]),
                         ("two_shapes", [r for r in rows if r["two_shapes"]])):
        for who, picked in (("negatives", chosen), ("queries", [r for r in chosen if r["image"] == 6])):
            values = [r["shown_px"] for r in picked]
            out[f"{part}.{who}"] = {
                "n": len(values), "median_px": round(float(np.median(values)), 1) if values else None,
                **{f"below_{limit:g}_px": sum(v < limit for v in values) for limit in below},
                "least": [f"{r['problem']}/0/{r['image']}.png {r['shown_px']}"
                          for r in sorted(picked, key=lambda r: r["shown_px"])[:5]]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench visibility", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="dataset root (released layout)")
    parser.add_argument("--limit", type=int, default=None, help="first N free-form problems")
    parser.add_argument("--scale", type=float, default=SCALE, help="painter scale both shapes are drawn at")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.json is not None:
        check_output_file(args.json, "--json")
    path = args.data / "ff" / "ff_action_programs.json"
    try:
        programs = json.loads(path.read_text(encoding="utf-8"))
        rows = near_misses(programs, args.scale, args.limit)
    except FileNotFoundError:
        raise SystemExit(f"bench visibility: {path}: no such file (the released layout's programs)") from None
    except (ValueError, ActionStringError, TypeError, KeyError) as error:  # json, a program, the nesting
        raise SystemExit(f"bench visibility: {path}: {error}") from None
    found = summary(rows)
    print(f"free-form near misses of {args.data}: ink by which the changed shape differs (px of full ink, scale "
          f"{args.scale:g}, 512 px)")
    print(f"{'':24s} {'n':>5s} {'median':>7s} " + " ".join(f"{'< ' + format(b, 'g'):>6s}" for b in BELOW))
    for key, part in found.items():
        print(f"{key:24s} {part['n']:5d} {part['median_px'] if part['median_px'] is not None else math.nan:7.1f} "
              + " ".join(f"{part[f'below_{b:g}_px']:6d}" for b in BELOW))
    for key, part in found.items():
        if key.endswith("queries") and part["least"]:
            print(f"  least shown, {key}: " + "; ".join(part["least"]))
    if args.json is not None:
        args.json.write_text(json.dumps({"data": str(args.data), "scale": args.scale, "summary": found, "rows": rows},
                                        indent=1) + "\n", encoding="utf-8")
    return 0
