"""Perception of a problem: its images read as a whole, one `Perceived` per image (a program, its poses and the
evidence that decided it).

The pipeline (`solver.reading.pipeline.perceive_problem`): classify set A, form the problem's program H from a few
decoded set-A images, check every other image against H and its near misses, read in full what nothing explains,
reconcile readings made without H. `PixelPerception` owns the models and the worker processes; its `Switches`
(`solver.reading.switches`) say which parts run (all, unless an ablation turns one off).

May import: dsl, perception, search, solver.settings.
"""

from solver import face

FACE = {
    "EvidenceError": "evidence", "gather": "evidence", "readable_weighting": "evidence",
    "unreadable_reason": "evidence", "ProblemGroups": "grouped", "stamped": "library",
    "PixelPerception": "perception", "perception_worker_setup": "perception", "Perceived": "readings",
    "PerceptionError": "readings",
    "PRODUCT": "switches", "Switches": "switches",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
