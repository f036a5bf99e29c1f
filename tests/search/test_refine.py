"""Refinement recovers the true program from corrupted proposals on rendered free-form images."""


from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from search.enumerate import Budget, best_first
from search.refine import Proposal, consensus, refine_image

TRUTH = parse_image([["line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.750", "line_square_1.000-0.667",
                      "line_normal_1.000-0.833"]])
POSES = [Pose(-40.0, 30.0, 15.0, 120.0)]


def corrupted() -> list[Proposal]:
    wrong_turn = parse_image([["line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.750", "line_square_1.000-0.583",
                               "line_normal_1.000-0.833"]])
    wrong_stroke = parse_image([["line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.750", "line_normal_1.000-0.667",
                                 "line_normal_1.000-0.833"]])
    jittered = parse_image([["line_normal_0.970-0.500", "arc_zigzag_0.480_0.630-0.740", "line_square_0.950-0.670",
                             "line_normal_1.000-0.820"]])
    return [Proposal(wrong_turn, 0.0), Proposal(wrong_stroke, -0.5), Proposal(jittered, -1.0)]


def test_refinement_recovers_the_truth_from_corrupted_proposals():
    image = render_program(TRUTH, POSES)
    refinement = refine_image(image, corrupted(), budget_ms=None, max_candidates=80)
    assert same_image(refinement.program, TRUTH)
    got = refinement.poses[0]
    assert abs(got.scale - POSES[0].scale) / POSES[0].scale < 0.05


def test_refinement_recovers_a_dropped_action():
    image = render_program(TRUTH, POSES)
    dropped = parse_image([["line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.750", "line_square_1.000-0.667"]])
    refinement = refine_image(image, [Proposal(dropped, 0.0)], budget_ms=None, max_candidates=120)
    assert same_image(refinement.program, TRUTH, ignore_strokes=True)


def test_refinement_is_deterministic_without_a_time_budget():
    image = render_program(TRUTH, POSES)
    a = refine_image(image, corrupted(), budget_ms=None, max_candidates=40)
    b = refine_image(image, corrupted(), budget_ms=None, max_candidates=40)
    assert a.program == b.program and a.score == b.score and a.poses == b.poses


def test_best_first_yields_in_order_of_score_and_respects_the_budget():
    # programs are integers; the score is the distance to 17; neighbours are n - 1 and n + 1
    def score(n, context):
        return abs(n - 17), None

    def expand(scored):
        return [(scored.program - 1, None, scored.score - 1), (scored.program + 1, None, scored.score - 1)]

    out = list(best_first([(3, None), (30, None)], score, expand, key=lambda n: n, budget=Budget(candidates=40)))
    values = [s.program for s in out]
    assert 17 in values
    assert len(values) <= 40
    first = [s.score for s in out[: values.index(17) + 1]]
    assert first[-1] == 0
    again = [s.program for s in best_first([(3, None), (30, None)], score, expand, key=lambda n: n,
                                           budget=Budget(candidates=40))]
    assert again == values


def test_consensus_takes_the_majority_action_per_position():
    proposals = [Proposal(p.program, 0.0) for p in corrupted()] + [Proposal(TRUTH, 0.0)]
    majority = consensus(proposals)
    assert same_image(majority, TRUTH, length_tol=0.06, angle_tol=5.0)


def test_consensus_votes_on_moves_and_strokes_separately():
    # the top proposal's move is outvoted by the others even though their strokes differ
    a = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-1.000"]])
    b = parse_image([["line_normal_1.000-0.500", "line_circle_1.000-0.833"]])
    c = parse_image([["line_normal_1.000-0.500", "line_square_1.000-0.833"]])
    d = parse_image([["line_normal_1.000-0.500", "line_circle_1.000-0.833"]])
    proposals = [Proposal(a, 0.0), Proposal(b, -0.5), Proposal(c, -0.6), Proposal(d, -0.7)]
    majority = consensus(proposals, temperature=0.0)
    assert same_image(majority, parse_image([["line_normal_1.000-0.500", "line_circle_1.000-0.833"]]))


def test_refinement_snaps_jittered_free_form_proposals():
    image = render_program(TRUTH, POSES)
    from dsl.types import Action, ImageProgram, Shape

    a = TRUTH.shapes[0].actions
    rough = ImageProgram((Shape((Action.line(1.19, 0.0, a[0].stroke), Action.arc(0.52, 84.0, a[1].turn + 8.0, a[1].stroke),
                                 Action.line(0.85, a[2].turn - 5.0, a[2].stroke), a[3])),))
    refinement = refine_image(image, [Proposal(rough, 0.0)], budget_ms=None, max_candidates=30)
    assert same_image(refinement.program, TRUTH, ignore_strokes=True)


def test_library_shapes_reached_by_edits_pay_the_classifiers_belief():
    """A drawn inverse_acute_hexagon, proposed as its look-alike inverse_symmetric_moth: the search's library
    edits find the hexagon, unless `shape_logp` (the classifier) rules it out."""
    from dsl.canonical import shape_key
    from dsl.library import load_library
    from dsl.types import ImageProgram
    from search.matching import match_shape

    library = load_library()
    moth, hexagon = "inverse_symmetric_moth", "inverse_acute_hexagon"
    names = {shape_key(entry.shape, ignore_strokes=True): name for name, entry in library.items()}
    image = render_program(ImageProgram((library[hexagon].shape,)), [Pose(-60.0, 40.0, 20.0, 160.0)])
    proposals = [Proposal(ImageProgram((library[moth].shape,)), 0.0)]

    def believed(*allowed: str):
        def shape_logp(shape):
            name = names.get(shape_key(shape, ignore_strokes=True))
            return None if name is None else (0.0 if name in allowed else -200.0)
        return shape_logp

    def found(shape_logp) -> set[str]:
        refinement = refine_image(image, proposals, budget_ms=None, max_candidates=60, shape_logp=shape_logp)
        return set(match_shape(refinement.program.shapes[0], top=1)[0].names)

    assert hexagon in found(None)
    assert moth in found(believed(moth))
    assert hexagon in found(believed(moth, hexagon))


def test_starts_only_refinement_skips_fits_that_cannot_be_chosen(monkeypatch):
    # library proposals, two of them so improbable that their prior alone rules them out: not fitted, and
    # the reading (program, score, poses) is the one every start fitted gives
    from dsl.library import load_library
    from dsl.types import ImageProgram
    import search.pose
    import search.refine as refine

    library = load_library()
    shapes = [library[name].shape for name in ("square", "rectangle", "sector90", "closed_circle")]
    image = render_program(ImageProgram((shapes[0],)), [Pose(10.0, -20.0, 30.0, 150.0)])
    proposals = [Proposal(ImageProgram((s,)), logp) for s, logp in zip(shapes, (0.0, -2.0, -200.0, -300.0))]
    fits = []
    fit_one = search.pose.fit_one
    monkeypatch.setattr(search.pose, "fit_one", lambda *a, **k: fits.append(1) or fit_one(*a, **k))
    pruned = refine_image(image, proposals, budget_ms=None, max_candidates=0)
    pruned_fits = len(fits)

    class FitsAll(refine._StructureSearch):
        prune = property(lambda self: False, lambda self, value: None)

    monkeypatch.setattr(refine, "_StructureSearch", FitsAll)
    full = refine_image(image, proposals, budget_ms=None, max_candidates=0)
    assert (pruned.program, pruned.score, pruned.poses) == (full.program, full.score, full.poses)
    assert pruned_fits < len(fits) - pruned_fits
