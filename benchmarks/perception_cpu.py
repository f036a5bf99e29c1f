"""CPU seconds per problem of the pixel path in one process (`solver.solving.folder.solve_folder`, one worker, one
torch thread): CPU time is steadier than wall time on a shared machine.

    bongard-solver bench perception_cpu --sets ROOT:KIND:N [ROOT:KIND:N ...] [--old] [--json OUT]

KIND is ff, bd or hd; the first N problems of that type are solved after one warm-up problem. `--old`: every
image read in full (`PixelPerception(per_problem=False)`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from dsl.dataset import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    import torch

    from solver.reading.perception import PixelPerception
    from solver.solving import solve_folder

    parser = argparse.ArgumentParser(prog="bongard-solver bench perception_cpu", description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", required=True, help="ROOT:KIND:N")
    parser.add_argument("--old", action="store_true", help="every image read in full (the earlier path)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    out = {}
    with PixelPerception(workers=1, per_problem=not args.old) as perception:
        for spec in args.sets:
            root, kind, n = spec.rsplit(":", 2)
            folders = sorted((Path(root) / kind / "images").iterdir())[: int(n)]
            solve_folder(folders[0], perception)  # warm-up: the kernels compile, the models load
            cpu = []
            for folder in folders:
                start = time.process_time()
                solve_folder(folder, perception)
                cpu.append(time.process_time() - start)
            out[spec] = {"median_cpu_s": round(statistics.median(cpu), 3), "mean_cpu_s": round(statistics.fmean(cpu), 3),
                         "n": len(cpu)}
            print(spec, out[spec], flush=True)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(out, indent=1))
    return 0
