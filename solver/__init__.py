"""Rule induction with clingo, query classification, explanations and the public API."""

from solver.api import ProblemInput, Solution, SolverError, solve_problem

__all__ = ["ProblemInput", "Solution", "SolverError", "solve_problem"]
