"""Bongard problems given as facts: a generator of synthetic problems and the `bench facts` benchmark.

    bongard-solver bench facts [--per-family N] [--seed S] [--noise P] [--out DIR] [--explain DIR] --json OUT

Four families, each problem 6 images of A, 6 of B and two queries (one of A, one of B), in the JSON format
of `solve-facts` (docs/facts.md); every B image (and the B query) is a hard negative: an image of A with
one literal changed, as in Bongard-HOI. A problem in which a rule as simple as the concept separates A
from B by chance (one fact in every image of A and in none of B, or the other way round, or two facts
about one object in every image of A and in none of B) is drawn again.
  hoi         some person does an action to an object of a class: rel(P, ride, O), cls(O, horse);
              negatives: the same object with another action, or the same action on another class
              (with, in some, that action on another class and that class under another action)
  attributes  some object has two attribute values at once: color(X, red), shape(X, cube); negatives:
              that object with one value changed, beside objects with each value alone
  tools       a tool with a function (tools of many classes share it, and no other function is shared
              by all of them) is there, or none is; negatives: the tool swapped for one of the same
              material without the function, or (for "none") a tool with it added
  counts      exactly N objects of a class; negatives: one object of that class more or fewer
With `--noise P` a share P of the context images each lose one fact (a missed detection).
Reported per family: query accuracy, rule_match (the induced rule, in canonical form, is the concept
itself), why_names_concept (of the negatives the rule rejects, the share whose `why` names as failing
only the concept's literal) and seconds per problem (median, mean, and the median of the process's CPU seconds, which other
work on the machine does not inflate); written as JSON with `--json OUT`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import clingo
from tqdm import tqdm

from dsl.dataset import atomic_write_text
from dsl.owned import check_output_folder
from solver.facts_in.lang import FactLiteral
from solver.facts_in.problem import problem_from_dict
from solver.facts_in.report import write_facts_report
from solver.facts_in.solve import solution_record, solve_facts

ACTIONS = ("ride", "feed", "hold", "wash", "push", "pet", "carry", "kick", "throw", "hug", "walk", "board")
THINGS = ("horse", "bike", "dog", "cat", "ball", "boat", "car", "elephant", "umbrella", "skateboard", "cup", "kite")
ATTRIBUTES = {
    "color": ("red", "blue", "green", "yellow", "black", "white"),
    "shape": ("cube", "sphere", "cylinder", "cone", "torus"),
    "size": ("small", "medium", "large"),
    "material": ("metal", "rubber", "wood", "glass"),
}
TOOLS = {  # class -> (material, functions)
    "knife": ("metal", ("cut",)), "scissors": ("metal", ("cut",)), "saw": ("metal", ("cut",)),
    "axe": ("wood", ("cut", "pound")), "hammer": ("metal", ("pound",)), "mallet": ("wood", ("pound",)),
    "rock": ("stone", ("pound",)), "screwdriver": ("metal", ("turn", "pry")), "wrench": ("metal", ("turn",)),
    "crowbar": ("metal", ("pry",)), "spoon": ("metal", ("scoop",)), "ladle": ("metal", ("scoop", "pour")),
    "shovel": ("wood", ("scoop", "dig")), "cup": ("glass", ("contain", "pour")), "bowl": ("wood", ("contain",)),
    "pitcher": ("glass", ("pour", "contain")), "brush": ("wood", ("sweep",)), "broom": ("wood", ("sweep",)),
    "rake": ("wood", ("dig", "sweep")), "trowel": ("metal", ("dig", "scoop")), "stick": ("wood", ("pry",)),
    "vase": ("glass", ("contain",)), "bottle": ("glass", ("contain", "pour")), "pliers": ("metal", ("turn", "cut")),
}
CLASSES = ("dog", "cat", "bird", "car", "tree", "chair", "cup", "ball", "book", "lamp")
FAMILIES = ("hoi", "attributes", "tools", "counts")
CONTEXT = 6

Image = list[str]
Maker = Callable[[random.Random], Image]


def _image(objects: list[dict], relations: list[tuple[int, str, int]]) -> Image:
    """Facts of objects given as {predicate: value} and relations (subject index, action, object index)."""
    facts = []
    for k, obj in enumerate(objects, 1):
        facts.append(f"obj(o{k})")
        facts += [f"{name}(o{k},{value})" for name, value in obj.items()]
    facts += [f"rel(o{s + 1},{action},o{o + 1})" for s, action, o in relations]
    return facts


def _shuffled(rng: random.Random, image: Image) -> Image:
    return rng.sample(image, len(image))


def _problem(rng: random.Random, positive: Maker, negative: Maker) -> tuple[list[Image], list[Image], list[Image]]:
    a = [_shuffled(rng, positive(rng)) for _ in range(CONTEXT + 1)]
    b = [_shuffled(rng, negative(rng)) for _ in range(CONTEXT + 1)]
    return a[:CONTEXT], b[:CONTEXT], [a[CONTEXT], b[CONTEXT]]


def _pattern(fact: str, objects: set[str], named: str | None = None) -> str:
    """The fact with its objects left out (`_`), but for `named`, written X."""
    name, _, rest = fact.partition("(")
    args = rest[:-1].split(",") if rest else []
    return f"{name}({','.join('X' if a == named else '_' if a in objects else a for a in args)})"


def _patterns(image: Image) -> tuple[set[str], set[str]]:
    """What rules as simple as a concept can see of an image: its facts with their objects left out,
    and the pairs of facts about one object ('color(X,red) & shape(X,cube)')."""
    objects = {fact[4:-1] for fact in image if fact.startswith("obj(")}
    singles = {_pattern(fact, objects) for fact in image}
    pairs = set()
    for named in objects:
        about = sorted({_pattern(f, objects, named) for f in image if named in f[:-1].split("(", 1)[-1].split(",")}
                       - {"obj(X)"})
        pairs.update(f"{x} & {y}" for k, x in enumerate(about) for y in about[k + 1:])
    return singles, pairs


def _refines(pair: str, allowed: frozenset[str]) -> bool:
    """A pair of facts one of which is an allowed fact (a concept of one fact): a longer rule than it."""
    return any(part.replace("(X,", "(_,").replace(",X)", ",_)").replace("(X)", "(_)") in allowed
               for part in pair.split(" & "))


def _well_posed(build: Callable[[], tuple], allowed: frozenset[str] = frozenset(), attempts: int = 10_000):
    """Sides from `build` in which no rule as simple as the concept but the `allowed` ones (the concept's
    own) separates A from B: no fact in every image of A and in none of B or the other way round, no
    pair of facts about one object in every image of A and in none of B (a problem's author sees to it
    that the concept is the simplest rule)."""
    for _ in range(attempts):
        a, b, queries = build()
        in_a, in_b = [_patterns(image) for image in a], [_patterns(image) for image in b]
        singles = set.intersection(*(p[0] for p in in_a)) - set.union(*(p[0] for p in in_b))
        singles |= set.intersection(*(p[0] for p in in_b)) - set.union(*(p[0] for p in in_a))
        pairs = set.intersection(*(p[1] for p in in_a)) - set.union(*(p[1] for p in in_b))
        if singles <= allowed and all(pair in allowed or _refines(pair, allowed) for pair in pairs):
            return a, b, queries
    raise RuntimeError(f"no well-posed problem in {attempts} attempts")


# hoi ----------------------------------------------------------------------------------------------

def _hoi_scene(rng: random.Random, action: str, thing: str, twist: str | None) -> Image:
    """A person doing `action` to a `thing` (or, with twist 'action'/'thing', one literal changed), and
    one or two other interactions that are not the concept."""
    objects, relations = [{"cls": "person"}], []
    main_action = rng.choice([a for a in ACTIONS if a != action]) if twist == "action" else action
    main_thing = rng.choice([t for t in THINGS if t != thing]) if twist == "thing" else thing
    objects.append({"cls": main_thing})
    relations.append((0, main_action, 1))
    for _ in range(rng.randint(1, 2)):
        if twist and rng.random() < 0.6:  # the concept's action and class, apart
            other = (rng.choice([a for a in ACTIONS if a != action]), thing) if twist == "thing" else \
                (action, rng.choice([t for t in THINGS if t != thing]))
        else:
            other = (rng.choice(ACTIONS), rng.choice([t for t in THINGS if t != thing]))
        objects.append({"cls": other[1]})
        relations.append((0, other[0], len(objects) - 1))
    if rng.random() < 0.3:
        objects.append({"cls": "person"})
    return _image(objects, relations)


def hoi(rng: random.Random):
    action, thing = rng.choice(ACTIONS), rng.choice(THINGS)
    concept = f"exists(r(t(rel,(self,c({action}),link)),t(cls,(self,c({thing})))))"
    sides = _well_posed(lambda: _problem(rng, lambda r: _hoi_scene(r, action, thing, None),
                                         lambda r: _hoi_scene(r, action, thing, r.choice(("action", "thing")))),
                        frozenset({f"cls(X,{thing}) & rel(_,{action},X)"}))
    return f"hoi_{action}_{thing}", [concept], sides


# attributes ---------------------------------------------------------------------------------------

def _random_object(rng: random.Random, names: tuple[str, ...]) -> dict:
    return {name: rng.choice(ATTRIBUTES[name]) for name in names}


def _targets(rng: random.Random, wanted: dict, names: tuple[str, ...]) -> list[dict]:
    """The objects of the concept in the images of one side: in their other attributes, no value is
    shared by all of them (else that value and one of the concept's would separate A from B as well)."""
    while True:
        targets = [_random_object(rng, names) | wanted for _ in range(CONTEXT + 1)]
        if all(len({t[n] for t in targets[:CONTEXT]}) > 1 for n in names if n not in wanted):
            return targets


def _attribute_scene(rng: random.Random, wanted: dict, names: tuple[str, ...], twist: str | None,
                     target: dict) -> Image:
    target = dict(target)
    if twist:
        target[twist] = rng.choice([v for v in ATTRIBUTES[twist] if v != wanted[twist]])
    objects = [target]
    for name, value in wanted.items():  # each wanted value alone, on another object
        if rng.random() < (0.7 if twist else 0.4):
            other = _random_object(rng, names) | {name: value}
            for second in wanted:
                if second != name and other[second] == wanted[second]:
                    other[second] = rng.choice([v for v in ATTRIBUTES[second] if v != wanted[second]])
            objects.append(other)
    while len(objects) < rng.randint(2, 4):
        other = _random_object(rng, names)
        if any(other[n] != v for n, v in wanted.items()):
            objects.append(other)
    return _image(rng.sample(objects, len(objects)), [])


def attributes(rng: random.Random):
    first, second = rng.sample(sorted(ATTRIBUTES), 2)
    wanted = {first: rng.choice(ATTRIBUTES[first]), second: rng.choice(ATTRIBUTES[second])}
    names = tuple(sorted(ATTRIBUTES))
    views = sorted(f"t({n},(self,c({v})))" for n, v in wanted.items())
    concept = f"exists(and({views[0]},{views[1]}))"

    def build():
        positives, negatives = iter(_targets(rng, wanted, names)), iter(_targets(rng, wanted, names))
        return _problem(rng, lambda r: _attribute_scene(r, wanted, names, None, next(positives)),
                        lambda r: _attribute_scene(r, wanted, names, r.choice(sorted(wanted)), next(negatives)))

    sides = _well_posed(build, frozenset({" & ".join(sorted(f"{n}(X,{v})" for n, v in wanted.items()))}))
    return f"attributes_{'_'.join(wanted.values())}", [concept], sides


# tools --------------------------------------------------------------------------------------------

def _tool(name: str) -> dict:
    material, functions = TOOLS[name]
    return {"cls": name, "material": material, "function": functions}


def _tool_image(tools: list[str]) -> Image:
    facts = []
    for k, name in enumerate(tools, 1):
        tool = _tool(name)
        facts += [f"obj(o{k})", f"cls(o{k},{name})", f"material(o{k},{tool['material']})"]
        facts += [f"function(o{k},{f})" for f in tool["function"]]
    return facts


def _tools_with(rng: random.Random, function: str, number: int) -> list[str]:
    """`number` tools with the function, chosen so that it is the only function they all have (the
    context shows which function is meant, as a problem's author makes sure)."""
    with_it = [t for t in TOOLS if function in TOOLS[t][1]]
    while True:
        chosen = [rng.choice(with_it) for _ in range(number)]
        if set.intersection(*(set(TOOLS[t][1]) for t in chosen)) == {function}:
            return chosen


def _tool_scene(rng: random.Random, function: str, present: bool, twist: bool, main: str) -> Image:
    """Tools without the function, and `main` (which has it) if `present`; with `twist`, one literal
    away: `main` swapped for a tool of its material without the function, or (not `present`) added."""
    without = [t for t in TOOLS if function not in TOOLS[t][1]]
    tools = rng.sample(without, rng.randint(1, 2))
    if present and twist:
        same = [t for t in without if TOOLS[t][0] == TOOLS[main][0]] or without
        tools.append(rng.choice(same))
    elif present or twist:
        tools.append(main)
    return _tool_image(rng.sample(tools, len(tools)))


def tools(rng: random.Random):
    function = rng.choice(sorted({f for _, fs in TOOLS.values() for f in fs} - {"dig", "sweep"}))
    present = rng.random() < 0.6
    view = f"exists(t(function,(self,c({function}))))"
    concept = view if present else f"neg({view})"

    def build():
        positives, negatives = iter(_tools_with(rng, function, CONTEXT + 1)), iter(_tools_with(rng, function, CONTEXT + 1))
        return _problem(rng, lambda r: _tool_scene(r, function, present, False, next(positives)),
                        lambda r: _tool_scene(r, function, present, True, next(negatives)))

    sides = _well_posed(build, frozenset({f"function(_,{function})"}))
    return f"tools_{'' if present else 'no_'}{function}", [concept], sides


# counts -------------------------------------------------------------------------------------------

def _count_scene(rng: random.Random, cls: str, number: int, twist: bool) -> Image:
    if twist:
        number += rng.choice((-1, 1))
    others = [rng.choice([c for c in CLASSES if c != cls]) for _ in range(rng.randint(0, 4))]
    objects = [{"cls": c, "color": rng.choice(ATTRIBUTES["color"])} for c in [cls] * number + others]
    return _image(rng.sample(objects, len(objects)), [])


def counts(rng: random.Random):
    cls, number = rng.choice(CLASSES), rng.randint(2, 5)
    concept = f"count(t(cls,(self,c({cls}))),eq,{number})"
    sides = _well_posed(lambda: _problem(rng, lambda r: _count_scene(r, cls, number, False),
                                         lambda r: _count_scene(r, cls, number, True)))
    return f"counts_{number}_{cls}", [concept], sides


GENERATORS = {"hoi": hoi, "attributes": attributes, "tools": tools, "counts": counts}


def generate_problem(family: str, rng: random.Random) -> tuple[dict, list[str]]:
    """One problem of the family in the JSON format (queries: one of A, then one of B), and its concept as
    literal terms of solver/encodings/facts_features.lp."""
    name, concept, (a, b, queries) = GENERATORS[family](rng)
    return {"name": name, "A": a, "B": b, "queries": queries}, concept


def with_noise(problem: dict, rng: random.Random, share: float) -> dict:
    """A share of the context images each lose one fact (not an object declaration), as a detector
    misses one: an image of A may then lack the concept (the noise term of the objective pays for it)."""
    noisy = dict(problem)
    for side in ("A", "B"):
        images = []
        for image in problem[side]:
            facts = [f for f in image if not f.startswith("obj(")]
            if facts and rng.random() < share:
                dropped = rng.choice(facts)
                image = [f for f in image if f != dropped]
            images.append(image)
        noisy[side] = images
    return noisy


def concept_key(concept: list[str]) -> tuple:
    """The canonical form of a concept's literals (as `solver.facts_in.lang.FactRule.key`)."""
    return tuple(sorted(FactLiteral.from_symbol(clingo.parse_term(term)).key for term in concept))


def why_names_concept(solution, concept: list[str]) -> tuple[int, int]:
    """Of the negatives the rule puts out of A (set B and the negative query), how many have a `why`
    whose failing literals are all the concept's own; and how many there are."""
    concept_literals = {FactLiteral.from_symbol(clingo.parse_term(term)).asp for term in concept}
    rejected = [e for e in solution.explanation.evidence if e.image.startswith("b(") or e.image == "q(1)"]
    rejected = [e for e in rejected if not e.in_a and e.why is not None]
    named = sum(bool(e.why.failing) and {f.literal for f in e.why.failing} <= concept_literals for e in rejected)
    return named, len(rejected)


def run_problem(problem: dict, concept: list[str], family: str, explain: str | None = None) -> dict:
    """Solve one problem and score it; with `explain`, write its report there (every image's why)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    solution = solve_facts(problem)
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    if explain:
        loaded = problem_from_dict(problem)
        write_facts_report(explain, loaded, solution_record(loaded, solution))
    truth = [True, False]
    named, rejected = why_names_concept(solution, concept)
    return {"name": problem["name"], "family": family, "rule": solution.rule.asp if solution.rule else None,
            "english": solution.explanation.english, "labels": list(solution.labels),
            "correct": sum(p == t for p, t in zip(solution.labels, truth)),
            "rule_match": solution.rule is not None and solution.rule.key == concept_key(concept),
            "alternatives": len(solution.induction.rules) - 1 if solution.induction else 0,
            "outcome": solution.explanation.outcome, "why_concept": named, "why_rejected": rejected,
            "seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4)}


def summary(records: list[dict]) -> dict:
    seconds = [r["seconds"] for r in records]
    return {"problems": len(records), "queries": 2 * len(records),
            "accuracy": round(sum(r["correct"] for r in records) / (2 * len(records)), 4),
            "rule_match": round(sum(r["rule_match"] for r in records) / len(records), 4),
            "why_names_concept": round(sum(r["why_concept"] for r in records)
                                       / max(1, sum(r["why_rejected"] for r in records)), 4),
            "median_seconds": round(statistics.median(seconds), 4), "mean_seconds": round(statistics.mean(seconds), 4),
            "max_seconds": round(max(seconds), 4),
            "median_cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in records), 4)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bongard-solver bench facts", description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=60, help="problems per family (4 families)")
    parser.add_argument("--seed", type=int, default=None, help="generator seed (default: a fresh one)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families")
    parser.add_argument("--noise", type=float, default=0.0, help="share of context images that lose one fact")
    parser.add_argument("--out", default=None, help="also write the problems here, one JSON file each")
    parser.add_argument("--explain", default=None, metavar="DIR",
                        help="also write each problem's report here (HTML + JSON, every image's why)")
    parser.add_argument("--json", default=None, help="write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    families = [f for f in args.families.split(",") if f]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise SystemExit(f"bench facts: unknown families {unknown}; known: {', '.join(FAMILIES)}")
    if args.explain:
        check_output_folder(args.explain, "--explain")
    jobs = [(family, *generate_problem(family, rng)) for family in families for _ in range(args.per_family)]
    if args.noise:
        jobs = [(family, with_noise(problem, rng, args.noise), concept) for family, problem, concept in jobs]
    records = []
    for k, (family, problem, concept) in enumerate(tqdm(jobs, desc="bench facts", unit="problem")):
        problem["name"] = f"{problem['name']}_{k:04d}"
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            atomic_write_text(Path(args.out) / f"{problem['name']}.json", json.dumps(problem, indent=1))
        records.append(run_problem(problem, concept, family, args.explain))
    figures = {"seed": seed, "noise": args.noise, "all": summary(records),
               "families": {f: summary([r for r in records if r["family"] == f]) for f in families}}
    for name, figure in [("all", figures["all"]), *figures["families"].items()]:
        print(f"{name:11} {figure['problems']:4} problems  accuracy {figure['accuracy']:.4f}  rule_match "
              f"{figure['rule_match']:.4f}  why {figure['why_names_concept']:.4f}  median {figure['median_seconds']:.3f} s (cpu {figure['median_cpu_seconds']:.3f} s)  "
              f"mean {figure['mean_seconds']:.3f} s")
    print(f"seed {seed}")
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(dict(figures, problems=records), indent=1))
        print(f"written: {args.json}")
    return 0
