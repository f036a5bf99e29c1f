"""`bench same_records`: two eval runs compared problem for problem, from summaries or `--split all` results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import same_records


def summary(path: Path, problems: dict, seconds: float) -> Path:
    records = [{"name": name, "predicted": predicted, "rule": rule, "correct": correct, "error": None}
               for name, (predicted, rule, correct) in problems.items()]
    path.write_text(json.dumps({"problems": records, "seconds": seconds}))
    return path


def test_a_label_or_rule_that_differs_is_named(tmp_path: Path):
    a = summary(tmp_path / "a.json", {"p1": ([True, False], "r1", 2), "p2": ([True, True], "r2", 1)}, 10.0)
    b = summary(tmp_path / "b.json", {"p1": ([True, False], "r1", 2), "p2": ([True, False], "r3", 2)}, 5.0)
    result = same_records.compare(a, b)
    assert result["labels_differ"] == ["p2"] and result["rules_differ"] == ["p2"]
    assert result["accuracy"] == [0.75, 1.0] and result["problems_per_second"] == [0.2, 0.4]
    assert same_records.main([str(a), str(b)]) == 1
    assert same_records.main([str(a), str(a)]) == 0


def test_a_split_all_result_is_read_split_by_split(tmp_path: Path):
    ff = summary(tmp_path / "bench.ff.json", {"p1": ([True, False], "r1", 2)}, 3.0)
    bd = summary(tmp_path / "bench.bd.json", {"p2": ([True, False], "r2", 2)}, 1.0)
    whole = tmp_path / "bench.json"
    whole.write_text(json.dumps({"splits": {"ff": {"file": str(ff)}, "bd": {"file": str(bd)}}}))
    problems, seconds = same_records.load_run(whole)
    assert sorted(problems) == ["p1", "p2"] and seconds == 4.0
    assert same_records.compare(whole, ff)["only_in_one"] == ["p2"]
