"""Golden tests of the ASP encodings: small hand-written fact sets and their expected optimal rules."""

from __future__ import annotations

import clingo
import pytest

from solver.induction.facts import ImageFacts, ProblemFacts, ShapeFacts, write_facts
from solver.induction.optimal import ENCODINGS, Outcome, induce, load_encodings, python_value


def readings(counts: dict) -> dict[str, tuple[int, ...]]:
    return {name: value if isinstance(value, tuple) else (value,) for name, value in counts.items()}


def image(sequence="s", categories=(), attributes=None, counts=None) -> ImageFacts:
    """A one-shape image."""
    return ImageFacts((ShapeFacts(sequence, tuple(categories), dict(attributes or {}), readings(counts or {})),))


def two_shapes(first: ImageFacts, second: ImageFacts) -> ImageFacts:
    return ImageFacts(first.shapes + second.shapes)


def optimal_rules(facts: ProblemFacts, encodings: tuple[str, ...]) -> set[str]:
    induction = induce(facts, encodings=encodings, time_limit=5.0)
    assert induction.outcome is Outcome.OPTIMAL
    return {induced.rule.asp for induced in induction.rules}


def candidate_literals(facts: ProblemFacts, encoding: str) -> set:
    control = clingo.Control(["--warn=none"])
    load_encodings(control, ("rule.lp", encoding))
    write_facts(control, facts)
    control.add("show", [], "#show lit/1.")
    control.ground([("base", []), ("show", [])])
    with control.solve(yield_=True) as handle:
        model = next(iter(handle))
        return {python_value(s)[1] for s in model.symbols(shown=True) if s.name == "lit"}


# sequence.lp ------------------------------------------------------------------------------------


def test_sequence_rule_is_the_program_shared_by_a():
    a = [image("line_normal_1.000-0.500")] * 6
    b = [image("line_zigzag_1.000-0.500"), image("arc_normal_0.500_0.625-0.500")] * 3
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "sequence.lp"))
    assert rules == {'concept(I) :- image(I), seq(I,"line_normal_1.000-0.500").'}


def test_sequence_tolerates_one_noisy_image_in_a():
    a = [image("p")] * 5 + [image("p-misread")]
    b = [image("n")] * 6
    induction = induce(ProblemFacts(tuple(a), tuple(b), ()), encodings=("rule.lp", "sequence.lp"))
    assert induction.cost == (1, 1, -930)
    assert [r.rule.asp for r in induction.rules] == ['concept(I) :- image(I), seq(I,"p").']


# category.lp ------------------------------------------------------------------------------------


def test_two_categories_in_every_image_of_a():
    a = [two_shapes(image(f"d{i}", ["dagger"]), image(f"o{i}", ["open_s"])) for i in range(6)]
    b = [two_shapes(image(f"d{i}", ["dagger"]), image(f"x{i}", [f"other{i}"])) for i in range(3)]
    b += [two_shapes(image(f"y{i}", [f"other{i}"]), image(f"o{i}", ["open_s"])) for i in range(3)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "category.lp"))
    assert rules == {'concept(I) :- image(I), category(I,S1,"dagger"), category(I,S2,"open_s"), S1 != S2.'}


def test_two_names_of_one_shape_are_no_pair():
    """A geometric tie gives one shape two category names; both name the same shape."""
    a = [image(f"a{i}", ["open_s3", "open_line_s_new1"]) for i in range(6)]
    b = [image(f"b{i}", [f"other{i}"]) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "category.lp"))
    assert rules == {'concept(I) :- image(I), category(I,_,"open_s3").',
                     'concept(I) :- image(I), category(I,_,"open_line_s_new1").'}


def test_category_candidates_come_from_set_a_only():
    a = [image("a", ["x"])]
    b = [image("b", ["y"])]
    assert candidate_literals(ProblemFacts(tuple(a), tuple(b), ()), "category.lp") == {("category", "x")}


# attribute.lp -----------------------------------------------------------------------------------


def test_single_attribute():
    a = [image(f"a{i}", attributes={"convex": 1, "symmetric": i % 2}) for i in range(6)]
    b = [image(f"b{i}", attributes={"convex": 0, "symmetric": i % 2}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "attribute.lp"))
    assert rules == {"concept(I) :- image(I), attr(I,convex,1)."}


def test_negated_attribute_and_not_applicable_values():
    a = [image(f"a{i}", attributes={"has_curve": 0}) for i in range(5)] + [image("a5", attributes={"has_curve": None})]
    b = [image(f"b{i}", attributes={"has_curve": 1}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "attribute.lp"))
    assert rules == {"concept(I) :- image(I), not attr(I,has_curve,1)."}


def test_conjunction_of_two_attributes_with_ties_enumerated():
    both = {"symmetric": 1, "closed_shape": 1, "convex": 1}
    a = [image(f"a{i}", attributes=both) for i in range(6)]
    b = [image("b0", attributes={"symmetric": 0, "closed_shape": 1, "convex": 1}),
         image("b1", attributes={"symmetric": 1, "closed_shape": 0, "convex": 0})] * 3
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "attribute.lp"))
    assert rules == {
        "concept(I) :- image(I), attr(I,closed_shape,1), attr(I,symmetric,1).",
        "concept(I) :- image(I), attr(I,convex,1), attr(I,symmetric,1).",
    }


# count.lp ---------------------------------------------------------------------------------------


def test_count_equal_reaches_a_number_never_named():
    a = [image(f"a{i}", counts={"straight_lines": 8, "arcs": i % 2}) for i in range(6)]
    b = [image(f"b{i}", counts={"straight_lines": 6 + 3 * (i % 2), "arcs": i % 2}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), count(I,straight_lines,8)."}


def test_a_threshold_is_longer_than_an_equality():
    a = [image(f"a{i}", counts={"parts": 2}) for i in range(6)]
    b = [image(f"b{i}", counts={"parts": 1}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), count(I,parts,2)."}
    a = [image(f"a{i}", counts={"parts": 2 + i % 2}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), not count(I,parts,1)."}
    b = [image(f"b{i}", counts={"parts": i % 2}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), count(I,parts,N0), N0 >= 2."}


def test_count_candidates():
    a = [image("a", counts={"arcs": 1}), image("b", counts={"arcs": 2})]
    b = [image("c", counts={"arcs": 0}), image("d", counts={"arcs": 3})]
    literals = candidate_literals(ProblemFacts(tuple(a), tuple(b), ()), "count.lp")
    assert literals == {
        ("count", "arcs", "eq", 1), ("count", "arcs", "eq", 2),
        ("count", "arcs", "ge", 1), ("count", "arcs", "ge", 2),
        ("count", "arcs", "le", 1), ("count", "arcs", "le", 2),
        ("neg", ("count", "arcs", "eq", 0)), ("neg", ("count", "arcs", "eq", 3)),
    }


# rule.lp with every family ----------------------------------------------------------------------


def test_shortest_rule_wins_over_family_preference():
    """Two rare counts together separate A from B; one common attribute is shorter and wins."""
    a = [image(f"a{i}", attributes={"convex": 1}, counts={"arcs": 1, "straight_lines": 2}) for i in range(6)]
    b = [image(f"b{i}", attributes={"convex": 0}, counts={"arcs": 1, "straight_lines": 3}) for i in range(3)]
    b += [image(f"c{i}", attributes={"convex": 0}, counts={"arcs": 2, "straight_lines": 2}) for i in range(3)]
    facts = ProblemFacts(tuple(a), tuple(b), ())
    assert optimal_rules(facts, ENCODINGS) == {"concept(I) :- image(I), attr(I,convex,1)."}
    assert optimal_rules(facts, ("rule.lp", "count.lp", "prior.lp")) == {
        "concept(I) :- image(I), count(I,arcs,1), count(I,straight_lines,2).",
    }


def test_equally_short_rules_prefer_the_more_specific_family():
    """A category and a stroke sequence name one shape: they tie, and beat attributes and counts."""
    a = [image("p", ["square"], {"convex": 1}, {"straight_lines": 4}) for _ in range(6)]
    b = [image(f"n{i}", [f"other{i}"], {"convex": 0}, {"straight_lines": 3}) for i in range(6)]
    facts = ProblemFacts(tuple(a), tuple(b), ())
    induction = induce(facts)
    assert [r.rule.asp for r in induction.rules] == [
        'concept(I) :- image(I), category(I,_,"square").',
        'concept(I) :- image(I), seq(I,"p").',
    ]

def test_equally_short_rules_prefer_the_rarest_literal():
    """prior.lp: convex splits the library 75 / 552, has_curve 347 / 280; six convex images in A and
    six non-convex ones in B are the smaller coincidence under "convex"."""
    a = [image(f"a{i}", attributes={"convex": 1, "has_curve": 1}) for i in range(6)]
    b = [image(f"b{i}", attributes={"convex": 0, "has_curve": 0}) for i in range(6)]
    facts = ProblemFacts(tuple(a), tuple(b), ())
    assert optimal_rules(facts, ("rule.lp", "attribute.lp")) == {
        "concept(I) :- image(I), attr(I,convex,1).",
        "concept(I) :- image(I), attr(I,has_curve,1).",
    }
    assert optimal_rules(facts, ("rule.lp", "attribute.lp", "prior.lp")) == {
        "concept(I) :- image(I), attr(I,convex,1)."
    }


def test_a_literal_holds_when_one_of_two_shapes_has_it():
    """Basic problems: each B image keeps one of the two shapes, so one literal cannot separate."""
    x = image("x1", ["x"], counts={"acute_angles": 3})
    y = image("y1", ["y"], counts={"acute_angles": 4})
    a = [two_shapes(x, y)] * 6
    b = [two_shapes(x, image(f"r{i}", [f"r{i}"], counts={"acute_angles": 5})) for i in range(3)]
    b += [two_shapes(image(f"s{i}", [f"s{i}"], counts={"acute_angles": 6}), y) for i in range(3)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "category.lp", "count.lp", "prior.lp"))
    assert rules == {'concept(I) :- image(I), category(I,S1,"x"), category(I,S2,"y"), S1 != S2.'}


def test_queries_are_covered_but_do_not_count():
    a = [image(f"a{i}", counts={"arcs": 2}) for i in range(6)]
    b = [image(f"b{i}", counts={"arcs": i % 2}) for i in range(6)]
    queries = [image("q0", counts={"arcs": 2}), image("q1", counts={"arcs": 5})]
    induction = induce(ProblemFacts(tuple(a), tuple(b), tuple(queries)), encodings=("rule.lp", "count.lp"))
    assert induction.cost == (0, 1, -930)
    by_rule = {r.rule.asp: (("q", 0) in r.covered, ("q", 1) in r.covered) for r in induction.rules}
    assert by_rule == {"concept(I) :- image(I), count(I,arcs,2).": (True, False)}


@pytest.mark.parametrize("max_rules", [1, 3])
def test_enumeration_stops_at_max_rules(max_rules):
    a = [image(f"a{i}", attributes={f"x{k}": 1 for k in range(5)}) for i in range(6)]
    b = [image(f"b{i}", attributes={f"x{k}": 0 for k in range(5)}) for i in range(6)]
    induction = induce(ProblemFacts(tuple(a), tuple(b), ()), encodings=("rule.lp", "attribute.lp"),
                       max_rules=max_rules)
    assert len(induction.rules) == max_rules
    assert induction.cost == (0, 1, -930)


def test_a_count_with_several_readings_matches_each():
    """Seven lines when a crossing line counts as one, eight when it counts as two."""
    a = [image(f"a{i}", counts={"straight_lines": (7, 8) if i < 3 else (8,)}) for i in range(6)]
    b = [image(f"b{i}", counts={"straight_lines": (6, 7) if i < 3 else (9,)}) for i in range(6)]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), count(I,straight_lines,8)."}


def test_prior_covers_the_facts_the_solver_writes():
    """prior.lp is generated from the features (python -m solver.induction.prior): its names must be current."""
    import re
    from importlib import resources

    from dsl.library import ATTRIBUTES
    from solver.induction.facts import COUNTED_ATTRIBUTES, COUNTS

    text = resources.files("solver").joinpath("encodings", "prior.lp").read_text()
    attributes = set(re.findall(r"^info\(attr\((\w+)\)", text, re.M))
    counts = set(re.findall(r"^info\(count\((\w+),", text, re.M))
    assert attributes == set(ATTRIBUTES) - COUNTED_ATTRIBUTES
    assert counts == set(COUNTS)


def test_prior_is_what_its_generator_writes_from_the_current_features(tmp_path):
    """The shipped prior.lp, line for line, is `python -m solver.induction.prior`'s output: the base rates are those of
    the library's shapes under today's features (a change of the features that moves a rate regenerates the file)."""
    from importlib import resources

    from solver.induction.prior import write_prior

    shipped = resources.files("solver").joinpath("encodings", "prior.lp").read_text()
    assert write_prior(tmp_path / "prior.lp").read_text() == shipped


# sequence.lp with tolerances (near facts from solver.induction.facts) -------------------------------------


def ff_shape(turns=(0, 90, 30, 120), strokes=None, lengths=None, arc_at=None):
    """A free-form-like shape of unit lines (an arc of radius 0.5 and 90 degrees at index arc_at); not a
    library shape, so no category literal competes."""
    from dsl.types import Action, Shape, StrokeType

    strokes = strokes or [StrokeType.NORMAL] * len(turns)
    lengths = lengths or [1.0] * len(turns)
    return Shape(tuple(Action.arc(0.5, 90.0, t, s) if k == arc_at else Action.line(n, t, s)
                       for k, (t, s, n) in enumerate(zip(turns, strokes, lengths))))


def programs_facts(a, b, queries=()) -> ProblemFacts:
    from dsl.types import ImageProgram
    from solver.induction.facts import problem_facts

    as_images = lambda shapes: [ImageProgram((s,)) for s in shapes]  # noqa: E731
    return problem_facts(as_images(a), as_images(b), as_images(queries))


def free_form_negatives():
    """The three perturbations of the generator (spec §3.2): another kind, another turn, another stroke."""
    from dsl.types import StrokeType

    zigzag = [StrokeType.NORMAL, StrokeType.ZIGZAG, StrokeType.NORMAL, StrokeType.NORMAL]
    return [ff_shape(arc_at=2), ff_shape(turns=(0, 90, 90, 120)), ff_shape(strokes=zigzag)] * 2


def test_tolerances_never_merge_a_free_form_negative():
    from solver.induction.facts import TOLERANCES, near

    positive = ff_shape()
    for negative in free_form_negatives()[:2]:
        assert not any(near(positive, negative, t) for t in TOLERANCES)
    stroke_changed = free_form_negatives()[2]
    assert [t for t in TOLERANCES if near(positive, stroke_changed, t)] == ["strokes"]
    noisy = ff_shape(turns=(0, 94, 27, 120), lengths=[1.0, 1.06, 0.97, 1.0])
    assert near(positive, noisy, "values") and near(noisy, positive, "values")
    assert near(positive, ff_shape(turns=(0, 108, 30, 120)), "loose")
    assert not near(positive, ff_shape(turns=(0, 108, 30, 120)), "values")


def test_nearness_answers_as_near_for_every_pair_and_tolerance():
    """facts._Nearness (each pair once, counts of action kinds and strokes first, tolerances inferred from
    wider and narrower ones) gives `near`'s answer everywhere, near or not, either way round."""
    from dsl.types import StrokeType
    from solver.induction.facts import TOLERANCES, _Nearness, near

    shapes = [ff_shape(), ff_shape(turns=(0, 94, 27, 120), lengths=[1.0, 1.06, 0.97, 1.0]),
              ff_shape(turns=(0, 108, 30, 120)), ff_shape(turns=(0, 120, 60)),
              ff_shape(strokes=[StrokeType.NORMAL, StrokeType.NORMAL, StrokeType.SQUARE, StrokeType.NORMAL]),
              ff_shape(strokes=[StrokeType.NORMAL, StrokeType.SQUARE, StrokeType.NORMAL, StrokeType.NORMAL],
                       turns=(0, 95, 30, 120)),
              *free_form_negatives()[:3]]
    nearness = _Nearness()
    answers = {(i, j, t): nearness(a, b, t) for i, a in enumerate(shapes) for j, b in enumerate(shapes)
               for t in TOLERANCES}
    assert answers == {(i, j, t): near(a, b, t) for i, a in enumerate(shapes) for j, b in enumerate(shapes)
                       for t in TOLERANCES}
    assert any(answers.values()) and not all(answers.values())


def test_no_time_at_all_stops_the_search_and_says_so():
    facts = programs_facts([ff_shape()] * 6, free_form_negatives())
    hurried = induce(facts, time_limit=0.0)
    assert hurried.outcome in (Outcome.TIME_LIMIT, Outcome.NO_RULE)
    assert induce(facts, time_limit=5.0).outcome is Outcome.OPTIMAL  # the next run is not interrupted


def test_exact_programs_win_with_ground_truth_programs():
    facts = programs_facts([ff_shape()] * 6, free_form_negatives())
    rules = {r.rule.asp for r in induce(facts, time_limit=5.0).rules}
    assert rules == {'concept(I) :- image(I), seq(I,"' + facts.context_a[0].shapes[0].sequence + '").'}


def test_value_tolerance_absorbs_a_misperceived_context_image_and_query():
    noisy = ff_shape(turns=(0, 95, 30, 120), lengths=[1.0, 1.0, 1.04, 1.0])
    facts = programs_facts([ff_shape()] * 5 + [noisy], free_form_negatives(),
                           [ff_shape(turns=(0, 90, 34, 120)), ff_shape(turns=(0, 90, 90, 120))])
    induction = induce(facts, time_limit=5.0)
    assert induction.cost[0] == 0
    literals = {lit for r in induction.rules for lit in r.rule.literals}
    assert {(lit.family.value, lit.tolerance) for lit in literals} == {("seq_near", "values")}
    assert all(("q", 0) in r.covered and ("q", 1) not in r.covered for r in induction.rules)


def test_stroke_tolerance_only_when_set_b_differs_in_geometry():
    from dsl.types import StrokeType

    misread = ff_shape(strokes=[StrokeType.NORMAL, StrokeType.NORMAL, StrokeType.SQUARE, StrokeType.NORMAL])
    geometric_negatives = free_form_negatives()[:2] * 3
    facts = programs_facts([ff_shape()] * 5 + [misread], geometric_negatives)
    best = induce(facts, time_limit=5.0).rules[0].rule
    assert best.errors == 0 and best.literals[0].tolerance == "strokes"
    facts = programs_facts([ff_shape()] * 5 + [misread], free_form_negatives())
    assert induce(facts, time_limit=5.0).rules[0].rule.literals[0].family.value == "seq"


def test_two_shape_images_near_both_programs():
    from dsl.types import ImageProgram
    from solver.induction.facts import problem_facts

    pair = ImageProgram((ff_shape(), ff_shape(turns=(0, 120, 60))))
    noisy = ImageProgram((ff_shape(turns=(0, 120, 64)), ff_shape(turns=(0, 92, 30, 120))))
    other = ImageProgram((ff_shape(), ff_shape(turns=(0, 120, 120))))
    facts = problem_facts([pair] * 5 + [noisy], [other] * 6, [noisy])
    induction = induce(facts, time_limit=5.0)
    assert induction.cost[0] == 0
    assert all(r.rule.literals[0].family.value in ("image_near", "seq_near") for r in induction.rules)
    assert all(("q", 0) in r.covered for r in induction.rules)


# contradictions (rule.lp, attribute.lp, count.lp) -------------------------------------------------


def every_rule(facts: ProblemFacts) -> list:
    """Every rule of at most two literals, optimised or not (nothing is optimised: max_errors = all)."""
    induction = induce(facts, all_fitting=True, max_errors=len(facts.context_a) + len(facts.context_b),
                       max_rules=0, time_limit=20.0)
    assert induction.outcome is Outcome.OPTIMAL
    return [induced.rule for induced in induction.rules]


def test_no_rule_contradicts_itself():
    """Zero and three straight lines, an attribute and its negation, a count and its negation: no image can
    have both, so no rule says both, whatever it costs."""
    shapes = [(0, 1), (3, 0), (0, 0), (3, 1), (4, 1), (0, 1), (0, 1), (3, 0), (4, 0), (3, 1), (0, 1), (3, 0)]
    images = [image(f"s{n}", attributes={"convex": c}, counts={"straight_lines": n}) for n, c in shapes]
    rules = every_rule(ProblemFacts(tuple(images[:6]), tuple(images[6:]), ()))
    texts = [rule.asp for rule in rules]
    assert "concept(I) :- image(I), count(I,straight_lines,0), count(I,straight_lines,3)." not in texts
    assert not any("attr(I,convex,1), not attr(I,convex,1)" in t for t in texts)
    assert not any("count(I,straight_lines,3), not count(I,straight_lines,3)" in t for t in texts)
    assert not any('seq(I,"s0"), seq(I,"s3")' in t for t in texts)
    assert "concept(I) :- image(I), count(I,straight_lines,0)." in texts


def test_two_values_of_one_count_when_an_image_reads_as_both():
    """A line cut by a crossing is one line or two segments: four and six straight lines is a concept."""
    a = [image(f"a{i}", counts={"straight_lines": (4, 5, 6)}) for i in range(6)]
    b = [image(f"b{i}", counts={"straight_lines": n}) for i, n in enumerate((4, (4, 5), (4, 5), 6, (5, 6), (5, 6)))]
    rules = optimal_rules(ProblemFacts(tuple(a), tuple(b), ()), ("rule.lp", "count.lp"))
    assert rules == {"concept(I) :- image(I), count(I,straight_lines,4), count(I,straight_lines,6)."}


def test_two_literals_of_one_count_only_as_a_range_or_two_readings():
    a = [image(f"a{i}", counts={"straight_lines": n}) for i, n in enumerate((3, 4, 5, 3, 4, 5))]
    b = [image(f"b{i}", counts={"straight_lines": n}) for i, n in enumerate((1, 2, 6, 7, 8, 9))]
    facts = ProblemFacts(tuple(a), tuple(b), ())
    pairs = [rule for rule in every_rule(facts) if len(rule.literals) == 2
             and all(lit.name == "straight_lines" for lit in rule.literals)]
    assert pairs and all({lit.comparison.value for lit in rule.literals} == {"ge", "le"} for rule in pairs)
    assert optimal_rules(facts, ("rule.lp", "count.lp", "prior.lp")) == {
        "concept(I) :- image(I), count(I,straight_lines,N0), N0 >= 3, count(I,straight_lines,N1), N1 <= 5."}


def test_a_rule_no_image_of_a_satisfies_is_never_the_answer():
    """B repeats A's two images three times each: a rule of zero and three straight lines puts nothing in A
    and misclassifies only A's two images, but holds of no image; the answer covers an image of A."""
    zero, three = ({"counts": {"straight_lines": n}} for n in (0, 3))
    facts = ProblemFacts((image("s0", **zero), image("s3", **three)),
                         tuple(image("s0", **zero) for _ in range(3)) + tuple(image("s3", **three) for _ in range(3)), ())
    induction = induce(facts, time_limit=5.0)
    assert induction.rules and induction.cost[0] == 4
    assert all(any(image[0] == "a" for image in induced.covered) for induced in induction.rules)
