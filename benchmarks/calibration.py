"""Calibration of the query confidences: how often a label given with confidence c is right.

    bongard-solver bench calibration --results EVAL.json [EVAL.json ...] [--model MODEL.json] [--fit MODEL.json]
                                     [--picture PNG] [--json OUT]

Reads the per-problem records of `bongard-solver eval` runs (the summary JSON, or its OUT.jsonl) and reports,
over their queries: expected calibration error (10 equal-width bins), Brier score, and how many wrong answers
carried a confidence of at least 0.99. `--model`: the confidences are recomputed from the records' evidence
(`query_features`) with those weights instead of the recorded ones. `--fit`: weights are fitted on these
records' queries (`solver.solving.confidence.fit`) and written there — fit on generated problems only, never on
official ones; the shipped model is `solver/data/confidence.json`. `--picture`: the reliability diagram.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from PIL import Image, ImageDraw

from dsl.dataset import atomic_write_text
from solver.solving.confidence import FEATURES, calibrated, calibration_figures, fit

BINS = 10


def read_records(path: Path) -> list[dict]:
    """The problem records of an eval summary JSON, or of its OUT.jsonl."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)["problems"]


def queries(records: list[dict]) -> tuple[list[float], list[bool], list[dict | None]]:
    """Per answered query: recorded confidence, whether the label was right, its evidence features."""
    confidence, correct, features = [], [], []
    for record in records:
        if record.get("error") is not None or record.get("predicted") is None:
            continue
        rows = record.get("query_features") or [None] * len(record["predicted"])
        for c, p, t, row in zip(record["confidence"], record["predicted"], record["true"], rows):
            confidence.append(float(c))
            correct.append(p == t)
            features.append(row)
    return confidence, correct, features


def reliability_picture(confidence: list[float], correct: list[bool], path: Path, title: str) -> None:
    """Bars: the share right per confidence bin, against the diagonal; the bin counts written above."""
    size, margin = 520, 60
    image = Image.new("RGB", (size + 2 * margin, size + 2 * margin), "white")
    draw = ImageDraw.Draw(image)

    def xy(x: float, y: float) -> tuple[float, float]:
        return margin + x * size, margin + (1 - y) * size

    draw.rectangle([xy(0, 1), xy(1, 0)], outline="black")
    for k in range(BINS):
        low, high = k / BINS, (k + 1) / BINS
        members = [r for c, r in zip(confidence, correct) if low <= c < high or (k == BINS - 1 and c == 1.0)]
        if members:
            share = sum(members) / len(members)
            draw.rectangle([xy(low + 0.005, share), xy(high - 0.005, 0)], fill=(90, 140, 220), outline=(40, 80, 160))
            draw.text(xy(low + 0.01, min(share, 0.93) + 0.05), str(len(members)), fill="black")
    draw.line([xy(0, 0), xy(1, 1)], fill=(200, 60, 60), width=2)
    for k in range(0, BINS + 1, 2):
        draw.text((xy(k / BINS, 0)[0] - 8, xy(0, 0)[1] + 8), f"{k / BINS:.1f}", fill="black")
        draw.text((margin - 30, xy(0, k / BINS)[1] - 6), f"{k / BINS:.1f}", fill="black")
    draw.text((margin, 20), title, fill="black")
    draw.text((margin + size // 2 - 40, size + margin + 30), "confidence", fill="black")
    draw.text((8, margin - 20), "share right", fill="black")
    image.save(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench calibration", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="eval summary JSONs (or their .jsonl)")
    parser.add_argument("--model", type=Path, default=None, help="recompute the confidences with these weights")
    parser.add_argument("--fit", type=Path, default=None, help="fit weights on these queries and write them here")
    parser.add_argument("--picture", type=Path, default=None, help="write the reliability diagram (PNG) here")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    try:
        records = [r for path in args.results for r in read_records(path)]
    except (OSError, ValueError, KeyError) as error:
        print(f"bongard-solver bench calibration: cannot read the results: {error}", file=sys.stderr)
        return 1
    confidence, correct, features = queries(records)
    out: dict = {"results": [p.name for p in args.results], "problems": len(records)}
    if args.fit is not None:
        usable = [(row, r) for row, r in zip(features, correct) if row is not None]
        weights = fit([row for row, _ in usable], [r for _, r in usable])
        model = {"weights": weights, "features": list(FEATURES),
                 "fitted_on": {"results": out["results"], "queries": len(usable)}}
        atomic_write_text(args.fit, json.dumps(model, indent=1))
        out["fitted"] = model
        args.model = args.fit
    if args.model is not None:
        model = json.loads(args.model.read_text(encoding="utf-8"))
        confidence = [calibrated(row, model) if row is not None else c for c, row in zip(confidence, features)]
    out["calibration"] = calibration_figures(confidence, correct)
    figures = out["calibration"]
    print(f"{figures['n']} queries: ECE {figures['ece']}, Brier {figures['brier']}, "
          f"{figures['wrong_at_0_99']} of {figures['wrong']} wrong answers at confidence >= 0.99")
    if args.picture is not None:
        reliability_picture(confidence, correct, args.picture,
                            f"{figures['n']} queries, ECE {figures['ece']}, Brier {figures['brier']}")
        out["picture"] = str(args.picture)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(out, indent=1))
    return 0
