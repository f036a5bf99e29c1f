"""Ray for the batch commands (`generate --ray`, `eval --ray`): start or join a runtime, run a function
over items as Ray tasks, get each result as it finishes.

    for item, result, error in ray_unordered(function, items, "local", workers=2):
        ...   # error: None, or why the item's task failed (its worker died RAY_RETRIES + 1 times, ...)

`address="local"` starts a runtime of `workers` CPUs on this machine, whose worker processes import
this checkout's code; any other address joins a running cluster (`ray start --head` on one machine,
`ray start --address HEAD:6379` on the others; the project installed on each, with `pip install -e
".[ray]"`, and the data on a filesystem they share). A task whose worker process dies is run again on
another worker, RAY_RETRIES times. Ray is an optional extra: it is imported only here, when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from dsl.processes import checkout_path

RAY_LOCAL = "local"
RAY_RETRIES = 3  # runs of a task whose worker process died, after the first


def start_ray(address: str, workers: int):
    """The `ray` module, initialised for `address` (a runtime already started in this process is kept)."""
    try:
        import ray
    except ModuleNotFoundError:
        raise SystemExit('--ray needs the ray extra: pip install -e ".[ray]"') from None
    if ray.is_initialized():
        return ray
    settings = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address == RAY_LOCAL:
        ray.init(num_cpus=max(1, workers), runtime_env={"env_vars": {"PYTHONPATH": checkout_path()}},
                 _system_config={"worker_niceness": 0}, **settings)  # (Ray's default 15 yields the CPU to the rest)
    else:
        ray.init(address=address, **settings)
    return ray


def ray_unordered(function: Callable, items: Iterable, address: str, workers: int, *args,
                  retries: int | None = None, gpus: float = 0) -> Iterator[tuple[object, object, str | None]]:
    """(item, function(item, *args) or None, error or None) for every item, as the tasks finish (one
    CPU each). The runtime stays up afterwards for the next call; Ray ends it when the program exits."""
    ray = start_ray(address, workers)
    task = ray.remote(function).options(num_cpus=1, num_gpus=gpus,
                                        max_retries=RAY_RETRIES if retries is None else retries)
    pending = {task.remote(item, *args): item for item in items}
    try:
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            item = pending.pop(ref)
            try:
                yield item, ray.get(ref), None
            except ray.exceptions.RayError as error:
                yield item, None, f"{type(error).__name__}: {error}"
    finally:  # an interrupted run leaves nothing running
        for ref in pending:
            ray.cancel(ref, force=True)
