"""The one path from a problem to a `Solution`, taken by `solve_problem` and by every command: a problem given as
pixels is perceived as a whole (`solver.reading`), its rule induced (`solver.induction`) and explained
(`solver.explaining`), and each query's label given the confidence calibrated from perception's evidence
(`solver.solving.confidence`); programs given directly go straight to induction.

May import: dsl, search, solver.reading, solver.induction, solver.explaining, solver.settings.
"""

from solver import face

FACE = {
    "MAX_RULES_LIMIT": "api", "checked_option": "api",
    "as_input": "api", "solve_problem": "api", "calibration_figures": "confidence", "context_errors": "confidence",
    "query_confidences": "confidence", "SolvedProblem": "folder", "load_folder": "folder",
    "readable_pixels": "folder", "solve_folder": "folder", "solve_images": "folder", "solve_programs": "programs",
    "ProblemInput": "types", "Solution": "types", "SolverError": "types",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
