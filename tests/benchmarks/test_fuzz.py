"""The fuzz campaign in CI (issue 54): a short campaign over every surface finds no uncaught exception, no hang, no
unclear error and no loose number, and changes no file outside its folder; every input the campaign once failed on
(tests/benchmarks/fuzz_corpus/, each with what was wrong) is now a clear error or accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fuzz import WEIGHTS, decoded, encoded, make_input, plan, replay, run_campaign

CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
CI_EXAMPLES = 2000


def test_a_short_campaign_on_every_surface_finds_nothing(tmp_path):
    result = run_campaign(CI_EXAMPLES, seed=54, out=tmp_path / "fuzz", workers=2, timeout=30.0, progress=False)
    table = result["table"]
    assert table["all"]["tried"] == CI_EXAMPLES and all(table[s]["tried"] > 0 for s in WEIGHTS)
    for column in ("uncaught", "hang", "unclear", "loose"):
        assert table["all"][column] == 0, result["failures"]
    assert result["outside_changed"] == []
    assert table["all"]["clear"] > 0 and table["all"]["accepted"] > 0


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_every_input_once_failed_is_now_clear_or_accepted(tmp_path, path):
    found = replay(path, tmp_path)
    assert found["outcome"] in ("clear", "accepted"), (json.loads(path.read_text())["found"], found["message"])


def test_inputs_are_made_again_the_same_and_saved_whole():
    for surface in WEIGHTS:
        for index in range(5):
            first, again = make_input(7, surface, index), make_input(7, surface, index)
            assert first == again
            assert decoded(json.loads(json.dumps(encoded(first)))) == first


def test_the_plan_shares_every_example_out_once():
    chunks = plan(1000, list(WEIGHTS))
    items = [item for chunk in chunks for item in chunk]
    assert len(items) == len(set(items)) == 1000
    assert {s for s, _ in items} == set(WEIGHTS)
