"""`bench visibility`: how much ink a free-form near miss changes, its shape drawn from one pose."""

import json

import pytest

from benchmarks.visibility import main, near_misses, summary

CIRCLE = ["arc_square_0.500_0.625-0.500", "arc_normal_0.500_0.625-0.500", "arc_zigzag_0.500_0.625-0.500",
          "arc_normal_0.500_0.625-0.500", "arc_circle_0.500_0.625-0.500"]  # five quarter arcs: one circle walked on
LINE = ["line_normal_1.000-0.500", "line_zigzag_1.000-0.750"]


def _changed(shape, i, text):
    return shape[:i] + [text] + shape[i + 1:]


def test_a_stroke_drawn_over_by_another_arc_shows_least(tmp_path):
    hidden = _changed(CIRCLE, 0, "arc_triangle_0.500_0.625-0.500")  # the first arc, the fifth drawn over it
    turned = _changed(CIRCLE, 4, "arc_circle_0.500_0.625-0.833")  # the fifth turned off the circle
    programs = {"ff_nact2_5_0000": [[[LINE, CIRCLE]] * 7, [[LINE, hidden], [LINE, turned], [LINE, CIRCLE]] + [[LINE, turned]] * 4],
                "ff_nact5_0000": [[[CIRCLE]] * 7, [[turned]] * 7]}
    rows = near_misses(programs)
    shown = {(r["problem"], r["image"]): r["shown_px"] for r in rows}
    assert shown[("ff_nact2_5_0000", 2)] == 0.0  # the positives' program: nothing shows
    assert shown[("ff_nact2_5_0000", 0)] < 100 < 5 * shown[("ff_nact2_5_0000", 0)] < shown[("ff_nact2_5_0000", 1)]
    found = summary(rows)
    assert found["two_shapes.negatives"]["n"] == 7 and found["one_shape.queries"]["n"] == 1
    assert found["two_shapes.negatives"]["below_10_px"] == 1 and found["two_shapes.negatives"]["below_100_px"] == 2
    root = tmp_path / "root"
    (root / "ff").mkdir(parents=True)
    (root / "ff" / "ff_action_programs.json").write_text(json.dumps(programs))
    assert main(["--data", str(root), "--json", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["one_shape.negatives"]["n"] == 7


def test_a_root_without_programs_or_with_a_broken_one_is_named(tmp_path):
    with pytest.raises(SystemExit, match="ff_action_programs.json: no such file"):
        main(["--data", str(tmp_path)])
    (tmp_path / "ff").mkdir()
    (tmp_path / "ff" / "ff_action_programs.json").write_text(json.dumps({"ff_nact4_0000": [[[["line_bogus_1.0-0.5"]]] * 7, [[["line_normal_1.000-0.500"]]] * 7]}))
    with pytest.raises(SystemExit, match="ff_action_programs.json"):
        main(["--data", str(tmp_path)])
