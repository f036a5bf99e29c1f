"""The fuzz campaign: generated bad inputs on every input surface, each bounded in time and memory.

    bongard-solver bench fuzz --examples N --seed S --out DIR [--workers 2] [--timeout 20] [--memory-gib 3]
                              [--surfaces action,png,...] [--json OUT]
    bongard-solver bench fuzz --replay FILE [FILE ...] --out DIR      # a saved input, run again

Surfaces (inputs made by `benchmarks._fuzz_inputs`, `_fuzz_calls`, `_fuzz_api`; judged by `_fuzz_targets`; run in
the worker processes of `_fuzz_worker`): action
strings, action-program JSON, split files, facts-in JSON, image files, the options of every command, the arguments
of `solve_problem` and `solve_facts`. The N examples are shared out by WEIGHTS; example k of a surface is made from
(S, surface, k) alone. Worker processes (`--workers`) run the examples, each under an alarm of `--timeout` seconds
(and killed by this process if that does not end it: a hang) and an address-space cap of `--memory-gib` over what
the worker held when it started. Per surface the table counts inputs tried, clear errors, accepted inputs, unclear
errors, uncaught exceptions (a worker that died counts here) and hangs; every failing input is saved under
DIR/failures/ as JSON that `--replay` (and tests/benchmarks/test_fuzz.py, for the corpus kept in the tests) runs
again. A Python audit hook in every worker records writes (open for writing, rename, remove, mkdir, ...) to paths
outside DIR: the campaign counts the files outside DIR that such writes changed (apart, numba's cache of compiled
kernels, which the tool keeps in its own code's __pycache__ folders).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import wait
from pathlib import Path

from benchmarks._fuzz_worker import FAILED, decoded, encoded, make_input, run_one, worker  # noqa: F401 (the tests')

WEIGHTS = {"action": 0.34, "program": 0.15, "split": 0.10, "facts": 0.10, "png": 0.23, "cli": 0.04, "api": 0.04}
CHUNK = 20  # examples sent to a worker at a time
GRACE_SECONDS = 15.0  # after the alarm: how long a worker may take to answer before it is killed
STARTUP_SECONDS = 900.0  # a worker's imports and warm-up, at most
MAX_STARTS = 200  # workers started in one campaign (after hangs and deaths), at most
COLUMNS = ("tried", "clear", "accepted", "unclear", "uncaught", "hang", "loose")


def plan(examples: int, surfaces: list[str]) -> list[list[tuple[str, int]]]:
    """The examples shared out by WEIGHTS (at least one a surface), interleaved, in chunks of CHUNK."""
    weights = {s: WEIGHTS[s] for s in surfaces}
    total = sum(weights.values())
    counts = {s: max(1, round(examples * w / total)) for s, w in weights.items()}
    counts[max(counts, key=counts.get)] += examples - sum(counts.values())
    queue = sorted(((k / counts[s], s, k) for s in surfaces for k in range(counts[s])))
    items = [(s, k) for _, s, k in queue]
    return [items[k:k + CHUNK] for k in range(0, len(items), CHUNK)]


class Campaign:
    def __init__(self, out: Path, seed: int, workers: int, timeout: float, memory_gib: float, surfaces: list[str]):
        self.out, self.seed, self.timeout, self.memory_gib, self.surfaces = out, seed, timeout, memory_gib, surfaces
        self.counts = {s: Counter() for s in surfaces}
        self.cpu, self.wall = Counter(), Counter()
        self.outside: list[str] = []
        self.cached: list[str] = []
        self.failures: list[dict] = []
        self.context = multiprocessing.get_context("fork")
        self.starts = 0
        self.slots = [self._start(k) for k in range(workers)]

    def _start(self, number: int) -> dict:
        self.starts += 1
        if self.starts > MAX_STARTS:
            raise RuntimeError(f"fuzz workers started {MAX_STARTS} times: they keep dying")
        mine, theirs = self.context.Pipe()
        process = self.context.Process(target=worker, args=(theirs, self.out, number, self.seed, self.timeout,
                                                             self.memory_gib, self.surfaces))  # may have children
        process.start()
        theirs.close()
        return {"number": number, "process": process, "connection": mine, "chunk": [], "since": time.time(),
                "ready": False}

    def record(self, result: dict) -> None:
        surface = result["surface"]
        self.counts[surface]["tried"] += 1
        self.counts[surface][result["outcome"]] += 1
        self.cpu[surface] += result.get("cpu", 0.0)
        self.wall[surface] += result.get("wall", 0.0)
        self.outside += result.get("outside", [])
        self.cached += result.get("cached", [])
        if result["outcome"] in FAILED:
            self.failures.append(result)
            saved = {"surface": surface, "seed": self.seed, "index": result["index"], "outcome": result["outcome"],
                     "message": result["message"], "input": result.get("input")}
            if saved["input"] is None:  # a worker killed or dead: the input is made again here
                try:
                    saved["input"] = encoded(make_input(self.seed, surface, result["index"]))
                except Exception as error:
                    saved["input"] = f"(not made: {type(error).__name__})"
            folder = self.out / "failures"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{surface}-{result['index']}.json").write_text(json.dumps(saved, indent=1))

    def _lost(self, slot: dict, outcome: str, why: str) -> None:
        """The worker of `slot` is gone or stuck: its current input counts as `outcome`, a new worker goes on."""
        surface, index = slot["chunk"].pop(0)
        self.record({"surface": surface, "index": index, "outcome": outcome, "message": why})
        if slot["process"].is_alive():
            slot["process"].kill()
        slot["process"].join()
        rest = slot["chunk"]
        slot.update(self._start(slot["number"]))
        slot["chunk"] = rest

    def run(self, chunks: list, bar) -> None:
        pending = list(chunks)
        while pending or any(slot["chunk"] for slot in self.slots):
            for slot in self.slots:
                if slot["ready"] and not slot["chunk"] and pending:
                    slot["chunk"] = list(pending.pop(0))
                    slot["connection"].send(slot["chunk"])
                    slot["since"] = time.time()
            ready = wait([slot["connection"] for slot in self.slots], timeout=1.0)
            for slot in self.slots:
                if slot["connection"] in ready:
                    self._receive(slot, bar)
                elif slot["ready"] and slot["chunk"] and time.time() - slot["since"] > self.timeout + GRACE_SECONDS:
                    self._lost(slot, "hang", f"no answer for {self.timeout + GRACE_SECONDS:.0f} s: killed")
                    bar.update(1)
                elif not slot["ready"] and time.time() - slot["since"] > STARTUP_SECONDS:
                    raise RuntimeError(f"fuzz worker {slot['number']} did not start in {STARTUP_SECONDS:.0f} s")

    def _receive(self, slot: dict, bar) -> None:
        try:
            kind, body = slot["connection"].recv()
        except (EOFError, OSError):
            code = slot["process"].exitcode
            if slot["chunk"]:
                self._lost(slot, "uncaught", f"the worker process died (exit code {code})")
                bar.update(1)
            else:
                slot.update(self._start(slot["number"]))
            return
        slot["since"] = time.time()
        if kind == "ready":
            slot["ready"] = True
            if slot["chunk"]:
                slot["connection"].send(slot["chunk"])
            return
        slot["chunk"].pop(0)
        self.record(body)
        bar.update(1)
        if body["outcome"] == "hang":  # the worker ends itself after a hang: a fresh one takes the rest
            slot["process"].join(30)
            rest = slot["chunk"]
            slot.update(self._start(slot["number"]))
            slot["chunk"] = rest

    def close(self) -> None:
        for slot in self.slots:
            try:
                slot["connection"].send(None)
            except OSError:
                pass
        for slot in self.slots:
            slot["process"].join(30)
            if slot["process"].is_alive():
                slot["process"].kill()


def run_campaign(examples: int, seed: int, out: Path, workers: int = 2, timeout: float = 20.0,
                 memory_gib: float = 3.0, surfaces: list[str] | None = None, progress: bool = True) -> dict:
    """The campaign's figures: per surface the counts of COLUMNS and the seconds its inputs took in the workers; the
    files changed outside `out`."""
    from tqdm import tqdm

    out = out.resolve()
    surfaces = surfaces or list(WEIGHTS)
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(out / "tmp")  # the workers' temporary files stay inside `out` (restored after)
    (out / "tmp").mkdir(parents=True, exist_ok=True)
    chunks = plan(examples, surfaces)
    started = time.perf_counter()
    try:
        campaign = Campaign(out, seed, workers, timeout, memory_gib, surfaces)
        try:
            with tqdm(total=sum(len(c) for c in chunks), desc="fuzz", unit="input", disable=not progress) as bar:
                campaign.run(chunks, bar)
        finally:
            campaign.close()
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
        tempfile.tempdir = None  # computed again from the environment as it was
    table = {s: {c: campaign.counts[s][c] for c in COLUMNS} | {"seconds": round(campaign.wall[s], 1)}
             for s in surfaces}
    table["all"] = {c: sum(table[s][c] for s in surfaces) for c in COLUMNS} | {
        "seconds": round(sum(campaign.wall.values()), 1)}
    return {"examples": examples, "seed": seed, "workers": workers, "timeout": timeout, "memory_gib": memory_gib,
            "seconds": round(time.perf_counter() - started, 1), "table": table,
            "outside_changed": sorted(set(campaign.outside)), "compiled_cache_writes": sorted(set(campaign.cached)),
            "failures": [{k: f.get(k) for k in ("surface", "index", "outcome", "message")} for f in campaign.failures]}


def markdown(result: dict) -> str:
    lines = ["| surface | " + " | ".join(COLUMNS) + " | worker s |", "|---|" + "---:|" * (len(COLUMNS) + 1)]
    for surface, row in result["table"].items():
        lines.append(f"| {surface} | " + " | ".join(str(row[c]) for c in COLUMNS) + f" | {row['seconds']} |")
    return "\n".join(lines)


def replay(path: Path, scratch: Path, timeout: float = 60.0) -> dict:
    """A saved input run again in this process (in `scratch`, the working folder given back after): its outcome."""
    saved = json.loads(Path(path).read_text())
    scratch = scratch.resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    home = os.getcwd()
    try:
        return run_one(saved["surface"], decoded(saved["input"]), scratch, timeout) | {"surface": saved["surface"]}
    finally:
        os.chdir(home)


def main(argv: list[str] | None = None) -> int:
    from solver.app.resident import own_process

    own_process()  # the commands' own process is what is tried

    from dsl.options import count, path_text, positive_number, seed

    parser = argparse.ArgumentParser(prog="bongard-solver bench fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=count(1, 10_000_000), default=2000, help="inputs in all")
    parser.add_argument("--seed", type=seed, default=54, help="the campaign's seed")
    parser.add_argument("--out", type=path_text, required=True, help="output folder: failures, scratch files")
    parser.add_argument("--workers", type=count(1, 64), default=2, help="worker processes")
    parser.add_argument("--timeout", type=positive_number, default=20.0, help="seconds an input may take")
    parser.add_argument("--memory-gib", type=positive_number, default=3.0, help="GiB an input may add to a worker")
    parser.add_argument("--surfaces", default=",".join(WEIGHTS), help=f"comma-separated, of {', '.join(WEIGHTS)}")
    parser.add_argument("--json", type=path_text, default=None, help="write the figures here")
    parser.add_argument("--replay", nargs="+", default=None, metavar="FILE", help="run saved inputs again")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.replay:
        for path in args.replay:
            found = replay(Path(path), out / "replay")
            print(f"{path}: {found['outcome']} {found['message']}")
        return 0
    surfaces = [s for s in args.surfaces.split(",") if s]
    unknown = sorted(set(surfaces) - set(WEIGHTS))
    if unknown:
        parser.error(f"unknown surfaces {', '.join(unknown)} (known: {', '.join(WEIGHTS)})")
    result = run_campaign(args.examples, args.seed, out, args.workers, args.timeout, args.memory_gib, surfaces)
    print(markdown(result))
    print(f"{result['examples']} inputs in {result['seconds']} s on {result['workers']} workers; "
          f"files changed outside {out}: {len(result['outside_changed'])} (and "
          f"{len(result['compiled_cache_writes'])} writes of numba's compiled-kernel cache in the code's __pycache__)")
    for failure in result["failures"][:20]:
        print(f"  {failure['outcome']:8} {failure['surface']}-{failure['index']}: {failure['message'][:150]}")
    if args.json:
        from dsl.owned import marked_json, write_atomically

        write_atomically(Path(args.json), marked_json(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
