"""`solver.app.execution`: `eval` on a local Ray runtime gives the process pool's records, problem for problem,
and a Ray worker that dies loses only the problem it held, which is run again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.commands import write_dataset
from dsl.generate import ProblemKind
from solver.app import execution
from solver.app.commands import evaluate, evaluate_problem, plan_jobs

ray = pytest.importorskip("ray")

SAME = ("name", "kind", "predicted", "correct", "rule", "english", "outcome", "rule_match", "confidence",
        "alternatives", "error", "image_errors")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Two generated problems of each kind (seeded)."""
    root = tmp_path_factory.mktemp("generated")
    counts = {ProblemKind.FREE_FORM: 2, ProblemKind.BASIC: 2, ProblemKind.ABSTRACT: 2}
    write_dataset(root, counts, seed=2525, workers=1, progress=False)
    return root


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray runtime of 2 CPUs for the module's tests (started by the first `--ray local` run)."""
    yield execution.RAY_LOCAL
    ray.shutdown()


def same_fields(summary: dict) -> dict:
    return {p["name"]: {k: p.get(k) for k in SAME} for p in summary["problems"]}


def test_ray_gives_the_process_pool_records(generated: Path, tmp_path: Path, local_ray):
    pool = evaluate(str(generated), "all", tmp_path / "pool.json", None, True, 2, 5.0)
    on_ray = evaluate(str(generated), "all", tmp_path / "ray.json", None, True, 2, 5.0, ray=local_ray)
    assert len(on_ray["problems"]) == 6 and on_ray["errors"] == 0
    assert same_fields(on_ray) == same_fields(pool)
    assert ray.cluster_resources()["CPU"] == 2


def test_ray_from_pixels_gives_the_local_readings(generated: Path, tmp_path: Path, local_ray):
    """One free-form problem from pixels: the Ray worker's own PixelPerception(workers=1) decodes in the same
    batches as the local path's pool of 2, so the rule and labels are the same."""
    local = evaluate(str(generated), "ff", tmp_path / "local.json", 1, False, 2, 5.0)
    on_ray = evaluate(str(generated), "ff", tmp_path / "ray.json", 1, False, 2, 5.0, ray=local_ray)
    assert on_ray["problems"][0]["rule"] is not None
    assert same_fields(on_ray) == same_fields(local)


def dies_first_time(job, perception, dump):
    """`evaluate_problem`, except that the first problem to start kills its worker process (kill -9)."""
    try:
        claim = os.open(Path(job.root) / ".died", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return evaluate_problem(job, perception, dump)
    os.write(claim, job.name.encode())
    os.close(claim)
    os.kill(os.getpid(), 9)


def always_dies(job, perception, dump):
    os.kill(os.getpid(), 9)


def test_a_dead_worker_loses_only_its_problem_which_runs_again(generated: Path, local_ray):
    jobs = plan_jobs(str(generated), "all", None, True, 5.0)
    records = list(execution.records(jobs, dies_first_time, True, 2, None, None, "cpu", local_ray))
    died = (generated / ".died").read_text()
    assert sorted(r["name"] for r in records) == sorted(job.name for job in jobs)
    assert all(r["error"] is None for r in records)
    assert next(r for r in records if r["name"] == died)["predicted"] is not None


def test_a_problem_whose_every_run_dies_is_recorded_as_lost(generated: Path, local_ray, monkeypatch):
    monkeypatch.setattr(execution, "RAY_RETRIES", 1)
    jobs = plan_jobs(str(generated), "bd", 1, True, 5.0)
    (record,) = execution.records(jobs, always_dies, True, 2, None, None, "cpu", local_ray)
    assert record["name"] == jobs[0].name and record["correct"] == 0
    assert "lost on the Ray cluster" in record["error"]


def test_generate_on_ray_writes_the_same_dataset(generated: Path, tmp_path: Path, local_ray):
    counts = {ProblemKind.FREE_FORM: 2, ProblemKind.BASIC: 2, ProblemKind.ABSTRACT: 2}
    report = write_dataset(tmp_path, counts, seed=2525, workers=2, progress=False, ray=local_ray)
    assert len(report.written) == 6 and not report.failed
    for path in sorted(generated.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            assert (tmp_path / path.relative_to(generated)).read_bytes() == path.read_bytes(), path


def grouped_client(job, perception, dump):
    """A record naming the perception's type and its place in its group (no decoding)."""
    return {"name": job.name, "perception": type(perception).__name__, "client": perception._client}


def test_ray_runs_problem_groups_as_tasks(generated: Path, local_ray):
    jobs = plan_jobs(str(generated), "all", None, False, 5.0)
    records = list(execution.records(jobs, grouped_client, False, 2, None, None, "cpu", local_ray, batch_problems=4))
    assert sorted(r["name"] for r in records) == sorted(job.name for job in jobs)
    assert {r["perception"] for r in records} == {"GroupedPerception"}
    assert sorted(r["client"] for r in records) == [0, 0, 1, 1, 2, 3]  # groups of 4 and 2
