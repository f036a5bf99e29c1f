"""How often the abstract generator's concept can be named at all: the rule match of the exact Bayes posterior.

    bongard-solver bench ceiling [--problems N] [--seed S] [--json OUT]          # simulated problems
    bongard-solver bench ceiling --data ROOT [--records RUN] [--json OUT]       # a root's abstract problems

The abstract generator (spec 3.4) draws one of its 220 concepts, seven distinct library shapes from the concept's
pool for set A, seven for set B from its negative pool (a pair: 3 or 4 from {0, 1}, the rest from {1, 0}), and each
stamped action's stroke type from the types the concept allows. Given the shapes (as true programs show them:
library shapes drawn alike count as one, `dsl.categories.exact_shape_categories`) and the stroke types, the posterior
over the 220 concepts is exact, with their prior uniform: no perception error, no noise, nothing tuned. Its most
probable concept (MAP) names the generator's as often as anything can from the twelve context images; the misses
are concepts whose pools nest, where set A happens to fit the smaller one. The queries' stroke types count as
evidence (the generator draws them the same way under either label, and the solver reads them too); their labels do
not (each query is judged on its own).

Simulated: `--problems` problems, the concept uniform over the 220 (`--concepts singles|pairs|all`): the MAP's rule
match with its Wilson 95 % interval, the queries labelled by the MAP concept, and the concepts most often mistaken.
`--data ROOT`: the same posterior on the root's abstract problems (their true programs); with `--records RUN` (an
`eval` summary of that root: `eval --split hd --json RUN`) it is set beside the solver's rule problem by problem.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np

from dsl.categories import exact_shape_categories
from dsl.generate import (DATASET_STROKE_TYPES, IMAGES_PER_SIDE, abstract_concepts, abstract_strokes,
                          attribute_pool)
from dsl.library import load_library
from dsl.owned import check_output_file
from solver.app.scoring import accuracy_interval

CONTEXT = IMAGES_PER_SIDE - 1  # six context images a side; the seventh is the query
PAIR_SPLITS = (3, 4)  # a pair concept's negatives violating its first attribute: 3 or 4 of 7, even odds (spec 3.4)


class Tables:
    """The library as arrays: each concept's pools over the 627 shapes, and what its stroke types allow."""

    def __init__(self) -> None:
        library = load_library()
        self.names = list(library)
        self.index = {name: k for k, name in enumerate(self.names)}

        def pool(wanted: dict[str, int]) -> np.ndarray:  # the generator's own pool, as a row over the library
            row = np.zeros(len(self.names), bool)
            row[[self.index[name] for name in attribute_pool(wanted)]] = True
            return row

        none = np.zeros(len(self.names), bool)
        self.concepts = [tuple(c) for c in abstract_concepts()]
        self.single = np.array([len(c) == 1 for c in self.concepts])
        self.positive = np.array([pool({a: 1 for a in c}) for c in self.concepts])
        self.first = np.array([pool({c[0]: 0}) if len(c) == 1 else pool({c[0]: 0, c[1]: 1}) for c in self.concepts])
        self.second = np.array([none if len(c) == 1 else pool({c[0]: 1, c[1]: 0}) for c in self.concepts])
        self.stamped = np.array([bool(library[n].if_stamp) for n in self.names])
        self.actions = np.array([len(library[n].shape.actions) for n in self.names])
        self.types = list(DATASET_STROKE_TYPES)
        self.allowed = np.array([[t in abstract_strokes(c) for t in self.types] for c in self.concepts])


@cache
def tables() -> Tables:
    return Tables()


def _ordered_draws(pool: int, k: int) -> float:
    """log of the number of ordered draws of k distinct shapes from a pool of `pool` (-inf when k > pool)."""
    return sum(math.log(pool - i) for i in range(k)) if pool >= k else math.inf


def log_posterior(set_a: list[tuple[int, ...]], set_b: list[tuple[int, ...]],
                  strokes: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Unnormalised log posterior of each of the 220 concepts (uniform prior). `set_a`, `set_b`: the six context
    images of each side, each the library shapes its drawing may be (a tie of shapes drawn alike: any of them);
    `strokes`: (shape index, the stroke types its stamped actions show as a boolean row over DATASET_STROKE_TYPES)
    of every image whose shape may be stamped."""
    t = tables()
    in_a = np.array([t.positive[:, list(ties)].any(1) for ties in set_a]).all(0)
    log_p = np.where(in_a, -np.array([_ordered_draws(int(n), CONTEXT) for n in t.positive.sum(1)]), -np.inf)
    first = np.array([t.first[:, list(ties)].any(1) for ties in set_b])  # images x concepts
    second = np.array([t.second[:, list(ties)].any(1) for ties in set_b])
    sizes_first, sizes_second = t.first.sum(1), t.second.sum(1)
    for c in range(len(t.concepts)):
        if not np.isfinite(log_p[c]):
            continue
        if t.single[c]:
            log_p[c] -= _ordered_draws(int(sizes_first[c]), CONTEXT) if first[:, c].all() else math.inf
            continue
        if not (first[:, c] | second[:, c]).all():  # an image of B in neither group
            log_p[c] = -np.inf
            continue
        n1 = int(first[:, c].sum())
        split = sum(0.5 * math.comb(v, n1) * math.comb(IMAGES_PER_SIDE - v, CONTEXT - n1) for v in PAIR_SPLITS)
        split /= math.comb(IMAGES_PER_SIDE, CONTEXT)
        log_p[c] += (math.log(split) - math.log(math.comb(CONTEXT, n1)) if split > 0 else -math.inf) \
            - _ordered_draws(int(sizes_first[c]), n1) - _ordered_draws(int(sizes_second[c]), CONTEXT - n1)
    per_action = -np.log(t.allowed.sum(1))
    for shape, used in strokes:
        fits = ~(used[None, :] & ~t.allowed).any(1)
        log_p = log_p + np.where(fits, t.actions[shape] * per_action, -np.inf)
    return log_p


def map_concepts(log_p: np.ndarray) -> list[int]:
    """The concepts of highest posterior (several on an exact tie)."""
    return [int(c) for c in np.flatnonzero(log_p == log_p.max())] if np.isfinite(log_p.max()) else []


@cache
def _drawn_ties(shape: int) -> tuple[int, ...]:
    """The library shapes drawn as library shape `shape` is (itself, and any drawn alike)."""
    t = tables()
    names = exact_shape_categories(load_library()[t.names[shape]].shape)
    return tuple(t.index[n] for n in names) or (shape,)


def simulate(problems: int, seed: int, concepts: str = "all") -> dict:
    """`problems` problems drawn as the generator draws them; the MAP concept's rule match and query labels."""
    t = tables()
    rng = np.random.default_rng(seed)
    chosen = [c for c in range(len(t.concepts)) if concepts == "all" or t.single[c] == (concepts == "singles")]
    hits, right_queries, mistaken = 0.0, 0, Counter()
    for _ in range(problems):
        c = chosen[int(rng.integers(len(chosen)))]
        a = rng.choice(np.flatnonzero(t.positive[c]), IMAGES_PER_SIDE, replace=False)
        if t.single[c]:
            b = rng.choice(np.flatnonzero(t.first[c]), IMAGES_PER_SIDE, replace=False)
        else:
            k = PAIR_SPLITS[int(rng.integers(len(PAIR_SPLITS)))]
            b = np.concatenate([rng.choice(np.flatnonzero(t.first[c]), k, replace=False),
                                rng.choice(np.flatnonzero(t.second[c]), IMAGES_PER_SIDE - k, replace=False)])
            b = b[rng.permutation(IMAGES_PER_SIDE)]
        strokes = []
        for shape in np.concatenate([a, b]):
            if t.stamped[shape]:
                used = np.zeros(len(t.types), bool)
                used[rng.choice(np.flatnonzero(t.allowed[c]), t.actions[shape])] = True
                strokes.append((int(shape), used))
        best = map_concepts(log_posterior([_drawn_ties(s) for s in a[:CONTEXT]],
                                          [_drawn_ties(s) for s in b[:CONTEXT]], strokes))
        hits += (c in best) / len(best)
        if c not in best:
            mistaken[(t.concepts[c], t.concepts[best[0]])] += 1
        first = best[0]
        right_queries += int(t.positive[first, a[-1]]) + int(not t.positive[first, b[-1]])
    return {"problems": problems, "seed": seed, "concepts": concepts,
            "rule_match": round(hits / problems, 4), "rule_match_95": accuracy_interval(round(hits), problems),
            "query_accuracy": round(right_queries / (2 * problems), 4),
            "query_accuracy_95": accuracy_interval(right_queries, 2 * problems),
            "mistaken": [{"concept": "-".join(k[0]), "map": "-".join(k[1]), "problems": n}
                         for k, n in mistaken.most_common(15)]}


def _image(program, where: str) -> tuple[tuple[int, ...], tuple[int, np.ndarray] | None]:
    t = tables()
    if len(program.shapes) != 1:
        raise ValueError(f"{where}: {len(program.shapes)} shapes (an abstract image draws one)")
    shape = program.shapes[0]
    ties = tuple(t.index[n] for n in exact_shape_categories(shape) if n in t.index)
    if not ties:
        raise ValueError(f"{where}: not a library shape")
    if not t.stamped[ties[0]]:
        return ties, None
    used = np.zeros(len(t.types), bool)
    for action in shape.actions:
        used[t.types.index(action.stroke)] = True
    return ties, (ties[0], used)


def on_root(root: Path, records: Path | None = None) -> dict:
    """The MAP concept of each abstract problem of `root` (true programs), and beside it the solver's rule."""
    from dsl.dataset import read_programs
    from solver.app.scoring import concept_of

    t = tables()
    ours = {}
    if records is not None:
        from benchmarks.same_records import load_run

        ours = {name: record["rule_match"] for name, record in load_run(records)[0].items()}
    rows = []
    for name, programs in sorted(read_programs(root).items()):
        if not name.startswith("hd_") or (ours and name not in ours):
            continue
        concept = tuple(concept_of(name)[1])
        if concept not in t.concepts:
            raise ValueError(f"{name}: {concept} is none of the generator's 220 concepts")
        images = [_image(p, f"{name}/1/{k}") for k, p in enumerate(programs.positives[:CONTEXT])]
        images += [_image(p, f"{name}/0/{k}") for k, p in enumerate(programs.negatives[:CONTEXT])]
        images += [_image(p, f"{name}/query") for p in (*programs.positives[CONTEXT:], *programs.negatives[CONTEXT:])]
        strokes = [s for _, s in images if s is not None]
        log_p = log_posterior([ties for ties, _ in images[:CONTEXT]], [ties for ties, _ in images[CONTEXT:2 * CONTEXT]],
                              strokes)
        best = map_concepts(log_p)
        c = t.concepts.index(concept)
        row = {"problem": name, "bayes": (c in best) / len(best) if best else 0.0,
               "map": ["-".join(t.concepts[b]) for b in best],
               "nats_behind": round(float(log_p.max() - log_p[c]), 2) if np.isfinite(log_p[c]) else None}
        if ours:
            row["ours"] = bool(ours[name])
        rows.append(row)
    n = len(rows)
    found = {"data": str(root), "problems": n, "rule_match": round(sum(r["bayes"] for r in rows) / n, 4) if n else None}
    if ours:
        found["ours"] = round(sum(r["ours"] for r in rows) / n, 4) if n else None
        table = Counter(f"bayes {'hit' if r['bayes'] == 1 else 'miss'} / ours {'hit' if r['ours'] else 'miss'}"
                        for r in rows)
        found["table"] = dict(sorted(table.items()))
    found["rows"] = [r for r in rows if r["bayes"] < 1 or not r.get("ours", True)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=20000, help="simulated problems (default 20000)")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--concepts", choices=("all", "singles", "pairs"), default="all")
    parser.add_argument("--data", type=Path, default=None, help="a dataset root: its abstract problems instead")
    parser.add_argument("--records", type=Path, default=None, help="an eval summary of --data's hd problems")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.json is not None:
        check_output_file(args.json, "--json")
    if args.records is not None and args.data is None:
        parser.error("--records needs --data")
    if args.problems < 1:
        parser.error("--problems must be at least 1")
    if args.data is None:
        found = simulate(args.problems, args.seed, args.concepts)
        low, high = found["rule_match_95"]
        print(f"exact posterior, {args.problems} simulated abstract problems ({args.concepts} concepts, seed "
              f"{args.seed}): rule match {100 * found['rule_match']:.2f} % [{100 * low:.2f}, {100 * high:.2f}], "
              f"queries by its concept {100 * found['query_accuracy']:.2f} %")
        for row in found["mistaken"][:10]:
            print(f"  {row['problems']:4d}  {row['concept']}  named as  {row['map']}")
    else:
        try:
            found = on_root(args.data, args.records)
        except (OSError, ValueError, KeyError) as error:
            raise SystemExit(f"bench ceiling: {error}") from None
        print(f"exact posterior on {args.data}'s {found['problems']} abstract problems (true programs): rule match "
              f"{100 * found['rule_match']:.2f} %" if found["problems"] else f"{args.data}: no abstract problems")
        if "ours" in found:
            print(f"the solver's rule ({args.records}): {100 * found['ours']:.2f} %; " + ", ".join(
                f"{k}: {v}" for k, v in found["table"].items()))
        for row in found["rows"]:
            named = ("the posterior names it" if row["bayes"] == 1 else
                     f"the posterior names {', '.join(row['map'])} ({row['nats_behind']} nats ahead of it)")
            print(f"  {row['problem']}: {named}"
                  + ("" if "ours" not in row else f"; the solver's rule {'names' if row['ours'] else 'misses'} it"))
    if args.json is not None:
        args.json.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return 0
