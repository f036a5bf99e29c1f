"""`solver.reading.grouped` and `perception.batching`: problems whose decoding is batched together (a GPU's groups,
forced here on the CPU) read every image as one problem at a time does, and get the same labels and rules."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchmarks.grouped import with_readings
from dsl.commands import write_dataset
from dsl.generate import ProblemKind
from perception.batching import Rendezvous, one_call
from solver.app import execution
from solver.app.commands import plan_jobs
from solver.reading.grouped import GroupedPerception, ProblemGroups

SAME = ("name", "predicted", "correct", "rule", "english", "outcome", "confidence", "alternatives", "error",
        "image_errors", "readings")


def run_clients(rendezvous: Rendezvous, requests: dict[int, list[list]]) -> dict[int, list]:
    """Each client's requests in its own thread, one after the other; what each got back."""
    got: dict[int, list] = {client: [] for client in requests}

    def client(k: int) -> None:
        try:
            for request in requests[k]:
                got[k].append(rendezvous.decode(k, request))
        finally:
            rendezvous.leave(k)

    threads = [threading.Thread(target=client, args=(k,)) for k in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    return got


def test_each_batch_holds_the_next_request_of_every_live_problem():
    calls = []

    def decode(images: list) -> list:
        calls.append(list(images))
        return [f"read {image}" for image in images]

    requests = {0: [["a1", "a2"], ["a3"]], 1: [["b1"]], 2: [["c1"], ["c2", "c3"], ["c4"]]}
    got = run_clients(Rendezvous(one_call(decode), clients=3), requests)
    assert calls == [["a1", "a2", "b1", "c1"], ["a3", "c2", "c3"], ["c4"]]
    assert got == {k: [[f"read {image}" for image in request] for request in rs] for k, rs in requests.items()}


def test_a_failed_batch_fails_every_problem_in_it():
    def decode(images: list) -> list:
        raise ValueError("no decoder")

    rendezvous = Rendezvous(one_call(decode), clients=2)
    errors = []

    def client(k: int) -> None:
        try:
            rendezvous.decode(k, [k])
        except ValueError as error:
            errors.append(str(error))
        finally:
            rendezvous.leave(k)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == ["no decoder", "no decoder"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Two free-form problems and one abstract (seeded)."""
    root = tmp_path_factory.mktemp("generated")
    write_dataset(root, {ProblemKind.FREE_FORM: 2, ProblemKind.ABSTRACT: 1}, seed=2626, workers=1, progress=False)
    return root


def test_a_group_decoded_together_reads_as_one_problem_at_a_time(generated: Path):
    jobs = plan_jobs(str(generated), "all", None, False, 5.0)
    alone = list(execution.records(jobs, with_readings, False, 1, None, None, "cpu"))
    with ProblemGroups(None, "cpu", workers=1) as groups:
        together = groups.solve(jobs, with_readings, None)
    assert any(len(batch) > 1 for batch in groups.batches)  # requests of several problems went together
    assert all(record["rule"] is not None and len(record["readings"]) == 14 for record in together)
    assert [{k: r.get(k) for k in SAME} for r in together] == [{k: r.get(k) for k in SAME} for r in alone]


def test_eval_groups_problems_when_asked(generated: Path):
    jobs = plan_jobs(str(generated), "all", None, False, 5.0)
    seen = []

    def perception_kind(job, perception, dump) -> dict:
        seen.append((job.name, type(perception), perception._client))
        return {"name": job.name}

    found = list(execution.records(jobs, perception_kind, False, 1, None, None, "cpu", batch_problems=2))
    assert [r["name"] for r in found] == [job.name for job in jobs]
    assert all(kind is GroupedPerception for _, kind, _ in seen)
    assert sorted((name, client) for name, _, client in seen) == sorted(
        (job.name, k % 2) for k, job in enumerate(jobs))
    assert execution.default_batch_problems("cpu", None) == 1
    assert execution.default_batch_problems("cuda", "local") == execution.GPU_BATCH_PROBLEMS
