"""Ablations of the solver as it is: what each part buys, per split, each figure with its 95 % interval.

    bongard-solver bench ablations --data ROOT --split NAME|all --json OUT [--systems ...] [--limit N] [--workers K]
                                   [--table-only]

Systems (each a switch of the solver, `solver.reading.Switches`, given to `PixelPerception`; not a copy of it)
  full            the product: exactly `eval`'s path and records (`solver.app.commands.evaluate_problem`)
  oracle          the dataset's ground-truth programs (the reasoning layer alone; `eval --oracle`)
  no_hypotheses   no problem-level hypotheses: every image read in full, the readings reconciled with set A
  no_near_misses  the check against H without H's one-action neighbours and other writings
  no_tracer       free-form readings kept as decoded, no off-grid image traced
  no_posterior    the rule by plain minimum description length (clingo's optimal rules, no posterior)
  no_confidence   labels as `full`, each confidence the optimal rules' vote share (no calibrated model)
  attributes_geometry / attributes_table
                  attribute values measured on the drawing alone / the shape table's labels for recognised library
                  shapes without the measure kept beside them (the product: both, `solver.induction.AttributeSource`)
  decoder_only    the decoder's top-1 reading of every image, no search (no classifier, tracer or hypotheses)
  nearest_proto   no rule: each query to the nearer prototype (the mean feature of A or of B, cosine; features: the
                  shape classifier's convolutional trunk on the ink crop, `image_features`) — a Meta-Baseline-style
                  few-shot classifier; its confidence sigmoid(PROTO_TEMPERATURE x the margin)
  search_only     (not run unless asked) the enumerator from generic seeds, no decoder and no classifier

Every pixel system runs as `eval` runs problems locally: one `PixelPerception` sharing each problem's images among
`--workers` processes, warmed up untimed first (`solver.app.product.warm_up`). Per split and system: accuracy with its
Wilson 95 % interval over queries (`solver.app.scoring.accuracy_interval`, as `eval` summaries give it), rule match,
median and mean seconds a problem, ECE and the wrong answers at confidence >= 0.99 (`solver.app.commands.summarise`);
a problem that failed counts as wrongly labelled, as in `eval`.

`--split all` takes the benchmark splits of the root (`solver.app.paper_table.benchmark_splits`: `test_ff`, `test_bd`,
`test_hd_comb`, `test_hd_novel` of the released layout or of `generate --paper-splits`; `dev_*` of official_dev) and
writes OUT.md (one table: systems by the four columns, beside the published figures; then the details) and OUT.png
(the chart, `benchmarks._ablation_chart`). Records are appended to OUT.jsonl as problems finish (system by system,
split by split), so an interrupted run resumes where it stopped; the table shows what is there, each cell with the
number of problems it rests on when fewer than the split holds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from dsl.dataset import SPLIT_FILE, DatasetError, load_problem, problem_folder, problem_kind, read_splits
from dsl.options import count, workers
from dsl.owned import check_output_file, marked_json
from solver.app.commands import TRUE_LABELS, evaluate_problem, plan_jobs, summarise
from solver.app.paper_table import BASELINES, COLUMNS, benchmark_splits
from solver.app.product import warm_up
from solver.induction import DEFAULT_TIME_LIMIT
from solver.reading import PixelPerception, Switches


@dataclass(frozen=True)
class System:
    name: str
    switches: Switches | None  # None: not the pixel pipeline (oracle, nearest_proto)
    note: str
    use_decoder: bool = True  # False: search_only (the enumerator from generic seeds)


SYSTEMS = {s.name: s for s in (
    System("full", Switches(), "the product (eval's records)"),
    System("oracle", None, "true programs"),
    System("no_hypotheses", Switches(hypotheses=False), "every image read in full, reconciled"),
    System("no_near_misses", Switches(near_misses=False), "check against H alone"),
    System("no_tracer", Switches(tracer=False), "free-form readings as decoded"),
    System("no_posterior", Switches(posterior=False), "plain MDL rule choice"),
    System("no_confidence", Switches(confidence=False), "vote share as confidence"),
    System("attributes_geometry", Switches(attributes="geometry"), "attributes measured only"),
    System("attributes_table", Switches(attributes="table"), "table labels, no measure beside"),
    System("decoder_only", Switches(search=False), "decoder top-1, no search"),
    System("nearest_proto", None, "no rule: nearest prototype"),
    System("search_only", Switches(), "enumerator from generic seeds, no decoder", use_decoder=False),
)}
DEFAULT_SYSTEMS = tuple(name for name in SYSTEMS if name != "search_only")
PROTO_TEMPERATURE = 10.0  # nearest_proto's confidence: sigmoid of this times the cosine margin (Meta-Baseline's
# logits are cosine similarities times a learned temperature, of about this size; here fixed, not fitted)


def image_features(model, images: list[np.ndarray]) -> np.ndarray:
    """Each image's features, L2-normalised: the shape classifier's convolutional trunk (`ShapeClassifier.features`,
    before its head) on the ink crop it classifies, as learned on library shapes, never on Bongard problems. (The
    decoder's global view with nothing drawn, which this baseline used before, is all zeros for the shipped
    checkpoint: every query then went to set B.)"""
    import torch

    from perception.data import prepare_image

    crops = np.stack([prepare_image(image, model.config.size)[0] for image in images])
    with torch.no_grad():
        features = model.features(torch.from_numpy(crops)[:, None]).numpy().astype(np.float64)  # (B, C * 9)
    return features / np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)


def nearest_prototype(features: np.ndarray) -> tuple[tuple[bool, ...], tuple[float, ...]]:
    """(each query in A?, the confidence of that label): the query's cosine similarity to the mean feature of set A
    (the first 6) against that of set B (the next 6)."""
    proto_a, proto_b = features[:6].mean(0), features[6:12].mean(0)
    margins = [float(q @ proto_a / np.linalg.norm(proto_a) - q @ proto_b / np.linalg.norm(proto_b))
               for q in features[12:]]
    in_a = tuple(m > 0 for m in margins)
    return in_a, tuple(round(float(1.0 / (1.0 + np.exp(-PROTO_TEMPERATURE * abs(m)))), 4) for m in margins)


def nearest_proto_record(job, model) -> dict:
    """An `eval`-shaped record of `nearest_prototype` on one problem (no rule: rule match is False)."""
    record = {"name": job.name, "kind": problem_kind(job.name), "true": TRUE_LABELS, "predicted": None, "correct": 0,
              "rule": None, "english": None, "outcome": None, "rule_match": False, "confidence": None,
              "alternatives": 0, "seconds": 0.0, "error": None}
    started = time.perf_counter()
    try:
        problem = load_problem(problem_folder(job.root, job.name))
        labels, confidence = nearest_prototype(image_features(model, [i.load() for i in problem.in_solving_order]))
        record.update(predicted=list(labels), correct=sum(p == t for p, t in zip(labels, TRUE_LABELS)),
                      confidence=list(confidence))
    except Exception as error:  # recorded for this problem; the run goes on
        record["error"] = f"{type(error).__name__}: {error}"
    record["seconds"] = round(time.perf_counter() - started, 4)
    return record


def solver_for(system: System, workers: int, checkpoint: Path | None) -> tuple[Callable, Callable]:
    """(job -> record, close) for `system`."""
    if system.name == "oracle":
        return (lambda job: evaluate_problem(job, None)), (lambda: None)
    if system.name == "nearest_proto":
        perception = PixelPerception(checkpoint)
        model = perception.classifier()
        return (lambda job: nearest_proto_record(job, model)), perception.close
    perception = PixelPerception(checkpoint, workers=workers, switches=system.switches,
                                 use_decoder=system.use_decoder)
    warm_up(perception)  # the models and kernels loaded before the first problem's clock starts, as `eval` does
    return (lambda job: evaluate_problem(job, perception)), perception.close


def read_journal(journal: Path) -> dict[tuple[str, str, str], dict]:
    """(system, split, problem) -> record of the runs already made (the last of each). A problem that failed keeps its
    record and counts as wrongly labelled, as in `eval` (delete its line to try it again)."""
    if not journal.exists():
        return {}
    done = {}
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interruption
        done[(record["system"], record["split"], record["name"])] = record
    return done


def run(root: str, splits: list[str], systems: list[str], limit: int | None, journal: Path, workers: int,
        checkpoint: Path | None, time_limit: float = DEFAULT_TIME_LIMIT) -> dict:
    """Every system on every split's problems (the first `limit` of each), system by system, split by split;
    records appended to `journal` as they finish."""
    done = read_journal(journal)
    planned = {(oracle, split): plan_jobs(root, split, limit, oracle, time_limit)
               for oracle in (False, True) for split in splits}
    with journal.open("a", encoding="utf-8") as out:
        for name in systems:
            todo = [job for split in splits for job in planned[(name == "oracle", split)]
                    if (name, split, job.name) not in done]
            if not todo:
                continue
            split_of = {(job.name, job.oracle): split for split in splits for job in planned[(name == "oracle", split)]}
            solve, close = solver_for(SYSTEMS[name], workers, checkpoint)
            try:
                for job in tqdm(todo, desc=f"ablations {name}", unit="problem"):
                    record = {"system": name, "split": split_of[(job.name, job.oracle)], **solve(job)}
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                    done[(name, record["split"], job.name)] = record
            finally:
                close()
    return done


def summaries(done: dict, systems: list[str], splits: list[str]) -> dict:
    """system -> split -> `eval`'s summary of the records there (without the per-problem list)."""
    table: dict = {}
    for name in systems:
        for split in splits:
            records = [r for (s, p, _), r in done.items() if s == name and p == split]
            if records:
                summary = summarise(records, split, sum(r["seconds"] for r in records))
                table.setdefault(name, {})[split] = {k: v for k, v in summary.items() if k != "problems"}
    return table


def _cell(figures: dict | None, planned: int) -> str:
    if not figures:
        return "—"
    low, high = figures["accuracy_95"]
    n = "" if figures["n_problems"] == planned else f" n={figures['n_problems']}"
    return f"{100 * figures['accuracy']:.1f} ({100 * low:.1f}–{100 * high:.1f}){n}"


def markdown(table: dict, columns: dict[str, str], planned: dict[str, int], title: str) -> str:
    """The accuracy table (systems by columns, then the published figures) and the details per split."""
    shown = shown_columns(columns)
    lines = [title, "", "| system | " + " | ".join(f"{c} `{columns[c]}` ({planned[columns[c]]})" for c in shown) + " |",
             "|---|" + "---:|" * len(shown)]
    for name, per_split in table.items():
        lines.append(f"| {name} | " + " | ".join(_cell(per_split.get(columns[c]), planned[columns[c]])
                                                for c in shown) + " |")
    for baseline in BASELINES:
        published = dict(zip(COLUMNS, baseline.accuracy))
        lines.append(f"| *{baseline.name}* (published) | "
                     + " | ".join("—" if published.get(c) is None else f"{published[c]:.1f}" for c in shown) + " |")
    lines += ["", "Accuracy % of queries (Wilson 95 % interval); published figures are on the released test splits, "
              "human experts one figure for CM and NV.", "",
              "| system | split | problems | accuracy (95 %) | rule match | median s | mean s | ECE | wrong ≥ 0.99 | failed |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, per_split in table.items():
        for split, f in per_split.items():
            calibration = f["calibration"]
            low, high = f["accuracy_95"]
            lines.append(f"| {name} | {split} | {f['n_problems']} | {100 * f['accuracy']:.1f} ({100 * low:.1f}–"
                         f"{100 * high:.1f}) | {100 * f['rule_match']:.1f} | {_seconds(f['median_solve_seconds'])} | "
                         f"{_seconds(f['mean_solve_seconds'])} | {calibration['ece']} | "
                         f"{calibration['wrong_at_0_99']} of {calibration['wrong']} | {f['errors']} |")
    return "\n".join(lines) + "\n"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def chosen_splits(root: str, split: str) -> tuple[dict[str, str], str]:
    """(column -> split, what they are): the root's benchmark splits for `all`, else the one split named."""
    available = read_splits(root)
    if split != "all":
        if split not in available:
            raise DatasetError(f"{Path(root) / SPLIT_FILE}: no split {split!r} (available: {', '.join(sorted(available))})")
        return {column_of(split): split}, f"split {split}"
    try:
        description, columns = benchmark_splits(available)
    except ValueError as error:
        raise DatasetError(f"{Path(root) / SPLIT_FILE}: {error}") from None
    if _generated(root) and description == "released test splits":
        description = "generate --paper-splits stand-in for the released test splits"
    return columns, description


def _generated(root: str) -> bool:
    """Whether `root` was written by `bongard-solver generate` (its manifest is there)."""
    from dsl.commands import MANIFEST

    return (Path(root) / MANIFEST).is_file()


def column_of(split: str) -> str:
    """The paper's column a split stands for, by its name (its problem type; the split's own name if none)."""
    if "novel" in split:
        return "NV"
    if "comb" in split:
        return "CM"
    kind = split.removeprefix("test_").removeprefix("dev_")[:2]
    return {"ff": "FF", "bd": "BA", "hd": "CM"}.get(kind, split)


def shown_columns(columns: dict[str, str]) -> list[str]:
    """The table's columns in the paper's order, any other after them."""
    return [c for c in COLUMNS if c in columns] + [c for c in columns if c not in COLUMNS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench ablations", description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="dataset root (released layout)")
    parser.add_argument("--split", required=True, help="split name in the split JSON, or all (the benchmark splits)")
    parser.add_argument("--limit", type=count(1), default=None, help="first N problems of each split")
    parser.add_argument("--systems", nargs="+", default=list(DEFAULT_SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--workers", type=workers, default=2, help="processes sharing each problem's images")
    parser.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    parser.add_argument("--json", type=Path, required=True, help="summary JSON (records in OUT.jsonl, table OUT.md, "
                        "chart OUT.png)")
    parser.add_argument("--table-only", action="store_true", help="solve nothing: the table and chart of the records "
                        "already in OUT.jsonl (of a run still going, or stopped)")
    args = parser.parse_args(argv)
    check_output_file(args.json, "--json")
    columns, description = chosen_splits(args.data, args.split)
    splits = list(columns.values())
    planned = {split: len(read_splits(args.data)[split][: args.limit]) for split in splits}
    journal = args.json.with_suffix(".jsonl")
    done = read_journal(journal) if args.table_only else run(args.data, splits, args.systems, args.limit, journal,
                                                             args.workers, args.checkpoint)
    wanted = {split: set(read_splits(args.data)[split][: args.limit]) for split in splits}
    done = {key: r for key, r in done.items() if key[1] in wanted and key[2] in wanted[key[1]]}  # this run's problems
    table = summaries(done, args.systems, splits)
    command = "bongard-solver bench ablations " + " ".join(a for a in (argv if argv is not None else sys.argv[3:])
                                                           if a != "--table-only")  # the command that makes it
    text = markdown(table, columns, planned, f"Ablations on {args.data} ({description}): `{command}`")
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(marked_json({"data": str(args.data), "splits": columns, "planned": planned,
                                      "systems": {n: SYSTEMS[n].note for n in args.systems}, "table": table}))
    args.json.with_suffix(".md").write_text(text, encoding="utf-8")
    from benchmarks._ablation_chart import draw

    draw(table, columns, planned, description, args.json.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
