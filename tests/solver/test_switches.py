"""Each ablation switch (`solver.reading.Switches`) turns off what it names and nothing runs in its place: a test per
switch, on a generated problem rendered in memory (perception) or its true programs (induction, confidence)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from dsl.commands import render_problem
from dsl.generate import ProblemKind, generate_problem, plan_problems
from dsl.raster import OFFICIAL_SIZE
from solver.reading import PRODUCT, Perceived, PixelPerception, Switches

SEED = 5505


@functools.cache
def problem(kind: ProblemKind, index: int = 0):
    """A generated problem: (images in solving order: set A, set B, the queries; their true programs)."""
    generated = generate_problem(plan_problems(kind, index + 1, SEED)[index], SEED)
    positives, negatives = render_problem(generated, OFFICIAL_SIZE)
    images = positives[:6] + negatives[:6] + [positives[6], negatives[6]]
    programs = list(generated.positives[:6] + generated.negatives[:6] + (generated.positives[6], generated.negatives[6]))
    return images, programs


def verdicts(readings: list[Perceived]) -> list:
    return [(r.evidence or {}).get("verdict") for r in readings]


def spy(monkeypatch, module, name: str) -> list:
    """Calls of `module.name` recorded (their arguments), the function still run."""
    calls, original = [], getattr(module, name)

    def recorded(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return calls


def test_the_default_switches_are_the_products_and_say_which_are_off():
    assert PRODUCT == Switches() and PRODUCT.off() == ()
    assert Switches(tracer=False, posterior=False).off() == ("tracer", "posterior")
    with PixelPerception() as perception:
        assert perception.switches == PRODUCT
    with PixelPerception(refine=False, per_problem=False) as perception:  # the older flags are the same switches
        assert perception.switches.off() == ("hypotheses", "search")


@pytest.mark.parametrize("on", [True, False])
def test_without_hypotheses_no_image_is_checked_against_h(monkeypatch, on):
    import solver.reading.perception as perceiving
    import solver.reading.verdicts as checks

    formed = spy(monkeypatch, perceiving, "perceive_problem")
    checked = spy(monkeypatch, checks, "check")
    images, _ = problem(ProblemKind.FREE_FORM)
    with PixelPerception(switches=Switches(hypotheses=on)) as perception:
        readings = perception.perceive(images, positives=6, negatives=6)
    assert all(r.program is not None for r in readings)
    if on:
        assert formed and checked and "hypothesis" in verdicts(readings)
    else:
        assert not formed and not checked and set(verdicts(readings)) == {None}


@pytest.mark.parametrize("on", [True, False])
def test_without_near_misses_the_check_fits_h_alone(monkeypatch, on):
    import solver.reading.verdicts as checks

    checked = spy(monkeypatch, checks, "check")
    written = spy(monkeypatch, checks, "_otherwise_written")
    images, _ = problem(ProblemKind.FREE_FORM)
    with PixelPerception(switches=Switches(near_misses=on)) as perception:
        readings = perception.perceive(images, positives=6, negatives=6)
    against_neighbours = [args[2] if len(args) > 2 else kwargs.get("neighbours", True) for args, kwargs in checked]
    if on:  # set B holds H's near misses: the check finds them
        assert any(against_neighbours) and "neighbour" in verdicts(readings)
    else:
        assert checked and not any(against_neighbours) and not written and "neighbour" not in verdicts(readings)


@pytest.mark.parametrize("on", [True, False])
def test_without_the_tracer_free_form_readings_stay_as_decoded(monkeypatch, on):
    import search.trace as tracing
    from solver.reading.traced import free_form_reading

    traced = spy(monkeypatch, tracing, "trace_free_form")
    images, _ = problem(ProblemKind.FREE_FORM)
    queries = images[12:]
    with PixelPerception(switches=Switches(tracer=on)) as perception:  # the queries read in full, in jobs
        proposals = perception.decode(queries)
        readings = perception.read_in_full(queries, None, proposals)
    assert bool(traced) == on
    if not on:
        for reading, props in zip(readings, proposals):
            decoded = free_form_reading(props[0].program)
            assert decoded is None or reading.program == decoded


def test_without_search_every_image_keeps_the_decoders_top_reading(monkeypatch):
    import solver.reading.workers as workers

    searched = spy(monkeypatch, workers, "refine_image")
    images, _ = problem(ProblemKind.BASIC)
    with PixelPerception(switches=Switches(search=False)) as perception:
        readings = perception.perceive(images, positives=6, negatives=6)
    assert not searched and perception.refine is False
    assert all(r.program == r.proposals[0].program for r in readings)


class TruePrograms:
    """A perception that reads each image as its true program (no models), with switches."""

    def __init__(self, programs: list, switches: Switches) -> None:
        self.programs, self.switches = programs, switches

    def perceive(self, pixels, positives: int, negatives: int) -> list[Perceived]:
        return [Perceived(program) for program in self.programs]


def _solved(kind: ProblemKind, switches: Switches, index: int = 0):
    from solver.solving import solve_images

    images, programs = problem(kind, index)
    loaded = [(np.full((8, 8), 255, np.uint8), None)] * len(images)
    return solve_images(loaded, [str(k) for k in range(len(images))], TruePrograms(programs, switches), 6, 6)


@pytest.mark.parametrize("on", [True, False])
def test_without_the_posterior_the_rule_is_clingos_first_optimal_one(monkeypatch, on):
    import solver.induction.optimal as optimal
    import solver.induction.weighing as weighing

    weighed = spy(monkeypatch, weighing, "size_principle")
    induced = spy(monkeypatch, weighing, "induce")
    solved = _solved(ProblemKind.ABSTRACT, Switches(posterior=on))
    assert solved.solution.rule is not None
    assert bool(weighed) == on  # an abstract problem: an attribute or count rule wins, the posterior weighs it
    if not on:  # one clingo call, its rules as they are
        assert len(induced) == 1
        first = optimal.induce(*induced[0][0], **induced[0][1])
        assert solved.solution.rule == first.rules[0].rule


@pytest.mark.parametrize("on", [True, False])
def test_without_the_confidence_model_each_confidence_is_the_votes_share(monkeypatch, on):
    import solver.solving.folder as folder
    from solver.induction import DEFAULT_MAX_RULES, DEFAULT_TIME_LIMIT
    from solver.solving import ProblemInput, solve_programs

    calibrated = spy(monkeypatch, folder, "query_confidences")
    solved = _solved(ProblemKind.BASIC, Switches(confidence=on))
    assert bool(calibrated) == on
    _, programs = problem(ProblemKind.BASIC)
    voted = solve_programs(ProblemInput(programs[:6], programs[6:12], programs[12:]), oracle=True, perception=None,
                           decoded=True, time_limit=DEFAULT_TIME_LIMIT, max_rules=DEFAULT_MAX_RULES)
    assert solved.solution.labels == voted.labels
    if not on:  # the vote's share, nothing calibrated
        assert solved.solution.confidence == voted.confidence and solved.query_features == []
    else:
        assert solved.query_features


@pytest.mark.parametrize("source", [None, "geometry", "table"])
def test_the_attribute_source_switch_sets_where_the_facts_attributes_come_from(monkeypatch, source):
    import solver.induction.facts as facts
    from solver.induction import AttributeSource
    from solver.settings import ATTRIBUTE_SOURCE

    seen = []
    original = facts.shape_facts

    def recorded(*args, **kwargs):
        seen.append(facts.current_attribute_source())
        return original(*args, **kwargs)

    monkeypatch.setattr(facts, "shape_facts", recorded)
    _solved(ProblemKind.ABSTRACT, Switches(attributes=source))
    assert seen and set(seen) == {AttributeSource(source or ATTRIBUTE_SOURCE)}
    assert facts.current_attribute_source() is AttributeSource(ATTRIBUTE_SOURCE)  # as it was, after the problem
