"""Rule induction: one clingo run per problem over the whole rule language.

The encodings (package data) are the rule core `rule.lp`, one file per family of literals and the
specificity prior `prior.lp`. Facts come from `solver.induction.facts` (`induce`), or from any writer with its own
literal encodings (`induce_with`: problems given as facts, `solver.facts_in.solve`). Clingo optimises (fewest misclassified
context images, then the shortest rule, then the most specific one) and, with opt-mode=optN,
enumerates every optimal rule. A time limit stops the search; the outcome
says whether the rules returned are proven optimal. With `all_fitting` only the first priority counts,
so every rule that misclassifies the fewest context images is returned (for `solver.induction.posterior`).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib import resources

import clingo
import clingo.ast

from solver.induction.facts import ProblemFacts, Role, write_facts
from solver.induction.rules import Literal, Rule
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
    weights: tuple[float, ...] | None = None  # posterior of each rule (solver.induction.posterior); None = equal votes


class _Watchdog:
    """Time limits of solve calls: one thread per process interrupts each control whose deadline passes.
    The solve itself runs in the caller's thread; an asynchronous solve per run, or a timer thread per run,
    handed every run to a new thread, and on a loaded machine waiting for that thread to be scheduled took
    ten times the solving (20-40 ms of wall time per run against 1-3 ms of CPU)."""

    IDLE_WAIT = 3600.0  # seconds the thread sleeps when no deadline is pending (a new deadline wakes it at once)

    def __init__(self) -> None:
        self._reset()
        if hasattr(os, "register_at_fork"):  # POSIX: a forked worker has neither the thread nor its lock
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._deadlines: dict[object, tuple[float, clingo.Control]] = {}
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for key, (deadline, control) in list(self._deadlines.items()):
                    if deadline <= now:
                        control.interrupt()
                        del self._deadlines[key]
                self._changed.wait(min((d for d, _ in self._deadlines.values()), default=now + self.IDLE_WAIT) - now)

    @contextlib.contextmanager
    def limit(self, control: clingo.Control, seconds: float) -> Iterator[None]:
        """Within the block, `control`'s solve call is interrupted once `seconds` have passed (at its start
        if no time is left)."""
        if seconds <= 0:
            control.interrupt()  # clingo: interrupts the following solve call right at its beginning
            yield
            return
        key = object()
        with self._changed:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="clingo-time-limit", daemon=True)
                self._thread.start()
            self._deadlines[key] = (time.monotonic() + seconds, control)
            self._changed.notify()
        try:
            yield
        finally:
            with self._changed:  # after this, the control is never interrupted (it may then be freed)
                self._deadlines.pop(key, None)


_WATCHDOG = _Watchdog()


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


@functools.cache
def _statements(name: str) -> tuple[clingo.ast.AST, ...]:
    """The statements of encoding `name`, parsed once per process: adding parsed statements to a control
    takes a quarter of the time of parsing the text again (about 0.4 ms against 1.5 ms for all encodings)."""
    text = resources.files("solver").joinpath("encodings").joinpath(name).read_text(encoding="utf-8")
    statements: list[clingo.ast.AST] = []
    clingo.ast.parse_string(text, statements.append, logger=_log)
    return tuple(statements)


def _log(code: clingo.MessageCode, message: str) -> None:
    LOG.debug("clingo %s: %s", code, message)


def load_encodings(control: clingo.Control, names: tuple[str, ...] = ENCODINGS) -> None:
    with clingo.ast.ProgramBuilder(control) as builder:
        for name in names:
            for statement in _statements(name):
                builder.add(statement)


def memoised(convert: Callable[[clingo.Symbol], object]) -> Callable[[clingo.Symbol], object]:
    """`convert`, computed once per distinct symbol: the models of one run repeat the same few literals and
    images, and converting them again for every model was most of the time of a run that enumerates."""
    memo: dict[clingo.Symbol, object] = {}

    def cached(symbol: clingo.Symbol) -> object:
        value = memo.get(symbol, memo)
        if value is memo:
            value = memo[symbol] = convert(symbol)
        return value

    return cached


def _shown_atom(literal: Callable, image: Callable) -> Callable[[clingo.Symbol], tuple]:
    """A shown atom as (its name, what it says): use -> the literal, covers -> the image, evidence -> (the
    image, the literal), length -> the literal's cost; computed once per distinct atom of a run (`memoised`)."""

    def read(atom: clingo.Symbol) -> tuple:
        name, arguments = atom.name, atom.arguments
        if name == "evidence":
            return name, (image(arguments[1]), literal(arguments[0]))
        if name in ("use", "covers"):
            return name, (literal if name == "use" else image)(arguments[0])
        if name == "length":
            return name, arguments[1].number
        return name, None

    return memoised(read)


def _read_model(symbols: list[clingo.Symbol], cost: tuple[int, ...], shown: Callable,
                make_rule: Callable) -> InducedRule:
    """The rule of a model's shown atoms (`shown` reads one: `_shown_atom`)."""
    used, covered, evidence, length = [], set(), {}, 0
    for atom in symbols:
        name, value = shown(atom)
        if name == "evidence":
            evidence.setdefault(value[0], set()).add(value[1])
        elif name == "covers":
            covered.add(value)
        elif name == "use":
            used.append(value)
        elif name == "length":
            length += value
    errors = cost[0] if cost else 0
    rule = make_rule(tuple(sorted(used, key=lambda lit: lit.sort_key)), errors, length)
    frozen_evidence = {key: frozenset(lits) for key, lits in evidence.items()}
    return InducedRule(rule, cost, frozenset(covered), frozen_evidence)


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
    makes a rule of them (`solver.induction.rules` for LOGO problems, `solver.facts_in.lang` for problems given as facts).
    `error_weight` > 0: a misclassified context image costs that much rule length instead of coming first
    (rule.lp)."""
    start = time.perf_counter()
    enumerate_all = all_fitting and max_errors is not None
    arguments = ["--opt-mode=ignore" if enumerate_all else "--opt-mode=optN", f"--models={max_rules}",
                 f"--const=max_literals={max_literals}", f"--const=all_fitting={int(all_fitting)}",
                 f"--const=max_errors={max_errors if enumerate_all else -1}", f"--const=error_weight={error_weight}"]
    control = clingo.Control(arguments, logger=_log)
    load_encodings(control, encodings)
    write(control)
    control.ground([("base", [])])

    shown = _shown_atom(memoised(literal), memoised(python_value))

    def read(symbols: list[clingo.Symbol], cost: tuple[int, ...]) -> InducedRule:
        induced = _read_model(symbols, cost, shown, make_rule)
        if error_weight:
            induced = replace(induced, rule=replace(induced.rule, errors=_errors(induced.covered, context)))
        elif cost and cost[0] != (errors := _errors(induced.covered, context)):  # family.lp charges level 1 too
            induced = replace(induced, rule=replace(induced.rule, errors=errors), cost=(errors, *cost[1:]))
        return _with_errors(induced, context) if enumerate_all else induced

    # Models found before optimality is proven matter only if the time limit stops the search first, and
    # then only those of the least cost: their atoms are kept, and read only in that case.
    best: list[list[clingo.Symbol]] = []
    best_cost: list[tuple[int, ...]] = []
    proven: list[InducedRule] = []

    def on_model(model: clingo.Model) -> None:
        cost = tuple(model.cost)
        if enumerate_all or model.optimality_proven:
            proven.append(read(model.symbols(shown=True), cost))
        elif not best_cost or cost <= best_cost[0]:
            if best_cost and cost < best_cost[0]:
                best.clear()
            best_cost[:] = [cost]
            best.append(model.symbols(shown=True))

    remaining = max(0.0, time_limit - (time.perf_counter() - start))
    with _WATCHDOG.limit(control, remaining):
        finished = not control.solve(on_model=on_model).interrupted

    if proven:
        outcome, rules = Outcome.OPTIMAL if finished else Outcome.TIME_LIMIT, proven
    elif best:
        outcome, rules = Outcome.TIME_LIMIT, [read(symbols, best_cost[0]) for symbols in best]
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
