"""Where `eval`'s problems run: a local process pool (the default) or a Ray cluster (`--ray`).

    for record in records(jobs, evaluate_problem, oracle, workers, dump, checkpoint, device, ray=None):
        ...   # one record per problem, as problems finish (in any order)

Both engines take the same unit of work (an `EvalJob`) and the same function that turns it into a record
(`solver.app.commands.evaluate_problem`), so they give the same labels and rules problem for problem:

* local, from pixels on the CPU, more problems than `workers` > 1: whole problems in parallel across `workers`
  processes, each with a `PixelPerception` of its own (one process, decoding DECODE_BATCH images at a time, as
  always), loaded and warmed up as the process starts (`solver.app.product.warm_up`, one built-in problem per
  generator: its seconds are in the run's wall clock, in no problem's). A problem's `seconds` are then one core's,
  and the run ends sooner than sharing each problem's images out: 60 free-form problems of seed 65601 took 35.1 s
  that way and 29.8 s as Ray's problem-level tasks, the same labels and rules;
* local, from pixels otherwise (one worker, as many problems as workers or fewer, or a GPU): the problems run one
  after the other; the one `PixelPerception` shares each problem's images out among its `workers` processes, after
  the same warm-up;
* local, oracle: problems in parallel across `workers` processes;
* Ray (`ray="local"` starts a runtime of `workers` CPUs on this machine, `ray=ADDRESS` joins a cluster
  started with `ray start --head` / `ray start --address ADDRESS`): problems are the tasks, one CPU each;
  each Ray worker process loads the checkpoints once (`_worker_perception`, a `PixelPerception(workers=1)`
  kept for the process's life) and decodes in the same batches. A task whose worker process dies is run
  again on another (`dsl.parallel.ray_unordered`, RAY_RETRIES times); a problem that still cannot finish
  becomes a record with its error, and the run goes on. With `--device cuda` each problem asks Ray for
  RAY_GPU_SHARE of a GPU (with `auto` Ray workers see no GPU, so they decode on their CPU).

With `batch_problems` K > 1 (from pixels) the problems go in groups of K whose decoding is batched together
(`solver.reading.grouped`): locally one group after the other, on Ray one group per task (a worker that dies then
loses its group, which runs again). `eval` does so on a GPU (GPU_BATCH_PROBLEMS) unless told otherwise.

Ray is an optional extra (`pip install -e ".[ray]"`); nothing imports it unless `ray` is given.

A local pool waits for ever for the job of a worker process that died (killed, or ended by a library that gave up
for want of memory: OpenBLAS exits under a tight `ulimit -v`). While local problems run, `watched_workers` looks at
this process's children every WATCH_SECONDS and, when one has ended, ends the run with one line naming it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from multiprocessing import Pool
from pathlib import Path

from dsl.dataset import problem_kind
from dsl.processes import worker_setup
from dsl.parallel import RAY_LOCAL, RAY_RETRIES, ray_unordered
from perception.device import resolve_device
from solver.reading import ProblemGroups
from solver.reading import PixelPerception, perception_worker_setup
from solver.app.product import warm_up

RAY_GPU_SHARE = 0.25  # of a GPU per task when decoding on CUDA under Ray (four tasks share one GPU)
WATCH_SECONDS = 0.5  # how often `watched_workers` looks at the worker processes
GPU_BATCH_PROBLEMS = 4  # problems decoded together on a GPU by default; a guess, never run on a GPU (none here):
# groups of 4 made batches of 3-14 images (`bench grouped` on the CPU, seed 3131), and a group waits for its slowest


def records(jobs: list, evaluate: Callable, oracle: bool, workers: int, dump: Path | None,
            checkpoint: Path | None, device: str = "auto", ray: str | None = None,
            batch_problems: int | None = None, journal: Path | None = None) -> Iterator[dict]:
    """`evaluate(job, perception, dump)` of every job, yielded as each finishes. `batch_problems`: the
    problems decoded together (None: `default_batch_problems`); `journal`: where the records go (named when a
    worker process dies, `watched_workers`)."""
    if not jobs:
        return iter(())
    size = 1 if oracle else batch_problems or default_batch_problems(device, ray)
    if ray is not None:
        return _ray_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, ray, size)
    if size > 1:
        return _grouped_records(jobs, evaluate, workers, dump, checkpoint, device, size, journal)
    return _local_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, journal)


def default_batch_problems(device: str, ray: str | None) -> int:
    """GPU_BATCH_PROBLEMS when the decoder runs on a GPU (under Ray: when `--device cuda` asks for one), else 1."""
    on_gpu = device == "cuda" if ray is not None else resolve_device(device) != "cpu"
    return GPU_BATCH_PROBLEMS if on_gpu else 1


def groups_of(jobs: list, size: int) -> list[list]:
    return [jobs[k : k + size] for k in range(0, len(jobs), size)]


def _grouped_records(jobs, evaluate, workers, dump, checkpoint, device, size, journal=None) -> Iterator[dict]:
    with ProblemGroups(checkpoint, resolve_device(device), workers) as groups, watched_workers(journal):
        for group in groups_of(jobs, size):
            yield from solved_group(groups, group, evaluate, dump)


def solved_group(groups: ProblemGroups, group: list, evaluate: Callable, dump: Path | None) -> list[dict]:
    """The group's records (a problem whose thread ended without one: a record of its loss)."""
    found = groups.solve(group, evaluate, dump)
    return [record or lost_record(job, "its thread ended without a record") for job, record in zip(group, found)]


def _local_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, journal=None) -> Iterator[dict]:
    if not oracle and workers > 1 and len(jobs) > workers and resolve_device(device) == "cpu":
        yield from _pooled_records(jobs, evaluate, workers, dump, checkpoint, device, journal)
    elif not oracle:
        with (PixelPerception(checkpoint, workers=workers, device=resolve_device(device)) as perception,
              watched_workers(journal)):
            if jobs:  # the models and compiled kernels loaded before the first problem's clock starts
                warm_up(perception)
            for job in jobs:
                yield evaluate(job, perception, dump)
    elif workers > 1 and dump is None:
        with Pool(workers, initializer=worker_setup, initargs=(os.getpid(),)) as pool, watched_workers(journal):
            yield from pool.imap_unordered(evaluate, jobs)  # the workers ignore SIGINT
    else:
        for job in jobs:
            yield evaluate(job, None, dump)


def _pooled_records(jobs, evaluate, workers, dump, checkpoint, device, journal=None) -> Iterator[dict]:
    """From pixels, more problems than `workers`: whole problems in parallel, each worker process solving one at a time
    with a perception of its own (`_pool_worker_setup`), as Ray's workers do."""
    setup = (os.getpid(), checkpoint, device)
    with Pool(workers, initializer=_pool_worker_setup, initargs=setup) as pool, watched_workers(journal):
        yield from pool.imap_unordered(functools.partial(solve_on_worker, evaluate=evaluate, oracle=False, dump=dump,
                                                         checkpoint=checkpoint, device=device), jobs)


def _pool_worker_setup(parent: int, checkpoint: Path | None, device: str) -> None:
    """A problem worker's start: as a perception worker's (`perception_worker_setup`: SIGINT left to its parent, its
    end with it, torch on one thread), then its perception (one process, `_worker_perception`) loaded and warmed up
    before any problem's clock starts."""
    perception_worker_setup(parent)
    warm_up(_worker_perception(checkpoint, device))


_WORKER_PERCEPTION: dict = {}


def _worker_perception(checkpoint: Path | None, device: str) -> PixelPerception:
    """A problem worker's own perception (a Ray worker's, or a local pool's: `_pooled_records`), its checkpoints
    loaded on the first problem it solves (a pool's worker: as it starts)."""
    key = (str(checkpoint), device)
    if key not in _WORKER_PERCEPTION:
        _WORKER_PERCEPTION[key] = PixelPerception(checkpoint, workers=1, device=resolve_device(device))
    return _WORKER_PERCEPTION[key]


def solve_on_worker(job, evaluate: Callable, oracle: bool, dump: Path | None, checkpoint: Path | None,
                    device: str) -> dict:
    """One problem in a worker process (the body of the Ray task, and of a local pool's: `_pooled_records`)."""
    perception = None if oracle else _worker_perception(checkpoint, device)
    return evaluate(job, perception, dump)


_WORKER_GROUPS: dict = {}


def solve_group_on_worker(group: list, evaluate: Callable, dump: Path | None, checkpoint: Path | None,
                          device: str) -> list[dict]:
    """A group of problems decoded together in a Ray worker process (the body of the Ray task)."""
    key = (str(checkpoint), device)
    if key not in _WORKER_GROUPS:
        _WORKER_GROUPS[key] = ProblemGroups(checkpoint, resolve_device(device), workers=1)
    return solved_group(_WORKER_GROUPS[key], group, evaluate, dump)


def _ray_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, address, size) -> Iterator[dict]:
    gpus = RAY_GPU_SHARE if not oracle and device == "cuda" else 0
    if size > 1:
        tasks = ray_unordered(solve_group_on_worker, groups_of(jobs, size), address, workers, evaluate, dump,
                              checkpoint, device, retries=RAY_RETRIES, gpus=gpus)
        for group, found, error in tasks:
            yield from found if error is None else [lost_record(job, f"lost on the Ray cluster: {error}") for job in group]
        return
    tasks = ray_unordered(solve_on_worker, jobs, address, workers, evaluate, oracle, dump, checkpoint, device,
                          retries=RAY_RETRIES, gpus=gpus)
    for job, record, error in tasks:
        yield record if error is None else lost_record(job, f"lost on the Ray cluster: {error}")


def lost_record(job, error: str) -> dict:
    """The record of a problem that never finished (the fields of `solver.app.commands.evaluate_problem`'s)."""
    return {"name": job.name, "kind": problem_kind(job.name), "true": [True, False], "predicted": None,
            "correct": 0, "rule": None, "english": None, "outcome": None, "rule_match": False,
            "confidence": None, "alternatives": 0, "seconds": 0.0, "error": error}


def _children() -> dict[int, str]:
    """This process's child processes and their states ('Z': ended, not yet reaped)."""
    found = {}
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as listing:
            for pid in listing.read().split():
                with contextlib.suppress(OSError, IndexError), open(f"/proc/{pid}/stat") as stat:
                    found[int(pid)] = stat.read().rsplit(")", 1)[1].split()[0]
    return found


@contextlib.contextmanager
def watched_workers(journal: Path | None = None, every: float = WATCH_SECONDS):
    """Inside: if a child process that was alive ends, the run ends at once (exit code 1) with one line on stderr
    naming the process and `journal`. Not an exception: a pool whose worker died can hang in its own shutdown and
    in the interpreter's exit, which both wait for the lost job. Does nothing where /proc lists no children."""
    if not os.path.exists("/proc/self/task"):
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        alive = {pid for pid, state in _children().items() if state != "Z"}
        while not stop.wait(every):
            children = _children()
            ended = sorted(pid for pid in alive if children.get(pid, "Z") == "Z")
            if ended and not stop.is_set():
                kept = f"the records written are kept in {journal}: " if journal else ""
                os.write(2, f"\nbongard-solver eval: worker process {ended[0]} ended in the middle of the run (killed, "
                            f"or out of memory{_cap()}); {kept}run the same command again to resume\n".encode())
                os._exit(1)
            alive |= {pid for pid, state in children.items() if state != "Z"}

    watcher = threading.Thread(target=watch, name="worker-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def _cap() -> str:
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return "" if limit == resource.RLIM_INFINITY else f": each process may use {limit / 2**30:.2f} GiB, ulimit -v"
