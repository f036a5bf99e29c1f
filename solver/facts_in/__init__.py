"""Bongard problems given as ASP facts (Bongard-HOI, -OpenWorld, -Tool style): the JSON format, the language bias
derived from the facts, the same clingo inducer, explanations and report pages (docs/facts.md).

May import: dsl, solver.induction, solver.explaining, solver.solving, solver.settings.
"""

from solver import face

FACE = {
    "FactsError": "problem", "FactsProblem": "problem", "load_problem": "problem", "solve_facts": "solve",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
