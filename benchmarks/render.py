"""`bongard-solver bench render`: single-core speed of the rasteriser (and of problem generation).

Times are CPU seconds of this single-threaded process (per core, robust to other jobs on the machine),
best of `--repeats`; `wall_ms_per_image_<size>` is the wall-clock figure.

Workload: a fixed, seeded set of image programs, half free-form (4-9 actions built from the spec §3.2 move
library, random stroke types, one or two shapes) and half human-designed library shapes (random stroke types
where the shape allows stamps), with official-style poses (spec §2.6). Figures per image:
  ms_per_image_<size>          render_program end to end (turtle executor + packing + Numba kernel)
  raster_ms_per_image_<size>   render_drawing only (geometry already executed)
Reference: the official turtle + Ghostscript pipeline takes ~0.1 s per image; the target is >= 100x faster.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Callable

import numba
import numpy as np

from dsl.library import load_library
from dsl.options import count, seed
from dsl.owned import check_output_file, marked_json
from dsl.raster import render_drawing, render_program
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, Action, ImageProgram, Pose, Shape, StrokeType

OFFICIAL_SECONDS_PER_IMAGE = 0.1
FREE_FORM_SCALES = (80.0, 140.0)
LIBRARY_SCALES = (150.0, 260.0)

# spec §3.2: move name -> (line or arc, turn before it), the first turn of a move forced to 0
_MOVES: dict[str, tuple[tuple[str, float], ...]] = {
    "line": (("line", 0.0),),
    "arc": (("arc", 0.0),),
    "triangle": (("line", 0.0), ("line", 120.0), ("line", 120.0)),
    "square": (("line", 0.0), ("line", 90.0), ("line", 90.0), ("line", 90.0)),
    "semicircle": (("arc", 0.0), ("arc", 0.0)),
    "circle": (("arc", 0.0),) * 4,
    "rightangle": (("line", 0.0), ("line", 90.0)),
}
_TURNS = (0.0, 30.0, -30.0, 60.0, -60.0, 90.0, -90.0, 120.0, -120.0, 150.0, -150.0)


def free_form_shape(rng: np.random.Generator, k: int) -> Shape:
    """k actions from the move library, each with a random dataset stroke type; moves joined by random turns."""
    actions: list[Action] = []
    while len(actions) < k:
        fitting = [m for m in _MOVES.values() if len(m) <= k - len(actions)]
        move = fitting[rng.integers(len(fitting))]
        join = float(rng.choice(_TURNS)) if actions else 0.0
        for index, (kind, turn) in enumerate(move):
            stroke = DATASET_STROKE_TYPES[rng.integers(len(DATASET_STROKE_TYPES))]
            turn = join if index == 0 else turn
            actions.append(Action.line(1.0, turn, stroke) if kind == "line" else Action.arc(0.5, 90.0, turn, stroke))
    return Shape(tuple(actions))


def free_form_program(rng: np.random.Generator) -> ImageProgram:
    settings = [(4,), (5,), (6,), (7,), (8,), (9,), (3, 3), (2, 5), (3, 4), (3, 5), (4, 4), (4, 5)]
    setting = settings[rng.integers(len(settings))]
    return ImageProgram(tuple(free_form_shape(rng, k) for k in setting))


def library_program(rng: np.random.Generator, names: list[str]) -> ImageProgram:
    library = load_library()
    shapes = []
    for _ in range(1 + int(rng.random() < 0.5)):
        entry = library[names[rng.integers(len(names))]]
        allowed = DATASET_STROKE_TYPES if entry.if_stamp else (StrokeType.NORMAL,)
        shapes.append(Shape(tuple(a.with_stroke(allowed[rng.integers(len(allowed))]) for a in entry.shape)))
    return ImageProgram(tuple(shapes))


def official_poses(rng: np.random.Generator, n_shapes: int, scales: tuple[float, float]) -> tuple[Pose, ...]:
    """Start points and headings as the official painter samples them (spec §2.6)."""
    rho = rng.uniform(0.0, 360.0)
    radius = rng.uniform(1.0, 250.0) if n_shapes == 1 else rng.uniform(125.0, 250.0)
    x1, y1 = radius * math.cos(math.radians(rho)), radius * math.sin(math.radians(rho))
    poses = [Pose(x1, y1, rho, rng.uniform(*scales))]
    while len(poses) < n_shapes:
        x2, y2 = rng.uniform(-300.0, 300.0, size=2)
        if math.hypot(x2 - x1, y2 - y1) >= 300.0 and abs(x2 - x1) >= 45.0 and abs(y2 - y1) >= 45.0:
            poses.append(Pose(x2, y2, rho + rng.uniform(-60.0, 60.0), rng.uniform(*scales)))
    return tuple(poses)


def placed(rng: np.random.Generator, program: ImageProgram, scales: tuple[float, float]) -> tuple[Pose, ...]:
    """The first valid of up to 50 sampled placements (the official painter tries 300)."""
    for _ in range(50):
        poses = official_poses(rng, len(program.shapes), scales)
        if execute_image(program, poses).valid:
            break
    return poses


def workload(n: int, seed: int) -> list[tuple[ImageProgram, tuple[Pose, ...]]]:
    """n (program, poses) pairs, alternating free-form and library images."""
    rng = np.random.default_rng(seed)
    names = sorted(load_library())
    items = []
    for index in range(n):
        if index % 2 == 0:
            program, scales = free_form_program(rng), FREE_FORM_SCALES
        else:
            program, scales = library_program(rng, names), LIBRARY_SCALES
        items.append((program, placed(rng, program, scales)))
    return items


def seconds_per_call(calls: list[Callable[[], object]], repeats: int, clock: Callable[[], float]) -> float:
    """Best-of-`repeats` mean time of one call over the list, by `clock`."""
    best = math.inf
    for _ in range(repeats):
        start = clock()
        for call in calls:
            call()
        best = min(best, (clock() - start) / len(calls))
    return best


def time_rendering(items: list, size: int, repeats: int) -> dict[str, float]:
    drawings = [execute_image(program, poses) for program, poses in items]
    render_drawing(drawings[0], size)  # compile / load the cached kernels
    programs = [lambda p=p, q=q: render_program(p, q, size) for p, q in items]
    full = seconds_per_call(programs, repeats, time.process_time)
    raster = seconds_per_call([lambda d=d: render_drawing(d, size) for d in drawings], repeats, time.process_time)
    wall = seconds_per_call(programs, repeats, time.perf_counter)
    return {
        f"ms_per_image_{size}": 1e3 * full,
        f"images_per_second_{size}": 1.0 / full,
        f"raster_ms_per_image_{size}": 1e3 * raster,
        f"raster_images_per_second_{size}": 1.0 / raster,
        f"wall_ms_per_image_{size}": 1e3 * wall,
    }


def time_generation(n_problems: int, seed: int) -> dict[str, object]:
    """Problems per second of dsl.generate (programs, poses and the 14 images at 512), or null if absent."""
    try:
        from dsl import generate
    except ImportError as error:
        return {"problems_per_second_generate": None, "generate_note": f"dsl.generate unavailable: {error}"}
    try:
        concepts_basic, concepts_abstract = generate.basic_concepts(), generate.abstract_concepts()
        settings = getattr(generate, "FREE_FORM_SETTINGS", ((4,), (3, 4)))
        makers = [
            lambda rng, i: generate.generate_free_form(rng, tuple(settings[i % len(settings)]), i),
            lambda rng, i: generate.generate_basic(rng, concepts_basic[i % len(concepts_basic)], i),
            lambda rng, i: generate.generate_abstract(rng, concepts_abstract[i % len(concepts_abstract)], i),
        ]
        rng = np.random.default_rng(seed)
        start = time.process_time()
        for index in range(n_problems):
            problem = makers[index % 3](rng, index)
            images = list(zip(problem.positives, problem.positive_poses)) + list(
                zip(problem.negatives, problem.negative_poses)
            )
            for program, pose in images:
                render_program(program, pose, 512)
        elapsed = time.process_time() - start
    except Exception as error:  # another engineer's module, still moving: record, do not fail the benchmark
        return {"problems_per_second_generate": None, "generate_note": f"dsl.generate failed: {error!r}"}
    return {
        "problems_per_second_generate": n_problems / elapsed,
        "generate_note": "free-form/basic/abstract in turn, 14 images rendered at 512 per problem",
    }


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench render", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=count(1), default=400, help="number of images in the workload")
    parser.add_argument("--sizes", type=count(16, 2048), nargs="+", default=[512, 128], help="image sizes to time")
    parser.add_argument("--repeats", type=count(1, 100), default=3, help="timing repeats (best is kept)")
    parser.add_argument("--problems", type=count(0), default=30, help="problems for the generation throughput (0: skip)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--json", type=str, default=None, help="write the figures to this JSON file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args([] if argv is None else argv)
    if args.json:
        check_output_file(args.json, "--json")
    numba.set_num_threads(1)
    items = workload(args.n, args.seed)
    results: dict[str, object] = {"n_images": args.n, "seed": args.seed, "threads": 1}
    for size in args.sizes:
        results.update(time_rendering(items, size, args.repeats))
    if 512 in args.sizes:
        results["speedup_vs_official_512"] = OFFICIAL_SECONDS_PER_IMAGE * results["images_per_second_512"]
    skipped = {"problems_per_second_generate": None}
    results.update(time_generation(args.problems, args.seed) if args.problems else skipped)
    for key, value in results.items():
        print(f"{key:>32}: {value:.4g}" if isinstance(value, float) else f"{key:>32}: {value}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(marked_json(results, indent=2))
    return 0
