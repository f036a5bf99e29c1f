"""Latency: one problem solved from a cold start, and the seconds per problem of a warm `eval` (issue 53).

    bongard-solver bench latency [--data ROOT] [--runs 5] [--limit N] [--workers 2] [--oracle] [--types ff bd hd]
                                 [--no-first] [--no-warm] [--json OUT]

Cold: `bongard-solver solve PROBLEM` in a fresh process, `--runs` times for one problem of each type (ROOT's first
problem of that type; without --data one generated problem per type, seed SEED): the median wall and CPU (user +
system, the solve process and its children) seconds, each run in its own process (no resident solver) and then
`--runs` runs answered by a resident solver (`solver.app.server`: one run starts it, the timed runs begin when it
listens; the CPU is the command's own, not the server's). Before them, unless --no-first, the first run after the
compiled kernels' cache is cleared: the same command with NUMBA_CACHE_DIR a new empty folder, so every kernel it uses
is compiled again (Python's own .pyc files stay: an install writes them once).

Warm: `eval` (this process, `--workers` processes, warmed up untimed as eval is) over the first `--limit` problems of
each benchmark split of ROOT (`solver.app.paper_table.benchmark_splits`; without --data, --limit generated problems
per type): seconds per problem from the records (`seconds`), the median, mean, p90 and max, the run's wall clock per
problem (what a benchmark of many problems takes: with several workers, problems run side by side), and what the
slowest 10 % of each split spend their time on (the mean of their `stage_seconds`). The load average is given with each part:
on a busy machine the seconds are longer.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dsl.options import count, path_text, workers
from dsl.owned import check_output_file, marked_json
from dsl.processes import checkout_path

TYPES = ("ff", "bd", "hd")
SEED = 5353  # the generated problems' seed when no --data is given
SLOWEST = 0.1  # the share of a split's problems whose stages are shown (the tail)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench latency", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=path_text, default=None, help="dataset root (default: problems generated here)")
    parser.add_argument("--runs", type=count(1, 100), default=5, help="fresh-process solves per type (the median)")
    parser.add_argument("--limit", type=count(1), default=20, help="problems per split of the warm eval")
    parser.add_argument("--workers", type=workers, default=2, help="the warm eval's --workers")
    parser.add_argument("--oracle", action="store_true", help="solve from the programs (the reasoning layer alone)")
    parser.add_argument("--types", nargs="+", choices=TYPES, default=list(TYPES), help="problem types of the cold part")
    parser.add_argument("--no-first", action="store_true", help="leave out the runs after clearing the cache")
    parser.add_argument("--no-warm", action="store_true", help="leave out the warm eval")
    parser.add_argument("--json", type=path_text, default=None, help="write the figures here")
    return parser.parse_args(argv)


def timed_solve(folder: Path, oracle: bool, scratch: Path, numba_cache: str | None = None,
                served: bool = False) -> dict:
    """Wall and CPU seconds of `bongard-solver solve FOLDER` in a fresh process (NUMBA_CACHE_DIR `numba_cache` if
    given; with `served`, a resident solver's runtime folder in `scratch`, else none); its output is checked to hold
    a rule and the queries' labels."""
    env = _env(scratch, served)
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache
    command = [sys.executable, "-m", "solver.app.cli", "solve", str(folder), "--json"] + (["--oracle"] if oracle else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench latency: {' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    solution = json.loads(done.stdout)
    if len(solution["labels"]) != 2:
        raise SystemExit(f"bench latency: {folder}: the solution has no two labels")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": round(wall, 3), "cpu": round(cpu, 3), "labels": solution["labels"]}


def _env(scratch: Path, served: bool) -> dict:
    """The environment of the commands measured: this checkout's code first on the path, and a resident solver
    (`solver.app.server`) in `scratch` if `served`, else switched off."""
    return dict(os.environ, PYTHONPATH=checkout_path(), XDG_RUNTIME_DIR=str(scratch / "run"),
                BONGARD_SOLVER_SERVER="on" if served else "off")


def _server(scratch: Path, action: str) -> str:
    command = [sys.executable, "-m", "solver.app.cli", "server", action]
    return subprocess.run(command, env=_env(scratch, True), capture_output=True, text=True, timeout=60).stdout


def served_runs(folder: Path, runs: int, oracle: bool, scratch: Path) -> dict:
    """`runs` fresh-process solves of `folder` answered by a resident solver: one solve starts it (not timed), the
    runs begin once it listens, and it is stopped after them."""
    timed_solve(folder, oracle, scratch, served=True)
    deadline = time.monotonic() + 600
    while "running" not in _server(scratch, "status"):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench latency: the resident solver did not start ({_server(scratch, 'status')})")
        time.sleep(0.5)
    try:
        timings = [timed_solve(folder, oracle, scratch, served=True) for _ in range(runs)]
        answered = _server(scratch, "status")
    finally:
        _server(scratch, "stop")
    if f"{runs} commands answered" not in answered:
        raise SystemExit(f"bench latency: the resident solver did not answer the {runs} runs ({answered.strip()})")
    return {"served_runs": [{"wall": t["wall"], "cpu": t["cpu"]} for t in timings],
            "served_median_wall": round(statistics.median(t["wall"] for t in timings), 3),
            "served_median_cpu": round(statistics.median(t["cpu"] for t in timings), 3),
            "served_labels": timings[0]["labels"]}


def cold_start(problems: dict[str, Path], runs: int, oracle: bool, first: bool, scratch: Path) -> dict:
    """Per type: the first run after clearing the kernels' cache (unless not `first`), then `runs` runs and their
    medians."""
    from tqdm import tqdm

    figures = {}
    bar = tqdm(total=len(problems) * (2 * runs + first + 1), desc="cold solves", unit="process")
    for kind, folder in problems.items():
        entry = {"problem": folder.name, "load_before": round(os.getloadavg()[0], 2)}
        if first:
            with tempfile.TemporaryDirectory(dir=scratch) as empty:
                entry["first"] = timed_solve(folder, oracle, scratch, numba_cache=empty)
            bar.update()
        timings = []
        for _ in range(runs):
            timings.append(timed_solve(folder, oracle, scratch))
            bar.update()
        entry.update(runs=[{"wall": t["wall"], "cpu": t["cpu"]} for t in timings],
                     median_wall=round(statistics.median(t["wall"] for t in timings), 3),
                     median_cpu=round(statistics.median(t["cpu"] for t in timings), 3),
                     labels=timings[0]["labels"])
        entry.update(served_runs(folder, runs, oracle, scratch), load_after=round(os.getloadavg()[0], 2))
        bar.update(runs + 1)
        figures[kind] = entry
    bar.close()
    return figures


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile: the smallest value with at least `share` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def tail_stages(records: list[dict]) -> dict:
    """The slowest SLOWEST share of `records` (at least one): their names, and their mean seconds per stage."""
    slow = sorted(records, key=lambda r: r["seconds"], reverse=True)[:max(1, round(SLOWEST * len(records)))]
    stages: dict[str, float] = {}
    for record in slow:
        for stage, seconds in (record.get("stage_seconds") or {}).items():
            stages[stage] = stages.get(stage, 0.0) + seconds / len(slow)
    return {"problems": [r["name"] for r in slow], "mean_seconds": round(statistics.fmean(r["seconds"] for r in slow), 3),
            "stages": {k: round(v, 3) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])}}


def warm(root: Path, limit: int, workers_: int, oracle: bool, scratch: Path) -> dict:
    """Seconds per problem of `eval` over the first `limit` problems of each benchmark split of `root`."""
    from dsl.dataset import read_splits
    from solver.app.commands import evaluate
    from solver.app.paper_table import benchmark_splits
    from solver.settings import DEFAULT_TIME_LIMIT

    _, columns = benchmark_splits(read_splits(root))
    figures = {}
    for split in columns.values():
        load = round(os.getloadavg()[0], 2)
        summary = evaluate(str(root), split, scratch / f"eval_{split}.json", limit, oracle, workers_, DEFAULT_TIME_LIMIT)
        records = [r for r in summary["problems"] if r["error"] is None]
        seconds = [r["seconds"] for r in records]
        figures[split] = {"problems": len(summary["problems"]), "errors": summary["errors"],
                          "accuracy": round(summary["accuracy"], 4), "load_before": load,
                          "median": round(statistics.median(seconds), 3) if seconds else None,
                          "mean": round(statistics.fmean(seconds), 3) if seconds else None,
                          "p90": round(percentile(seconds, 0.9), 3) if seconds else None,
                          "max": round(max(seconds), 3) if seconds else None,
                          "wall": summary["seconds"],
                          "wall_per_problem": round(summary["seconds"] / max(len(summary["problems"]), 1), 3),
                          "tail": tail_stages(records) if records else None}
    return figures


def generated_root(scratch: Path, per_type: int) -> Path:
    """`per_type` generated problems of each type (seed SEED) in `scratch`."""
    from dsl.commands import write_dataset
    from dsl.generate import ProblemKind

    root = scratch / "data"
    write_dataset(root, {kind: per_type for kind in ProblemKind}, seed=SEED, workers=1, progress=False)
    return root


def problems_of_type(root: Path, types: list[str], most: int, least: int = 1,
                     command: str = "latency") -> dict[str, list[Path]]:
    """Each type's first `most` problem folders of `root`; `bench COMMAND` ends naming the types with fewer than
    `least`."""
    from dsl.dataset import list_problems, problem_folder

    names = list_problems(root)
    found = {kind: [problem_folder(root, n) for n in [n for n in names if n.startswith(kind + "_")][:most]]
             for kind in types}
    short = [kind for kind, folders in found.items() if len(folders) < least]
    if short:
        few = "no problem" if least == 1 else f"fewer than {least} problems"
        raise SystemExit(f"bench {command}: {root}: {few} of type {', '.join(short)}")
    return found


def first_of_each_type(root: Path, types: list[str]) -> dict[str, Path]:
    return {kind: folders[0] for kind, folders in problems_of_type(root, types, 1).items()}


def table(result: dict) -> str:
    lines = ["cold start: fresh-process `bongard-solver solve` (seconds, wall / CPU)",
             f"{'type':<5}{'problem':<40}{'first (empty cache)':>21}{'median of ' + str(result['runs']):>15}"
             f"{'served':>15}{'load':>11}"]
    for kind, entry in result["cold"].items():
        first = f"{entry['first']['wall']:.2f} / {entry['first']['cpu']:.2f}" if "first" in entry else "-"
        median = f"{entry['median_wall']:.2f} / {entry['median_cpu']:.2f}"
        served = f"{entry['served_median_wall']:.2f} / {entry['served_median_cpu']:.2f}"
        load = f"{entry['load_before']:.2f}-{entry['load_after']:.2f}"
        lines.append(f"{kind:<5}{entry['problem'][:39]:<40}{first:>21}{median:>15}{served:>15}{load:>11}")
    lines.append("(median: each run in its own process, no resident solver; served: answered by one, median of as many)")
    if result.get("warm"):
        lines += ["", f"warm: eval --workers {result['workers']} (seconds per problem)",
                  f"{'split':<16}{'problems':>9}{'median':>8}{'mean':>8}{'p90':>8}{'max':>8}{'wall':>8}{'load':>7}"
                  f"  slowest 10 %: stages"]
        for split, f in result["warm"].items():
            stages = ", ".join(f"{k} {v:.2f}" for k, v in list((f["tail"] or {}).get("stages", {}).items())[:4])
            lines.append(f"{split:<16}{f['problems']:>9}{f['median']:>8.3f}{f['mean']:>8.3f}{f['p90']:>8.3f}"
                         f"{f['max']:>8.3f}{f['wall_per_problem']:>8.3f}{f['load_before']:>7.2f}  {stages}")
        lines.append("(median ... max: the records' seconds, one problem's own; wall: the run's wall clock, warm-up"
                     " included, per problem)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    with tempfile.TemporaryDirectory(prefix="bongard-latency-") as scratch_name:
        scratch = Path(scratch_name)
        root = Path(args.data).resolve() if args.data else generated_root(scratch, 1 if args.no_warm else args.limit)
        result = {"data": str(args.data) if args.data else f"generated (seed {SEED})", "runs": args.runs,
                  "workers": args.workers, "oracle": args.oracle, "cpus": os.cpu_count(),
                  "cold": cold_start(first_of_each_type(root, args.types), args.runs, args.oracle, not args.no_first,
                                     scratch)}
        if not args.no_warm:
            result["warm"] = warm(root, args.limit, args.workers, args.oracle, scratch)
    print(table(result))
    if args.json:
        Path(args.json).write_text(marked_json(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
