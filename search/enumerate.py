"""Best-first enumeration of candidate programs under a budget.

`best_first` is a generator: it scores the starting candidates, then repeatedly takes the best candidate
not yet expanded, yields it (so candidates come out in order of score) and queues its neighbours under
an estimate of their score; a neighbour is scored when it reaches the front of the queue and goes back in
under its score (lazy evaluation: the budget is spent on the edits that look best). Equivalent programs
(same canonical key) are scored once. Ties are broken by the order in which
candidates were generated, so a run with a candidate budget is deterministic; a time budget (for the
caller's latency) stops early and is the only source of variation. The caller may stop iterating at any
time, or `send(True)` after a yield to prune that candidate (its neighbours are not generated).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from typing import Callable, Generic, Hashable, Iterable, Iterator, TypeVar

Program = TypeVar("Program")
Info = TypeVar("Info")


@dataclass(frozen=True)
class Budget:
    candidates: int = 200  # candidates scored, at most
    milliseconds: float | None = None  # wall-clock limit, if any

    def deadline(self) -> float | None:
        return None if self.milliseconds is None else time.perf_counter() + self.milliseconds / 1000.0


@dataclass(order=True)
class Scored(Generic[Program, Info]):
    score: float  # the score, or the estimate while `evaluated` is False
    order: int
    program: Program = field(compare=False)
    info: Info = field(compare=False)  # what the scorer returned besides the score (e.g. the pose)
    depth: int = field(compare=False, default=0)
    evaluated: bool = field(compare=False, default=True)


def best_first(
    starts: Iterable[tuple],
    score: Callable[[Program, object], tuple[float, Info]],
    expand: Callable[[Scored], Iterable[tuple[Program, object, float]]],
    key: Callable[[Program], Hashable],
    budget: Budget = Budget(),
) -> Iterator[Scored]:
    """Yield scored candidates best first.

    starts   (program, context) pairs, scored at once, or (program, context, estimate) triples, queued
             under the estimate; `context` is passed to `score`;
    score    (program, context) -> (score, info); lower is better;
    expand   scored candidate -> its neighbours as (program, context, estimate): a neighbour waits in the
             queue under its estimate and is scored only when it reaches the front (lazy evaluation), so
             a good estimate spends the budget on the promising edits;
    key      canonical key: programs with equal keys are the same candidate.
    """
    deadline = budget.deadline()
    seen: set = set()
    queue: list[Scored] = []
    counter = 0
    evaluations = 0

    def out_of_budget() -> bool:
        return evaluations >= budget.candidates or (deadline is not None and time.perf_counter() > deadline)

    def evaluate(program, context, depth: int) -> None:
        nonlocal counter, evaluations
        k = key(program)
        if k in seen:
            return
        seen.add(k)
        value, info = score(program, context)
        evaluations += 1
        heapq.heappush(queue, Scored(value, counter, program, info, depth))
        counter += 1

    queued: set = set()
    for start in starts:
        if len(start) == 3:  # (program, context, estimate): waits in the queue like a neighbour
            queued.add(start[0])
            heapq.heappush(queue, Scored(start[2], counter, start[0], start[1], 0, evaluated=False))
            counter += 1
        else:
            evaluate(start[0], start[1], 0)
    while queue:
        best = heapq.heappop(queue)
        if not best.evaluated:
            if not out_of_budget():
                evaluate(best.program, best.info, best.depth)
            continue
        prune = yield best
        if prune or out_of_budget():
            continue
        for program, context, estimate in expand(best):
            if program not in queued:
                queued.add(program)
                heapq.heappush(queue, Scored(estimate, counter, program, context, best.depth + 1, evaluated=False))
                counter += 1
