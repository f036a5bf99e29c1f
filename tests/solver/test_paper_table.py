"""`eval --split all`: which splits stand for FF / BA / CM / NV, the table, the chart, the command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from solver.app import paper_table
from solver.app.cli import main
from tests.official import OFFICIAL_DEV



def test_benchmark_splits_prefers_the_released_test_splits():
    released = {name: ["x"] for name in ("train_ff", "test_ff", "test_bd", "test_hd_comb", "test_hd_novel", "val_ff")}
    assert paper_table.benchmark_splits(released)[1] == {
        "FF": "test_ff", "BA": "test_bd", "CM": "test_hd_comb", "NV": "test_hd_novel"}
    dev = {"dev_ff": [], "dev_bd": [], "dev_hd": []}
    assert paper_table.benchmark_splits(dev) == ("official_dev-shaped dev splits", {"FF": "dev_ff", "BA": "dev_bd", "CM": "dev_hd"})
    generated = {"ff": [], "bd": [], "hd": [], "all": []}
    assert paper_table.benchmark_splits(generated)[1] == {"FF": "ff", "BA": "bd", "CM": "hd"}
    with pytest.raises(ValueError, match="no benchmark splits"):
        paper_table.benchmark_splits({"tiny": []})


def summary(accuracy: float, problems: int) -> dict:
    return {"accuracy": accuracy, "n_queries": 2 * problems, "n_problems": problems}


def test_table_markdown_and_chart(tmp_path: Path):
    columns = {"FF": "dev_ff", "BA": "dev_bd", "CM": "dev_hd"}
    rows = paper_table.table_rows({"dev_ff": summary(0.75, 2), "dev_bd": summary(1.0, 3), "dev_hd": summary(0.5, 1)}, columns)
    assert [row["method"] for row in rows] == ["bongard-solver", "Meta-Baseline-PS", "SVM-Mimic (2023)", "Human experts"]
    assert (rows[0]["FF"], rows[0]["BA"], rows[0]["CM"], rows[0]["NV"]) == (75.0, 100.0, 50.0, None)
    text = paper_table.markdown(rows, columns, "dev splits")
    assert "| **bongard-solver** | 75.0 | 100.0 | 50.0 | — |" in text
    assert "| Meta-Baseline-PS | 68.2 | 75.7 | 67.4 | 71.5 |" in text
    assert "| SVM-Mimic (2023) | 73.3 | 83.9 | 69.8 | 74.5 |" in text
    assert "NV: no split" in text and "`dev_bd` (3 problems)" in text
    paper_table.draw_chart(rows, columns, "dev splits", tmp_path / "chart.png")
    chart = np.asarray(Image.open(tmp_path / "chart.png").convert("RGB"))
    assert chart.shape == (paper_table.HEIGHT, paper_table.WIDTH, 3)
    for colour in paper_table.PALETTE:  # every method's bars are drawn
        assert (chart == colour).all(axis=-1).sum() > 500


@pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official_dev data not available")
def test_eval_split_all_writes_the_table(tmp_path: Path, capsys):
    out = tmp_path / "bench.json"
    assert main(["eval", "--data", str(OFFICIAL_DEV), "--split", "all", "--oracle", "--limit", "1",
                 "--workers", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| **bongard-solver (ground-truth programs)** | 100.0 | 100.0 | 100.0 | — |" in printed
    result = json.loads(out.read_text())
    assert result["columns"] == {"FF": "dev_ff", "BA": "dev_bd", "CM": "dev_hd"}
    assert result["splits"]["dev_bd"]["n_problems"] == 1
    assert json.loads((tmp_path / "bench.dev_ff.json").read_text())["n_problems"] == 1
    assert (tmp_path / "bench.md").read_text() in printed
    assert Image.open(tmp_path / "bench.png").size == (paper_table.WIDTH, paper_table.HEIGHT)


def test_eval_split_all_without_benchmark_splits_names_the_file(tmp_path: Path, capsys):
    (tmp_path / "ShapeBongard_V2_split.json").write_text(json.dumps({"tiny": []}))
    # the command line's error boundary (solver.app.guard): one line naming the file and the fault, exit code 1
    assert main(["eval", "--data", str(tmp_path), "--split", "all", "--oracle", "--json", str(tmp_path / "o.json")]) == 1
    assert "ShapeBongard_V2_split.json: no benchmark splits" in capsys.readouterr().err
