"""`bongard-solver solve` and `eval`: outputs, per-problem errors, resuming an interrupted run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from solver.app.cli import main
from solver.app.commands import evaluate
from solver.app.eval_files import read_records as _read_done

from tests.official import OFFICIAL_DEV
pytestmark = pytest.mark.skipif(not OFFICIAL_DEV.exists(), reason="official_dev data not available")
GOOD = ["ff_nact4_0600", "ff_nact5_0600"]
BROKEN = "ff_nact6_0600"


@pytest.fixture()
def small_root(tmp_path: Path) -> Path:
    """Three official free-form problems; the program entry of one of them is malformed."""
    root = tmp_path / "data"
    programs = json.loads((OFFICIAL_DEV / "ff" / "ff_action_programs.json").read_text())
    table = {name: programs[name] for name in GOOD + [BROKEN]}
    table[BROKEN][0][0] = [["line_normal_2.500-0.500"]]
    for name in table:
        shutil.copytree(OFFICIAL_DEV / "ff" / "images" / name, root / "ff" / "images" / name)
    (root / "ff" / "ff_action_programs.json").write_text(json.dumps(table))
    (root / "ShapeBongard_V2_split.json").write_text(json.dumps({"tiny": GOOD + [BROKEN]}))
    return root


def test_eval_records_errors_and_goes_on(small_root: Path, tmp_path: Path):
    out = tmp_path / "out" / "eval.json"
    summary = evaluate(str(small_root), "tiny", out, None, True, 1, 5.0)
    assert json.loads(out.read_text())["n_queries"] == 6
    assert summary["errors"] == 1
    assert summary["accuracy"] == pytest.approx(4 / 6)
    assert summary["rule_match"] == pytest.approx(2 / 3)
    broken = next(p for p in summary["problems"] if p["name"] == BROKEN)
    assert "length 2.500 out of [0, 1]" in broken["error"]
    good = next(p for p in summary["problems"] if p["name"] == GOOD[0])
    assert good["predicted"] == good["true"] == [True, False]
    assert good["rule"].startswith("concept(I) :- image(I), seq(I,")


def test_eval_resumes_without_solving_again(small_root: Path, tmp_path: Path):
    out = tmp_path / "eval.json"
    evaluate(str(small_root), "tiny", out, 2, True, 1, 5.0)
    partial = out.with_name("eval.json.jsonl")
    first = partial.read_text().splitlines()
    assert len(first) == 3  # the header and two records
    partial.write_text("\n".join(first) + "\n" + first[1][:20])  # a line cut by an interruption
    summary = evaluate(str(small_root), "tiny", out, None, True, 1, 5.0)
    lines = partial.read_text().splitlines()
    assert lines[:3] == first
    assert len(summary["problems"]) == 3
    assert len(_read_done(partial)) == 3


def test_cli_solve_prints_json(capsys):
    assert main(["solve", str(OFFICIAL_DEV / "ff" / "images" / GOOD[0]), "--oracle", "--json"]) == 0
    solution = json.loads(capsys.readouterr().out)
    assert solution["labels"] == [True, False]
    assert solution["explanation"]["errors"] == 0


def test_cli_eval_writes_summary(small_root: Path, tmp_path: Path, capsys):
    out = tmp_path / "cli.json"
    assert main(["eval", "--data", str(small_root), "--split", "tiny", "--limit", "1", "--oracle",
                 "--json", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert {"accuracy", "n_queries", "rule_match", "seconds", "problems"} <= set(summary)
    assert summary["n_queries"] == 2


def test_the_console_script_runs_main_and_leaves_the_process_objects_out_of_the_exit_collection(monkeypatch):
    import gc
    import tomllib
    from pathlib import Path

    from solver.app import cli

    scripts = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["bongard-solver"] == "solver.app.cli:entry"
    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        assert cli.entry() == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()  # this test process goes on
