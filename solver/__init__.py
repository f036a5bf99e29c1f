"""Rule induction with clingo, query classification, explanations and the public API."""

from solver.api import ProblemInput, Solution, SolverError, solve_problem
from solver.facts_in import FactsError
from solver.facts_solve import solve_facts

__all__ = ["FactsError", "ProblemInput", "Solution", "SolverError", "solve_facts", "solve_problem"]
