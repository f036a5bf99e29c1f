"""Problems solved in groups whose decoding is batched together: several problems' images in one GPU call.

    with ProblemGroups(checkpoint, device="cuda", workers=2) as groups:
        records = groups.solve(jobs[:4], evaluate_problem, dump=None)   # one record per job, in job order

A group's problems are solved side by side, one thread each, every thread with its own `GroupedPerception`.
Whenever a problem's perception asks for decoded proposals it waits until every other problem of the group
still running asks too (`perception.batching.Rendezvous`); then the group's requests are decoded together:

* on a GPU in one call, all their images in one batch (`perception.batching.one_call`), as a single
  problem's images are on a GPU (`PixelPerception.proposals`); the readings may differ from one problem at
  a time by an image or a few, as a GPU's differ from a CPU's;
* on the CPU each request in its own DECODE_BATCH batches, as a problem alone is decoded (a bigger batch
  changes the floating-point sums and so, rarely, a reading): the readings, labels and rules are those of
  one problem at a time, which the tests check. On the CPU the pool and Ray are the engines, so `eval`
  groups only on a GPU unless asked (`--batch-problems`).

Everything else a problem does runs in its thread, its refinement and checks in the group's shared pool of
`workers` processes (forked before the GPU is touched), torch on one thread throughout (the readings
depend a little on the thread count). The threads share one interpreter: they overlap only where the
search's kernels, torch and clingo leave it, so for more CPU run more processes (Ray workers, each with its
own group). What a group saves is GPU calls (`bench grouped` shows what one call per batch changes).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path

from dsl.processes import worker_setup
from perception.batching import Rendezvous, one_call
from solver.reading.perception import PixelPerception, decoded_in_batches


class GroupedPerception(PixelPerception):
    """One problem's perception within a group: decodes through the group's `Rendezvous`, refines in the
    group's pool, names shapes with the group's classifier."""

    def __init__(self, group: "ProblemGroups", rendezvous: Rendezvous, client: int) -> None:
        super().__init__(group.perception.checkpoint, device=group.perception.device, workers=1)
        self._rendezvous, self._client = rendezvous, client
        self._pool = group.perception._pool  # the group's (owned and closed by it)
        self._classifier = group.perception.classifier()

    def proposals(self, images: list) -> list[tuple]:
        return self._rendezvous.decode(self._client, images)

    def close(self) -> None:
        self._pool = None


class ProblemGroups:
    """Solves lists of eval jobs, each list as one group (see the module docstring)."""

    def __init__(self, checkpoint: Path | None, device: str, workers: int) -> None:
        self.perception = PixelPerception(checkpoint, workers=workers, device=device)
        if workers > 1:  # forked now, before the decoder is loaded (CUDA does not survive a fork)
            self.perception._pool = multiprocessing.get_context("fork").Pool(
                workers, initializer=worker_setup, initargs=(os.getpid(),))
        self.batches: list[list[int]] = []  # every batch decoded: the images of each problem's request in it

    def decode_requests(self, requests: list[list]) -> list[list]:
        """The proposals of every request: one call on a GPU, each request in its own batches on the CPU."""
        perception = self.perception
        if perception.device != "cpu":
            return one_call(perception.proposals)(requests)
        return [decoded_in_batches(perception.decoder(), request, perception.top_k, perception.beam)
                for request in requests]

    def solve(self, jobs: list, evaluate: Callable, dump: Path | None) -> list[dict]:
        """`evaluate(job, perception, dump)` of every job, solved side by side; the records in job order."""
        import torch

        rendezvous = Rendezvous(self.decode_requests, len(jobs))
        records: list = [None] * len(jobs)

        def solve_one(k: int) -> None:
            try:
                records[k] = evaluate(jobs[k], GroupedPerception(self, rendezvous, k), dump)
            finally:
                rendezvous.leave(k)

        threads_before = torch.get_num_threads()
        torch.set_num_threads(1)  # for the whole group: `one_thread` in one problem's thread cannot undo it in another's
        try:
            threads = [threading.Thread(target=solve_one, args=(k,), name=f"problem-{k}", daemon=True) for k in range(len(jobs))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            torch.set_num_threads(threads_before)
        self.batches += rendezvous.batches
        return records

    def close(self) -> None:
        self.perception.close()

    def __enter__(self) -> "ProblemGroups":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
