"""`bench all`: the parts it runs, their tables and the JSON of all figures (on a tiny render run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import all as bench_all
from benchmarks.commands import available


def test_flatten_keeps_scalar_figures_only():
    figures = bench_all.flatten({"accuracy": 0.75, "by_kind": {"ff": {"accuracy": 1.0, "n": 6}},
                                 "problems": [{"name": "x"}], "rule": "in_a :- closed.", "note": "x" * 200,
                                 "median": None, "ok": True})
    assert figures == {"accuracy": 0.75, "by_kind.ff.accuracy": 1.0, "by_kind.ff.n": 6,
                       "rule": "in_a :- closed.", "median": None, "ok": True}


def test_markdown_table_lists_every_figure_with_its_command():
    text = bench_all.markdown_table("Renderer", "bongard-solver bench render --json OUT", 3.2,
                                    {"ms_per_image_512": 0.84123, "images": 60, "missing": None})
    lines = text.splitlines()
    assert lines[0] == "## Renderer"
    assert "`bongard-solver bench render --json OUT` (3 s)" in text
    assert "| ms_per_image_512 | 0.8412 |" in lines
    assert "| images | 60 |" in lines
    assert "| missing |  |" in lines


def test_every_part_is_a_command_of_this_repository():
    names = set(available())
    for part in bench_all.generated_parts(True, 1) + bench_all.official_parts(False, 2):
        if part.argv[0] == "bench":
            assert part.argv[1] in names, part
        else:
            assert part.argv[0] in {"eval"}, part
    quick = {p.name for p in bench_all.generated_parts(True, 1)}
    assert {"render", "attributes", "decoder", "refine", "oracle", "end_to_end", "ablations"} <= quick
    assert "official_ablations" in {p.name for p in bench_all.official_parts(False, 2)}
    assert "official_fidelity" in {p.name for p in bench_all.official_parts(True, 1)}


def test_a_tiny_part_runs_and_leaves_its_table_and_figures(tmp_path: Path):
    part = bench_all.Part("render", "Renderer speed", ("bench", "render", "--n", "4", "--problems", "0",
                                                       "--repeats", "1", "--sizes", "128"))
    (tmp_path / "raw").mkdir()
    result = bench_all.run_part(part, {"raw": str(tmp_path / "raw")}, tmp_path)
    assert "error" not in result
    assert result["figures"]["ms_per_image_128"] > 0
    table = (tmp_path / "render.md").read_text()
    assert "| ms_per_image_128 |" in table
    assert result["command"] in table
    again = bench_all.run_part(part, {"raw": str(tmp_path / "raw")}, tmp_path)  # its JSON is there: not run again
    assert again["seconds"] is None and again["figures"] == result["figures"]
    other = bench_all.Part("render", "Renderer speed", part.argv[:3] + ("5",) + part.argv[4:])
    assert bench_all.run_part(other, {"raw": str(tmp_path / "raw")}, tmp_path)["seconds"] is not None


def test_a_failing_part_is_reported(tmp_path: Path):
    part = bench_all.Part("broken", "Broken", ("bench", "render", "--no-such-option"))
    (tmp_path / "raw").mkdir()
    result = bench_all.run_part(part, {"raw": str(tmp_path / "raw")}, tmp_path)
    assert result["error"].startswith("exit ")


def test_a_root_without_the_split_file_is_refused(tmp_path: Path):
    with pytest.raises(SystemExit, match="ShapeBongard_V2_split.json"):
        bench_all.main(["--out", str(tmp_path / "out"), "--data", str(tmp_path), "--quick"])


def test_the_machine_is_named():
    figures = bench_all.machine()
    assert figures["cores"] >= 1 and figures["cpu"]


def test_a_quick_run_of_one_part_writes_its_table_and_figures_json(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    earlier = {"command": "bongard-solver bench attributes", "seconds": 1.0, "figures": {"agreement_overall": 0.99}}
    (out / "figures.json").write_text(json.dumps({"parts": {"attributes": earlier}}), encoding="utf-8")
    assert bench_all.main(["--out", str(out), "--quick", "--only", "render"]) == 0
    report = json.loads((out / "figures.json").read_text(encoding="utf-8"))
    assert report["quick"] is True and sorted(report["parts"]) == ["attributes", "render"]
    assert report["parts"]["attributes"] == earlier  # a part not run this time keeps its figures
    assert report["parts"]["render"]["figures"]["ms_per_image_512"] > 0
    assert "--seed 20261125" in report["generate"][0]
    assert (out / "data_quick" / "ShapeBongard_V2_split.json").is_file()
    assert (out / "render.md").read_text().startswith("## Renderer speed")
