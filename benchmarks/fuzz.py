"""The fuzz campaign: generated bad inputs on every input surface, each bounded in time and memory.

    bongard-solver bench fuzz --examples N --seed S --out DIR [--workers 2] [--timeout 20] [--memory-gib 3]
                              [--surfaces action,png,...] [--json OUT]
    bongard-solver bench fuzz --replay FILE [FILE ...] --out DIR      # a saved input, run again

Surfaces (inputs made by `benchmarks._fuzz_inputs`, `_fuzz_calls`, `_fuzz_api`; judged by `_fuzz_targets`): action
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
import base64
import json
import multiprocessing
import os
import resource
import signal
import sys
import time
import zlib
from collections import Counter
from multiprocessing.connection import wait
from pathlib import Path

from benchmarks._fuzz_targets import FILE_TARGETS, PROBLEM, described

WEIGHTS = {"action": 0.34, "program": 0.15, "split": 0.10, "facts": 0.10, "png": 0.23, "cli": 0.04, "api": 0.04}
CHUNK = 20  # examples sent to a worker at a time
GRACE_SECONDS = 15.0  # after the alarm: how long a worker may take to answer before it is killed
STARTUP_SECONDS = 900.0  # a worker's imports and warm-up, at most
MAX_STARTS = 200  # workers started in one campaign (after hangs and deaths), at most
ALLOWED = ("/dev/null", "/dev/full")  # outside DIR, but writing there changes no file
CODE_ROOT = str(Path(__file__).resolve().parents[1]) + os.sep  # the checkout: its __pycache__ holds compiled caches
FAILED = ("unclear", "uncaught", "hang", "loose")
COLUMNS = ("tried", "clear", "accepted", "unclear", "uncaught", "hang", "loose")


class Hang(BaseException):
    """Raised by the alarm: the input ran past its time."""


# --------------------------------------------------------------------------------------------------
# Inputs and targets


def make_input(seed: int, surface: str, index: int):
    from benchmarks import _fuzz_inputs as inputs
    from benchmarks._fuzz_inputs import rng_for

    rng = rng_for(seed, surface, index)
    if surface == "cli":
        from benchmarks._fuzz_calls import cli_input

        return cli_input(rng)
    if surface == "api":
        from benchmarks._fuzz_api import api_input

        return api_input(rng)
    makers = {"action": inputs.action_input, "program": lambda r: inputs.program_input(r, PROBLEM),
              "split": lambda r: inputs.split_input(r, PROBLEM), "facts": inputs.facts_input, "png": inputs.png_input}
    return makers[surface](rng)


def target(surface: str):
    if surface == "cli":
        from benchmarks._fuzz_calls import cli_target

        return cli_target
    if surface == "api":
        from benchmarks._fuzz_api import api_target

        return api_target
    return FILE_TARGETS[surface]


def encoded(payload) -> object:
    """An input as JSON: bytes in base64 (zlib-compressed over 4 kB), long text compressed too, argv lists and
    recipes as they are."""
    if isinstance(payload, bytes):
        if len(payload) > 4096:
            return {"zlib": base64.b64encode(zlib.compress(payload, 9)).decode()}
        return {"base64": base64.b64encode(payload).decode()}
    if isinstance(payload, str) and len(payload) > 4096:
        return {"text_zlib": base64.b64encode(zlib.compress(payload.encode("utf-8", "surrogatepass"), 9)).decode()}
    return payload


def decoded(value) -> object:
    if isinstance(value, dict) and len(value) == 1:
        (kind, text), = value.items()
        if kind == "base64":
            return base64.b64decode(text)
        if kind == "zlib":
            return zlib.decompress(base64.b64decode(text))
        if kind == "text_zlib":
            return zlib.decompress(base64.b64decode(text)).decode("utf-8", "surrogatepass")
    return value


# --------------------------------------------------------------------------------------------------
# Inside a worker


class WriteAudit:
    """An audit hook noting every write to a path outside `inside` (and ALLOWED); `changed` says which of those
    writes left a file changed (present and touched since `since`, or gone after a removal)."""

    EVENTS = {"open": (0,), "os.rename": (0, 1), "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,),
              "os.link": (1,), "os.symlink": (1,), "os.truncate": (0,), "os.chmod": (0,), "os.utime": (0,),
              "shutil.rmtree": (0,), "os.chown": (0,)}
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    REMOVALS = ("os.remove", "os.rmdir", "shutil.rmtree")

    def __init__(self, inside: Path):
        self.inside = str(inside.resolve()) + os.sep
        self.seen: list[tuple[str, str]] = []
        sys.addaudithook(self.hook)

    def hook(self, event: str, args: tuple) -> None:
        places = self.EVENTS.get(event)
        if places is None:
            return
        try:
            if event == "open" and not ((args[1] and any(c in args[1] for c in "wax+")) or
                                        (isinstance(args[2], int) and args[2] & self.WRITE_FLAGS)):
                return
            for place in places:
                path = args[place]
                if isinstance(path, (str, bytes, os.PathLike)):
                    full = os.path.abspath(os.fsdecode(path))
                    removal = event in self.REMOVALS
                    outside = not (full + os.sep).startswith(self.inside) and not full.startswith(ALLOWED)
                    if outside and (not removal or os.path.lexists(full)):  # a removal of nothing changes nothing
                        self.seen.append((event, full))
        except Exception:  # a hook must never fail the operation it watches
            pass

    def changed(self, since: float) -> tuple[list[str], list[str]]:
        """The files outside changed since `since`: those of the tool's own compiled caches (numba's kernels, under
        a `__pycache__` of the code), and the others."""
        cached, found = [], []
        for event, path in self.seen:
            removal = event in self.REMOVALS
            try:
                touched = os.stat(path).st_mtime >= since - 1.0
            except (OSError, ValueError):
                touched = removal
            if touched:
                cache = path.startswith(CODE_ROOT) and f"{os.sep}__pycache__" in path
                (cached if cache else found).append(f"{event} {path}")
        self.seen.clear()
        return found, cached


def _alarm(signum, frame):
    raise Hang()


def run_one(surface: str, payload, scratch: Path, timeout: float, audit: WriteAudit | None = None) -> dict:
    """One input through its surface's target, under an alarm; the outcome, message and what changed outside."""
    started, cpu = time.time(), time.process_time()
    os.chdir(scratch)  # every input starts in its worker's scratch folder, whatever the last one did
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        outcome, message = target(surface)(payload, scratch)
    except Hang:
        outcome, message = "hang", f"over {timeout} s"
    except BaseException as error:  # noqa: BLE001 - what escapes the target is what the campaign counts
        outcome, message = "uncaught", described(error)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    outside, cached = audit.changed(started) if audit is not None else ([], [])
    return {"outcome": outcome, "message": message, "outside": outside, "cached": cached,
            "cpu": time.process_time() - cpu}


def _cap_memory(gib: float) -> None:
    """The address space capped at what this process holds now plus `gib` GiB."""
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    limit = size + int(gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))


def _warm_up(scratch: Path, surfaces: list[str]) -> None:
    """Valid inputs of each surface, not counted: imports, the scratch dataset, compiled kernels, each command run in
    full once, all before the cap (on a busy machine a first `explain` took over 20 s)."""
    from benchmarks._fuzz_api import WARM_UP_RECIPES
    from benchmarks._fuzz_calls import RUN_IN_FULL, TEMPLATES

    warm = {"cli": [TEMPLATES[c] for c in RUN_IN_FULL], "api": list(WARM_UP_RECIPES)}
    for surface in surfaces:
        for payload in warm.get(surface, []) + [make_input(0, surface, 0)]:
            run_one(surface, payload, scratch, 900.0)


def worker(connection, out: Path, number: int, seed: int, timeout: float, memory_gib: float, surfaces: list[str]):
    scratch = out / "work" / f"w{number}"
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(scratch)
    _warm_up(scratch, surfaces)
    audit = WriteAudit(out)
    _cap_memory(memory_gib)
    connection.send(("ready", number))
    while (chunk := connection.recv()) is not None:
        for surface, index in chunk:
            try:
                payload = make_input(seed, surface, index)
            except Exception as error:  # a fault of the fuzzer itself: counted, so that it is seen
                payload = None
                result = {"outcome": "uncaught", "message": f"making the input: {type(error).__name__}: {error}"}
            else:
                result = run_one(surface, payload, scratch, timeout, audit)
            result.update(surface=surface, index=index)
            if result["outcome"] in FAILED:
                result["input"] = encoded(payload)
            connection.send(("result", result))
            if result["outcome"] == "hang":
                os._exit(0)  # what the alarm interrupted may be left half-done: a fresh worker takes over


# --------------------------------------------------------------------------------------------------
# The campaign


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
        self.cpu = Counter()
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
    """The campaign's figures: per surface the counts of COLUMNS and CPU seconds; the files changed outside `out`."""
    from tqdm import tqdm

    out = out.resolve()
    surfaces = surfaces or list(WEIGHTS)
    os.environ["TMPDIR"] = str(out / "tmp")  # the workers' temporary files stay inside `out`
    (out / "tmp").mkdir(parents=True, exist_ok=True)
    chunks = plan(examples, surfaces)
    started = time.perf_counter()
    campaign = Campaign(out, seed, workers, timeout, memory_gib, surfaces)
    try:
        with tqdm(total=sum(len(c) for c in chunks), desc="fuzz", unit="input", disable=not progress) as bar:
            campaign.run(chunks, bar)
    finally:
        campaign.close()
    table = {s: {c: campaign.counts[s][c] for c in COLUMNS} | {"cpu_seconds": round(campaign.cpu[s], 1)}
             for s in surfaces}
    table["all"] = {c: sum(table[s][c] for s in surfaces) for c in COLUMNS} | {
        "cpu_seconds": round(sum(campaign.cpu.values()), 1)}
    return {"examples": examples, "seed": seed, "workers": workers, "timeout": timeout, "memory_gib": memory_gib,
            "seconds": round(time.perf_counter() - started, 1), "table": table,
            "outside_changed": sorted(set(campaign.outside)), "compiled_cache_writes": sorted(set(campaign.cached)),
            "failures": [{k: f.get(k) for k in ("surface", "index", "outcome", "message")} for f in campaign.failures]}


def markdown(result: dict) -> str:
    lines = ["| surface | " + " | ".join(COLUMNS) + " | CPU s |", "|---|" + "---:|" * (len(COLUMNS) + 1)]
    for surface, row in result["table"].items():
        lines.append(f"| {surface} | " + " | ".join(str(row[c]) for c in COLUMNS) + f" | {row['cpu_seconds']} |")
    return "\n".join(lines)


def replay(path: Path, scratch: Path, timeout: float = 60.0) -> dict:
    """A saved input run again in this process: its outcome now."""
    saved = json.loads(Path(path).read_text())
    scratch.mkdir(parents=True, exist_ok=True)
    return run_one(saved["surface"], decoded(saved["input"]), scratch, timeout) | {"surface": saved["surface"]}


def main(argv: list[str] | None = None) -> int:
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
