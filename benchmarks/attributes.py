"""`bongard-solver bench attributes --json OUT`: computed attributes against the shape table, and category
matching of randomly drawn library shapes.

Agreement: for every library shape and every attribute the table labels 0 or 1, does the attribute computed
from the geometry (`dsl.features.image_features`) say the same? A computed None counts as a disagreement.
Category top-1: every library shape, drawn with random stroke types, a random start point (closed shapes)
and a random tracing direction, is matched against the library (`search.matching.match_shape`); the answer
is right when the top group of names contains the shape (ties among geometrically identical shapes count
as correct).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from tqdm import tqdm

from dsl.canonical import from_travel_form, travel_variants
from dsl.features import image_features
from dsl.library import ATTRIBUTES, load_library
from dsl.options import seed
from dsl.owned import check_output_file, marked_json
from dsl.types import DATASET_STROKE_TYPES, ImageProgram, Shape


def attribute_agreement() -> dict:
    library = load_library()
    hits = {a: 0 for a in ATTRIBUTES}
    totals = {a: 0 for a in ATTRIBUTES}
    disagreements = []
    started = time.perf_counter()
    computed_all = {name: image_features(ImageProgram((e.shape,))).attributes for name, e in library.items()}
    milliseconds = 1000 * (time.perf_counter() - started) / len(library)
    for name, entry in library.items():
        computed = computed_all[name]
        for attribute in ATTRIBUTES:
            table = entry.attributes[attribute]
            if table not in (0, 1):
                continue
            totals[attribute] += 1
            if computed[attribute] == table:
                hits[attribute] += 1
            else:
                disagreements.append(
                    {"shape": name, "attribute": attribute, "table": table, "computed": computed[attribute]}
                )
    per_attribute = {a: hits[a] / totals[a] for a in ATTRIBUTES if totals[a]}
    overall = sum(hits.values()) / max(sum(totals.values()), 1)
    return {
        "agreement_overall": overall,
        "agreement_per_attribute": per_attribute,
        "labelled_pairs": sum(totals.values()),
        "labelled_per_attribute": totals,
        "features_ms_per_image": milliseconds,
        "disagreements": disagreements,
    }


def random_drawing(shape: Shape, rng: random.Random) -> Shape:
    """The same drawing as `shape` with random stroke types, start point (closed shapes), tracing direction
    and first turn (heading)."""
    variant = from_travel_form(rng.choice(travel_variants(shape)))
    first = variant.actions[0].with_turn(rng.uniform(-180.0, 180.0))
    actions = (first,) + variant.actions[1:]
    return Shape(tuple(a.with_stroke(rng.choice(DATASET_STROKE_TYPES)) for a in actions))


def category_accuracy(seed: int = 0) -> dict:
    from search.matching import match_shape

    library = load_library()
    rng = random.Random(seed)
    correct, misses, seconds = 0, [], 0.0
    for name, entry in tqdm(library.items(), desc="matching library shapes", unit="shape"):
        drawn = random_drawing(entry.shape, rng)
        started = time.perf_counter()
        matches = match_shape(drawn, top=3)
        seconds += time.perf_counter() - started
        if matches and name in matches[0].names:
            correct += 1
        else:
            misses.append({"shape": name, "top": [list(m.names) + [round(m.score, 4)] for m in matches]})
    return {
        "category_top1": correct / len(library),
        "category_misses": misses,
        "match_ms_per_shape": 1000 * seconds / len(library),
    }


def print_table(result: dict) -> None:
    print(f"{'attribute':28s} {'agreement':>9s} {'labelled':>8s}")
    for attribute, share in result["agreement_per_attribute"].items():
        print(f"{attribute:28s} {100 * share:8.1f}% {result['labelled_per_attribute'][attribute]:8d}")
    print(f"{'overall':28s} {100 * result['agreement_overall']:8.1f}% {result['labelled_pairs']:8d}")
    print(f"features: {result['features_ms_per_image']:.1f} ms per image")
    if "category_top1" in result:
        print(f"category top-1: {100 * result['category_top1']:.1f}% ({result['match_ms_per_shape']:.0f} ms per match)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bongard-solver bench attributes", description=__doc__)
    parser.add_argument("--json", type=Path, help="write the figures and every disagreement here")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the random drawings for matching")
    parser.add_argument("--no-categories", action="store_true", help="skip the category matching part")
    args = parser.parse_args(argv)
    if args.json:
        check_output_file(args.json, "--json")
    started = time.perf_counter()
    result = attribute_agreement()
    if not args.no_categories:
        result.update(category_accuracy(args.seed))
    result["seconds"] = time.perf_counter() - started
    print_table(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(marked_json(result))
    return 0
