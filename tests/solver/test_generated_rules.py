"""Every printed rule holds of an image of A: induction over 1,020 generated problems' oracle facts.

The problems are made by the built-in generator (programs only: the painter's placement is skipped, no
image is drawn) and solved from their programs as `solve_problem` does (induction, the size-principle
vote, the explanation). Each rule the explanation prints, the chosen one and every tied alternative, is
then run as the ASP program it prints over the problem's facts: it must put at least one context image
of A in A. A rule no image satisfies (zero and three straight lines, an attribute and its negation)
would fail this.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import clingo

import dsl.generate
from dsl.generate import ProblemKind, generate_problem, plan_problems
from solver.solving.api import ProblemInput, solve_problem
from solver.induction.facts import Role, problem_facts, write_facts
from solver.induction.optimal import python_value

SEED = 2323
PROBLEMS = {ProblemKind.FREE_FORM: 300, ProblemKind.BASIC: 300, ProblemKind.ABSTRACT: 420}  # 1,020 in all
WORKERS = 2  # the CI machine's cores


def problem_atoms(facts) -> list[clingo.Symbol]:
    """The problem's facts as the solver writes them (`solver.induction.facts.write_facts`), gathered once."""
    control = clingo.Control(["--warn=none"])
    write_facts(control, facts)
    control.ground([("base", [])])
    return [atom.symbol for atom in control.symbolic_atoms]


def satisfied_in_a(rule_asp: str, atoms: list[clingo.Symbol]) -> set[int]:
    """Indices of the context images of A the printed rule puts in A."""
    control = clingo.Control(["--warn=none"])
    with control.backend() as backend:
        for atom in atoms:
            backend.add_rule([backend.add_atom(atom)])
    control.add("base", [], rule_asp + "\n#show concept/1.")
    control.ground([("base", [])])
    with control.solve(yield_=True) as handle:
        model = next(iter(handle))
        images = [python_value(symbol)[1] for symbol in model.symbols(shown=True)]
    return {index for role, index in images if role == Role.A.value}


CHUNK = 60  # problems per unit of work


def _check(kind: ProblemKind, start: int) -> tuple[int, list[str]]:
    """Solve problems start.. start + CHUNK of the kind; the printed rules that hold of no image of A."""
    dsl.generate._place_all = lambda rng, programs, kind: ()  # programs only (in the worker process)
    failures = []
    specs = plan_problems(kind, PROBLEMS[kind], SEED)[start:start + CHUNK]
    for spec in specs:
        problem = generate_problem(spec, SEED)
        a, b = list(problem.positives[:6]), list(problem.negatives[:6])
        queries = [problem.positives[6], problem.negatives[6]]
        solution = solve_problem(ProblemInput(a, b, queries))
        atoms = problem_atoms(problem_facts(a, b, queries, tolerant=False))  # as solve_problem has them
        printed = [solution.explanation.asp] + [alternative.asp for alternative in solution.explanation.alternatives]
        failures += [f"{problem.name}: {rule}" for rule in printed if not satisfied_in_a(rule, atoms)]
    return len(specs), failures


def test_every_printed_rule_holds_of_an_image_of_a():
    chunks = [(kind, start) for kind, count in PROBLEMS.items() for start in range(0, count, CHUNK)]
    with ProcessPoolExecutor(WORKERS) as pool:
        results = list(pool.map(_check, *zip(*chunks)))
    assert sum(n for n, _ in results) >= 1000
    failures = [failure for _, kind_failures in results for failure in kind_failures]
    assert not failures, "\n".join(failures[:20])
