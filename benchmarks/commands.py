"""`bongard-solver bench NAME ...`: runs `benchmarks/NAME.py`, whose `main(argv)` parses its own options.

Every benchmark prints its figures and writes them as JSON with `--json OUT`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import benchmarks


def available() -> list[str]:
    return sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if not m.name.startswith("_") and m.name != "commands"
    )


def run(args: argparse.Namespace) -> int:
    names = available()
    if args.name not in names:
        raise SystemExit(f"bongard-solver bench: unknown benchmark {args.name!r}; available: {', '.join(names)}")
    module = importlib.import_module(f"benchmarks.{args.name}")
    return int(module.main(args.rest) or 0)


def register(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser("bench", help="run a benchmark (render, attributes, decoder, solve, ...)")
    parser.add_argument("name", help="benchmark name: " + ", ".join(available()))
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="options of that benchmark (see NAME --help)")
    parser.set_defaults(func=run)
