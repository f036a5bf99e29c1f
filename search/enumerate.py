"""Best-first enumeration of candidate programs under a budget.

`best_first` is a generator: it scores the starting candidates, then repeatedly takes the best candidate
not yet expanded, yields it (so candidates come out in order of score), scores its neighbours and queues
them. Equivalent programs (same canonical key) are scored once. Ties are broken by the order in which
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
    score: float
    order: int
    program: Program = field(compare=False)
    info: Info = field(compare=False)  # what the scorer returned besides the score (e.g. the pose)
    depth: int = field(compare=False, default=0)


def best_first(
    starts: Iterable[tuple[Program, object]],
    score: Callable[[Program, object], tuple[float, Info]],
    expand: Callable[[Scored], Iterable[tuple[Program, object]]],
    key: Callable[[Program], Hashable],
    budget: Budget = Budget(),
) -> Iterator[Scored]:
    """Yield scored candidates best first.

    starts   (program, context) pairs; `context` is passed to `score` (e.g. the parent's pose or a prior);
    score    (program, context) -> (score, info); lower is better;
    expand   scored candidate -> its neighbours as (program, context) pairs;
    key      canonical key: programs with equal keys are the same candidate.
    """
    deadline = budget.deadline()
    seen: set = set()
    queue: list[Scored] = []
    counter = 0

    def out_of_budget() -> bool:
        return counter >= budget.candidates or (deadline is not None and time.perf_counter() > deadline)

    def push(program, context, depth: int) -> None:
        nonlocal counter
        k = key(program)
        if k in seen:
            return
        seen.add(k)
        value, info = score(program, context)
        heapq.heappush(queue, Scored(value, counter, program, info, depth))
        counter += 1

    for program, context in starts:
        push(program, context, 0)
    while queue:
        best = heapq.heappop(queue)
        prune = yield best
        if prune or out_of_budget():
            continue
        for program, context in expand(best):
            if out_of_budget():
                break
            push(program, context, best.depth + 1)
