"""Ablations on the same problems: which part of the pipeline buys how much accuracy.

    bongard-solver bench ablations --data ROOT --split NAME [--limit N] [--systems ...]
                                   --json OUT [--markdown OUT.md] [--workers K]

Systems
  full            the product: the decoder's and the shape classifier's proposals refined by the
                  enumerator, free-form readings reconciled with set A, then induction
  decoder_only    the decoder's top proposal, no search (no classifier, no reconciling)
  search_only     the enumerator from generic seed programs (library shapes, grid values), no decoder
                  and no classifier; free-form readings reconciled with set A
  oracle          the dataset's ground-truth programs (the reasoning layer alone)
  nearest_proto   no rule: each query goes to the nearer prototype (mean of the decoder's image features
                  of A or of B, cosine similarity) — a Meta-Baseline-style few-shot classifier

Accuracy = correctly labelled queries / queries (positive query in A, negative query not), per problem
type and overall. Per-problem results are appended to `<json>.jsonl` as they finish, so an interrupted
run resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from dsl.dataset import Problem, load_split
from dsl.options import count, workers
from dsl.owned import check_output_file, marked_json
from solver.solving.api import ProblemInput, solve_problem
from solver.reading.perception import PixelPerception

SYSTEMS = ("full", "decoder_only", "search_only", "oracle", "nearest_proto")
PAPER = {  # accuracy %, FF / BA / CM / NV (DESIGN.md)
    "Meta-Baseline-PS": (68.2, 75.7, 67.4, 71.5),
    "SVM-Mimic (2023)": (73.3, 83.9, 69.8, 74.5),
    "human experts": (92.1, 99.3, 90.7, 90.7),
}


def _images(problem: Problem) -> list[np.ndarray]:
    return [image.load() for image in problem.in_solving_order]


def decoder_features(model, images: list[np.ndarray]) -> np.ndarray:
    """The decoder's global-view features of each image (before anything is drawn), L2-normalised."""
    from perception.decode import image_features

    features = image_features(model, images).numpy().astype(np.float64) + 1e-6
    return features / np.linalg.norm(features, axis=1, keepdims=True)


def nearest_prototype(features: np.ndarray) -> tuple[bool, bool]:
    proto_a, proto_b = features[:6].mean(0), features[6:12].mean(0)
    queries = features[12:]
    return tuple(bool(q @ proto_a / np.linalg.norm(proto_a) > q @ proto_b / np.linalg.norm(proto_b)) for q in queries)


class Runner:
    def __init__(self, workers: int, checkpoint: Path | None) -> None:
        self.perceptions = {
            "full": PixelPerception(checkpoint, workers=workers),
            "decoder_only": PixelPerception(checkpoint, refine=False),
            "search_only": PixelPerception(checkpoint, workers=workers, use_decoder=False),
        }

    def labels(self, system: str, problem: Problem) -> tuple[bool, ...]:
        if system == "oracle":
            programs = [image.program for image in problem.in_solving_order]
            return solve_problem(ProblemInput(programs[:6], programs[6:12], programs[12:]), oracle=True).labels
        if system == "nearest_proto":
            model = self.perceptions["decoder_only"].decoder()
            return nearest_prototype(decoder_features(model, _images(problem)))
        programs = self.perceptions[system](_images(problem), positives=6, negatives=6)
        given = ProblemInput(programs[:6], programs[6:12], programs[12:])
        return solve_problem(given, oracle=True, decoded=True).labels

    def close(self) -> None:
        for perception in self.perceptions.values():
            perception.close()


def _done(journal: Path) -> dict[tuple[str, str], dict]:
    """Runs already finished; a run that ended in an error is tried again on resume."""
    if not journal.exists():
        return {}
    records = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return {(r["system"], r["name"]): r for r in records if not r.get("error")}


def run(problems: list[Problem], systems: list[str], journal: Path, runner: Runner) -> dict:
    done = _done(journal)
    todo = [(s, p) for s in systems for p in problems if (s, p.name) not in done]
    with journal.open("a") as out:
        for system, problem in tqdm(todo, desc="ablations", unit="run"):
            started = time.perf_counter()
            record = {"system": system, "name": problem.name, "kind": problem.kind, "truth": [True, False]}
            try:
                record["labels"] = list(runner.labels(system, problem))
            except Exception as error:  # recorded for this problem; the run goes on
                record["labels"], record["error"] = None, f"{type(error).__name__}: {error}"
            record["seconds"] = time.perf_counter() - started
            out.write(json.dumps(record) + "\n")
            out.flush()
            done[(system, problem.name)] = record
    return done


def summarise(done: dict, systems: list[str], problems: list[Problem]) -> dict:
    kinds = sorted({p.kind for p in problems})
    table = {}
    for system in systems:
        rows = [done[(system, p.name)] for p in problems if (system, p.name) in done]
        per_kind = {}
        for kind in kinds + ["all"]:
            chosen = [r for r in rows if kind == "all" or r["kind"] == kind]
            right = sum(sum(l == t for l, t in zip(r["labels"], r["truth"])) for r in chosen if r["labels"])
            per_kind[kind] = round(100.0 * right / (2 * len(chosen)), 1) if chosen else None
        seconds = [r["seconds"] for r in rows]
        table[system] = {
            "accuracy": per_kind,
            "errors": sum(1 for r in rows if r.get("error")),
            "median_seconds": round(statistics.median(seconds), 3) if seconds else None,
        }
    return {"kinds": kinds, "systems": table, "n_problems": len(problems)}


def markdown(summary: dict) -> str:
    kinds = summary["kinds"] + ["all"]
    lines = ["| system | " + " | ".join(kinds) + " | errors | median s/problem |", "|---" * (len(kinds) + 3) + "|"]
    for system, row in summary["systems"].items():
        cells = [("–" if row["accuracy"][k] is None else f"{row['accuracy'][k]:.1f}") for k in kinds]
        lines.append(f"| {system} | " + " | ".join(cells) + f" | {row['errors']} | {row['median_seconds']} |")
    lines.append("")
    lines.append("Reference (Bongard-LOGO test splits, accuracy %, FF / BA / CM / NV): "
                 + "; ".join(f"{k} {' / '.join(map(str, v))}" for k, v in PAPER.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench ablations", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="dataset root (released layout)")
    parser.add_argument("--split", required=True, help="split name in the split JSON")
    parser.add_argument("--limit", type=count(1), default=None, help="first N problems of the split")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--workers", type=workers, default=2, help="processes for refinement")
    parser.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    parser.add_argument("--json", type=Path, required=True, help="summary JSON (per-problem lines in <json>.jsonl)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table as markdown")
    args = parser.parse_args(argv)
    check_output_file(args.json, "--json")
    problems = load_split(args.data, args.split)[: args.limit]
    runner = Runner(args.workers, args.checkpoint)
    try:
        done = run(problems, args.systems, args.json.with_suffix(".jsonl"), runner)
    finally:
        runner.close()
    summary = summarise(done, args.systems, problems)
    summary.update(data=str(args.data), split=args.split)
    table = markdown(summary)
    print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(marked_json(summary))
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
