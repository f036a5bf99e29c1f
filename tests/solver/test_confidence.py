import json
from types import SimpleNamespace

import pytest

from dsl.features import STRAIGHT_LINE_ATTRIBUTES
from solver.solving.confidence import (FEATURES, attributes_tested, calibrated, calibration_figures, dissent, features, fit,
                               h_margin)


def test_the_margin_supports_the_label_it_agrees_with():
    checked = {"verdict": "hypothesis", "geometric_margin": 1.2, "stroke_margin": 6.0}
    assert h_margin(checked) == pytest.approx(min(1.2, 6.0 / 30.0))
    assert features(True, 1.0, 0, checked)["h_margin"] > 0 > features(False, 1.0, 0, checked)["h_margin"]
    assert features(True, 1.0, 0, None)["hypothesis"] == 0.0
    library = features(True, 0.75, 2, {"verdict": "library", "classifier": 0.99})
    assert library["library"] == 1.0 and library["classifier_logit"] > 4 and library["vote"] == 0.25


def test_fitted_weights_rank_firm_evidence_above_weak():
    rows, right = [], []
    for k in range(200):
        margin = (k % 20) / 10 - 0.5
        rows.append(features(True, 1.0, 0, {"geometric_margin": margin, "stroke_margin": 30.0}))
        right.append(margin > 0 or k % 3 == 0)
    model = {"weights": fit(rows, right)}
    assert set(model["weights"]) == set(FEATURES)
    assert calibrated(rows[19], model) > calibrated(rows[0], model)


def test_calibration_figures():
    figures = calibration_figures([1.0, 1.0, 0.6, 0.6, 0.995], [True, True, True, False, False])
    assert figures["wrong_at_0_99"] == 1 and figures["wrong"] == 2 and figures["n"] == 5
    # bins: [0.6, 0.7): 2 answers, half right at 0.6 -> 0.1; [0.9, 1.0]: 3, 2/3 right at 0.998 -> 0.3313
    assert figures["ece"] == pytest.approx(2 / 5 * 0.1 + 3 / 5 * abs(2 / 3 - (2.995 / 3)), abs=1e-3)
    assert figures["brier"] == pytest.approx((0 + 0 + 0.16 + 0.36 + 0.995 ** 2) / 5, abs=1e-3)


def test_bench_calibration_reads_eval_records_fits_and_draws(tmp_path):
    from benchmarks.calibration import main

    record = {"name": "p", "error": None, "predicted": [True, True], "true": [True, False], "confidence": [0.9, 0.8],
              "query_features": [features(True, 1.0, 0, None), features(True, 1.0, 0, None)]}
    results = tmp_path / "eval.json"
    results.write_text(json.dumps({"problems": [record] * 10}), encoding="utf-8")
    out, picture, model = tmp_path / "cal.json", tmp_path / "cal.png", tmp_path / "model.json"
    assert main(["--results", str(results), "--fit", str(model), "--picture", str(picture), "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["calibration"]
    assert figures["n"] == 20 and figures["wrong"] == 10
    assert picture.stat().st_size > 0 and "weights" in json.loads(model.read_text())


def test_dissent_grows_on_a_log_scale_from_a_kept_rules_least_weight_to_an_even_split():
    from solver.settings import KEEP

    assert dissent(1.0) == 0.0 and dissent(1.0 - KEEP) == pytest.approx(0.0) and dissent(0.5) == pytest.approx(1.0)
    shares = [0.9999, 0.999, 0.99, 0.9, 0.6]
    assert [dissent(s) for s in shares] == sorted(dissent(s) for s in shares)
    assert dissent(0.99) == pytest.approx(0.541, abs=1e-3)  # 1e-2 against: halfway between 1e-4 and 0.5 in log
    assert features(True, 0.99, 0, None)["dissent"] == dissent(0.99) and features(True, 1.0, 0, None)["dissent"] == 0


def _induction(*literals):
    """An induction's optimal rules, one literal each, as `attributes_tested` reads them."""
    from solver.induction.optimal import InducedRule
    from solver.induction.rules import Rule

    return SimpleNamespace(rules=tuple(InducedRule(Rule((literal,)), (0,), frozenset(), {}) for literal in literals))


def test_a_library_query_is_disputed_only_on_an_attribute_a_rule_tests():
    from solver.induction import attribute_source

    with attribute_source("geometry"):  # the facts measured: the rule reads the value the table disputes
        _disputed_on_tested_attributes()
    read = {"verdict": "library", "classifier": 0.999, "disputed": ["necked"]}
    assert features(True, 1.0, 0, read, {"necked"})["disputed"] == 0.0  # the facts take the table's label


def _disputed_on_tested_attributes():
    from solver.induction.rules import Comparison, Family, Literal

    induction = _induction
    necked = Literal(Family.ATTRIBUTE, "necked")
    lines = Literal(Family.COUNT, "straight_lines", comparison=Comparison.EQ, value=7)
    assert attributes_tested(induction(necked)) == {"necked"}
    assert attributes_tested(induction(necked, lines)) == {"necked", *STRAIGHT_LINE_ATTRIBUTES}
    assert attributes_tested(None) == frozenset()
    read = {"verdict": "library", "classifier": 0.999, "disputed": ["has_seven_straight_lines"]}
    assert features(True, 1.0, 0, read, attributes_tested(induction(lines)))["disputed"] == 1.0
    assert features(True, 1.0, 0, read, attributes_tested(induction(necked)))["disputed"] == 0.0
    assert features(True, 1.0, 0, {"verdict": "library", "classifier": 0.999}, {"necked"})["disputed"] == 0.0


def test_a_query_whose_label_rests_on_a_disputed_fact_is_warned_of():
    from solver.solving.folder import _disputed_warnings
    from solver.induction.rules import Family, Literal

    from solver.induction import attribute_source

    solution = SimpleNamespace(induction=_induction(Literal(Family.ATTRIBUTE, "necked")))
    evidence = [{"verdict": "library", "disputed": ["necked"]}, {"verdict": "library", "disputed": ["convex"]}, None]
    assert _disputed_warnings(solution, evidence) == ()  # the facts take the table's labels: nothing disputed
    with attribute_source("geometry"):
        warnings = _disputed_warnings(solution, evidence)
    assert len(warnings) == 1 and warnings[0].startswith("query 0:") and "necked" in warnings[0]
