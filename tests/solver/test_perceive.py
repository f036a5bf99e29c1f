import numpy as np
import pytest

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from perception.decode import DEFAULT_CHECKPOINT
from search.refine import Proposal
from solver.reading.readings import PerceptionError
from solver.reading.perception import PixelPerception
from solver.reading.plans import seed_proposals

SQUARE = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "line_normal_1.000-0.750",
                       "line_normal_1.000-0.750"]])
SMALL_SQUARE = parse_image([["line_normal_0.700-0.500", "line_normal_0.700-0.750", "line_normal_0.700-0.750",
                             "line_normal_0.700-0.750"]])  # off the free-form grid


class FakeDecoderPerception(PixelPerception):
    """The decoder replaced by fixed proposals, to test the stage around it."""

    def __init__(self, proposals, **kwargs):
        super().__init__(**kwargs)
        self.fixed = proposals
        self.calls = []

    def proposals(self, images):
        self.calls.append(len(images))
        return [tuple(self.fixed)] * len(images)


def test_refinement_turns_proposals_into_programs_with_poses():
    image = render_program(SQUARE, [Pose(-40, 20, 15, 180)])
    perception = FakeDecoderPerception([Proposal(SQUARE, 0.0)])
    [result] = perception.perceive([image])
    assert perception.calls == [1]
    assert result.error is None and result.poses is not None
    assert len(result.program.shapes) == 1 and len(result.program.shapes[0]) == 4


def test_without_refinement_the_top_proposal_is_kept():
    image = np.full((512, 512), 255, np.uint8)
    perception = FakeDecoderPerception([Proposal(SQUARE, -1.0)], refine=False)
    assert perception([image, image]) == [SQUARE, SQUARE]


def test_a_failing_refinement_is_recorded_and_falls_back(monkeypatch):
    import solver.reading.workers as workers

    def broken(*args, **kwargs):
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(workers, "refine_image", broken)
    image = render_program(SMALL_SQUARE, [Pose(-40, 20, 15, 300)])
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)]).perceive([image])
    assert result.program == SMALL_SQUARE and "kernel exploded" in result.error


def test_an_image_without_ink_is_a_recorded_failure():
    image = np.full((512, 512), 255, np.uint8)
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)]).perceive([image])
    assert result.program == SMALL_SQUARE and "no ink" in result.error


FREE_FORM = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.750", "arc_circle_0.500_0.625-0.500",
                          "arc_normal_0.500_0.625-0.500", "line_normal_1.000-0.500"]])


def test_an_off_grid_reading_of_a_free_form_image_is_traced(monkeypatch):
    import solver.reading.workers as workers

    def unused(*args, **kwargs):
        raise AssertionError("a traced free-form image is not searched as library shapes")

    monkeypatch.setattr(workers, "refine_image", unused)
    image = render_program(FREE_FORM, [Pose(-60, 40, 20, 110)])
    # a turn 9 degrees off (off the grid) and the last line missed
    misread = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.725", "arc_circle_0.500_0.625-0.500",
                            "arc_normal_0.500_0.625-0.500"]])
    [result] = FakeDecoderPerception([Proposal(misread, 0.0)], use_classifier=False).perceive([image])
    assert result.error is None and same_image(result.program, FREE_FORM, ignore_strokes=True)
    assert [a.stroke.value for a in result.program.shapes[0].actions].count("zigzag") == 1


def test_a_shape_drawn_larger_than_the_free_form_painter_draws_is_not_traced(monkeypatch):
    import solver.reading.workers as workers

    searched = []
    original = workers.refine_image
    monkeypatch.setattr(workers, "refine_image", lambda *a, **k: searched.append(1) or original(*a, **k))
    image = render_program(SQUARE, [Pose(-40, 20, 15, 250)])  # a unit square at a basic shape's scale
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)], use_classifier=False).perceive([image])
    assert searched and result.error is None


def test_a_decoded_free_form_program_is_kept_and_only_fitted(monkeypatch):
    import solver.reading.workers as workers

    def unused(*args, **kwargs):
        raise AssertionError("free-form programs on the grid are not refined")

    monkeypatch.setattr(workers, "refine_image", unused)
    rough = parse_image([["line_normal_0.980-0.500", "line_normal_0.990-0.745", "line_normal_1.000-0.752",
                          "line_normal_0.990-0.750"]])
    image = render_program(SQUARE, [Pose(-40, 20, 15, 120)])
    [result] = FakeDecoderPerception([Proposal(rough, 0.0)]).perceive([image])
    assert result.error is None and result.poses is not None
    assert same_image(result.program, SQUARE, length_tol=1e-6, angle_tol=1e-6)


def test_a_library_like_program_is_refined():
    image = render_program(SMALL_SQUARE, [Pose(-40, 20, 15, 200)])
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)]).perceive([image])
    assert result.error is None and result.score is not None  # refinement ran (fit-only has no score)


def _slow_clock(monkeypatch):
    """The search's clock runs 50 ms per reading: as on a machine busy with other work."""
    import types

    import search.enumerate
    import search.refine

    now = [0.0]

    def perf_counter():
        now[0] += 0.05
        return now[0]

    for module in (search.refine, search.enumerate):
        monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=perf_counter))


def test_the_counted_budget_gives_the_same_reading_however_slow_the_machine(monkeypatch):
    image = render_program(SMALL_SQUARE, [Pose(-40, 20, 15, 200)])
    proposals = [Proposal(SMALL_SQUARE, 0.0)]
    FakeDecoderPerception(proposals).perceive([image])  # compiled and warm: the calm runs are not short of time
    [calm] = FakeDecoderPerception(proposals).perceive([image])
    _slow_clock(monkeypatch)
    [busy] = FakeDecoderPerception(proposals).perceive([image])
    [timed_busy] = FakeDecoderPerception(proposals, budget_ms=80.0).perceive([image])
    assert busy.program == calm.program and busy.poses == calm.poses and busy.score == calm.score
    assert timed_busy.poses != busy.poses  # a time budget polishes less when time runs short (compared with the
    # counted budget, not with a timed run on this machine, whose time depends on what else it is doing)


def test_the_readings_do_not_depend_on_the_number_of_workers():
    rng = np.random.default_rng(7)
    images = [render_program(program, [Pose(*rng.uniform(-60, 60, 2), rng.uniform(0, 360), 150)])
              for program in (SQUARE, SMALL_SQUARE) * 5]
    read = {}
    for workers in (1, 2):
        with PixelPerception(refine=False, workers=workers) as perception:
            read[workers] = [[(p.program, p.logp) for p in r.proposals] for r in perception.perceive(images)]
    assert read[1] == read[2]


def test_missing_checkpoint_is_a_clear_perception_error(tmp_path):
    perception = PixelPerception(checkpoint=tmp_path / "nope.pt")
    with pytest.raises(PerceptionError, match="nope.pt"):
        perception.perceive([np.full((64, 64), 255, np.uint8)])


def test_seed_proposals_cover_one_and_two_shapes():
    seeds = seed_proposals()
    assert {len(p.program.shapes) for p in seeds} == {1, 2}


def test_context_reconciles_misread_set_a_images_but_not_a_different_drawing():
    from solver.reading.readings import Perceived
    from solver.reading.reconcile import reconcile_with_context

    concept = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "arc_normal_0.500_0.250-0.500"]])
    misread = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.833", "arc_normal_0.500_0.250-0.500"]])
    other = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.583", "line_normal_1.000-0.500"]])
    poses = [Pose(-60 + 20 * k, 10 * k, 40 * k, 150) for k in range(5)]
    images = [render_program(concept, [p]) for p in poses[:4]] + [render_program(other, [poses[4]])]
    readings = [concept, concept, misread, misread, other]
    results = [Perceived(r) for r in readings]
    out = reconcile_with_context(images, results, positives=4)
    assert [r.program for r in out[:4]] == [concept] * 4  # the misread A images take the consensus
    assert out[4].program == other  # a B image that draws something else keeps its reading


def test_context_leaves_set_b_as_read_and_finds_a_stroke_near_miss():
    from solver.reading.readings import Perceived
    from solver.reading.reconcile import reconcile_with_context

    concept = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "line_normal_1.000-0.833"]])
    misread = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750", "line_normal_1.000-0.917"]])
    near_miss = parse_image([["line_normal_1.000-0.500", "line_circle_1.000-0.750", "line_normal_1.000-0.833"]])
    poses = [Pose(-60 + 20 * k, 10 * k, 40 * k, 150) for k in range(6)]
    images = [render_program(concept, [p]) for p in poses[:4]]  # set A
    images += [render_program(concept, [poses[4]])]  # set B (a B image drawn like A, only to see it kept)
    images += [render_program(near_miss, [poses[5]])]  # a query read as the concept
    readings = [concept, concept, misread, concept, misread, concept]
    out = reconcile_with_context(images, [Perceived(r) for r in readings], positives=4, negatives=1)
    assert [r.program for r in out[:4]] == [concept] * 4
    assert out[4].program == misread  # set B keeps its reading
    assert same_image(out[5].program, near_miss)  # the query's second action is drawn with circles
    out = reconcile_with_context(images, [Perceived(r) for r in readings], positives=4)
    assert out[4].program == concept  # not named as set B: it takes the consensus


def test_touching_shapes_read_as_two_are_also_searched_part_by_part(monkeypatch):
    import solver.reading.plans as plans
    from dsl.library import load_library
    from dsl.types import ImageProgram
    from search.matching import image_categories

    library = load_library()
    program = ImageProgram((library["regular_pentagon"].shape, library["closed_circle"].shape))  # off the grid
    image = render_program(program, [Pose(-60.0, 0.0, 0.0, 180.0), Pose(20.0, -40.0, 90.0, 160.0)])  # one ink blob
    from perception.shapes import ink_parts

    assert ink_parts(image) == []
    monkeypatch.setattr(plans, "SPLIT_BELOW_CONFIDENCE", 1.01)  # split whatever the classifier thinks
    perception = FakeDecoderPerception([Proposal(program, 0.0)])
    [plan] = perception.library([image], [(Proposal(program, 0.0),)])
    assert len(plan.parts) == 2 and plan.whole  # both searched, the better kept
    [result] = perception.perceive([image])
    assert result.error is None
    names = sorted(matches[0].names[0] for matches in image_categories(result.program, top=1))
    assert names == ["closed_circle", "regular_pentagon"]


def test_grid_share_counts_the_actions_on_the_free_form_grid():
    from solver.reading.traced import grid_share

    assert grid_share(FREE_FORM) == 1.0
    assert grid_share(SMALL_SQUARE) == 0.0
    half = parse_image([["line_normal_1.000-0.500", "line_normal_0.600-0.750", "arc_normal_0.500_0.625-0.500",
                         "arc_normal_0.300_0.625-0.500"]])
    assert grid_share(half) == 0.5


def _recorded_traces(monkeypatch):
    """Calls of `solver.reading.traced.traced_off_grid`: (gate, stopped by the gate) each."""
    import solver.reading.traced as traced

    calls, original = [], traced.traced_off_grid

    def recorded(*args, **kwargs):
        reading, stopped = original(*args, **kwargs)
        calls.append((kwargs.get("gate", True), stopped))
        return reading, stopped

    monkeypatch.setattr(traced, "traced_off_grid", recorded)
    return calls


def test_two_free_form_shapes_read_as_one_are_traced_a_second_time(monkeypatch):
    import solver.reading.traced as traced

    truth = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.750", "arc_circle_0.500_0.625-0.500",
                          "arc_normal_0.500_0.625-0.500"],
                         ["line_square_1.000-0.500", "line_normal_1.000-0.833", "line_zigzag_1.000-0.833"]])
    image = render_program(truth, [Pose(-200, 120, 10, 110), Pose(130, -150, 80, 110)])
    # the decoder saw only the first shape, with one turn off the grid: the first trace, from its starts,
    # covers half the ink and stops at the gate; the seed programs draw the two shapes poorly
    misread = parse_image([["line_normal_1.000-0.500", "line_zigzag_1.000-0.725", "arc_circle_0.500_0.625-0.500",
                            "arc_normal_0.500_0.625-0.500"]])
    calls = _recorded_traces(monkeypatch)
    [result] = FakeDecoderPerception([Proposal(misread, 0.0)], use_classifier=False).perceive([image])
    assert calls == [(True, True), (False, False)]
    assert result.error is None and same_image(result.program, truth, ignore_strokes=True)

    monkeypatch.setattr(traced, "SECOND_TRACE", False)
    calls.clear()
    [result] = FakeDecoderPerception([Proposal(misread, 0.0)], use_classifier=False).perceive([image])
    assert calls == [(True, True)] and not same_image(result.program, truth, ignore_strokes=True)


def test_a_library_reading_that_draws_the_ink_is_not_traced_again(monkeypatch):
    import solver.reading.traced as traced

    calls = _recorded_traces(monkeypatch)
    monkeypatch.setattr(traced, "GRID_SHARE", 0.0)  # whatever the decoder read
    image = render_program(SQUARE, [Pose(-40, 20, 15, 180)])  # a unit square, larger than free-form shapes
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)], use_classifier=False).perceive([image])
    assert calls == [(True, True)] and result.error is None  # stopped by the gate, and not traced again
    assert same_image(result.program, SQUARE, ignore_strokes=True, length_tol=0.05, angle_tol=5.0)


def test_a_reading_off_the_free_form_grid_is_not_traced_again(monkeypatch):
    import solver.reading.traced as traced

    calls = _recorded_traces(monkeypatch)
    monkeypatch.setattr(traced, "POOR_FIT", 0.0)  # however well the library reading draws the image
    image = render_program(SQUARE, [Pose(-40, 20, 15, 180)])
    [result] = FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)], use_classifier=False).perceive([image])
    assert calls == [(True, True)] and result.error is None

    monkeypatch.setattr(traced, "GRID_SHARE", 0.0)  # the same image, whatever the decoder read: traced again
    calls.clear()
    FakeDecoderPerception([Proposal(SMALL_SQUARE, 0.0)], use_classifier=False).perceive([image])
    assert calls == [(True, True), (False, False)]


def test_the_tracer_keeps_to_the_painters_units_only_for_readings_drawn_at_them(monkeypatch):
    import search.trace
    import solver.reading.traced as traced

    units, original = [], search.trace.trace_free_form
    monkeypatch.setattr(search.trace, "trace_free_form", lambda *a, **k: units.append(k.get("units")) or original(*a, **k))
    for scale in (120, 250):  # the free-form painter's scale, and a basic or abstract shape's
        image = render_program(SQUARE, [Pose(-40, 20, 15, scale)])
        result = traced.traced_reading(image, SQUARE, (Proposal(SQUARE, 0.0),))
        assert same_image(result.program, SQUARE)
    assert units == [traced.FREE_FORM_UNITS, None]


def test_a_reading_with_a_stray_short_line_is_traced_again_without_it(monkeypatch):
    import solver.reading.traced as traced
    from dsl.types import Action, ImageProgram, Shape, StrokeType

    triangle = Shape((Action.line(1.0), Action.line(1.0, 120.0, StrokeType.SQUARE),
                      Action.line(1.0, 120.0, StrokeType.ZIGZAG)))
    hook = Shape((Action.arc(0.5, -90.0, 0.0, StrokeType.TRIANGLE), Action.line(1.0, 180.0),
                  Action.arc(0.5, -90.0, 180.0, StrokeType.TRIANGLE)))
    truth = ImageProgram((triangle, hook))
    image = render_program(truth, [Pose(-150, 100, 0, 85), Pose(50, -80, 45, 95)])
    # the decoder read the hook's line as two, one of them short (off the grid): its starts lead the tracer
    # nowhere, the reading without the short line does
    split = Shape((Action.arc(0.5, -91.0, 0.0, StrokeType.TRIANGLE), Action.line(1.0, 180.0), Action.line(0.29, 0.0),
                   Action.arc(0.5, -90.0, 180.0, StrokeType.TRIANGLE)))
    proposals = (Proposal(ImageProgram((triangle, split)), 0.0),)
    reading, stopped = traced.traced_off_grid(image, proposals)
    assert not stopped and same_image(reading.program, truth)

    monkeypatch.setattr(traced, "REPAIR", False)
    assert traced.traced_off_grid(image, proposals) == (None, False)


def test_a_full_trace_that_misses_ink_is_tried_with_arcs_turning_both_ways(monkeypatch):
    # `solver.reading.traced._full_trace`: the constrained trace (arcs turning one way) covers 90 % of the ink; the
    # free one covers it all, and is taken only if its arcs turn one way after all
    import search.trace as trace
    import solver.reading.traced as traced

    agreeing = parse_image([["arc_normal_0.500_0.375-0.500", "line_normal_1.000-1.000", "arc_normal_0.500_0.375-0.500"]])
    mixed = parse_image([["arc_normal_0.500_0.625-0.500", "line_normal_1.000-1.000", "arc_normal_0.500_0.375-0.500"]])
    short = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.250"]])

    def fake(free_program):
        def run(target, programs, units=None, arcs_agree=None):
            if arcs_agree is False:
                return trace.Traced(free_program, -0.9, 1.0, (), ())
            return trace.Traced(short, -0.7, 0.9, (), ())
        return run

    monkeypatch.setattr(trace, "trace_free_form", fake(agreeing))
    assert traced._full_trace(None, [], None).program == agreeing
    monkeypatch.setattr(trace, "trace_free_form", fake(mixed))
    assert traced._full_trace(None, [], None).program == short
    monkeypatch.setattr(traced, "ARCS_AGREE_RETRY", False)
    monkeypatch.setattr(trace, "trace_free_form", fake(agreeing))
    assert traced._full_trace(None, [], None).program == short


def test_a_touching_pair_is_decoded_and_read_in_its_own_job_as_in_separate_rounds(monkeypatch):
    """`library_one` with the decoder at hand decodes a touching pair, splits its plan and reads it in one job:
    the same reading as the rounds `library_problem` makes without it (decode, plan, read as library shapes)."""
    import solver.reading.perception as perceive
    import solver.reading.plans as plans
    import solver.reading.workers as workers
    from dsl.library import load_library
    from dsl.types import ImageProgram
    from solver.settings import SPLIT_BEAM

    library = load_library()
    program = ImageProgram((library["square"].shape, library["closed_circle"].shape))
    image = render_program(program, [Pose(-60.0, 0.0, 0.0, 180.0), Pose(20.0, -40.0, 90.0, 160.0)])  # one ink blob
    monkeypatch.setattr(plans, "SPLIT_BELOW_CONFIDENCE", 1.01)  # taken for touching whatever the classifier thinks
    left = workers.library_one((None, image, None, False, None, None, True))
    assert left.touching and left.reading is None  # without the decoder: left to the caller
    one_job = workers.library_one((None, image, None, False, None, (None, perceive.TOP_K), True))
    assert one_job.touching and one_job.reading is not None
    with perceive.PixelPerception(budget_ms=None) as perception:
        [props] = perception.decode_each([image], beam=SPLIT_BEAM)
        plan = perception.plan(image, left.guesses, props)
        [rounds] = perception.read_as_library([image], [plan])
    assert one_job.reading.program == rounds.program


def test_within_a_problem_an_image_is_decoded_and_a_list_classified_once(monkeypatch):
    import solver.reading.perception as perceiving

    classified = []

    def guesses_chunk(job):
        classified.append(len(job[1]))
        return [{"whole": [], "parts": [], "part_images": [], "n": len(classified)} for _ in job[1]]

    monkeypatch.setattr(perceiving, "guesses_chunk", guesses_chunk)
    a = render_program(SQUARE, [Pose(-40, 20, 15, 180)])
    b = render_program(SMALL_SQUARE, [Pose(30, -10, 40, 120)])
    perception = FakeDecoderPerception([Proposal(SQUARE, 0.0)])
    with perception.remembering():
        first = perception.decode_each([a, b], beam=3)
        assert perception.decode_each([b, a.copy()], beam=3) == first[::-1]  # the same pixels, another array
        assert perception.calls == [1, 1]
        perception.decode_each([a], beam=5)  # another beam width: another job
        assert perception.calls == [1, 1, 1]
        with perception.remembering():  # a block inside shares the outer one's work
            perception.decode_each([a], beam=5)
        perception.remember_decoded(b, 7, "given")  # what a worker's job gave (`decode_job`)
        assert perception.decode_each([b], beam=7) == ["given"] and perception.calls == [1, 1, 1]
        assert perception.guesses([a, b]) == perception.guesses([a, b]) and classified == [2]
        perception.guesses([a])  # another list: other batches
        assert classified == [2, 1]
    perception.decode_each([a], beam=3)  # outside a block nothing is kept
    perception.guesses([a, b])
    assert perception.calls == [1, 1, 1, 1] and classified == [2, 1, 2]


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.is_file(), reason="no shipped decoder checkpoint")
def test_an_image_decoded_alone_reads_the_same_each_time_so_remembering_it_is_exact():
    image = render_program(SMALL_SQUARE, [Pose(-40, 20, 15, 300)])
    perception = PixelPerception()
    fresh = perception.decode_each([image], beam=3)
    with perception.remembering():
        assert perception.decode_each([image], beam=3) == fresh
        assert perception.decode_each([image], beam=3) == fresh
