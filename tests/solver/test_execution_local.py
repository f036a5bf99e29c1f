"""`eval` from pixels on the local machine: whole problems side by side (`workers` > 1, more problems than workers)
give the records of one process sharing each problem's images out, problem for problem."""

from __future__ import annotations

from pathlib import Path

from dsl.commands import write_dataset
from dsl.generate import ProblemKind
from solver.app import execution
from solver.app.commands import evaluate

SAME = ("name", "kind", "predicted", "correct", "rule", "english", "outcome", "rule_match", "confidence",
        "alternatives", "error", "image_errors")


def test_problems_side_by_side_give_the_records_of_one_at_a_time(tmp_path: Path, monkeypatch):
    root = tmp_path / "data"
    write_dataset(root, {ProblemKind.FREE_FORM: 1, ProblemKind.BASIC: 1, ProblemKind.ABSTRACT: 1}, seed=2626,
                  workers=1, progress=False)
    pooled = []
    real = execution._pooled_records
    monkeypatch.setattr(execution, "_pooled_records", lambda *a, **k: pooled.append(1) or real(*a, **k))
    one = evaluate(str(root), "all", tmp_path / "one.json", None, False, 1, 5.0)
    assert not pooled
    two = evaluate(str(root), "all", tmp_path / "two.json", None, False, 2, 5.0)
    assert pooled  # three problems, two workers: whole problems in parallel
    assert len(two["problems"]) == 3 and two["errors"] == 0
    fields = [{p["name"]: {k: p.get(k) for k in SAME} for p in s["problems"]} for s in (one, two)]
    assert fields[0] == fields[1]
