"""The index page of a report folder: wrong ones first, every name escaped, sortable, self-contained."""

from __future__ import annotations

import json
import re

from solver.explaining.index_page import write_index


def record(name, correct, predicted, error=None):
    return {"name": name, "kind": name[:2], "english": f"rule of {name}", "true": [True, False],
            "predicted": predicted, "correct": correct, "confidence": [0.9, 0.6], "seconds": 1.25, "error": error}


def test_wrong_ones_first_with_labels_confidence_and_links(tmp_path):
    (tmp_path / "ff_right_0000.html").write_text("report")
    records = [record("ff_right_0000", 2, [True, False]), record("bd_half_0000", 1, [True, True]),
               record("hd_failed_0000", 0, None, error="ValueError: bad <input>")]
    page = write_index(tmp_path, records, title="eval <test>").read_text()
    order = [page.index(n) for n in ("hd_failed_0000", "bd_half_0000", "ff_right_0000")]
    assert order == sorted(order)
    assert '<a href="ff_right_0000.html">' in page and '<a href="bd_half_0000.html">' not in page
    assert "bad &lt;input&gt;" in page and "eval &lt;test&gt;" in page and "<input>" not in page
    assert "A ✗" in page and "B ✓" in page and "0.60" in page
    assert "3 of 6 queries right" in page and "1 failed" in page
    assert page.count('<th data-col="') == 7 and "<script>" in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing loaded from the network


def test_names_are_escaped_in_links(tmp_path):
    name = 'x"><b onclick=alert(1)>&'
    (tmp_path / f"{name}.html").write_text("report")
    page = write_index(tmp_path, [record(name, 2, [True, False])]).read_text()
    assert "<b onclick" not in page and 'x"' not in page
    assert 'href="x%22%3E%3Cb%20onclick%3Dalert%281%29%3E%26.html"' in page


def test_eval_dump_writes_a_report_per_problem_and_the_index(tmp_path):
    from dsl.commands import write_dataset
    from dsl.generate import ProblemKind
    from solver.app.commands import evaluate

    root = tmp_path / "data"
    write_dataset(root, {ProblemKind.FREE_FORM: 1, ProblemKind.ABSTRACT: 1}, seed=3, workers=1, progress=False)
    dump = tmp_path / "dump"
    summary = evaluate(str(root), "all", tmp_path / "eval.json", None, True, 1, 5.0, dump=dump)
    names = [p["name"] for p in summary["problems"]]
    page = (dump / "index.html").read_text()
    for name in names:
        assert (dump / f"{name}.html").exists() and f'href="{name}.html"' in page
        report = json.loads((dump / f"{name}.json").read_text())
        assert all("why" in e for e in report["explanation"]["evidence"])
