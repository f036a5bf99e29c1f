"""A query's stroke near miss judged against set A's stroke readings along H, action by action
(`solver.reading.verdicts.judged_reading`, `least_margins`)."""

from dataclasses import replace

from dsl.canonical import same_image
from dsl.types import StrokeType
from tests.solver.test_hypotheses import H, ZIGZAG


def _read_along_h(changed: int | None, margin: float = -20.0):
    """A stroke reading of H's actions in order, every one read as H's by 5 nats but action `changed`, read
    zigzag by `margin` nats."""
    from perception.decode import StrokeReading
    from dsl.types import DATASET_STROKE_TYPES

    n = len(H.shapes[0].actions)
    margins = tuple(margin if i == changed else 5.0 for i in range(n))
    zigzag = DATASET_STROKE_TYPES.index(StrokeType.ZIGZAG)
    logps = tuple(tuple(0.0 if c == zigzag else -20.0 for c in range(len(DATASET_STROKE_TYPES))) if i == changed else
                  tuple(-0.1 if c == 0 else -5.1 for c in range(len(DATASET_STROKE_TYPES))) for i in range(n))
    return StrokeReading(min(margins), ZIGZAG if changed == 2 else H, sum(max(l) for l in logps), margins, logps,
                         tuple((0, i) for i in range(n)))


def test_a_query_stroke_near_miss_within_what_set_a_shows_reads_as_h():
    from solver.reading.verdicts import Verdict
    from solver.reading.check import in_doubt, stroke_doubted
    from solver.reading.verdicts import judged_reading

    decided = Verdict(H, {"fit": 0.5, "verdict": "hypothesis"}, ("pose",))
    reading = _read_along_h(2)
    everywhere = {(0, i): 6.0 for i in range(len(H.shapes[0].actions))}
    clean = judged_reading(decided, reading, H, everywhere)  # set A's strokes all read as H's
    assert clean.evidence["verdict"] == "stroke" and clean.evidence["sure_stroke"] and not in_doubt(clean.evidence)
    noisy = judged_reading(decided, reading, H, {**everywhere, (0, 2): -25.0})  # a set-A image read as far from H there
    assert noisy.evidence["verdict"] == "stroke" and not noisy.evidence["sure_stroke"]
    assert same_image(noisy.program, ZIGZAG)  # as a set-B image: the near miss
    doubted = stroke_doubted(noisy, H)  # as a query: H, the doubt kept in its evidence
    assert same_image(doubted.program, H) and doubted.poses == ("pose",)
    assert doubted.evidence["verdict"] == "hypothesis" and doubted.evidence["stroke_doubt"]
    assert doubted.evidence["stroke_margin"] == -20.0 and not in_doubt(doubted.evidence)
    firm = judged_reading(decided, _read_along_h(None), H, everywhere)
    assert firm.evidence["verdict"] == "hypothesis" and not in_doubt(firm.evidence)


def test_set_a_read_astray_at_one_action_leaves_a_near_miss_at_another_sure():
    from solver.reading.verdicts import Verdict, judged_reading

    # set A's least margin is judged action by action: a set-A image read far from H at action 0 (or H's stroke
    # there misread, every set-A image far from it) does not hide the query's changed stroke at action 2
    decided = Verdict(H, {"fit": 0.5, "verdict": "hypothesis"}, ("pose",))
    context = {**{(0, i): 6.0 for i in range(len(H.shapes[0].actions))}, (0, 0): -30.0}
    found = judged_reading(decided, _read_along_h(2, -15.0), H, context)
    assert found.evidence["verdict"] == "stroke" and found.evidence["sure_stroke"]
    assert same_image(found.program, ZIGZAG)
    # the query read worst at action 0, as set A is, and surely otherwise at action 2: the near miss is action 2's
    worst = _read_along_h(2, -15.0)
    worst = replace(worst, margin=-31.0, margins=(-31.0,) + worst.margins[1:], program=H)
    found = judged_reading(decided, worst, H, context)
    assert found.evidence["sure_stroke"] and same_image(found.program, ZIGZAG)
