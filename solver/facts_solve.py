"""`solve_facts`: a Bongard problem given as facts in, the induced rule, the query labels and an explanation out.

The same inducer as for LOGO problems (`solver.induce.induce_with`, the rule core rule.lp), with literals
made from the problem's own predicates:
  1. candidates: one grounding of solver/encodings/facts_features.lp over the facts (`solver.facts_in`)
     gives every candidate literal, its cost and the images it holds of;
  2. pruning: of the literals that hold of exactly the same images, only the cheapest are kept, and of
     those only one per canonical form (`solver.facts_lang`); literals true of every context image go;
  3. induction: rule.lp picks at most `max_literals` of them: fewest misclassified context images (the
     noise term), then the shortest rule, then the fewest literals; every optimal rule is enumerated;
  4. the queries are labelled by the vote of the optimal rules (`solver.classify`), and explained.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import clingo

from solver.api import Solution
from solver.classify import classify
from solver.facts import Role, image_symbol
from solver.facts_explain import explain_facts
from solver.facts_in import FactsProblem, as_problem, write_problem
from solver.facts_lang import FactLiteral, make_rule
from solver.induce import DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT, Induction, induce_with, load_encodings

FEATURES = ("facts_features.lp",)
RULE = ("rule.lp",)
MAX_ATOMS = 3  # facts in one literal's conjunction at most


@dataclass(frozen=True, slots=True)
class Candidate:
    term: clingo.Symbol  # the literal as the encoding writes it
    cost: int
    holds: frozenset[clingo.Symbol]  # the images (ASP names) it holds of


def min_support(problem: FactsProblem) -> int:
    """Candidate literals hold of at least half the context images of A (a rule of a literal holding of
    fewer misclassifies more of A than the empty rule of B)."""
    return max(1, math.ceil(len(problem.context_a) / 2))


def candidates(problem: FactsProblem, max_atoms: int = MAX_ATOMS) -> list[Candidate]:
    """Every candidate literal of the problem (one grounding of facts_features.lp)."""
    control = clingo.Control([f"--const=min_support={min_support(problem)}", f"--const=max_atoms={max_atoms}",
                              "--warn=none"])
    load_encodings(control, FEATURES)
    write_problem(control, problem)
    control.ground([("base", [])])
    holds: dict[clingo.Symbol, set[clingo.Symbol]] = {}
    cost: dict[clingo.Symbol, int] = {}
    with control.solve(yield_=True) as handle:
        for model in handle:
            for atom in model.symbols(shown=True):
                if atom.name == "holds":
                    holds.setdefault(atom.arguments[0], set()).add(atom.arguments[1])
                elif atom.name == "cost":
                    cost[atom.arguments[0]] = atom.arguments[1].number
    return [Candidate(term, cost[term], frozenset(holds.get(term, ()))) for term in cost]


def prune(found: list[Candidate], problem: FactsProblem) -> list[Candidate]:
    """The cheapest literals of each set of images held of, one per canonical form; none true of every
    context image (they separate nothing)."""
    context = {image_symbol(role, index) for role, index, _ in problem.images() if role is not Role.QUERY}
    cheapest: dict[frozenset, int] = {}
    for candidate in found:
        cheapest[candidate.holds] = min(candidate.cost, cheapest.get(candidate.holds, candidate.cost))
    kept, seen = [], set()
    for candidate in sorted(found, key=lambda c: str(c.term)):
        if candidate.cost > cheapest[candidate.holds] or context <= candidate.holds:
            continue
        key = FactLiteral.from_symbol(candidate.term).key
        if key not in seen:
            seen.add(key)
            kept.append(candidate)
    return kept


def write_candidates(control: clingo.Control, problem: FactsProblem, kept: list[Candidate]) -> None:
    """The facts rule.lp reads: the images, and per literal lit/1, holds/2, cost/2 and info/2 (-1: of
    two equally short rules, the one of fewer literals is preferred)."""
    atoms = []
    for role, index, _ in problem.images():
        name = image_symbol(role, index)
        membership = {Role.A: "in_a", Role.B: "in_b", Role.QUERY: "query"}[role]
        atoms += [clingo.Function("image", [name]), clingo.Function(membership, [name])]
    for candidate in kept:
        atoms += [clingo.Function("lit", [candidate.term]),
                  clingo.Function("cost", [candidate.term, clingo.Number(candidate.cost)]),
                  clingo.Function("info", [candidate.term, clingo.Number(-1)])]
        atoms += [clingo.Function("holds", [candidate.term, image]) for image in sorted(candidate.holds)]
    with control.backend() as backend:
        for atom in atoms:
            backend.add_rule([backend.add_atom(atom)])


def _distinct_rules(induction: Induction) -> Induction:
    seen, rules = set(), []
    for induced in induction.rules:
        if induced.rule.key not in seen:
            seen.add(induced.rule.key)
            rules.append(induced)
    return replace(induction, rules=tuple(rules))


def induce_facts(problem: FactsProblem, time_limit: float = DEFAULT_TIME_LIMIT, max_rules: int = DEFAULT_MAX_RULES,
                 max_literals: int = 2, max_atoms: int = MAX_ATOMS) -> Induction:
    start = time.perf_counter()
    kept = prune(candidates(problem, max_atoms), problem)
    remaining = max(0.1, time_limit - (time.perf_counter() - start))
    induction = induce_with(lambda control: write_candidates(control, problem, kept),
                            (len(problem.context_a), len(problem.context_b)), FactLiteral.from_symbol, make_rule,
                            remaining, max_rules, max_literals, RULE)
    return replace(_distinct_rules(induction), seconds=time.perf_counter() - start)


def solve_facts(
    problem,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_rules: int = DEFAULT_MAX_RULES,
    max_literals: int = 2,
    max_atoms: int = MAX_ATOMS,
) -> Solution:
    """Induce the rule separating A from B, label the queries by the optimal rules, explain.

    `problem`: a `solver.facts_in.FactsProblem`, a dict of the JSON format, or the path of a JSON file
    (see docs/facts.md). `Solution.rule` is a `solver.facts_lang.FactRule`; its `asp` is a clingo rule over
    one image's facts that derives `in_a` exactly for the images the rule puts in A."""
    problem = as_problem(problem)
    induction = induce_facts(problem, time_limit, max_rules, max_literals, max_atoms)
    queries = [(Role.QUERY.value, index) for index in range(len(problem.queries))]
    votes = classify(induction, queries)
    return Solution(
        rule=induction.rules[0].rule if induction.rules else None,
        labels=tuple(v.in_a for v in votes),
        confidence=tuple(v.confidence for v in votes),
        explanation=explain_facts(induction, problem),
        induction=induction,
    )


def solution_record(problem: FactsProblem, solution: Solution) -> dict:
    """The JSON output of `solve-facts`: rule (ASP), english, labels, confidence, alternatives, and more."""
    explanation = solution.explanation
    return {
        "name": problem.name,
        "rule": solution.rule.asp if solution.rule else None,
        "english": explanation.english,
        "labels": list(solution.labels),
        "confidence": [round(c, 4) for c in solution.confidence],
        "alternatives": [{"rule": asp, "english": english} for asp, english in explanation.alternatives],
        "outcome": explanation.outcome,
        "context_errors": explanation.errors,
        "length": explanation.length,
        "modes": [mode.text for mode in problem.modes],
        "seconds": round(explanation.seconds, 4),
        "explanation": explanation.to_dict(),
    }
