"""`bench paired`: two checkouts timed problem by problem; the figures of the pairs, and bad options refused."""

from __future__ import annotations

import pytest

from benchmarks import paired


def _record(name: str, seconds: float, predicted: list, rule: str = "r", confidence: list | None = None) -> dict:
    return {"name": name, "seconds": seconds, "predicted": predicted, "truth": [True, False], "rule": rule,
            "confidence": confidence or [0.9, 0.9]}


def test_the_figures_of_the_pairs():
    pairs = [(_record("p1", 2.0, [True, False]), _record("p1", 0.5, [True, False])),
             (_record("p2", 3.0, [True, False]), _record("p2", 1.0, [True, True], confidence=[0.9, 0.6])),
             (_record("p3", 4.0, [True, False]), _record("p3", 2.0, [True, False], rule="other"))]
    found = paired.summary(pairs)
    assert found["median_seconds"] == [3.0, 1.0] and found["ratio_of_medians"] == 3.0
    assert found["median_per_problem_ratio"] == 3.0  # of 4, 3 and 2
    assert found["accuracy"] == [1.0, round(5 / 6, 4)]
    assert found["labels_or_rules_differ"] == ["p2", "p3"] and found["confidences_differ"] == ["p2"]


def test_a_baseline_that_is_no_checkout_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no checkout of bongard-solver there"):
        paired.main(["--baseline", str(tmp_path), "--data", str(tmp_path)])
    (tmp_path / "solver").mkdir()
    (tmp_path / "solver" / "product.py").write_text("")
    with pytest.raises(SystemExit, match="no problem folders under"):
        paired.main(["--baseline", str(tmp_path), "--data", str(tmp_path)])
