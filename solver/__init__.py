"""bongard-solver's solver: a Bongard problem in, the rule that separates A from B, the query labels and why out.

    from solver import solve_problem, solve_facts

The package is a house of six rooms; each owns one job, says in its `__init__` what it may import, and shows the
others a face (`__all__`) they import from:

    reading      a problem's images perceived as a whole: pixels -> one program per image, with evidence
    induction    programs -> facts -> clingo's optimal rules, weighed by their posterior -> votes on the queries
    explaining   the rule in English, each image's `why`, report pages and the index of reports
    solving      the one path from a problem to a `Solution`: perception, induction, calibrated confidence
    facts_in     Bongard problems given as ASP facts, solved by the same inducer
    app          the `bongard-solver` command line: solve, eval, explain, demo, option checks, where problems run

A room imports only the rooms listed before it in this table (`induction` and `reading` are independent), and
`solver.settings` (the hand-chosen constants of every room), as `tests/test_architecture.py` checks. Faces load
their modules on first use (`face`), so importing the package costs little.
"""

from __future__ import annotations

import importlib
import sys


def face(package: str, names: dict[str, str]):
    """A room's `__getattr__`: each name of its face imported from its module (`names`: name -> module) on first
    use, then kept on the package."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


FACE = {"ProblemInput": "solving", "Solution": "solving", "SolverError": "solving", "solve_problem": "solving",
        "FactsError": "facts_in", "solve_facts": "facts_in"}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
