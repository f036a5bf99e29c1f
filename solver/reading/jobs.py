"""Stage clocks and the jobs handed to perception's worker processes as soon as they are known."""

from __future__ import annotations

import functools
import queue
import time
from collections import deque
from contextlib import contextmanager


class Stages:
    """Seconds spent per stage, added up over the `with stages(name):` blocks: wall clock (`seconds`) and this
    process's CPU time (`cpu_seconds`; the worker processes' not included)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        start, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 4)
            self.cpu_seconds[name] = round(self.cpu_seconds.get(name, 0.0) + time.process_time() - cpu, 4)


class Jobs:
    """Jobs handed to the worker processes as soon as they are known, each result taken when it is asked for, and
    `first_of` a few jobs the first that is done: a stage starts on what the one before has made without waiting for
    its slowest job. Without worker processes each job runs in this process, in the order given, when a result it
    or a later job's is asked for (`here`: what runs instead of `function(job)`, when given). A job's result is the
    same whenever it runs: only the waiting changes."""

    def __init__(self, pool) -> None:
        self.pool = pool
        self.arrived: queue.Queue = queue.Queue()
        self.waiting: deque = deque()  # without workers: (tag, thunk) in the order given
        self.done: dict = {}  # tag -> (result, error)

    def submit(self, tag, function, job, here=None) -> None:
        if self.pool is None:
            self.waiting.append((tag, here if here is not None else functools.partial(function, job)))
            return
        if function is None:  # a job only this process can run: run now
            self._run(tag, here)
            return
        self.pool.apply_async(function, (job,), callback=lambda result: self.arrived.put((tag, result, None)),
                              error_callback=lambda error: self.arrived.put((tag, None, error)))

    def _run(self, tag, thunk) -> None:
        """A job run in this process, its result (or error) kept."""
        try:
            self.done[tag] = (thunk(), None)
        except Exception as error:
            self.done[tag] = (None, error)

    def _one_more(self) -> None:
        if self.pool is None:
            self._run(*self.waiting.popleft())
            return
        tag, result, error = self.arrived.get()
        self.done[tag] = (result, error)

    def first_of(self, tags: list):
        """The first of `tags` whose job is done (without workers: the one submitted first)."""
        while not any(tag in self.done for tag in tags):
            self._one_more()
        return next(tag for tag in tags if tag in self.done)

    def get(self, tag):
        """The result of job `tag` (its error raised), waited for."""
        while tag not in self.done:
            self._one_more()
        result, error = self.done.pop(tag)
        if error is not None:
            raise error
        return result
