"""What goes into the solver and what comes out: `ProblemInput`, `Solution`, `SolverError`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver.explaining import Explanation
from solver.induction import Induction, Rule


class SolverError(ValueError):
    """A problem the solver cannot work on (no programs and no perception, malformed input)."""


@dataclass(frozen=True, slots=True)
class ProblemInput:
    """A problem given directly: each image an ImageProgram, a JSON program or a greyscale array."""

    context_a: Sequence
    context_b: Sequence
    queries: Sequence = ()
    notes: Sequence[str] = ()  # why images given as None could not be read (`solver.reading.evidence`)


@dataclass(frozen=True, slots=True)
class Solution:
    rule: Rule | None  # the preferred optimal rule (None if no rule was found in time)
    labels: tuple[bool, ...]  # per query: True = belongs to A
    confidence: tuple[float, ...]  # per query: calibrated from perception's evidence (pixels), else the rules' vote share
    explanation: Explanation
    induction: Induction | None = None
    warnings: tuple[str, ...] = ()  # images left out as unreadable, and what that did to the confidence

    def to_dict(self) -> dict:
        return {
            "rule": self.rule.asp if self.rule else None,
            "labels": list(self.labels),
            "confidence": [round(c, 4) for c in self.confidence],
            "explanation": self.explanation.to_dict(),
            "warnings": list(self.warnings),
        }
