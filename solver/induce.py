"""Rule induction: one clingo run per problem over the whole rule language.

The encodings (package data) are the rule core `rule.lp`, one file per family of literals and the
specificity prior `prior.lp`. Facts come from `solver.facts` (`induce`), or from any writer with its own
literal encodings (`induce_with`: problems given as facts, `solver.facts_solve`). Clingo optimises (fewest misclassified
context images, then the shortest rule, then the most specific one) and, with opt-mode=optN,
enumerates every optimal rule. A time limit stops the search; the outcome
says whether the rules returned are proven optimal. With `all_fitting` only the first priority counts,
so every rule that misclassifies the fewest context images is returned (for `solver.posterior`).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources

import clingo

from solver.facts import ProblemFacts, Role, write_facts
from solver.rules import Literal, Rule
from solver.settings import DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT

ENCODINGS: tuple[str, ...] = ("rule.lp", "sequence.lp", "category.lp", "attribute.lp", "count.lp", "prior.lp",
                               "family.lp")
ABSTRACT_ENCODINGS: tuple[str, ...] = ("rule.lp", "attribute.lp", "count.lp", "prior.lp", "family.lp")
LOG = logging.getLogger(__name__)


class Outcome(enum.Enum):
    OPTIMAL = "optimal"  # the rules are all optimal rules (or the first max_rules of them)
    TIME_LIMIT = "time_limit"  # the limit was hit: the best rules found so far (maybe not optimal, or not all)
    NO_RULE = "no_rule"  # the limit was hit before any rule was found


@dataclass(frozen=True, slots=True)
class InducedRule:
    """One optimal rule with the images it covers and, per image, the rule's literals true of it."""

    rule: Rule
    cost: tuple[int, ...]
    covered: frozenset[tuple[str, int]]  # (role value, index) of every image the rule puts in A
    evidence: dict[tuple[str, int], frozenset[Literal]]


@dataclass(frozen=True, slots=True)
class Induction:
    outcome: Outcome
    rules: tuple[InducedRule, ...]  # best first (see Rule.sort_key)
    cost: tuple[int, ...]  # (misclassified context images, rule length, family rank)
    seconds: float
    weights: tuple[float, ...] | None = None  # posterior of each rule (solver.posterior); None = equal votes


def python_value(symbol: clingo.Symbol):
    """The one conversion of clingo symbols to Python: numbers -> int, strings -> str,
    constants -> str, functions and tuples -> (name, *arguments) / (*arguments)."""
    if symbol.type is clingo.SymbolType.Number:
        return symbol.number
    if symbol.type is clingo.SymbolType.String:
        return symbol.string
    if symbol.type is clingo.SymbolType.Function:
        if not symbol.arguments:
            return symbol.name
        arguments = tuple(python_value(a) for a in symbol.arguments)
        return (symbol.name, *arguments) if symbol.name else arguments
    raise TypeError(f"cannot convert clingo symbol {symbol}")


def load_encodings(control: clingo.Control, names: tuple[str, ...] = ENCODINGS) -> None:
    root = resources.files("solver").joinpath("encodings")
    for name in names:
        control.add("base", [], root.joinpath(name).read_text(encoding="utf-8"))


def _read_model(model: clingo.Model, literal: Callable, make_rule: Callable) -> tuple[tuple[int, ...], InducedRule]:
    used, covered, evidence, lengths = [], set(), {}, 0
    for atom in model.symbols(shown=True):
        if atom.name == "use":
            used.append(literal(atom.arguments[0]))
        elif atom.name == "covers":
            covered.add(python_value(atom.arguments[0]))
        elif atom.name == "evidence":
            evidence.setdefault(python_value(atom.arguments[1]), set()).add(literal(atom.arguments[0]))
        elif atom.name == "length":
            lengths += atom.arguments[1].number
    cost = tuple(model.cost)
    errors, length = cost[0] if cost else 0, lengths
    rule = make_rule(tuple(sorted(used, key=lambda lit: lit.sort_key)), errors, length)
    frozen_evidence = {image: frozenset(lits) for image, lits in evidence.items()}
    return cost, InducedRule(rule, cost, frozenset(covered), frozen_evidence)


def _logo_literal(symbol: clingo.Symbol) -> Literal:
    return Literal.from_term(python_value(symbol))


def _logo_rule(literals: tuple[Literal, ...], errors: int, length: int) -> Rule:
    return Rule(literals, errors=errors, length=length)


def induce(
    facts: ProblemFacts,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_rules: int = DEFAULT_MAX_RULES,
    max_literals: int = 2,
    encodings: tuple[str, ...] = ENCODINGS,
    all_fitting: bool = False,
    max_errors: int | None = None,
) -> Induction:
    """Find every optimal rule separating the context images of A from those of B (with `all_fitting`,
    every rule with the fewest misclassified context images, whatever its length; with `max_errors` as
    well, every rule that misclassifies at most that many context images)."""
    return induce_with(lambda control: write_facts(control, facts), (len(facts.context_a), len(facts.context_b)),
                       _logo_literal, _logo_rule, time_limit, max_rules, max_literals, encodings, all_fitting,
                       max_errors)


def induce_with(
    write: Callable[[clingo.Control], object],
    context: tuple[int, int],
    literal: Callable[[clingo.Symbol], object],
    make_rule: Callable[[tuple, int, int], object],
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_rules: int = DEFAULT_MAX_RULES,
    max_literals: int = 2,
    encodings: tuple[str, ...] = ENCODINGS,
    all_fitting: bool = False,
    max_errors: int | None = None,
    error_weight: int = 0,
) -> Induction:
    """The inducer, whatever the facts: `write` adds the facts the `encodings` read (rule.lp and the
    encodings that define its candidate literals) to a clingo control; `context` = the number of context
    images of A and of B; `literal` reads a literal term of a model, `make_rule(literals, errors, length)`
    makes a rule of them (`solver.rules` for LOGO problems, `solver.facts_lang` for problems given as facts).
    `error_weight` > 0: a misclassified context image costs that much rule length instead of coming first
    (rule.lp)."""
    start = time.perf_counter()
    enumerate_all = all_fitting and max_errors is not None
    arguments = ["--opt-mode=ignore" if enumerate_all else "--opt-mode=optN", f"--models={max_rules}",
                 f"--const=max_literals={max_literals}", f"--const=all_fitting={int(all_fitting)}",
                 f"--const=max_errors={max_errors if enumerate_all else -1}", f"--const=error_weight={error_weight}"]
    control = clingo.Control(arguments, logger=lambda code, message: LOG.debug("clingo %s: %s", code, message))
    load_encodings(control, encodings)
    write(control)
    control.ground([("base", [])])

    best: dict[tuple[int, ...], list[InducedRule]] = {}
    proven: list[InducedRule] = []

    def on_model(model: clingo.Model) -> None:
        cost, induced = _read_model(model, literal, make_rule)
        if error_weight:
            induced = replace(induced, rule=replace(induced.rule, errors=_errors(induced.covered, context)))
        elif cost and cost[0] != (errors := _errors(induced.covered, context)):  # family.lp charges the first level too
            induced = replace(induced, rule=replace(induced.rule, errors=errors), cost=(errors, *cost[1:]))
        if enumerate_all:
            induced = _with_errors(induced, context)
            proven.append(induced)
        elif model.optimality_proven:
            proven.append(induced)
        else:
            best.setdefault(cost, []).append(induced)

    remaining = max(0.0, time_limit - (time.perf_counter() - start))
    with control.solve(on_model=on_model, async_=True) as handle:
        finished = handle.wait(remaining)
        if not finished:
            handle.cancel()
        handle.get()

    if proven:
        outcome, rules = Outcome.OPTIMAL if finished else Outcome.TIME_LIMIT, proven
    elif best:
        outcome, rules = Outcome.TIME_LIMIT, best[min(best)]
    else:
        outcome, rules = Outcome.NO_RULE, []
    rules = _distinct(sorted(rules, key=lambda r: (r.cost, r.rule.sort_key) if enumerate_all else r.rule.sort_key))
    cost = rules[0].cost if rules else ()
    return Induction(outcome, tuple(rules), cost, time.perf_counter() - start)


def _errors(covered: frozenset, context: tuple[int, int]) -> int:
    """Misclassified context images of a rule that covers `covered`."""
    return (sum((Role.A.value, k) not in covered for k in range(context[0]))
            + sum((Role.B.value, k) in covered for k in range(context[1])))


def _with_errors(induced: InducedRule, context: tuple[int, int]) -> InducedRule:
    """A rule enumerated without optimisation, with its cost (misclassified context images) filled in."""
    errors = _errors(induced.covered, context)
    return InducedRule(replace(induced.rule, errors=errors), (errors,), induced.covered, induced.evidence)


def _distinct(rules: list[InducedRule]) -> list[InducedRule]:
    seen, kept = set(), []
    for induced in rules:
        if induced.rule.literals not in seen:
            seen.add(induced.rule.literals)
            kept.append(induced)
    return kept


def query_images(facts: ProblemFacts) -> list[tuple[str, int]]:
    return [(Role.QUERY.value, index) for index in range(len(facts.queries))]
