"""`bench settings`: eval records grouped by the generator setting their names say, with Wilson intervals."""

import json

from benchmarks.settings import _records, main, setting, table


def _record(name, kind, predicted, confidence=(0.9, 0.9), rule_match=True):
    true = [True, False]
    return {"name": name, "kind": kind, "true": true, "predicted": predicted, "confidence": list(confidence),
            "correct": sum(t == p for t, p in zip(true, predicted)), "rule_match": rule_match}


def test_a_problems_setting_is_read_from_its_name():
    assert setting("ff_nact2_5_0003", "ff") == "nact2_5" and setting("ff_nact7_0000", "ff") == "nact7"
    assert setting("bd_open_s1-closed_circle_0000", "bd") == "two shapes"
    assert setting("bd_closed_circle_0000", "bd") == "one shape"
    assert setting("hd_convex-necked_0000", "hd") == "two attributes"


def test_rows_count_queries_and_wrong_answers_per_setting(tmp_path):
    records = [_record("ff_nact3_3_0000", "ff", [True, True], (0.95, 0.995)),
               _record("ff_nact3_3_0001", "ff", [True, False]),
               _record("ff_nact4_0000", "ff", [True, False]),
               _record("bd_a-b_0000", "bd", [False, False], rule_match=False)]
    rows = {(r["kind"], r["setting"]): r for r in table(records)}
    two = rows[("ff", "nact3_3")]
    assert (two["queries"], two["wrong"], two["wrong_at_0_99"], two["accuracy"]) == (4, 1, 1, 0.75)
    assert rows[("ff", "two shapes, all settings")]["problems"] == 2
    assert rows[("ff", "one shape, all settings")]["accuracy"] == 1.0
    assert rows[("bd", "two shapes")]["rule_match"] == 0.0
    low, high = two["accuracy_95"]
    assert low < 0.75 < high
    path = tmp_path / "run.json"  # an eval summary (its records under "problems"), and its journal beside it
    path.write_text(json.dumps({"problems": records, "seconds": 1.0}))
    journal = path.with_name("run.json.jsonl")
    journal.write_text("\n".join(json.dumps(r) for r in [{"written_by": "bongard-solver"}, *records]) + "\n")
    assert table(_records(journal)) == table(_records(path))
    assert main([str(path), "--json", str(tmp_path / "rows.json"), "--markdown", str(tmp_path / "rows.md")]) == 0
    assert "| ff | nact3_3 | 2 | 75.0" in (tmp_path / "rows.md").read_text()
