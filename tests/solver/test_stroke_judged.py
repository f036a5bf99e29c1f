"""A checked image's strokes are judged where its check placed H (`solver.reading.verdicts.checked_many`)."""

from __future__ import annotations

import pytest

from dsl.commands import render_problem
from dsl.generate import ProblemKind, generate_problem, plan_problems
from dsl.raster import OFFICIAL_SIZE
from perception.decode import DEFAULT_CHECKPOINT
from search.near_miss import check
from search.template import make_target
from solver.reading import verdicts


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.is_file(), reason="no shipped decoder checkpoint")
def test_a_positive_query_s_strokes_are_read_where_its_check_placed_h(monkeypatch):
    """Generated seed 101555, ff_nact2_5_0007: H is a right angle of two lines beside two straight runs of two lines at
    a right angle, ending in an arc. Fitted again after the check, H took the assignment of shapes to ink parts that
    won for a near miss and laid the right angle on the other shape's two sides at twice its scale; its strokes read
    there as a near miss (-13.8 nats). At the check's placements they read as H's (+7.7)."""
    spec = next(p for p in plan_problems(ProblemKind.FREE_FORM, 100, 101555) if p.concept == (2, 5) and p.number == 7)
    problem = generate_problem(spec, 101555)
    positives, _ = render_problem(problem, OFFICIAL_SIZE)
    hypothesis, query = problem.positives[6], positives[6]
    judged_at = []
    judged = verdicts.judged_readings
    monkeypatch.setattr(verdicts, "judged_readings",
                        lambda *args: judged_at.append(args[4]) or judged(*args))
    [(found, reading)] = verdicts.checked_many((None, [query], hypothesis, True, 1))
    assert found.evidence["verdict"] == "hypothesis" and found.program == hypothesis
    assert judged_at == [[check(hypothesis, make_target(query), True).placements]]
    assert reading.margin > 0  # every action's stroke read as H's
