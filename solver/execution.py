"""Where `eval`'s problems run: a local process pool (the default) or a Ray cluster (`--ray`).

    for record in records(jobs, evaluate_problem, oracle, workers, dump, checkpoint, device, ray=None):
        ...   # one record per problem, as problems finish (in any order)

Both engines take the same unit of work (an `EvalJob`) and the same function that turns it into a record
(`solver.commands.evaluate_problem`), so they give the same labels and rules problem for problem:

* local, from pixels: the problems run one after the other; the one `PixelPerception` shares each
  problem's images out among its `workers` processes (decoding DECODE_BATCH images at a time, as always);
* local, oracle: problems in parallel across `workers` processes;
* Ray (`ray="local"` starts a runtime of `workers` CPUs on this machine, `ray=ADDRESS` joins a cluster
  started with `ray start --head` / `ray start --address ADDRESS`): problems are the tasks, one CPU each;
  each Ray worker process loads the checkpoints once (`_worker_perception`, a `PixelPerception(workers=1)`
  kept for the process's life) and decodes in the same batches. A task whose worker process dies is run
  again on another (Ray's task retries, RAY_RETRIES times); a problem that still cannot finish becomes a
  record with its error, and the run goes on.

Ray is an optional extra (`pip install -e ".[ray]"`); nothing here imports it unless `ray` is given.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from multiprocessing import Pool
from pathlib import Path

from dsl.dataset import problem_kind
from perception.device import resolve_device
from solver.perceive import PixelPerception

RAY_RETRIES = 3  # runs of a problem whose worker process died, after the first
RAY_GPU_SHARE = 0.25  # of a GPU per problem when decoding on CUDA under Ray (four problems share one GPU)
RAY_LOCAL = "local"


def records(jobs: list, evaluate: Callable, oracle: bool, workers: int, dump: Path | None,
            checkpoint: Path | None, device: str = "auto", ray: str | None = None) -> Iterator[dict]:
    """`evaluate(job, perception, dump)` of every job, yielded as each finishes."""
    if not jobs:
        return iter(())
    if ray is not None:
        return _ray_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, ray)
    return _local_records(jobs, evaluate, oracle, workers, dump, checkpoint, device)


def _local_records(jobs, evaluate, oracle, workers, dump, checkpoint, device) -> Iterator[dict]:
    if not oracle:
        with PixelPerception(checkpoint, workers=workers, device=resolve_device(device)) as perception:
            for job in jobs:
                yield evaluate(job, perception, dump)
    elif workers > 1 and dump is None:
        with Pool(workers) as pool:
            yield from pool.imap_unordered(evaluate, jobs)
    else:
        for job in jobs:
            yield evaluate(job, None, dump)


_WORKER_PERCEPTION: dict = {}


def _worker_perception(checkpoint: Path | None, device: str) -> PixelPerception:
    """The Ray worker process's own perception, its checkpoints loaded on the first problem it solves."""
    key = (str(checkpoint), device)
    if key not in _WORKER_PERCEPTION:
        _WORKER_PERCEPTION[key] = PixelPerception(checkpoint, workers=1, device=resolve_device(device))
    return _WORKER_PERCEPTION[key]


def solve_on_worker(evaluate: Callable, job, oracle: bool, dump: Path | None, checkpoint: Path | None,
                    device: str) -> dict:
    """One problem in a Ray worker process (the body of the Ray task)."""
    perception = None if oracle else _worker_perception(checkpoint, device)
    return evaluate(job, perception, dump)


def _project_root() -> str:
    """The folder this code is imported from, so that local Ray workers import the same code."""
    return str(Path(__file__).resolve().parents[1])


def start_ray(address: str, workers: int):
    """`ray.init` for `--ray local` (a runtime of `workers` CPUs here) or `--ray ADDRESS` (a cluster)."""
    try:
        import ray
    except ModuleNotFoundError:
        raise SystemExit('--ray needs the ray extra: pip install -e ".[ray]"') from None
    if ray.is_initialized():
        return ray
    settings = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address == RAY_LOCAL:
        path = os.pathsep.join([_project_root(), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        ray.init(num_cpus=max(1, workers), runtime_env={"env_vars": {"PYTHONPATH": path}}, **settings)
    else:
        ray.init(address=address, **settings)
    return ray


def _ray_records(jobs, evaluate, oracle, workers, dump, checkpoint, device, address) -> Iterator[dict]:
    ray = start_ray(address, workers)
    gpus = RAY_GPU_SHARE if not oracle and device == "cuda" else 0
    task = ray.remote(solve_on_worker).options(num_cpus=1, num_gpus=gpus, max_retries=RAY_RETRIES)
    pending = {task.remote(evaluate, job, oracle, dump, checkpoint, device): job for job in jobs}
    try:
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(finished[0])
            yield _ray_result(ray, finished[0], job)
    finally:  # (the runtime stays up for the next split of `--split all`; Ray ends it when the program exits)
        for ref in pending:
            ray.cancel(ref, force=True)


def _ray_result(ray, ref, job) -> dict:
    """The task's record; a problem whose every run died is recorded with the error (it counts as wrong)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as error:
        return lost_record(job, f"{type(error).__name__}: lost on the Ray cluster: {error}")


def lost_record(job, error: str) -> dict:
    """The record of a problem that never finished (the fields of `solver.commands.evaluate_problem`'s)."""
    return {"name": job.name, "kind": problem_kind(job.name), "true": [True, False], "predicted": None,
            "correct": 0, "rule": None, "english": None, "outcome": None, "rule_match": False,
            "confidence": None, "alternatives": 0, "seconds": 0.0, "error": error}
