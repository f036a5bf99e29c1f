"""`solve_facts`: a Bongard problem given as facts in, the induced rule, the query labels and an explanation out.

The same inducer as for LOGO problems (`solver.induction.optimal.induce_with`, the rule core rule.lp), with literals
made from the problem's own predicates:
  1. candidates: one grounding of solver/encodings/facts_features.lp over the facts (`solver.facts_in.problem`)
     gives every candidate literal, its cost and the images it holds of (as bit masks);
  2. pruning: of the literals that hold of exactly the same images, only the cheapest are kept, and of
     those only one per canonical form (`solver.facts_in.lang`); literals true of every context image go,
     and so do those a cheaper literal dominates (it holds of more of A and of less of B);
  3. induction: rule.lp (the candidates read by facts_rule.lp) picks at most `max_literals` of them:
     the shortest rule counting ERROR_WEIGHT per misclassified context image (the noise term, weighed
     against length rather than first as for LOGO), then the fewest literals; every optimal rule is
     enumerated;
  4. the queries are labelled by the vote of the optimal rules (`solver.induction.vote`), and explained.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import clingo

from dsl.limits import check_count, check_seconds
from solver.solving import Solution
from solver.solving import MAX_RULES_LIMIT, checked_option
from solver.induction import classify
from solver.induction import Role, image_symbol
from solver.facts_in.explain import explain_facts
from solver.facts_in.problem import CHUNK_BITS, FactsProblem, as_problem, bit_atoms, image_bits, write_problem
from solver.facts_in.lang import FactLiteral, make_rule
from solver.induction import DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT, Induction, induce_with, load_encodings
from solver.settings import ERROR_WEIGHT, MAX_ATOMS

FEATURES = ("facts_features.lp",)
MAX_LITERALS = 8  # literals of a rule at most (the default is 2; each one more multiplies the search)
RULE = ("rule.lp", "facts_rule.lp")


@dataclass(frozen=True, slots=True)
class Candidate:
    term: clingo.Symbol  # the literal as the encoding writes it
    cost: int
    masks: tuple[int, ...]  # the images it holds of: per chunk of images, the sum of their bits


def min_support(problem: FactsProblem) -> int:
    """Candidate literals hold of at least half the context images of A: a rule with a literal that holds
    of fewer misclassifies most of A, never the rule of a Bongard problem (pruned for speed)."""
    return max(1, math.ceil(len(problem.context_a) / 2))


def candidates(problem: FactsProblem, max_atoms: int = MAX_ATOMS) -> list[Candidate]:
    """Every candidate literal of the problem (one grounding of facts_features.lp)."""
    control = clingo.Control([f"--const=min_support={min_support(problem)}", f"--const=max_atoms={max_atoms}",
                              "--warn=none"])
    load_encodings(control, FEATURES)
    write_problem(control, problem)
    control.ground([("base", [])])
    chunks = 1 + max(chunk for chunk, _ in image_bits(problem).values())
    masks: dict[clingo.Symbol, list[int]] = {}
    cost: dict[clingo.Symbol, int] = {}
    with control.solve(yield_=True) as handle:
        for model in handle:
            for atom in model.symbols(shown=True):
                if atom.match("mask", 3):
                    literal, chunk, mask = atom.arguments
                    masks.setdefault(literal, [0] * chunks)[chunk.number] = mask.number
                elif atom.match("cost", 2):
                    literal, weight = atom.arguments
                    cost[literal] = weight.number
    return [Candidate(term, cost[term], tuple(masks[term])) for term in cost]


def _as_int(masks: tuple[int, ...]) -> int:
    return sum(mask << (CHUNK_BITS * chunk) for chunk, mask in enumerate(masks))


def side_masks(problem: FactsProblem) -> tuple[int, int]:
    """The context images of A and of B as one number each, a bit per image (as `_as_int` reads masks)."""
    bits = image_bits(problem)
    sides = {Role.A: 0, Role.B: 0}
    for role, index, _ in problem.images():
        if role in sides:
            chunk, bit = bits[image_symbol(role, index)]
            sides[role] |= 1 << (CHUNK_BITS * chunk + bit)
    return sides[Role.A], sides[Role.B]


def _one_per_form(group: list[Candidate]) -> list[Candidate]:
    """The cheapest literals of a group holding of the same images, one per canonical form."""
    cheapest = min(c.cost for c in group)
    group = sorted((c for c in group if c.cost == cheapest), key=lambda c: c.term)
    if len(group) == 1:
        return group
    kept, seen = [], set()
    for candidate in group:
        key = FactLiteral.from_symbol(candidate.term).key
        if key not in seen:
            seen.add(key)
            kept.append(candidate)
    return kept


def _undominated(found: list[tuple[int, int, Candidate]]) -> list[Candidate]:
    """Drop a literal when a cheaper one holds of every image of A it holds of and of no other image of
    B: swapping them in any rule misclassifies no more context images, with a shorter rule."""
    return [candidate for a, b, candidate in found
            if not any(other.cost < candidate.cost and a & other_a == a and other_b & b == other_b
                       for other_a, other_b, other in found)]


def prune(found: list[Candidate], problem: FactsProblem) -> list[Candidate]:
    """Of the literals holding of the same images, the cheapest, one per canonical form (one form holds
    of the same images whatever its term); then none true of every context image (they separate
    nothing), and none a cheaper literal dominates on the context."""
    in_a, in_b = side_masks(problem)
    groups: dict[tuple[int, ...], list[Candidate]] = {}
    for candidate in found:
        groups.setdefault(candidate.masks, []).append(candidate)
    cheapest = []
    for masks, group in groups.items():
        whole = _as_int(masks)
        if whole & (in_a | in_b) != in_a | in_b:
            cheapest += [(whole & in_a, whole & in_b, c) for c in _one_per_form(group)]
    return sorted(_undominated(cheapest), key=lambda c: c.term)


def write_candidates(control: clingo.Control, problem: FactsProblem, kept: list[Candidate]) -> None:
    """The facts facts_rule.lp reads: the images, their bits and the candidates with their masks."""
    atoms = bit_atoms(problem)
    for role, index, _ in problem.images():
        name = image_symbol(role, index)
        membership = {Role.A: "in_a", Role.B: "in_b", Role.QUERY: "query"}[role]
        atoms += [clingo.Function("image", [name]), clingo.Function(membership, [name])]
    for candidate in kept:
        atoms.append(clingo.Function("candidate", [candidate.term, clingo.Number(candidate.cost)]))
        atoms += [clingo.Function("mask", [candidate.term, clingo.Number(chunk), clingo.Number(mask)])
                  for chunk, mask in enumerate(candidate.masks) if mask]
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
                 max_literals: int = 2, max_atoms: int = MAX_ATOMS, error_weight: int = ERROR_WEIGHT) -> Induction:
    start = time.perf_counter()
    kept = prune(candidates(problem, max_atoms), problem)
    remaining = max(0.1, time_limit - (time.perf_counter() - start))
    induction = induce_with(lambda control: write_candidates(control, problem, kept),
                            (len(problem.context_a), len(problem.context_b)), FactLiteral.from_symbol, make_rule,
                            remaining, max_rules, max_literals, RULE, error_weight=error_weight)
    return replace(_distinct_rules(induction), seconds=time.perf_counter() - start)


def solve_facts(
    problem,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_rules: int = DEFAULT_MAX_RULES,
    max_literals: int = 2,
    max_atoms: int = MAX_ATOMS,
) -> Solution:
    """Induce the rule separating A from B, label the queries by the optimal rules, explain.

    `problem`: a `solver.facts_in.problem.FactsProblem`, a dict of the JSON format, or the path of a JSON file
    (see docs/facts.md). `Solution.rule` is a `solver.facts_in.lang.FactRule`; its `asp` is a clingo rule over
    one image's facts that derives `in_a` exactly for the images the rule puts in A.

    The arguments are checked first (`dsl.limits`, as the command line's options are): `time_limit` in
    (0, 86400] seconds, `max_rules` 1 to MAX_RULES_LIMIT, `max_literals` 1 to MAX_LITERALS, `max_atoms` 1 to
    MAX_ATOMS (the facts of one literal's query; the encoding builds no longer ones); a bad one is a SolverError."""
    time_limit = checked_option("time_limit", check_seconds, time_limit)
    max_rules = checked_option("max_rules", check_count, max_rules, 1, MAX_RULES_LIMIT)
    max_literals = checked_option("max_literals", check_count, max_literals, 1, MAX_LITERALS)
    max_atoms = checked_option("max_atoms", check_count, max_atoms, 1, MAX_ATOMS)
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
        "alternatives": [{"rule": a.asp, "english": a.english, "score": round(a.score, 4)}
                         for a in explanation.alternatives],
        "outcome": explanation.outcome,
        "context_errors": explanation.errors,
        "length": explanation.length,
        "modes": [mode.text for mode in problem.modes],
        "seconds": round(explanation.seconds, 4),
        "explanation": explanation.to_dict(),
    }
