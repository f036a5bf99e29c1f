"""`bongard-solver bench all --out DIR [--data ROOT] [--quick]`: every benchmark whose figures docs/RESULTS.md
shows, on data generated here with fixed seeds (plus an official-layout ROOT when given), in one run.

Each part is one command of this repository (`bongard-solver bench NAME ...`, `bongard-solver eval ...`),
run as a child process; its JSON goes to DIR/raw/<part>.json and its figures to DIR/<part>.md as a table
(figure | value), with the command that made it and the seconds it took. DIR/figures.json holds every part's
command, seconds and figures, and the machine (CPU, cores, load average before and after). Parts whose
output is already there, made by the same command, are not run again (delete DIR/raw/<part>.json to
redo one).

`--quick` (a smoke check, under 10 minutes on 2 quiet cores): 3 generated problems per type end to end,
small counts elsewhere. The full run uses the counts of the page (24 problems per type, 200 generated
abstract problems with oracle programs, every official dev image).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SEED = 20261125  # the generated problems (every type)
ORACLE_SEED = 9001  # the generated abstract problems solved with oracle programs (full run)


@dataclass(frozen=True)
class Part:
    name: str
    title: str
    argv: tuple[str, ...]  # after `bongard-solver`; {data}, {oracle}, {root}, {raw} are filled in
    json_flag: str = "--json"  # how the command is told where its JSON goes


def _counts(quick: bool) -> dict[str, int]:
    return {"per_type": 3 if quick else 24, "render_n": 60 if quick else 400, "render_problems": 5 if quick else 30,
            "refine_images": 24 if quick else 336, "decoder_problems": 1 if quick else 24,
            "shapes_images": 100 if quick else 2000, "fidelity_images": 6 if quick else 40}


def generated_parts(quick: bool, workers: int) -> list[Part]:
    c = _counts(quick)
    oracle = ("bench", "solve", "--data", "{data}", "--split", "all", "--oracle") if quick else (
        "bench", "solve", "--data", "{oracle}", "--split", "all", "--oracle")
    parts = [
        Part("render", "Renderer speed", ("bench", "render", "--n", str(c["render_n"]), "--problems",
                                          str(c["render_problems"]), "--repeats", "1" if quick else "3")),
        Part("attributes", "Attributes against the shape table; library matching",
             ("bench", "attributes", "--seed", "0") + (("--no-categories",) if quick else ())),
        Part("shapes", "Library-shape classifier (generated images)",
             ("bench", "shapes", "--data", "generated", "--limit", str(c["shapes_images"]), "--seed", "7070")),
        Part("decoder", "Decoder (generated free-form images, top 10)",
             ("bench", "decoder", "--data", "generated", "--split", "ff", "--limit", str(c["decoder_problems"]),
              "--threads", "1")),
        Part("refine", "Search from synthetic proposals (generated free-form images)",
             ("bench", "refine", "--data", "{data}", "--split", "ff", "--limit", str(c["refine_images"]))),
        Part("search_ff", "Search per image, the product's path (generated free-form)",
             ("bench", "decoder", "--data", "{data}", "--split", "ff", "--limit", str(c["decoder_problems"]),
              "--product", "--refine", "--threads", "1")),
        Part("search_bd", "Search per image, the product's path (generated basic)",
             ("bench", "decoder", "--data", "{data}", "--split", "bd", "--limit", str(c["decoder_problems"]),
              "--product", "--refine", "--threads", "1")),
        Part("oracle", "Rule induction with oracle programs (generated)", oracle),
        Part("end_to_end", "End to end from pixels (generated)",
             ("eval", "--data", "{data}", "--split", "all", "--workers", str(workers))),
        Part("ablations", "Ablations: what each part buys (generated)",
             ("bench", "ablations", "--data", "{data}", "--split", "all", "--workers", str(workers))
             + (("--limit", "1") if quick else ())),
    ]
    return parts


def official_parts(quick: bool, workers: int) -> list[Part]:
    c = _counts(quick)
    limit = ("--limit", "1") if quick else ()
    parts = [
        Part("official_fidelity", "Renderer fidelity against official images",
             ("bench", "fidelity", "--root", "{root}", "--n", str(c["fidelity_images"]))),
        Part("official_decoder", "Decoder (official dev_ff, top 10)",
             ("bench", "decoder", "--data", "{root}", "--split", "dev_ff", "--threads", "1") + limit),
        Part("official_search_ff", "Search per image, the product's path (official dev_ff)",
             ("bench", "decoder", "--data", "{root}", "--split", "dev_ff", "--product", "--refine", "--threads", "1")
             + limit),
        Part("official_search_bd", "Search per image, the product's path (official dev_bd)",
             ("bench", "decoder", "--data", "{root}", "--split", "dev_bd", "--product", "--refine", "--threads", "1")
             + limit),
    ]
    for split in ("dev_bd", "dev_hd"):
        parts.append(Part(f"official_shapes_{split}", f"Library-shape classifier (official {split})",
                          ("bench", "shapes", "--data", "{root}", "--split", split) + limit))
    for split in ("dev_ff", "dev_bd"):
        parts.append(Part(f"official_refine_{split}", f"Search from synthetic proposals (official {split})",
                          ("bench", "refine", "--data", "{root}", "--split", split)
                          + (("--limit", str(c["refine_images"] // 2)) if quick else ())))
    for split in ("dev_ff", "dev_bd", "dev_hd"):
        parts.append(Part(f"official_oracle_{split}", f"Rule induction with oracle programs (official {split})",
                          ("eval", "--data", "{root}", "--split", split, "--oracle", "--workers", "1")))
    if not quick:
        for split in ("dev_ff", "dev_bd", "dev_hd"):
            parts.append(Part(f"official_end_to_end_{split}", f"End to end from pixels (official {split})",
                              ("eval", "--data", "{root}", "--split", split, "--workers", str(workers))))
    parts.append(Part("official_ablations", "Ablations: what each part buys (official dev)",
                      ("bench", "ablations", "--data", "{root}", "--split", "all", "--workers", str(workers)) + limit))
    return parts


def flatten(value, prefix: str = "") -> dict[str, object]:
    """The scalar figures of a benchmark's JSON as `a.b.c -> value` (lists and long texts left out)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return {prefix: value}
    if isinstance(value, str) and len(value) <= 60:
        return {prefix: value}
    return {}


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def markdown_table(title: str, command: str, seconds: float, figures: dict[str, object]) -> str:
    lines = [f"## {title}", "", f"`{command}` ({seconds:.0f} s)", "", "| figure | value |", "|---|---|"]
    lines += [f"| {key} | {_shown(value)} |" for key, value in figures.items()]
    return "\n".join(lines) + "\n"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def _filled(part: Part, paths: dict[str, str]) -> list[str]:
    return [arg.format(**paths) for arg in part.argv] + [part.json_flag, paths["raw"] + f"/{part.name}.json"]


def run_part(part: Part, paths: dict[str, str], out: Path) -> dict:
    """Run one part (unless its JSON is there), write its table; its command, seconds and figures."""
    argv = _filled(part, paths)
    command = "bongard-solver " + shlex.join(argv)
    raw = out / "raw" / f"{part.name}.json"
    ran = raw.with_suffix(".command")  # the command that made raw: another one (e.g. --quick) runs again
    seconds = None
    if not raw.exists() or not ran.exists() or ran.read_text(encoding="utf-8") != command:
        raw.unlink(missing_ok=True)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "solver.app.cli", *argv], stdout=subprocess.DEVNULL)
        seconds = round(time.perf_counter() - started, 1)
        if done.returncode != 0 or not raw.exists():
            print(f"bench all: {part.name} failed (exit {done.returncode}): {command}", file=sys.stderr)
            return {"command": command, "seconds": seconds, "error": f"exit {done.returncode}", "figures": {}}
        ran.write_text(command, encoding="utf-8")
    figures = flatten(json.loads(raw.read_text(encoding="utf-8")))
    (out / f"{part.name}.md").write_text(markdown_table(part.title, command, seconds or 0.0, figures), encoding="utf-8")
    return {"command": command, "seconds": seconds, "figures": figures}


def generate(out: Path, per_type: int, seed: int, workers: int, abstract_only: bool = False, size: int = 512) -> str:
    counts = ("--ff", "0", "--basic", "0", "--abstract", str(per_type)) if abstract_only else (
        "--ff", str(per_type), "--basic", str(per_type), "--abstract", str(per_type))
    argv = ["generate", "--out", str(out), *counts, "--seed", str(seed), "--workers", str(workers), "--size", str(size)]
    subprocess.run([sys.executable, "-m", "solver.app.cli", *argv], check=True, stdout=subprocess.DEVNULL)
    return "bongard-solver " + shlex.join(argv)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench all", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the tables, the JSON and the data")
    parser.add_argument("--data", type=Path, default=None, help="official-layout root with dev_ff/dev_bd/dev_hd")
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke check (< 10 min on 2 cores)")
    parser.add_argument("--workers", type=int, default=1, help="processes for generation and the pixel evals")
    parser.add_argument("--only", nargs="+", default=None, help="run only these parts (by name)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.data is not None and not (args.data / "ShapeBongard_V2_split.json").is_file():
        raise SystemExit(f"bench all: {args.data}: no ShapeBongard_V2_split.json (not an official-layout root)")
    out = args.out
    (out / "raw").mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report: dict = {"quick": args.quick, "machine": machine(), "load_before": os.getloadavg(), "parts": {}}
    data = out / ("data_quick" if args.quick else "data")  # apart, so a quick run's commands differ from a full run's
    paths = {"data": str(data), "oracle": str(out / "oracle"), "root": str(args.data), "raw": str(out / "raw")}
    report["generate"] = [generate(data, _counts(args.quick)["per_type"], SEED, args.workers)]
    parts = generated_parts(args.quick, args.workers)
    if not args.quick:
        # oracle runs need no big images: 64 px, the smallest `generate` takes
        report["generate"].append(generate(out / "oracle", 200, ORACLE_SEED, args.workers, abstract_only=True, size=64))
    if args.data is not None:
        parts += official_parts(args.quick, args.workers)
    for part in parts:
        if args.only and part.name not in args.only:
            continue
        print(f"bench all: {part.name} ...", file=sys.stderr, flush=True)
        report["parts"][part.name] = result = run_part(part, paths, out)
        print(f"bench all: {part.name} done ({result['seconds']} s)", file=sys.stderr, flush=True)
    report["load_after"] = os.getloadavg()
    report["seconds"] = round(time.perf_counter() - started, 1)
    previous = out / "figures.json"
    if args.only and previous.is_file():  # the parts not run this time keep their figures
        kept = json.loads(previous.read_text(encoding="utf-8")).get("parts", {})
        report["parts"] = {**{k: v for k, v in kept.items() if k not in report["parts"]}, **report["parts"]}
    previous.write_text(json.dumps(report, indent=1), encoding="utf-8")
    failed = [name for name, r in report["parts"].items() if "error" in r]
    print(f"bench all: {len(report['parts'])} parts in {report['seconds']} s, written to {out}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
