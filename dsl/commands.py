"""`bongard-solver generate`: generate, render and write a dataset in the released layout (spec §4).

    bongard-solver generate --out DIR --ff N --basic N --abstract N --seed S [--workers 2] [--size 512] [--ray local|ADDRESS]
    bongard-solver generate --out DIR --paper-splits --seed S [--workers 2]

`--paper-splits` writes a stand-in for the released test set instead (`dsl.generate.paper_split_plan`): 1,800
problems whose split file holds `test_ff`, `test_bd`, `test_hd_comb` and `test_hd_novel` in the released sizes (600 /
480 / 400 / 320), the novel split every problem of the held-out attribute has_eight_straight_lines and the
combinatorial one none of it, so that `eval --split all` and `bench ablations --split all` run on it as on the
released dataset.

Every problem has its own seed (seed, kind, index), so the output does not depend on the number of
workers. The run is resumable: each problem folder appears atomically, each finished problem is appended
to a journal (`<out>/.generate_journal.jsonl`), and the merged action-program JSONs and the split file
are rewritten atomically at the end. A second run with the same options skips what is done. A problem
that fails is reported and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from dsl.options import count, path_text, seed, workers
from dsl.owned import OutputError, check_output_folder
from dsl.processes import worker_setup
from dsl.parallel import ray_unordered

# numpy, PIL and the generator are imported inside the functions that use them: every command (`--help` too)
# builds this module's parser (issue 53).

JOURNAL = ".generate_journal.jsonl"
MAX_PROBLEMS = 100_000  # per kind: the released dataset has 3600 free-form problems
MANIFEST = ".generate.json"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a worker returns for one problem: its programs (as JSON) or the error."""

    name: str
    kind: str
    programs: list | None = None
    error: str | None = None


@dataclass
class GenerationReport:
    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def render_problem(problem, size: int) -> tuple[list, list]:
    """The images of set A and of set B of a `dsl.generate.GeneratedProblem`, `size` pixels a side."""
    from dsl.raster import render_program

    positives = [render_program(p, q, size=size) for p, q in zip(problem.positives, problem.positive_poses)]
    negatives = [render_program(p, q, size=size) for p, q in zip(problem.negatives, problem.negative_poses)]
    return positives, negatives


def make_problem(spec, seed: int, out: Path, size: int) -> Outcome:
    """Generate, render and write one problem of a `dsl.generate.ProblemSpec` (runs in a worker)."""
    from dsl.dataset import programs_json, write_problem
    from dsl.generate import generate_problem

    try:
        problem = generate_problem(spec, seed)
        write_problem(out, problem.name, *render_problem(problem, size))
        return Outcome(problem.name, spec.kind.value, programs_json(problem.positives, problem.negatives))
    except Exception as error:  # a batch run records the failure of one problem and goes on
        return Outcome(spec.name, spec.kind.value, error=f"{type(error).__name__}: {error}")


def _check_manifest(out: Path, seed: int, size: int, paper_splits: bool = False) -> None:
    """Claim `out` for this generation: an empty or new folder, or one this tool generated with the same
    options (its manifest says so); a folder holding anything else is someone else's (OutputError)."""
    from dsl.dataset import atomic_write_text

    path = out / MANIFEST
    wanted = {"seed": seed, "size": size} | ({"paper_splits": True} if paper_splits else {})
    if path.exists():
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise OutputError(f"--out {out}: its {MANIFEST} is damaged; use another --out") from None
        if found != wanted:
            raise OutputError(f"--out {out}: generated with {found}, not {wanted}; use another --out")
    elif any(out.iterdir()):
        raise OutputError(f"--out {out}: the folder holds files this tool did not generate (no {MANIFEST}); "
                          "refusing to write into it (choose an empty or new folder)")
    atomic_write_text(path, json.dumps(wanted))


def _read_journal(out: Path) -> dict[str, Outcome]:
    path = out / JOURNAL
    done: dict[str, Outcome] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by an interruption
        done[entry["name"]] = Outcome(entry["name"], entry["kind"], entry["programs"])
    return done


def _finished(out: Path) -> dict[str, Outcome]:
    """Problems already written: in the merged JSONs or the journal, and with their folder present."""
    from dsl.dataset import problem_folder, programs_file, read_json
    from dsl.generate import ProblemKind

    done: dict[str, Outcome] = {}
    for kind in ProblemKind:
        path = programs_file(out, kind.value)
        if path.exists():
            for name, entry in read_json(path).items():
                done[name] = Outcome(name, kind.value, entry)
    done.update(_read_journal(out))
    return {n: o for n, o in done.items() if problem_folder(out, n).is_dir()}


def _run(todo: list, seed: int, out: Path, size: int, workers: int, ray: str | None = None):
    """Yield the outcome of every problem of `todo` as it finishes (on Ray with `ray`: `dsl.parallel`)."""
    if ray is not None and todo:
        for spec, outcome, error in ray_unordered(make_problem, todo, ray, workers, seed, out, size):
            yield outcome if error is None else Outcome(spec.name, spec.kind.value, error=error)
        return
    if workers <= 1:
        for spec in todo:
            yield make_problem(spec, seed, out, size)
        return
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_setup, initargs=(os.getpid(),))
    try:
        futures = [pool.submit(make_problem, spec, seed, out, size) for spec in todo]
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # an interrupted run stops without draining the queue


def _remove_stale_temporaries(out: Path) -> None:
    """Problem folders a killed run left under their temporary name (`write_problem`)."""
    for folder in out.glob("*/images/.*.tmp"):
        shutil.rmtree(folder, ignore_errors=True)


def _write_outputs(out: Path, done: dict[str, Outcome], splits: dict[str, list[str]] | None = None) -> None:
    """The merged action-program JSONs and the split file: `splits` (name -> problem names, those done kept), else a
    split per kind, and `all`."""
    from dsl.dataset import programs_file, write_programs, write_splits
    from dsl.generate import ProblemKind

    by_kind: dict[str, dict[str, list]] = {k.value: {} for k in ProblemKind}
    for outcome in done.values():
        by_kind[outcome.kind][outcome.name] = outcome.programs
    for kind, table in by_kind.items():
        if table:
            write_programs(programs_file(out, kind), table)
    if splits is None:
        splits = {kind: sorted(table) for kind, table in by_kind.items()}
    else:
        splits = {name: [n for n in names if n in done] for name, names in splits.items()}
    splits["all"] = sorted(done)
    write_splits(out, splits)


def write_dataset(
    out: Path | str, counts: dict, seed: int = 0, workers: int = 2, size: int = 512,
    progress: bool = True, ray: str | None = None, paper_splits: bool = False,
) -> GenerationReport:
    """Generate `counts[kind]` problems of each kind into `out` (resuming a previous run with the same seed); with
    `paper_splits` the stand-in for the released test splits instead (`dsl.generate.paper_split_plan`; `counts`
    unused). `counts`: `dsl.generate.ProblemKind` -> number of problems."""
    from tqdm import tqdm

    from dsl.generate import paper_split_plan, plan_problems

    out = check_output_folder(out, "--out")
    _check_manifest(out, seed, size, paper_splits)
    _remove_stale_temporaries(out)
    done = _finished(out)
    plan = paper_split_plan(seed) if paper_splits else None
    specs = ([s for specs in plan.values() for s in specs] if plan is not None
             else [s for kind, n in counts.items() for s in plan_problems(kind, n, seed)])
    report = GenerationReport(skipped=[s.name for s in specs if s.name in done])
    todo = [s for s in specs if s.name not in done]
    with open(out / JOURNAL, "a", encoding="utf-8") as journal, tqdm(
        total=len(todo), desc="generate", unit="problem", disable=not progress
    ) as bar:
        for outcome in _run(todo, seed, out, size, workers, ray):
            bar.update()
            if outcome.error is not None:
                report.failed[outcome.name] = outcome.error
                continue
            journal.write(json.dumps({"name": outcome.name, "kind": outcome.kind, "programs": outcome.programs}) + "\n")
            journal.flush()
            done[outcome.name] = outcome
            report.written.append(outcome.name)
    _write_outputs(out, done, {name: [s.name for s in specs] for name, specs in plan.items()} if plan else None)
    (out / JOURNAL).unlink(missing_ok=True)
    return report


def run(args: argparse.Namespace) -> int:
    from dsl.generate import ProblemKind

    counts = {ProblemKind.FREE_FORM: args.ff, ProblemKind.BASIC: args.basic, ProblemKind.ABSTRACT: args.abstract}
    if args.paper_splits and any(counts.values()):
        print("bongard-solver generate: --paper-splits sets the counts itself (600 / 480 / 400 / 320); "
              "leave out --ff, --basic and --abstract", file=sys.stderr)
        return 2
    try:
        report = write_dataset(args.out, counts, seed=args.seed, workers=args.workers, size=args.size, ray=args.ray,
                               paper_splits=args.paper_splits)
    except KeyboardInterrupt:
        print(f"{args.out}: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    print(
        f"{args.out}: {len(report.written)} problems written, {len(report.skipped)} already there, "
        f"{len(report.failed)} failed"
    )
    for name, error in sorted(report.failed.items()):
        print(f"  {name}: {error}", file=sys.stderr)
    return 1 if report.failed else 0


def register(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "generate", help="generate free-form, basic and abstract problems in the released dataset layout"
    )
    parser.add_argument("--out", type=path_text, required=True, help="dataset root to write (created; resumable)")
    parser.add_argument("--ff", type=count(0, MAX_PROBLEMS), default=0, help="number of free-form problems")
    parser.add_argument("--basic", type=count(0, MAX_PROBLEMS), default=0, help="number of basic-shape problems")
    parser.add_argument("--abstract", type=count(0, MAX_PROBLEMS), default=0, help="number of abstract-shape problems")
    parser.add_argument("--seed", type=seed, default=0, help="dataset seed (each problem seeds from it)")
    parser.add_argument("--workers", type=workers, default=2, help="worker processes")
    parser.add_argument("--size", type=count(64, 2048), default=512, help="image side in pixels (64 to 2048)")
    parser.add_argument("--ray", default=None, metavar="local|ADDRESS",
                        help="generate on Ray: local (a runtime of --workers CPUs) or a cluster's address")
    parser.add_argument("--paper-splits", action="store_true",
                        help="a stand-in for the released test set: test_ff / test_bd / test_hd_comb / test_hd_novel "
                             "of 600 / 480 / 400 / 320 problems, the novel one holding has_eight_straight_lines")
    parser.set_defaults(func=run)
