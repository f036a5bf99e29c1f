"""Inside a `bench fuzz` worker process: an input made from (seed, surface, index), run through its surface's target
under an alarm, with an audit hook noting writes outside the campaign's folder (`benchmarks.fuzz` runs the workers).
"""

from __future__ import annotations

import base64
import os
import resource
import signal
import sys
import time
import zlib
from pathlib import Path

from benchmarks._fuzz_targets import FILE_TARGETS, PROBLEM, described

ALLOWED = ("/dev/null", "/dev/full")  # outside the campaign's folder, but writing there changes no file
CODE_ROOT = str(Path(__file__).resolve().parents[1]) + os.sep  # the checkout: its __pycache__ holds compiled caches
FAILED = ("unclear", "uncaught", "hang", "loose")


class Hang(BaseException):
    """Raised by the alarm: the input ran past its time."""


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
            "cpu": time.process_time() - cpu, "wall": time.time() - started}


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
