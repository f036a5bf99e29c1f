"""Two checkouts timed problem by problem, side by side in the same minutes: seconds per problem from pixels.

    bongard-solver bench paired --baseline DIR --data ROOT --split ff [--limit N] [--workers 2] [--json OUT]

The machine's speed drifts by 20-30 % between runs a few minutes apart, enough to decide a speed-up near a
threshold when two codes are timed in turns of whole runs. Here both checkouts (this one and DIR, the code before:
e.g. `git worktree add DIR <commit>`) keep a solving process alive, each with its own worker processes, and solve
the same problem one after the other (who goes first alternates), the first two problems solved once untimed to
warm up. Prints each one's median seconds per problem and their ratio, the median of the per-problem ratios, the
accuracy, and the problems whose labels, rules or confidences differ.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

THIS = Path(__file__).resolve().parent.parent

# The solving process of one checkout: reads problem folders on stdin, one per line, and writes a JSON line for
# each. Only `PixelPerception` and `solve_folder`, found where an older checkout has them too.
SERVE = """
import json, sys
try:
    from solver.reading import PixelPerception
    from solver.solving import solve_folder
except ImportError:  # a checkout from before solver's rooms
    from solver.perceive import PixelPerception
    from solver.product import solve_folder
with PixelPerception(workers=int(sys.argv[1])) as perception:
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        solved = solve_folder(line.strip(), perception)
        s = solved.solution
        print(json.dumps({"name": solved.name, "seconds": solved.seconds, "predicted": [bool(x) for x in s.labels],
                          "truth": list(solved.truth), "rule": str(s.rule),
                          "confidence": list(s.confidence) if s.confidence else None}), flush=True)
"""


class Server:
    """A checkout's solving process (`SERVE`), run with that checkout first on the path, in a scratch folder."""

    def __init__(self, tree: Path, workers: int, scratch: str):
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.tree = tree
        self.process = subprocess.Popen([sys.executable, "-c", SERVE, str(workers)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env, cwd=scratch)
        self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"bongard-solver bench paired: the solving process of {self.tree} stopped "
                             f"(exit code {self.process.wait()})")
        return json.loads(line)

    def solve(self, folder: Path) -> dict:
        self.process.stdin.write(f"{folder}\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def summary(pairs: list[tuple[dict, dict]]) -> dict:
    """The figures of (baseline record, this checkout's record) per problem."""
    def accuracy(side: int) -> float:
        return round(sum(p == t for pair in pairs for p, t in zip(pair[side]["predicted"], pair[side]["truth"]))
                     / (2 * len(pairs)), 4)

    before = statistics.median(a["seconds"] for a, _ in pairs)
    after = statistics.median(b["seconds"] for _, b in pairs)
    return {
        "problems": len(pairs),
        "median_seconds": [round(before, 4), round(after, 4)],
        "ratio_of_medians": round(before / after, 3),
        "median_per_problem_ratio": round(statistics.median(a["seconds"] / b["seconds"] for a, b in pairs), 3),
        "accuracy": [accuracy(0), accuracy(1)],
        "labels_or_rules_differ": [a["name"] for a, b in pairs if (a["predicted"], a["rule"]) != (b["predicted"], b["rule"])],
        "confidences_differ": [a["name"] for a, b in pairs if a["confidence"] != b["confidence"]],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench paired", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the code to compare with")
    parser.add_argument("--data", type=Path, required=True, help="a dataset root in the released layout")
    parser.add_argument("--split", default="ff", help="ff, bd or hd: the problems under ROOT/SPLIT/images")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if not any((args.baseline / "solver" / known).is_file() for known in ("product.py", "solving/__init__.py")):
        raise SystemExit(f"bongard-solver bench paired: --baseline {args.baseline}: no checkout of bongard-solver there")
    folders = sorted(p for p in (args.data / args.split / "images").glob("*") if p.is_dir())[:args.limit]
    if not folders:
        raise SystemExit(f"bongard-solver bench paired: no problem folders under {args.data / args.split / 'images'}")
    pairs = []
    with tempfile.TemporaryDirectory() as scratch:
        servers = []  # closed however the run ends, the one started before a failing start too
        try:
            servers.append(Server(args.baseline.resolve(), args.workers, scratch))
            servers.append(Server(THIS, args.workers, scratch))
            for folder in folders[:2]:  # untimed: the warm-up
                for server in servers:
                    server.solve(folder.resolve())
            for k, folder in enumerate(folders):
                done = {id(server): server.solve(folder.resolve()) for server in (servers if k % 2 == 0 else servers[::-1])}
                pairs.append(tuple(done[id(server)] for server in servers))
        finally:
            for server in servers:
                server.close()
    figures = {"baseline": str(args.baseline), "data": str(args.data), "split": args.split, "workers": args.workers,
               **summary(pairs), "per_problem": [{"name": a["name"], "seconds": [round(a["seconds"], 4), round(b["seconds"], 4)]}
                                                 for a, b in pairs]}
    print(f"{figures['problems']} problems of {args.data / args.split}, --workers {args.workers}: median s a problem "
          f"{figures['median_seconds'][0]} (baseline) -> {figures['median_seconds'][1]} (this checkout), "
          f"x{figures['ratio_of_medians']}; median per-problem ratio x{figures['median_per_problem_ratio']}; "
          f"accuracy {figures['accuracy'][0]} -> {figures['accuracy'][1]}; labels or rules differ: "
          f"{len(figures['labels_or_rules_differ'])}, confidences differ: {len(figures['confidences_differ'])}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
