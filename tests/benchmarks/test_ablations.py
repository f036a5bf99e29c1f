"""`bench ablations`: the systems are switches of the solver, `full` is eval's path, the table carries intervals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from benchmarks import ablations
from benchmarks.ablations import (SYSTEMS, column_of, image_features, markdown, nearest_prototype, read_journal,
                                  summaries)
from solver.app.scoring import accuracy_interval
from solver.reading import PRODUCT


def test_nearest_prototype_labels_queries_by_the_closer_side_and_is_surer_further_from_the_middle():
    a = np.array([[1.0, 0.0]] * 6)
    b = np.array([[0.0, 1.0]] * 6)
    queries = np.array([[0.9, 0.1], [0.45, 0.55]])
    labels, confidence = nearest_prototype(np.vstack([a, b, queries]))
    assert labels == (True, False)
    assert 0.5 < confidence[1] < confidence[0] <= 1.0


def test_every_pixel_system_is_the_product_with_switches_turned_off():
    assert SYSTEMS["full"].switches == PRODUCT
    for name, off in (("no_hypotheses", "hypotheses"), ("no_near_misses", "near_misses"), ("no_tracer", "tracer"),
                      ("no_posterior", "posterior"), ("no_confidence", "confidence"), ("decoder_only", "search")):
        assert SYSTEMS[name].switches.off() == (off,)
    assert SYSTEMS["attributes_geometry"].switches.off() == ("attributes=geometry",)
    assert SYSTEMS["attributes_table"].switches.off() == ("attributes=table",)
    assert SYSTEMS["oracle"].switches is None and SYSTEMS["nearest_proto"].switches is None


def test_the_wilson_interval_is_defined_at_the_ends_and_holds_the_accuracy():
    assert accuracy_interval(240, 240) == [0.9842, 1.0]
    low, high = accuracy_interval(237, 240)
    assert low < 237 / 240 < high
    assert accuracy_interval(0, 0) is None


def _record(name: str, correct: int, seconds: float, confidence=(0.9, 0.9)) -> dict:
    predicted = [True, False] if correct == 2 else [True, True]
    return {"name": name, "kind": name[:2], "true": [True, False], "predicted": predicted, "correct": correct,
            "rule_match": correct == 2, "confidence": list(confidence), "seconds": seconds, "error": None}


def test_summaries_per_split_and_the_table_with_intervals_and_published_figures():
    done = {("full", "test_ff", "ff_a_0000"): _record("ff_a_0000", 2, 1.0),
            ("full", "test_ff", "ff_b_0000"): _record("ff_b_0000", 1, 3.0),
            ("oracle", "test_ff", "ff_a_0000"): _record("ff_a_0000", 2, 0.1),
            ("oracle", "test_bd", "bd_c_0000"): {**_record("bd_c_0000", 0, 0.0), "predicted": None, "error": "boom"}}
    table = summaries(done, ["full", "oracle"], ["test_ff", "test_bd"])
    assert table["oracle"]["test_bd"]["accuracy"] == 0.0 and table["oracle"]["test_bd"]["errors"] == 1  # as eval
    full = table["full"]["test_ff"]
    assert full["accuracy"] == 0.75 and full["accuracy_95"] == accuracy_interval(3, 4)
    assert full["median_solve_seconds"] == 2.0 and full["rule_match"] == 0.5
    assert full["calibration"]["wrong"] == 1 and full["calibration"]["wrong_at_0_99"] == 0
    text = markdown(table, {"FF": "test_ff"}, {"test_ff": 2}, "title")
    low, high = (100 * v for v in accuracy_interval(3, 4))
    assert f"| full | 75.0 ({low:.1f}–{high:.1f}) |" in text
    assert "| oracle | 100.0 (" in text and "n=1 |" in text  # a cell on fewer problems than the split says so
    assert "| *Meta-Baseline-PS* (published) | 68.2 |" in text


def test_columns_of_the_paper_by_split_name():
    assert [column_of(s) for s in ("test_ff", "test_bd", "test_hd_comb", "test_hd_novel")] == ["FF", "BA", "CM", "NV"]
    assert [column_of(s) for s in ("dev_ff", "dev_bd", "dev_hd", "bd")] == ["FF", "BA", "CM", "BA"]


def _tiny_root(tmp_path: Path) -> str:
    from dsl.commands import write_dataset
    from dsl.dataset import list_problems
    from dsl.generate import ProblemKind

    root = tmp_path / "data"
    write_dataset(root, {ProblemKind.ABSTRACT: 1}, seed=11, workers=1, progress=False)
    (root / "ShapeBongard_V2_split.json").write_text(json.dumps({"test_hd_comb": list_problems(root)}))
    return str(root)


def test_full_gives_evals_records_and_a_run_resumes(tmp_path: Path, monkeypatch):
    from solver.app.commands import evaluate

    root = _tiny_root(tmp_path)
    monkeypatch.setattr(ablations, "warm_up", lambda perception: 0.0)  # untimed either way; skipped here for speed
    out = tmp_path / "abl.json"
    assert ablations.main(["--data", root, "--split", "all", "--systems", "full", "oracle", "--workers", "1",
                           "--json", str(out)]) == 0
    records = read_journal(out.with_suffix(".jsonl"))
    evaluate(root, "test_hd_comb", tmp_path / "eval.json", None, False, 1, 10.0)
    evaluated = json.loads((tmp_path / "eval.json").read_text())["problems"][0]
    full = records[("full", "test_hd_comb", evaluated["name"])]
    for key in ("predicted", "rule", "confidence", "rule_match", "correct"):
        assert full[key] == evaluated[key], key
    assert "| full |" in out.with_suffix(".md").read_text() and Image.open(out.with_suffix(".png")).size[0] > 0
    lines = out.with_suffix(".jsonl").read_text().count("\n")
    ablations.main(["--data", root, "--split", "test_hd_comb", "--systems", "full", "--json", str(out)])
    assert out.with_suffix(".jsonl").read_text().count("\n") == lines  # nothing solved again


def test_image_features_are_unit_vectors_that_tell_images_apart():
    from perception.shapes import load_classifier

    images = [np.full((512, 512), 255, np.uint8) for _ in range(3)]
    images[1][200:300, 250:258] = 0  # a bar
    images[2][250:258, 150:350] = 0  # another bar, turned
    images[2][150:350, 250:258] = 0  # and a cross
    features = image_features(load_classifier(), images)
    np.testing.assert_allclose(np.linalg.norm(features[1:], axis=1), 1.0, rtol=1e-5)
    assert not np.allclose(features[1], features[2])
