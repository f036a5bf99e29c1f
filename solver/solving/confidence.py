"""The confidence of a query's label, computed from the evidence and calibrated on generated problems.

A query is labelled by the induced rule; how far to trust the label depends on how the query was
perceived and on how firmly the rule stands. The evidence (`features`, each signed so that a positive value
supports the label given):

  vote            share of the optimal rules that agree with the label, less 0.5 (`solver.induction.vote`);
  dissent         the share of the optimal rules' weight that labels the query otherwise, on a log scale: 0 when it
                  is at most KEEP (the least weight a kept rule has against the best's, `solver.induction.posterior`), 1 at an
                  even split. Under posterior weights a query can stand at a share of 0.99 and still be wrong far more
                  often than at 1 (generated tuning seeds, 1040 abstract queries: 5 of 81 wrong with a share below
                  0.999, none of 54 with a share from 0.999 to 1, 6 of 905 unanimous), which the share hardly tells;
  context_errors  context images the rule misclassifies (capped at 3): perception noise in the context;
  hypothesis      the query was checked against the problem's free-form program H (`solver.reading.pipeline`);
  read            ... and read on its own (as every query is);
  disagrees       ... and its reading is not what the check found (H, a neighbour or a stroke near miss);
  stroke_doubt    ... or it was checked as a stroke near miss of H no firmer than set A's strays, and read as H
                  (`solver.reading.pipeline._stroke_doubted`);
  h_margin        how clearly H is (label A) or is not (label B) the best explanation of the query: the lesser
                  of the geometric margin (px, H's best one-action neighbour's centreline fit less H's) and
                  the stroke margin (nats: the decoder's log-probability of H's stroke less the best other's,
                  worst action, `perception.decode.read_strokes`; / STROKE_SCALE), clipped
                  to +-MARGIN_CLIP, signed for the label;
  library         the query was read as library shapes the classifier is sure of; `classifier_logit`: the
                  classifier's probability as a logit (clipped);
  disputed        ... and the shape table labels the shape it was read as otherwise than its computed features on
                  an attribute an optimal rule tests (`dsl.features.table_disagreements`; a count of straight lines
                  stands for the table's "has N straight lines"), while the facts are measured
                  (`solver.induction.AttributeSource.GEOMETRY`). The abstract generator draws a query from the
                  table's pools: on such a query the label can be wrong with the shape read right (generated tuning
                  seeds, 1040 abstract queries: 14 disputed, 6 of them wrong; 5 of the 6 wrong answers at confidence
                  >= 0.99 before this feature were disputed). Where the facts take the table's labels (the default),
                  the rule reads the label the generator drew by, and the dispute is no doubt about it.

The confidence is never above the vote's share (`query_confidences`): when rules that fit the context alike label
the query otherwise, the share of the rules' weight that agrees is all the context says for the label.

The confidence is a logistic function of these, its weights fitted on generated problems' queries
(`bongard-solver bench calibration --fit`, never on official problems) and shipped as package data
(`solver/data/confidence.json`, with what it was fitted on). No weights: the vote share.
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources

from dsl.features import STRAIGHT_LINE_ATTRIBUTES
from solver.induction import AttributeSource, Family, current_attribute_source
from solver.settings import KEEP, LOGIT_CLIP, MARGIN_CLIP, STROKE_SCALE

FEATURES = ("bias", "vote", "dissent", "context_errors", "hypothesis", "read", "disagrees", "stroke_doubt", "h_margin",
            "library", "classifier_logit", "disputed")
MODEL_FILE = "confidence.json"
SIGNS = {"vote": 1, "dissent": -1, "context_errors": -1, "disagrees": -1, "stroke_doubt": -1, "h_margin": 1,
         "classifier_logit": 1, "disputed": -1}  # the direction each weight may take (evidence that supports the
# label cannot lower its confidence): wrong answers are few, and a free fit on few of them can turn a weight round


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return max(-LOGIT_CLIP, min(LOGIT_CLIP, math.log(p / (1 - p))))


def dissent(share: float) -> float:
    """The share of the rules' weight against a label (1 - `share`) on a log scale from KEEP (0) to 0.5 (1)."""
    against = min(max(1.0 - share, KEEP), 0.5)
    return math.log(against / KEEP) / math.log(0.5 / KEEP)


def h_margin(evidence: dict) -> float | None:
    """How clearly H is the best explanation of a checked image (positive: H), in px, or None."""
    geometric, stroke = evidence.get("geometric_margin"), evidence.get("stroke_margin")
    if geometric is None or stroke is None:
        return None
    return max(-MARGIN_CLIP, min(MARGIN_CLIP, min(geometric, stroke / STROKE_SCALE)))


def features(label: bool, vote: float, context_errors: int, evidence: dict | None,
             tested: frozenset = frozenset()) -> dict[str, float]:
    """The evidence for one query's `label` as numbers (module docstring); `tested`: the attributes the optimal
    rules test (`attributes_tested`)."""
    evidence = evidence or {}
    verdict = evidence.get("verdict")
    margin = h_margin(evidence)
    library = verdict == "library"
    return {
        "bias": 1.0,
        "vote": vote - 0.5,
        "dissent": dissent(vote),
        "context_errors": float(min(context_errors, 3)),
        "hypothesis": float(margin is not None),
        "read": float(verdict == "read"),
        "disagrees": float(evidence.get("agrees") is False),
        "stroke_doubt": float(bool(evidence.get("stroke_doubt"))),
        "h_margin": 0.0 if margin is None else (margin if label else -margin),
        "library": float(library),
        "classifier_logit": _logit(evidence["classifier"]) if library and "classifier" in evidence else 0.0,
        "disputed": float(bool(disputed_attributes(evidence, tested))),
    }


def disputed_attributes(evidence: dict | None, tested: frozenset) -> list[str]:
    """The attributes of `tested` on which the shape table disputes a query's computed features (its evidence), when
    the facts are the computed features (none when they take the table's labels: the rule reads the table's value)."""
    if current_attribute_source() is not AttributeSource.GEOMETRY:
        return []
    return sorted(tested.intersection((evidence or {}).get("disputed", ())))


def attributes_tested(induction) -> frozenset:
    """The shape table's attributes an induction's optimal rules test: their attribute literals, and the table's
    "has N straight lines" for a count of straight lines or segments."""
    tested = set()
    for induced in (induction.rules if induction is not None else ()):
        for literal in induced.rule.literals:
            if literal.family is Family.ATTRIBUTE:
                tested.add(literal.name)
            elif literal.family is Family.COUNT and literal.name in ("straight_lines", "straight_segments"):
                tested.update(STRAIGHT_LINE_ATTRIBUTES)
    return frozenset(tested)


@functools.cache
def load_model() -> dict | None:
    """The shipped weights ({"weights": {feature: w}, "fitted_on": ...}), or None."""
    path = resources.files("solver").joinpath("data", MODEL_FILE)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def calibrated(values: dict[str, float], model: dict | None = None) -> float:
    """The probability that the label is right, from `features` and the model's weights (default: shipped)."""
    model = model if model is not None else load_model()
    if model is None:
        return 0.5 + values["vote"]
    z = sum(model["weights"].get(name, 0.0) * values.get(name, 0.0) for name in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def context_errors(solution) -> int:
    """The context images the rule of a `solver.solving.api.Solution` misclassifies (its induction's first cost)."""
    return solution.induction.cost[0] if solution.induction is not None and solution.induction.cost else 0


def query_confidences(solution, evidence: list[dict | None]) -> tuple[tuple[float, ...], list[dict]]:
    """Each query's calibrated confidence and its features, from a `solver.solving.api.Solution` and the queries'
    perception evidence (`solver.reading.readings.Perceived.evidence`, None where there is none); never above the
    share of the rules' weight that agrees with the label (the vote)."""
    errors, tested = context_errors(solution), attributes_tested(solution.induction)
    rows = [features(label, vote, errors, found, tested)
            for label, vote, found in zip(solution.labels, solution.confidence, evidence)]
    return tuple(min(calibrated(row), vote) for row, vote in zip(rows, solution.confidence)), rows


def fit(rows: list[dict[str, float]], correct: list[bool], l2: float = 1.0) -> dict[str, float]:
    """Logistic-regression weights (L2 penalty `l2` on all but the bias; each weight of SIGNS kept to its
    sign) for P(label right | features)."""
    import numpy as np
    from scipy.optimize import minimize

    x = np.array([[row.get(name, 0.0) for name in FEATURES] for row in rows], dtype=float)
    y = np.array(correct, dtype=float)
    penalty = np.array([0.0] + [l2] * (len(FEATURES) - 1))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(penalty * w * w))
        return value, x.T @ (p - y) + penalty * w

    bounds = [(0.0, None) if SIGNS.get(name) == 1 else (None, 0.0) if SIGNS.get(name) == -1 else (None, None)
              for name in FEATURES]
    found = minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B", bounds=bounds)
    return {name: round(float(w), 5) for name, w in zip(FEATURES, found.x)}


def calibration_figures(confidence: list[float], correct: list[bool], bins: int = 10) -> dict:
    """Expected calibration error (equal-width bins), Brier score, and how many wrong answers carried a
    confidence of at least 0.99 (and how many wrong answers there are)."""
    n = len(confidence)
    if n == 0:
        return {"ece": None, "brier": None, "wrong_at_0_99": 0, "wrong": 0, "n": 0}
    ece = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [k for k, c in enumerate(confidence) if low <= c < high or (b == bins - 1 and c == 1.0)]
        if members:
            accuracy = sum(correct[k] for k in members) / len(members)
            mean = sum(confidence[k] for k in members) / len(members)
            ece += len(members) / n * abs(accuracy - mean)
    brier = sum((c - float(r)) ** 2 for c, r in zip(confidence, correct)) / n
    wrong = [c for c, r in zip(confidence, correct) if not r]
    return {"ece": round(ece, 4), "brier": round(brier, 4), "wrong_at_0_99": sum(c >= 0.99 for c in wrong),
            "wrong": len(wrong), "n": n}
