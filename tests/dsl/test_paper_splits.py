"""`generate --paper-splits`: a stand-in for the released test set (spec §4.3), split by split."""

from __future__ import annotations

import json
from pathlib import Path

import dsl.generate as generating
from dsl.commands import write_dataset
from dsl.dataset import read_splits
from dsl.generate import NOVEL_ATTRIBUTE, PAPER_SPLITS, paper_split_plan
from solver.app.paper_table import benchmark_splits


def test_the_plan_has_the_released_sizes_and_holds_the_novel_attribute_out_of_the_combinatorial_split():
    plan = paper_split_plan(31)
    assert {name: len(specs) for name, specs in plan.items()} == PAPER_SPLITS == {
        "test_ff": 600, "test_bd": 480, "test_hd_comb": 400, "test_hd_novel": 320}
    names = [spec.name for specs in plan.values() for spec in specs]
    assert len(set(names)) == 1800
    assert all(NOVEL_ATTRIBUTE in spec.concept for spec in plan["test_hd_novel"])
    assert len({spec.concept for spec in plan["test_hd_novel"]}) == 16  # the attribute alone and its 15 pairs
    assert not any(NOVEL_ATTRIBUTE in spec.concept for spec in plan["test_hd_comb"])
    assert {len(spec.concept) for spec in plan["test_hd_comb"]} == {2}
    assert len({spec.concept for spec in plan["test_hd_comb"]}) == 20
    assert {spec.name[:2] for spec in plan["test_ff"]} == {"ff"} and {spec.name[:2] for spec in plan["test_bd"]} == {"bd"}
    assert [s.name for s in paper_split_plan(31)["test_hd_comb"]] == [s.name for s in plan["test_hd_comb"]]


def test_generate_writes_the_split_file_the_paper_table_reads(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(generating, "PAPER_SPLITS", {"test_ff": 2, "test_bd": 1, "test_hd_comb": 1, "test_hd_novel": 16})
    monkeypatch.setattr(generating, "PER_ABSTRACT_CONCEPT", 1)
    report = write_dataset(tmp_path / "root", {}, seed=3, workers=1, size=64, progress=False, paper_splits=True)
    assert not report.failed and len(report.written) == 20
    splits = read_splits(tmp_path / "root")
    assert {name: len(names) for name, names in splits.items()} == {
        "test_ff": 2, "test_bd": 1, "test_hd_comb": 1, "test_hd_novel": 16, "all": 20}
    assert benchmark_splits(splits)[1] == {"FF": "test_ff", "BA": "test_bd", "CM": "test_hd_comb", "NV": "test_hd_novel"}
    assert json.loads((tmp_path / "root" / ".generate.json").read_text())["paper_splits"] is True
    again = write_dataset(tmp_path / "root", {}, seed=3, workers=1, size=64, progress=False, paper_splits=True)
    assert len(again.skipped) == 20 and not again.written  # resumable, as any generation
