"""The kernels a first run compiles, and for how long: the list `search.warm`'s helper compiles ahead (issue 53).

    bongard-solver bench warm_list [--seed 2026] [--ff 16] [--basic 12] [--abstract 12] [--out FILE] [--json OUT]

In a fresh process with an empty cache of compiled kernels (NUMBA_CACHE_DIR a new folder, the helper off):
problems generated with `--seed` (default the demo's) and solved from pixels one by one, every kernel that Python
calls, and each kernel compiled inside one, recorded as Numba starts compiling it (module, function, argument
types) with its compile seconds (its own and those of the kernels compiled inside it, shown indented below it).
Then each problem is solved again in a fresh process of its own, the cache now warm: the kernels it loads from the
cache are those a first run on that problem would compile, and each kernel called from Python gets its share of
the problems that need it.
Printed as a table; `--out` writes the list `search.warm` reads (search/data/warm_kernels.json in a checkout) in the
order its helper compiles them (`helper_order`), `--json` the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from dsl.options import count, path_text, seed
from dsl.owned import check_output_file, marked_json
from dsl.processes import checkout_path
from solver.app.product import DEMO_SEED  # the demo is the first run a new user makes

OWN = ("dsl", "search")  # the packages whose kernels the list names
MIN_SECONDS = 0.01  # compile seconds below which a kernel counts as this cheap (a kernel compiled with another: 0)
COMMON = 0.5  # share of the workload's problems (fraction) at and above which a kernel is one "most problems need"

CHILD = r"""
import json, sys, time
from numba.core import event

first = []
class Recorder(event.Listener):
    def __init__(self):
        self.started = []
    def on_start(self, ev):
        kernel = ev.data["dispatcher"].py_func
        first.append({"module": kernel.__module__, "function": kernel.__name__,
                      "types": repr(tuple(ev.data["args"])), "depth": len(self.started)})
        self.started.append((len(first) - 1, time.perf_counter()))
    def on_end(self, ev):
        row, start = self.started.pop()
        first[row]["seconds"] = round(time.perf_counter() - start, 3)
event.register("numba:compile", Recorder())

from dsl.commands import write_dataset
from dsl.dataset import list_problems, problem_folder
from dsl.generate import ProblemKind
from solver.reading import PixelPerception
from solver.solving import solve_folder

root, seed, ff, basic, abstract = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
counts = {ProblemKind.FREE_FORM: ff, ProblemKind.BASIC: basic, ProblemKind.ABSTRACT: abstract}
write_dataset(root, counts, seed=seed, workers=1, progress=False)
with PixelPerception(None) as perception:
    for name in list_problems(root):
        solve_folder(problem_folder(root, name), perception)
print(json.dumps(first))
"""

NEEDS = r"""
import json, sys
from dsl.jit import KEYED_PACKAGES
from solver.reading import PixelPerception
from solver.solving import solve_folder

with PixelPerception(None) as perception:
    solve_folder(sys.argv[1], perception)
loaded = []
for name, module in list(sys.modules.items()):
    if name.split(".")[0] not in KEYED_PACKAGES:
        continue
    for function, kernel in vars(module).items():
        stats = getattr(kernel, "stats", None)
        if getattr(kernel, "__module__", None) == name and stats is not None and hasattr(stats, "cache_hits"):
            loaded += [[name, function, repr(tuple(types))] for types, hits in stats.cache_hits.items() if hits]
print(json.dumps(loaded))
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench warm_list", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=seed, default=DEMO_SEED, help="generator seed (default: the demo's)")
    parser.add_argument("--ff", type=count(0, 100), default=16, help="free-form problems")
    parser.add_argument("--basic", type=count(0, 100), default=12, help="basic problems")
    parser.add_argument("--abstract", type=count(0, 100), default=12, help="abstract problems")
    parser.add_argument("--out", type=path_text, default=None, help="write the list search.warm reads here")
    parser.add_argument("--json", type=path_text, default=None, help="write the figures here")
    return parser.parse_args(argv)


def record(args: argparse.Namespace) -> list[dict]:
    """The kernels compiled by a first run of the workload, in the order of first call, each called from Python with
    its `share` of the problems that load it when solved alone (see the module's text)."""
    from dsl.dataset import list_problems, problem_folder

    with tempfile.TemporaryDirectory(prefix="warm-list-") as scratch:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(scratch) / "numba"),
                   PYTHONPATH=checkout_path())
        (Path(scratch) / "numba").mkdir()
        (Path(scratch) / "numba" / "warm.done").touch()  # no helper: the list is what this process compiles
        command = [sys.executable, "-c", CHILD, str(Path(scratch) / "data"), str(args.seed), str(args.ff),
                   str(args.basic), str(args.abstract)]
        compiled = json.loads(_run(command, env))
        names = list_problems(Path(scratch) / "data")
        needs = Counter()
        for name in names:
            folder = problem_folder(Path(scratch) / "data", name)
            needs.update(map(tuple, json.loads(_run([sys.executable, "-c", NEEDS, str(folder)], env))))
    for row in compiled:
        row["share"] = round(needs[row["module"], row["function"], row["types"]] / max(len(names), 1), 3)
    return compiled


def _run(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bongard-solver bench warm_list: the recording run failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def helper_order(compiled: list[dict]) -> list[dict]:
    """The kernels called from Python (by the first run, or by a problem solved alone; those inside them compile with
    them) in the order the helper compiles them: those most problems need (share at least COMMON) in the reverse of
    the order a problem first calls them (the command compiles from the other end, and the two meet in the middle),
    then the others by their share per second of compiling, greatest first (the order that saves the command the most
    compiling, on average, for the helper's time; ties in the order of first call)."""
    outer, seen = [], set()
    for row in compiled:
        key = (row["module"], row["function"], row["types"])
        if ((row["depth"] == 0 or row["share"] > 0) and key not in seen and row["module"].split(".")[0] in OWN
                and "Literal" not in row["types"]):  # a constant argument of a call inside a kernel: compiled there
            outer.append(row)
            seen.add(key)
    common = [row for row in outer if row["share"] >= COMMON]
    rest = sorted((row for row in outer if row["share"] < COMMON),
                  key=lambda row: -row["share"] / max(row["seconds"], MIN_SECONDS))
    return [{key: row[key] for key in ("module", "function", "types", "share")} for row in common[::-1] + rest]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for path in (args.out, args.json):
        if path is not None:
            check_output_file(path, "--out" if path is args.out else "--json")
    compiled = record(args)
    workload = f"seed {args.seed}: {args.ff} ff, {args.basic} basic, {args.abstract} abstract"
    print(f"{'seconds':>8} {'share':>6}  kernel (first run, {workload}; share: of the problems solved alone)")
    for row in compiled:
        print(f"{row['seconds']:8.2f} {row['share']:6.2f}  {'  ' * row['depth']}{row['module']}.{row['function']}")
    outer = [row for row in compiled if row["depth"] == 0]
    print(f"{sum(row['seconds'] for row in outer):8.2f}  in all: {len(outer)} kernels called from Python, "
          f"{len(compiled) - len(outer)} compiled inside them")
    if args.out is not None:
        Path(args.out).write_text(marked_json({"seed": args.seed, "workload": workload,
                                               "kernels": helper_order(compiled)}) + "\n")
    if args.json is not None:
        Path(args.json).write_text(marked_json({"benchmark": "warm_list", "seed": args.seed, "kernels": compiled}))
    return 0
