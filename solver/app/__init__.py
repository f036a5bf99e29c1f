"""The `bongard-solver` command line: `solve`, `eval` (journal, summary, the paper's table, where problems run:
a process pool or Ray), `explain`, `demo`, `solve-facts`, and the error boundary that checks options before any
work starts.

May import: every room of solver, dsl, perception, search.
"""

from solver import face

FACE = {
    "main": "cli",
}
__all__ = sorted(FACE)
__getattr__ = face(__name__, FACE)
