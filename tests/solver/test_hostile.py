"""Hostile input through the command line: one line naming the fault, the right exit code, no traceback,
and no file changed that the tool did not write (`solver.app.guard`, `dsl.owned`, `solver.app.eval_files`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dsl.commands import write_dataset
from dsl.generate import ProblemKind
from solver.app.cli import main
from solver.app.guard import run_guarded

FOREIGN = "someone else's notes\n"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "data"
    write_dataset(root, {ProblemKind.FREE_FORM: 2}, seed=24, workers=1, size=128, progress=False)
    return root


@pytest.fixture
def root(generated, tmp_path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(generated, copy)
    return copy


def first_problem(root: Path) -> str:
    return json.loads((root / "ShapeBongard_V2_split.json").read_text())["ff"][0]


def run(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and the last line of stderr (a usage error's SystemExit caught as argparse ends)."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line.split("\r")[-1] for line in err.splitlines() if line.strip()]
    return code, lines[-1] if lines else ""


def evaluate(root: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "--data", str(root), "--split", "ff", "--oracle", "--workers", "1", "--json", str(out), *extra]


@pytest.mark.parametrize("split_text, fault", [
    (None, "file is missing"), (b"{tiny: [", "bad JSON"), ('{"ff": "x"}'.encode("utf-16"), "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested 100000 deep"), (b'{"ff": ["../../etc"]}', "not a problem name"),
])
def test_eval_dataset_errors_are_one_line_naming_the_file(root, tmp_path, capsys, split_text, fault):
    split = root / "ShapeBongard_V2_split.json"
    split.unlink()
    if split_text is not None:
        split.write_bytes(split_text)
    code, line = run(evaluate(root, tmp_path / "out.json"), capsys)
    assert code == 1
    assert line.startswith(f"bongard-solver eval: {split}") and fault in line


@pytest.mark.parametrize("option, value", [
    ("--time-limit", "nan"), ("--time-limit", "-1"), ("--time-limit", "inf"), ("--limit", "-1"), ("--limit", "0"),
    ("--workers", "0"), ("--workers", "1.5"),
])
def test_bad_numbers_are_usage_errors(root, tmp_path, capsys, option, value):
    code, line = run(evaluate(root, tmp_path / "out.json") + [option, value], capsys)
    assert code == 2 and f"argument {option}" in line


@pytest.mark.parametrize("argv", [
    ["decode", "x.png", "--top-k", "100000"], ["decode", "x.png", "--beam", "-3"], ["generate", "--out", "x", "--seed", "-1"],
    ["generate", "--out", "x", "--ff", "nan"], ["demo", "--n", "-1"], ["solve", "x", "--time-limit", "nan"],
])
def test_other_commands_reject_bad_numbers(capsys, argv):
    code, line = run(argv, capsys)
    assert code == 2 and "argument --" in line


def test_ctrl_c_exits_130_and_errors_exit_1(capsys):
    def interrupted():
        raise KeyboardInterrupt

    def broken():
        raise RuntimeError("a bug")

    assert run_guarded("eval", interrupted) == 130
    assert run_guarded("eval", broken) == 1
    assert "internal error (RuntimeError: a bug)" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["folder", "under-a-file", "unwritable", "foreign"])
def test_eval_output_paths_checked_before_any_work(root, tmp_path, capsys, kind):
    (tmp_path / "a-file").write_text(FOREIGN)
    out = {"folder": tmp_path, "under-a-file": tmp_path / "a-file" / "out.json",
           "unwritable": Path("/proc/bongard-test/out.json"), "foreign": tmp_path / "a-file"}[kind]
    code, line = run(evaluate(root, out), capsys)
    assert code == 1 and line.startswith("bongard-solver eval: --json")
    assert (tmp_path / "a-file").read_text() == FOREIGN


def test_eval_never_appends_to_a_foreign_journal(root, tmp_path, capsys):
    journal = tmp_path / "out.json.jsonl"
    journal.write_text(FOREIGN)
    code, line = run(evaluate(root, tmp_path / "out.json"), capsys)
    assert code == 1 and str(journal) in line
    assert journal.read_text() == FOREIGN


def test_resume_refuses_records_made_with_other_options(root, tmp_path, capsys):
    out = tmp_path / "out.json"
    assert run(evaluate(root, out, "--limit", "1"), capsys)[0] == 0
    code, line = run(evaluate(root, out, "--time-limit", "7"), capsys)
    assert code == 1 and "other options" in line and "time_limit" in line
    assert run(evaluate(root, out), capsys)[0] == 0  # the same options: resumes
    records = [json.loads(x) for x in (tmp_path / "out.json.jsonl").read_text().splitlines()[1:]]
    assert len(records) == 2 and len({r["name"] for r in records}) == 2  # the first problem not solved again


def test_retry_failed_solves_the_failed_problems_again(root, tmp_path, capsys):
    name = first_problem(root)
    programs = root / "ff" / "ff_action_programs.json"
    good = programs.read_text()
    broken = json.loads(good)
    broken[name][0][0][0][0] = "line_normal_2.500-0.500"
    programs.write_text(json.dumps(broken))
    out = tmp_path / "out.json"
    run(evaluate(root, out), capsys)
    assert json.loads(out.read_text())["errors"] == 1
    programs.write_text(good)
    run(evaluate(root, out), capsys)
    assert json.loads(out.read_text())["errors"] == 1  # a plain resume keeps the failed record
    run(evaluate(root, out, "--retry-failed"), capsys)
    assert json.loads(out.read_text())["errors"] == 0


def test_generate_refuses_a_dataset_it_did_not_write(root, capsys):
    (root / ".generate.json").unlink()
    split = (root / "ShapeBongard_V2_split.json").read_text()
    code, line = run(["generate", "--out", str(root), "--ff", "1", "--workers", "1"], capsys)
    assert code == 1 and "did not generate" in line
    assert (root / "ShapeBongard_V2_split.json").read_text() == split


def test_explain_refuses_foreign_reports_and_rewrites_its_own(root, tmp_path, capsys):
    name = first_problem(root)
    folder = root / "ff" / "images" / name
    report = tmp_path / "report"
    assert run(["explain", str(folder), "--oracle", "--out", str(report)], capsys)[0] == 0
    assert run(["explain", str(folder), "--oracle", "--out", str(report)], capsys)[0] == 0  # its own: replaced
    (report / f"{name}.json").write_text(FOREIGN)
    code, line = run(["explain", str(folder), "--oracle", "--out", str(report)], capsys)
    assert code == 1 and f"{name}.json" in line
    assert (report / f"{name}.json").read_text() == FOREIGN


def test_missing_checkpoint_stops_eval_before_any_problem(root, tmp_path, capsys):
    out = tmp_path / "out.json"
    code, line = run(["eval", "--data", str(root), "--split", "ff", "--json", str(out),
                      "--checkpoint", str(tmp_path / "none.pt")], capsys)
    assert code == 1 and "--checkpoint" in line and "no such file" in line
    assert not out.exists()


@pytest.mark.parametrize("form", ["dot", "bare", "dotdot"])
def test_oracle_accepts_every_way_of_naming_the_folder(root, capsys, monkeypatch, form):
    folder = root / "ff" / "images" / first_problem(root)
    cwd, given = {"dot": (folder, "."), "bare": (folder.parent, folder.name),
                  "dotdot": (root, str(folder / "1" / ".."))}[form]
    monkeypatch.chdir(cwd)
    assert run(["solve", given, "--oracle"], capsys)[0] == 0


def test_a_blank_image_is_left_out_with_its_file_named(root, capsys):
    from PIL import Image

    from solver.solving import solve_folder

    folder = root / "ff" / "images" / first_problem(root)
    Image.new("L", (128, 128), 255).save(folder / "1" / "2.png")

    class Reader:  # reads every readable image as the first positive's program
        def perceive(self, images, positives=None, negatives=0):
            from dsl.dataset import read_programs
            from solver.reading.readings import Perceived

            program = read_programs(root)[folder.name].positives[0]
            return [Perceived(program) for _ in images]

    solved = solve_folder(folder, Reader())
    assert any(str(folder / "1" / "2.png") in e and "no ink" in e for e in solved.errors)
    assert any("1 of 12 context images" in w for w in solved.solution.warnings)
    assert all(c <= 11 / 12 + 1e-9 for c in solved.solution.confidence)
