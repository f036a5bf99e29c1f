"""`bongard-solver solve` and `bongard-solver eval`.

    bongard-solver solve PROBLEM_DIR [--oracle] [--json]
    bongard-solver eval --data ROOT --split NAME|all [--limit N] [--oracle] [--workers K] [--ray local|ADDRESS]
                        [--device auto|cpu|cuda] [--batch-problems K] --json OUT

`eval` appends one JSON line per problem to OUT.jsonl as it goes, so an interrupted run resumes where it
stopped (problems already there are not solved again); at the end it writes the summary to OUT.
A problem that fails is recorded with its error and counts as wrongly labelled. Where the problems run
(a local process pool, or Ray with `--ray`): `solver.app.execution`; `--split all`: `solver.app.paper_table`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from dsl.options import count, path_text, seconds, workers
from perception.device import DEVICES
from solver.settings import DEFAULT_TIME_LIMIT

# The solver's own imports are made inside the functions that use them: every command (`--help` too) builds this
# module's parser, and the libraries behind them (numpy, Numba, clingo, torch) take seconds to import (issue 53).

TRUE_LABELS = [True, False]  # the positive query, then the negative query


def solve_command(args: argparse.Namespace) -> int:
    from dsl.dataset import DatasetError
    from search import warm
    from solver.app import guard
    from solver.app.resident import perception as command_perception
    from solver.reading import PerceptionError
    from solver.solving import solve_folder, solve_problem

    guard.check_decoder(args.checkpoint)
    try:
        if args.oracle:
            solution = solve_problem(args.problem, oracle=True, time_limit=args.time_limit)
        else:
            warm.start()  # on a first run, a helper compiles kernels beside this process (search.warm)
            with command_perception(args.checkpoint, args.workers) as perception:
                solution = solve_folder(args.problem, perception, time_limit=args.time_limit).solution
    except (DatasetError, PerceptionError, ValueError) as error:
        print(f"bongard-solver solve: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(solution.to_dict(), indent=1))
        return 0
    print(solution.explanation.to_text())
    for warning in solution.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for k, (label, confidence) in enumerate(zip(solution.labels, solution.confidence)):
        print(f"query {k}: {'A' if label else 'B'} (confidence {confidence:.2f})")
    return 0


@dataclass(frozen=True, slots=True)
class EvalJob:
    """One problem of an evaluation: where it is, and its raw program entry (parsed in the worker, so a
    malformed entry fails that problem only)."""

    root: str
    name: str
    programs_path: str | None
    programs: object
    oracle: bool
    time_limit: float


def _load(job: EvalJob):
    """The problem of `job` (a `dsl.dataset.Problem`), its programs parsed from the job's entry."""
    from dsl.dataset import DatasetError, load_problem, parse_programs, problem_folder

    if job.programs_path is None:
        return load_problem(problem_folder(job.root, job.name))
    if job.programs is None:
        raise DatasetError(f"{job.programs_path}: no action program for problem {job.name}")
    entry = parse_programs(Path(job.programs_path), {job.name: job.programs})[job.name]
    return load_problem(problem_folder(job.root, job.name), entry)


def _solve(job: EvalJob, perception, dump: Path | None):
    """The solution of one problem, from its programs (oracle) or its pixels (`perception`, a
    `solver.reading.PixelPerception`); writes its report if `dump`."""
    from dsl.dataset import problem_folder
    from solver.explaining import write_report
    from solver.solving import solve_folder, solve_problem

    if job.oracle and dump is None:
        return solve_problem(_load(job), oracle=True, time_limit=job.time_limit), [], {}, []
    problem = _load(job)
    solved = solve_folder(problem_folder(job.root, job.name), perception, oracle=job.oracle,
                          time_limit=job.time_limit, problem=problem)
    if dump is not None:
        write_report(dump, job.name, solved.images, solved.solution.to_dict())
    return solved.solution, solved.errors, solved.stage_seconds, solved.query_features


def evaluate_problem(job: EvalJob, perception=None, dump: Path | None = None) -> dict:
    """Solve one problem and score it; any failure becomes an `error` entry of the record."""
    from dsl.dataset import problem_kind
    from dsl.owned import WriteError
    from solver.app import guard
    from solver.app.scoring import rule_matches

    record = {"name": job.name, "kind": problem_kind(job.name), "true": TRUE_LABELS, "predicted": None,
              "correct": 0, "rule": None, "english": None, "outcome": None, "rule_match": False,
              "confidence": None, "alternatives": 0, "seconds": 0.0, "error": None}
    start = time.perf_counter()
    try:
        solution, image_errors, stage_seconds, query_features = _solve(job, perception, dump)
        record.update(
            image_errors=image_errors,
            warnings=list(solution.warnings),
            stage_seconds=stage_seconds,
            query_features=query_features,
            predicted=list(solution.labels),
            correct=sum(p == t for p, t in zip(solution.labels, TRUE_LABELS)),
            rule=solution.rule.asp if solution.rule else None,
            english=solution.explanation.english,
            outcome=solution.explanation.outcome,
            context_errors=solution.explanation.errors,
            rule_match=rule_matches(job.name, solution.rule),
            confidence=[round(c, 4) for c in solution.confidence],
            alternatives=len(solution.induction.rules) - 1 if solution.induction else 0,
        )
    except (WriteError, MemoryError):
        raise  # a fault of the machine, not of the problem: the run stops (`evaluate`)
    except Exception as error:  # a batch run records the failure and goes on
        if guard.out_of_memory(error):
            raise MemoryError(f"solving {job.name}: {type(error).__name__}: {guard.one_line(str(error), 200)}") from None
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc(limit=4)
    record["seconds"] = round(time.perf_counter() - start, 4)
    return record


def plan_jobs(root: str, split: str, limit: int | None, oracle: bool, time_limit: float) -> list[EvalJob]:
    from dsl.dataset import SPLIT_FILE, DatasetError, problem_kind, programs_file, read_json, read_splits

    splits = read_splits(root)
    if split not in splits:
        available = ", ".join(sorted(splits))
        raise DatasetError(f"{Path(root) / SPLIT_FILE}: no split {split!r} (available: {available})")
    names = splits[split][:limit]
    tables: dict[str, dict] = {}
    jobs = []
    for name in names:
        kind = problem_kind(name)
        path = programs_file(root, kind) if oracle else None
        if path is not None and kind not in tables:
            data = read_json(path) if path.exists() else {}
            tables[kind] = data if isinstance(data, dict) else {}
        entry = tables[kind].get(name) if path is not None else None
        jobs.append(EvalJob(str(root), name, str(path) if path else None, entry, oracle, time_limit))
    return jobs


def summarise(records: list[dict], split: str, wall_seconds: float) -> dict:
    from solver.app.scoring import accuracy_interval
    from solver.solving import calibration_figures

    def block(rs: list[dict]) -> dict:
        n_queries = 2 * len(rs)
        correct = sum(r["correct"] for r in rs)
        return {"accuracy": correct / n_queries if n_queries else 0.0,
                "accuracy_95": accuracy_interval(correct, n_queries), "n_queries": n_queries,  # Wilson, queries
                "n_problems": len(rs), "rule_match": sum(r["rule_match"] for r in rs) / len(rs) if rs else 0.0,
                "errors": sum(r["error"] is not None for r in rs)}

    times = [r["seconds"] for r in records if r["error"] is None]
    answered = [r for r in records if r["error"] is None and r["predicted"] is not None]
    summary = {"split": split, **block(records), "seconds": round(wall_seconds, 2),
               "median_solve_seconds": statistics.median(times) if times else None,
               "calibration": calibration_figures(
                   [c for r in answered for c in r["confidence"]],
                   [p == t for r in answered for p, t in zip(r["predicted"], r["true"])]),
               "mean_solve_seconds": statistics.fmean(times) if times else None,
               "by_kind": {k: block([r for r in records if r["kind"] == k])
                           for k in sorted({r["kind"] for r in records})}}
    summary["problems"] = sorted(records, key=lambda r: r["name"])
    return summary


def evaluate(root: str, split: str, out: Path, limit: int | None, oracle: bool, workers: int,
             time_limit: float, dump: Path | None = None, checkpoint: Path | None = None,
             ray: str | None = None, device: str = "auto", retry_failed: bool = False,
             batch_problems: int | None = None) -> dict:
    """Solve and score the problems of `split`, resuming OUT.jsonl (`solver.app.eval_files`); every input and
    output is checked before the first problem is solved. A fault of the machine (a write that fails, memory that
    runs out) stops the run with an error saying which records are kept; the same command then resumes."""
    from tqdm import tqdm

    from dsl.dataset import atomic_write_text
    from dsl.owned import WriteError, check_output_folder
    from solver.app import execution, guard
    from solver.app.eval_files import eval_options, open_journal, summary_text
    from solver.explaining import write_index

    options = eval_options(root, split, oracle, time_limit, checkpoint)
    guard.check_dataset_root(root)
    planned = plan_jobs(root, split, limit, oracle, time_limit)
    if dump is not None:
        check_output_folder(dump, "--dump")
    if not oracle:
        guard.check_decoder(checkpoint)
    start = time.perf_counter()
    with open_journal(out, options, {job.name for job in planned}, retry_failed) as journal:
        jobs = [job for job in planned if job.name not in journal.records]
        try:
            with tqdm(total=len(planned), initial=len(journal.records), desc=f"eval {split}", unit="problem") as bar:
                for result in execution.records(jobs, evaluate_problem, oracle, workers, dump, checkpoint, device,
                                                ray, batch_problems, journal.path):
                    journal.append(result)
                    bar.update(1)
            summary = summarise(list(journal.records.values()), split, time.perf_counter() - start)
            atomic_write_text(out, summary_text(summary, options))
            if dump is not None:
                write_index(dump, summary["problems"], title=f"bongard-solver eval: {split}")
        except WriteError as error:
            raise WriteError(f"{error}; {_kept(journal)}", error.fault) from None
        except Exception as error:
            if not guard.out_of_memory(error):
                raise
            said = str(error) if isinstance(error, MemoryError) else f"{type(error).__name__}: {error}"
            raise MemoryError(f"{guard.one_line(said, 240)}; {_kept(journal)}") from None
    return summary


def _kept(journal) -> str:
    """What a run stopped by a fault of the machine leaves, and how to go on."""
    return (f"the records written ({len(journal.records)}) are kept in {journal.path}: "
            "run the same command again to resume once the fault is mended")


def eval_command(args: argparse.Namespace) -> int:
    from solver.app import paper_table

    def run(split: str, out: Path) -> dict:
        return evaluate(args.data, split, out, args.limit, args.oracle, args.workers, args.time_limit,
                        Path(args.dump) if args.dump else None, args.checkpoint, args.ray, args.device,
                        args.retry_failed, args.batch_problems)

    if args.split == "all":  # the paper's table (`solver.app.paper_table`)
        print(paper_table.run_benchmark(args.data, Path(args.json), run, args.oracle)["markdown"])
        print(f"written: {args.json}, {Path(args.json).with_suffix('.md')}, {Path(args.json).with_suffix('.png')}",
              file=sys.stderr)
        return 0
    summary = run(args.split, Path(args.json))
    print(f"{summary['split']}: accuracy {summary['accuracy']:.4f} (95 % {summary['accuracy_95']}) on "
          f"{summary['n_queries']} queries, "
          f"rule_match {summary['rule_match']:.4f}, errors {summary['errors']}, {summary['seconds']} s")
    calibration = summary["calibration"]
    if summary["median_solve_seconds"] is not None:
        print(f"  median {summary['median_solve_seconds']:.2f} s per problem; calibration: ECE {calibration['ece']}, "
              f"Brier {calibration['brier']}, {calibration['wrong_at_0_99']} of {calibration['wrong']} wrong answers at >= 0.99")
    for kind, figures in summary["by_kind"].items():
        print(f"  {kind}: accuracy {figures['accuracy']:.4f} ({figures['n_queries']} queries), "
              f"rule_match {figures['rule_match']:.4f}, errors {figures['errors']}")
    print(f"written: {args.json}", file=sys.stderr)
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    solve = subcommands.add_parser("solve", help="solve one problem folder and explain the rule")
    solve.add_argument("problem", help="problem folder <root>/<type>/images/<problem>")
    solve.add_argument("--oracle", action="store_true", help="use the ground-truth action programs")
    solve.add_argument("--json", action="store_true", help="print the solution as JSON")
    solve.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, help="seconds per problem")
    solve.add_argument("--workers", type=workers, default=None,
                       help="processes perceiving the problem (default 1: this process; more start worker processes "
                            "that each load the models again, slower for one problem; the resident solver: 2)")
    solve.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    solve.set_defaults(func=solve_command)

    evaluation = subcommands.add_parser("eval", help="evaluate the solver on a dataset split")
    evaluation.add_argument("--data", required=True, help="dataset root (released layout)")
    evaluation.add_argument("--split", required=True,
                            help="split name in the split JSON; all: the benchmark table (FF/BA/CM/NV, see solver.app.paper_table)")
    evaluation.add_argument("--limit", type=count(1), default=None, help="first N problems of the split")
    evaluation.add_argument("--oracle", action="store_true", help="use the ground-truth action programs")
    evaluation.add_argument("--workers", type=workers, default=2,
                            help="processes: problems in parallel with --oracle, else decoding and refinement split across them; "
                                 "with --ray local: the runtime's CPUs, one problem each")
    evaluation.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, help="seconds per problem")
    evaluation.add_argument("--json", type=path_text, required=True, help="summary JSON (per-problem lines go to OUT.jsonl)")
    evaluation.add_argument("--retry-failed", action="store_true",
                            help="solve again the problems whose record in OUT.jsonl is an error")
    evaluation.add_argument("--dump", type=path_text, default=None, help="write an explanation report per problem here")
    evaluation.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: shipped)")
    evaluation.add_argument("--ray", default=None, metavar="local|ADDRESS",
                            help="run the problems on Ray: local (a runtime of --workers CPUs) or a cluster's address")
    evaluation.add_argument("--device", default="auto", choices=DEVICES, help="the decoder's device (auto: CUDA if present)")
    evaluation.add_argument("--batch-problems", type=count(1), default=None, metavar="K",
                            help="problems whose images are decoded together (default: 4 on a GPU, else 1; "
                                 "on the CPU each problem keeps its own batches: the same readings)")
    evaluation.set_defaults(func=eval_command)
