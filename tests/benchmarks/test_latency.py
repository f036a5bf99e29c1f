"""`bench latency` run tiny: its parts and their figures are there (no timing is checked: machines differ)."""

from __future__ import annotations

import json

import pytest

from benchmarks import latency
from dsl.commands import write_dataset
from dsl.generate import ProblemKind


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("latency") / "data"
    write_dataset(root, {kind: 1 for kind in ProblemKind}, seed=11, workers=1, progress=False)
    return root


def test_the_cold_and_warm_figures_of_every_type(root, tmp_path, capsys):
    out = tmp_path / "latency.json"
    assert latency.main(["--data", str(root), "--oracle", "--runs", "1", "--limit", "1", "--no-first",
                         "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["written_by"] == "bongard-solver" and sorted(result["cold"]) == ["bd", "ff", "hd"]
    for entry in result["cold"].values():
        assert entry["median_wall"] > 0 and len(entry["runs"]) == 1 and len(entry["labels"]) == 2
    assert sorted(result["warm"]) == ["bd", "ff", "hd"]
    for figures in result["warm"].values():
        assert figures["problems"] == 1 and figures["errors"] == 0
        assert 0 < figures["median"] <= figures["p90"] <= figures["max"]
    assert "cold start" in capsys.readouterr().out


def test_a_pixel_solve_after_clearing_the_cache(root, tmp_path):
    out = tmp_path / "latency.json"
    assert latency.main(["--data", str(root), "--types", "hd", "--runs", "1", "--no-warm", "--json", str(out)]) == 0
    entry = json.loads(out.read_text())["cold"]["hd"]
    assert entry["first"]["wall"] > 0 and entry["first"]["labels"] == entry["labels"]


def test_the_tail_and_the_percentile():
    records = [{"name": f"p{k}", "seconds": float(k), "stage_seconds": {"check": k / 2, "form": 0.1}} for k in range(1, 21)]
    tail = latency.tail_stages(records)
    assert tail["problems"] == ["p20", "p19"] and tail["stages"] == {"check": 9.75, "form": 0.1}
    assert latency.percentile([float(k) for k in range(1, 11)], 0.9) == 9.0
    assert latency.percentile([3.0], 0.9) == 3.0
