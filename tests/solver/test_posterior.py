"""Size-principle rule selection (solver.induction.pools, solver.induction.posterior) and the decoded-mode category look-up."""

from __future__ import annotations

import random
from dataclasses import replace

from dsl.canonical import from_travel_form, travel_variants
from dsl.library import load_library
from dsl.types import Shape
from search import categories
from solver.induction.facts import ImageFacts, ProblemFacts, ShapeFacts, shape_facts
from solver.induction.optimal import ABSTRACT_ENCODINGS, induce
from solver.induction.pools import library_size, literal_pool
from solver.induction.posterior import rank
from solver.induction.rules import Comparison, Family, Literal


def image(attributes: dict, lines: int) -> ImageFacts:
    return ImageFacts((ShapeFacts("s", (), dict(attributes), {"straight_lines": (lines,)}),))


ATTR = {name: Literal(Family.ATTRIBUTE, name) for name in ("convex", "exist_quadrangle", "has_curve")}


def test_pools_are_the_library_shapes_a_literal_holds_of():
    everything = (1 << library_size()) - 1
    curve = literal_pool(ATTR["has_curve"])
    assert literal_pool(Literal(Family.ATTRIBUTE, "has_curve", negated=True)) == everything & ~curve
    four = literal_pool(Literal(Family.COUNT, "straight_lines", comparison=Comparison.EQ, value=4))
    at_least_four = literal_pool(Literal(Family.COUNT, "straight_lines", comparison=Comparison.GE, value=4))
    assert four & ~at_least_four == 0 and four != at_least_four
    assert literal_pool(Literal(Family.SEQUENCE, "line_normal_1.000-0.500")) is None


def test_shipped_pools_agree_with_the_facts_of_library_shapes():
    library = list(load_library().values())
    for k in random.Random(0).sample(range(len(library)), 8):
        facts = shape_facts(library[k].shape)
        for name, value in facts.attributes.items():
            assert bool(literal_pool(Literal(Family.ATTRIBUTE, name)) >> k & 1) == (value == 1), (k, name)
        for n in facts.counts["straight_lines"]:
            pool = literal_pool(Literal(Family.COUNT, "straight_lines", comparison=Comparison.EQ, value=n))
            assert pool >> k & 1


def test_a_smaller_consistent_pair_beats_a_shorter_broad_rule():
    # Concept: convex and four straight lines. exist_quadrangle also separates the context (a chance
    # rule), but its pools are larger and set B does not look like "one attribute violated".
    quad = {"convex": 1, "exist_quadrangle": 1, "has_curve": 0}
    a = [image(quad, 4)] * 6
    b = [image({"convex": 1, "exist_quadrangle": 0, "has_curve": 0}, 3)] * 3
    b += [image({"convex": 0, "exist_quadrangle": 0, "has_curve": 0}, 4)] * 3
    facts = ProblemFacts(tuple(a), tuple(b), (image(quad, 4), image({"convex": 0, "exist_quadrangle": 1}, 5)))
    fitting = induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096)
    rules = {r.rule.asp for r in fitting.rules}
    assert "concept(I) :- image(I), attr(I,exist_quadrangle,1)." in rules
    ranked = rank(fitting, facts)
    assert ranked.rules[0].rule.asp == "concept(I) :- image(I), attr(I,convex,1), count(I,straight_lines,4)."
    assert abs(sum(ranked.weights) - 1.0) < 1e-9 and list(ranked.weights) == sorted(ranked.weights, reverse=True)


def test_single_attribute_concept_keeps_its_one_literal_rule():
    a = [image({"convex": 1, "has_curve": 0}, n) for n in (3, 4, 4, 5, 6, 3)]
    b = [image({"convex": 0, "has_curve": 0}, n) for n in (3, 4, 5, 6, 7, 8)]
    facts = ProblemFacts(tuple(a), tuple(b), ())
    ranked = rank(induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096), facts)
    assert ranked.rules[0].rule.asp == "concept(I) :- image(I), attr(I,convex,1)."


def test_decoded_categories_take_the_exact_library_shape_first(monkeypatch):
    import search.matching

    def no_geometry(*args, **kwargs):
        raise AssertionError("the geometric matcher is not needed for an exact library shape")

    monkeypatch.setattr(search.matching, "match_shape", no_geometry)
    shape = load_library()["square"].shape
    redrawn = from_travel_form(travel_variants(shape)[-1])
    assert "square" in categories.matched_shape_categories(redrawn)


def test_decoded_categories_are_matched_once_per_canonical_shape(monkeypatch):
    import search.matching

    calls = []
    original = search.matching.best_match_names

    def counting(shape, min_score):
        calls.append(shape)
        return original(shape, min_score)

    monkeypatch.setattr(search.matching, "best_match_names", counting)
    square = load_library()["square"].shape
    stretched = Shape((square.actions[0],) + (replace(square.actions[1], length=square.actions[1].length * 1.07),)
                      + square.actions[2:])
    variants = [from_travel_form(v) for v in travel_variants(stretched)[:2]]
    assert variants[0] != variants[1]
    first = categories.matched_shape_categories(variants[0])
    assert categories.matched_shape_categories(variants[1]) == first
    assert len(calls) == 1


def test_categories_matched_in_another_process_are_not_matched_again(monkeypatch):
    import search.matching

    square = load_library()["square"].shape
    stretched = Shape((square.actions[0],) + (replace(square.actions[1], length=square.actions[1].length * 1.07),)
                      + square.actions[2:])
    from dsl.types import ImageProgram

    program = ImageProgram((square, stretched))
    known = categories.known_categories(program)  # as a worker process sends them
    assert len(known) == 1  # the square draws a library shape exactly: nothing to send for it
    names = known[0][1]
    monkeypatch.setattr(categories, "_MATCHED", {})  # the solving process, which has matched nothing yet
    categories.remember_categories(known)

    def refused(shape, *args, **kwargs):
        raise AssertionError("matched again")

    monkeypatch.setattr(search.matching, "match_shape", refused)
    monkeypatch.setattr(search.matching, "best_match_names", refused)
    assert categories.matched_shape_categories(stretched) == names


def _one_image_of_a_read_not_convex() -> tuple[tuple, tuple]:
    """Sets A and B of the concept convex and four straight lines, one image of A read as not convex."""
    quad = {"convex": 1, "exist_quadrangle": 1, "has_curve": 0}
    a = [image(quad, 4)] * 5 + [image(quad | {"convex": 0}, 4)]
    b = [image({"convex": 1, "exist_quadrangle": 0, "has_curve": 0}, 3)] * 3
    b += [image({"convex": 0, "exist_quadrangle": 0, "has_curve": 0}, 4)] * 3
    return tuple(a), tuple(b)


def test_rules_with_one_more_misfit_compete_and_the_misfit_counts_as_noise():
    # Concept: convex and four straight lines; one image of A is read as not convex (a feature that
    # disagrees with the concept's labels). exist_quadrangle then fits the context exactly by chance;
    # the concept misfits one image, and still wins on the pools.
    facts = ProblemFacts(*_one_image_of_a_read_not_convex(), ())
    best = induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096)
    assert best.cost == (0,)
    exact = induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096, max_errors=0)
    assert {r.rule.asp for r in exact.rules} == {r.rule.asp for r in best.rules}
    near = induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096, max_errors=1)
    costs = [r.cost for r in near.rules]
    assert set(costs) == {(0,), (1,)} and costs == sorted(costs)
    assert all(r.rule.errors == r.cost[0] for r in near.rules)
    concept = "concept(I) :- image(I), attr(I,convex,1), count(I,straight_lines,4)."
    assert concept not in {r.rule.asp for r in best.rules}
    assert rank(near, facts).rules[0].rule.asp == concept


def test_the_prior_prefers_what_a_has_and_pairs_the_generator_could_draw():
    from solver.induction.posterior import LENGTH_PENALTY, NEGATION_PENALTY, NOT_A_CONCEPT_PENALTY, log_prior
    from solver.induction.rules import Rule

    convex, curve = ATTR["convex"], ATTR["has_curve"]
    not_curve = Literal(Family.ATTRIBUTE, "has_curve", negated=True)
    assert log_prior(Rule((convex, curve), length=2)) == -2 * LENGTH_PENALTY  # a pair the generator makes
    assert log_prior(Rule((convex, not_curve), length=3)) == -3 * LENGTH_PENALTY - NEGATION_PENALTY - NOT_A_CONCEPT_PENALTY
    five_arcs = Literal(Family.COUNT, "arcs", negated=True, comparison=Comparison.EQ, value=5)
    assert (literal_pool(ATTR["has_curve"]) & ~literal_pool(five_arcs)).bit_count() < 10  # arcs = 5: a few shapes
    assert log_prior(Rule((curve, five_arcs), length=3)) == -3 * LENGTH_PENALTY - NEGATION_PENALTY - NOT_A_CONCEPT_PENALTY
    line, obtuse = Literal(Family.ATTRIBUTE, "has_straight_line"), Literal(Family.ATTRIBUTE, "has_obtuse_angle")
    # {no straight line, an obtuse angle} holds 4 shapes: the generator never pairs the two (spec, appendix A)
    assert log_prior(Rule((line, obtuse), length=2)) == -2 * LENGTH_PENALTY - NOT_A_CONCEPT_PENALTY


def test_the_prior_charges_a_count_equality_no_attribute_of_the_table_names():
    from solver.induction.posterior import LENGTH_PENALTY, NOT_A_CONCEPT_PENALTY, log_prior
    from solver.induction.rules import Rule

    def count(name: str, value: int, negated: bool = False) -> Literal:
        return Literal(Family.COUNT, name, negated, Comparison.EQ, value)

    symmetric = Literal(Family.ATTRIBUTE, "symmetric")
    assert log_prior(Rule((symmetric, count("parts", 2)), length=2)) == -2 * LENGTH_PENALTY
    assert log_prior(Rule((symmetric, count("straight_lines", 5)), length=2)) == -2 * LENGTH_PENALTY
    assert log_prior(Rule((symmetric, count("parts", 1)), length=2)) == -2 * LENGTH_PENALTY - NOT_A_CONCEPT_PENALTY
    assert log_prior(Rule((symmetric, count("arcs", 1)), length=2)) == -2 * LENGTH_PENALTY - NOT_A_CONCEPT_PENALTY
    has_a_line = count("straight_lines", 0, negated=True)  # 'has a straight line': a negation, not an equality
    assert log_prior(Rule((symmetric, has_a_line), length=3)) > log_prior(Rule((symmetric, count("arcs", 1)), length=3))


def two_shapes(first: str | None, second: str | None, curve: int, symmetric: int) -> ImageFacts:
    """An image of two shapes with these categories (None: a shape perception did not name), one attribute each."""
    return ImageFacts((ShapeFacts("s1", (first,) if first else (), {"has_curve": curve}, {}),
                       ShapeFacts("s2", (second,) if second else (), {"symmetric": symmetric}, {})))


def test_a_basic_problem_misread_in_two_images_of_a_is_still_read_as_its_shapes():
    from solver.induction.weighing import size_principle, weighed

    misread = [two_shapes("square", None, 1, 1), two_shapes(None, "closed_circle", 1, 1)]
    a = [two_shapes("square", "closed_circle", 1, 1)] * 4 + misread
    b = [two_shapes("square", None, 0, 1), two_shapes("square", None, 1, 0), two_shapes("square", None, 0, 1),
         two_shapes(None, "closed_circle", 1, 0), two_shapes(None, "closed_circle", 0, 1),
         two_shapes(None, "closed_circle", 1, 0)]
    facts = ProblemFacts(tuple(a), tuple(b), (), tolerant=False)
    first = induce(facts)
    assert first.rules[0].rule.asp == "concept(I) :- image(I), attr(I,has_curve,1), attr(I,symmetric,1)."
    assert weighed(first)
    rule = size_principle(first, facts, 10.0).rules[0].rule
    assert rule.asp == 'concept(I) :- image(I), category(I,S1,"closed_circle"), category(I,S2,"square"), S1 != S2.'
    assert rule.errors == 2


def test_set_b_splits_as_the_pair_generator_draws_it():
    from solver.induction.posterior import group_split_probability

    six = {first: group_split_probability(first, 6 - first) for first in range(7)}
    assert abs(sum(six.values()) - 1.0) < 1e-12
    assert abs(six[3] - 4 / 7) < 1e-12 and abs(six[2] - 3 / 14) < 1e-12 and abs(six[4] - 3 / 14) < 1e-12
    assert six[0] == six[1] == six[5] == six[6] == 0.0
    five = [group_split_probability(first, 5 - first) for first in range(6)]  # one image of B unreadable
    assert abs(sum(five) - 1.0) < 1e-12


def test_a_violated_attribute_is_value_0_not_an_attribute_that_does_not_apply():
    from solver.induction.pools import failing_pool

    convex = ATTR["convex"]
    failing = failing_pool(convex)
    library = list(load_library().values())
    for k in random.Random(1).sample(range(len(library)), 12):
        value = shape_facts(library[k].shape).attributes.get("convex")
        assert bool(failing >> k & 1) == (value == 0), (k, value)
    assert failing & literal_pool(convex) == 0
    assert failing | literal_pool(convex) != (1 << library_size()) - 1  # open shapes: convex does not apply
    not_convex = Literal(Family.ATTRIBUTE, "convex", negated=True)
    assert failing_pool(not_convex) == literal_pool(convex)


def test_a_split_of_set_b_the_generator_cannot_make_costs_a_misread_image_per_image_moved():
    import math

    from solver.induction.posterior import NOISE, _pair_split

    assert math.isclose(_pair_split(3, 3, 0), math.log(4 / 7 / math.comb(6, 3)))
    assert math.isclose(_pair_split(4, 2, 0), math.log(3 / 14 / math.comb(6, 4)))
    assert math.isclose(_pair_split(5, 1, 0), math.log(NOISE) + _pair_split(4, 1, 1))
    assert math.isclose(_pair_split(6, 0, 0), 2 * math.log(NOISE) + _pair_split(4, 0, 2))
    # a noise image may have come from either group: 2 + 2 and two noise images sum over 4/2, 3/3 and 2/4
    assert _pair_split(2, 2, 2) > _pair_split(3, 3, 0)


def test_a_rule_without_literals_has_no_generator_likelihood():
    from solver.induction.optimal import InducedRule
    from solver.induction.posterior import log_likelihood
    from solver.induction.rules import Rule

    # a problem read so badly that its best rule puts every image in A (no literal): ranked without a likelihood,
    # not a crash (generated seed 10404, ff_nact4_0002, from pixels)
    facts = ProblemFacts((image({"closed": 1}, 3),) * 6, (image({"closed": 0}, 3),) * 6, ())
    rule = InducedRule(Rule((), errors=6), (6,), frozenset(), {})
    assert log_likelihood(rule, facts) is None


def test_a_pair_negative_holds_the_attribute_it_does_not_violate():
    # Concept self_transposed and has_line_crossing (official-generator problem hd_self_transposed-has_line_crossing,
    # true programs): two images of B are not self-transposed and cross, but are no two-part shapes (balanced_two does
    # not apply). The pair generator draws them from {self_transposed 0, has_line_crossing 1}; under balanced_two
    # with self_transposed they lie in no pool of the pair's negatives, so that rule must not win by its smaller pool.
    a = [image({"self_transposed": 1, "has_line_crossing": 1, "balanced_two": 1}, 4)] * 6
    b = [image({"self_transposed": 0, "has_line_crossing": 1, "balanced_two": None}, 4)] * 2
    b += [image({"self_transposed": 0, "has_line_crossing": 1, "balanced_two": 1}, 6)]
    b += [image({"self_transposed": 1, "has_line_crossing": 0, "balanced_two": 0}, 4)] * 3
    facts = ProblemFacts(tuple(a), tuple(b), (), tolerant=False)
    fitting = induce(facts, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096)
    rules = {r.rule.asp for r in fitting.rules}
    pair = "concept(I) :- image(I), attr(I,has_line_crossing,1), attr(I,self_transposed,1)."
    balanced = "concept(I) :- image(I), attr(I,balanced_two,1), attr(I,self_transposed,1)."
    assert {pair, balanced} <= rules
    assert rank(fitting, facts).rules[0].rule.asp == pair


def test_a_misfit_costs_more_in_true_programs_than_in_a_reading_from_pixels():
    import math

    from solver.induction.posterior import NOISE, NOISE_TRUE_PROGRAMS, log_likelihood, noise_rate

    read = ProblemFacts(*_one_image_of_a_read_not_convex(), ())
    true = replace(read, tolerant=False)
    assert noise_rate(read) == NOISE and noise_rate(true) == NOISE_TRUE_PROGRAMS < NOISE
    near = induce(read, encodings=ABSTRACT_ENCODINGS, all_fitting=True, max_rules=4096, max_errors=1)
    concept = next(r for r in near.rules if r.rule.asp.endswith("attr(I,convex,1), count(I,straight_lines,4)."))
    assert concept.rule.errors == 1  # the image of A read as not convex: one misfit, drawn as noise
    assert math.isclose(log_likelihood(concept, read) - log_likelihood(concept, true),
                        math.log(NOISE / NOISE_TRUE_PROGRAMS))
