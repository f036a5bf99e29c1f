"""Set A read as library shapes (steps 1 and 4 of `solver.reading.pipeline`), and the strategies that tell a
free-form program among library-looking images (`library_drawn`, `shared_free_form`, `stamped_free_form`), with
when the stroke types of library readings are chosen (`free_form_offered`, `strokes_asked`)."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from dsl.canonical import same_image
from dsl.features import table_disagreements
from dsl.free_form import free_form_drawable
from dsl.library import load_library
from dsl.types import ImageProgram, StrokeType
from search.neighbourhood import normal_strokes_only
from search.settings import INK_THRESHOLD
from search.template import template
from solver.reading.check import check_problem
from solver.reading.form import Formed, formed_from
from solver.reading.jobs import Stages
from solver.reading.library_check import checked_queries
from solver.reading.readings import Perceived
from solver.reading.reconcile import reconcile_with_context
from solver.reading.traced import free_form_reading
from solver.reading.verdicts import check_job, judged_one
from solver.settings import (
    DECODE_FIRST,
    DRAWABLE_A,
    DRAWABLE_TOLERANCE,
    FORM_BEAM,
    LEVEL_PX,
    LIBRARY_AGREE_CONFIDENCE,
    LIBRARY_STROKES_VARY,
    LIBRARY_SURE_A,
    MIN_A_EXPLAINED,
    OFFERED_NAMES,
    SPLIT_BEAM,
    STROKE_LOGP_SLACK,
    TRACE_BELOW_CONFIDENCE,
)


def _named_parts(found: dict, image: np.ndarray | None = None) -> list[tuple]:
    """(ink image, library shape name) of each ink part the classifier names for an image (its `guesses`: the top
    group's first name), or of the whole image (`image`) when it has not two parts; [] when nothing is named."""
    if len(found["parts"]) == 2 and all(found["parts"]):
        return [(part_image, part[0][0][0]) for part_image, part in zip(found["part_images"], found["parts"])]
    return [(image, found["whole"][0][0][0])] if found["whole"] else []


def library_key(found: dict) -> tuple:
    """The library shapes the classifier names first for an image (its `guesses`): a name per ink part (two parts:
    sorted), else the whole image's (`_named_parts`)."""
    return tuple(sorted(name for _, name in _named_parts(found)))


@functools.cache
def _length_per_spread(name: str) -> float:
    """The centreline length of a library shape (the polyline through its template's coarse points) over the rms
    distance of its centreline from its centroid: no unit, whatever the scale it is drawn at."""
    tpl = template(load_library()[name].shape.with_strokes(StrokeType.NORMAL))
    return float(np.linalg.norm(np.diff(tpl.coarse, axis=0), axis=1).sum()) / tpl.rms


def _ink_per_length(image: np.ndarray, found: dict) -> float:
    """An image's ink pixels per px of the centreline of the library shapes the classifier names first for it (its
    `guesses`, a shape per ink part), each shape's scale read from its ink's spread (the rms distance of the ink from
    its centroid, as the pose search's first guess reads it, `search.pose.guesses`): how much ink the strokes lay
    along the shape, without fitting a pose."""
    ink, length = 0, 0.0
    for part_image, name in _named_parts(found, image):
        points = np.argwhere(np.asarray(part_image) < INK_THRESHOLD)
        if len(points):
            ink += len(points)
            spread = float(np.sqrt(((points - points.mean(axis=0)) ** 2).sum(axis=1).mean()))
            length += _length_per_spread(name) * spread
    return ink / max(length, 1e-9)


def _names_offered(found: dict) -> set:
    """The library shapes the classifier offers for an image (its `guesses`): the first OFFERED_NAMES groups of
    names for the whole image and for each ink part."""
    ranked = [found["whole"], *found["parts"]]
    return {name for groups in ranked for names, _ in groups[:OFFERED_NAMES] for name in names}


def free_form_offered(found: dict) -> bool:
    """Whether the classifier offers, for an image (its `guesses`), a library shape a free-form program also draws
    (`_names_offered`, `drawable_names`): else the image draws no free-form program it could mistake for a library
    shape."""
    return any(name in drawable_names() for name in _names_offered(found))


def library_drawn(perception, images, guesses: list, confidence: dict, a: list, stages: Stages) -> bool:
    """Whether set A, which the classifier is not sure of, is drawn by the library shapes it names, with strokes that
    differ from image to image: the same first library shape (a shape per ink part, `library_key`) for at least
    LIBRARY_SURE_A set-A images, each named with a confidence of at least LIBRARY_AGREE_CONFIDENCE; their ink per px
    of its centreline (`_ink_per_length`) varies by a coefficient of variation of at least LIBRARY_STROKES_VARY; and
    that program's centreline fits at least MIN_A_EXPLAINED set-A images within LEVEL_PX (a pose fit per image, in
    the worker processes; made only when the strokes vary). The basic generator draws each action's stroke at random
    per image (spec 3.3), the free-form generator set A's one program with the same strokes in every image (spec
    3.2), which may be a library shape. Such a problem is read as library shapes at once, without decoding set A to
    look for a free-form program. When no shape it offers for a set-A image (`_names_offered`) is one a free-form
    program draws (`drawable_names`), strokes that do not vary are no sign of a free-form program (a basic shape that
    takes no stamps is drawn with normal strokes in every image, spec 3.3): the fit alone decides. (A circle of four
    stamped quarter arcs, a free-form program, is named `symm_trans_turtle`, which no free-form program draws, in
    most images, but `closed_circle` first or second in all but one.)"""
    keys = {k: library_key(guesses[k]) for k in a}
    named = [k for k in a if keys[k] and confidence[k] >= LIBRARY_AGREE_CONFIDENCE]
    if not named:
        return False
    key, count = max(((keys[k], sum(keys[j] == keys[k] for j in named)) for k in named), key=lambda item: item[1])
    if count < LIBRARY_SURE_A:
        return False
    library = load_library()
    with stages("classify"):
        if any(free_form_offered(guesses[k]) for k in a):
            density = np.array([_ink_per_length(images[k], guesses[k]) for k in named if keys[k] == key])
            if float(density.std() / density.mean()) < LIBRARY_STROKES_VARY:
                return False
        program = ImageProgram(tuple(library[name].shape for name in key))
        checks = perception.map(check_job, [(images[k], program, False) for k in a])
    return sum(found.fit <= LEVEL_PX for found in checks) >= MIN_A_EXPLAINED


def shared_free_form(perception, images, positives: int, done: dict, stages: Stages) -> Formed | None:
    """The free-form program H that set A's library readings (`done`: image -> `LibraryRead`) draw, strokes and all,
    when at least MIN_A_EXPLAINED of them draw the same free-form program with a stroke other than normal (checked on
    set A as a decoded hypothesis is, `formed_from`); else None. The free-form generator draws set A with one program,
    the same stroke for an action in every image (spec 3.2), which may be a library shape (a square, an equilateral
    triangle) that the classifier is sure of; the basic and abstract generators draw each action's stroke at random
    per image, or normal (`if stamp` = 0), so their set-A readings share no stamped stroke sequence."""
    programs = {}
    for k, found in done.items():
        reading = found.reading.program if found.reading is not None else None
        snapped = free_form_reading(reading) if reading is not None else None
        if snapped is not None and stamped(snapped):
            programs[k] = snapped
    for k, program in programs.items():
        if sum(same_image(program, other) for other in programs.values()) >= MIN_A_EXPLAINED:
            return formed_from(perception, images, positives, {k: program}, stages)
    return None


def other_strokes_read(perception, images, guesses: list, positives: int, done: dict, stages: Stages) -> None:
    """The images outside set A read again as library shapes with their stroke types chosen, in `done` (image ->
    `LibraryRead`), when set A's readings ask for them (`strokes_asked`)."""
    if not strokes_asked({k: found for k, found in done.items() if k < positives}):
        return
    rest = [k for k in done if k >= positives and done[k].reading is not None]
    with stages("search"):
        done.update(zip(rest, perception.library_reads([images[k] for k in rest],
                                                       [done[k].guesses or guesses[k] for k in rest], False)))


def strokes_asked(done: dict) -> bool:
    """Whether the stroke types of a library problem's other images can matter: set A's library readings (`done`)
    draw one program in at least MIN_A_EXPLAINED images, all its actions normal, on shapes that take stamps. A
    free-form problem can look so (its program's strokes all normal, `shared_free_form` asks for a stamp) and its
    set-B images then differ from it in a stroke; the basic and abstract generators draw a shape that takes stamps
    with each action's stroke at random per image (spec 3.4), and attributes and shape categories are blind to
    strokes. Elsewhere the stroke types of the images outside set A are left unchosen (generated tuning seeds 3131 +
    1212: the search stage of basic and abstract problems 11-17 % shorter, the same labels and rules)."""
    programs = [found.reading.program for found in done.values() if found.reading is not None and found.reading.program]
    for program in programs:
        if (not stamped(program) and not all(normal_strokes_only(shape) for shape in program.shapes)
                and sum(same_image(program, other) for other in programs) >= MIN_A_EXPLAINED):
            return True
    return False


@functools.cache
def drawable_names() -> frozenset:
    """The library shapes a free-form program also draws, or one near them (`dsl.free_form.free_form_drawable` within
    DRAWABLE_TOLERANCE): shapes whose centreline a free-form program's may fit as closely."""
    return frozenset(name for name, entry in load_library().items()
                     if free_form_drawable(entry.shape, DRAWABLE_TOLERANCE))


def drawable_library_shapes(guesses: list) -> bool:
    """Whether the classifier names a library shape a free-form program also draws first for at least
    DRAWABLE_A of set A's images (their `guesses`, one ink part each)."""
    tops = [found["whole"][0][0] for found in guesses if found is not None and found["whole"] and len(found["parts"]) != 2]
    return sum(any(name in drawable_names() for name in group) for group in tops) >= DRAWABLE_A


def stamped_free_form(perception, images, positives: int, stages: Stages) -> tuple:
    """(H, set A's stroke readings along H) when set A, read as library shapes a free-form program also draws (a
    circle, which the free-form generator draws as four quarter arcs, each with its stroke), draws one free-form
    program with its strokes: DECODE_FIRST set-A images decoded and checked on set A as in step 2 (`formed_from`), H
    taken when it has a stroke other than normal and no set-A image's strokes read otherwise (by more than
    STROKE_LOGP_SLACK, `judged_one`). Else (None, None): the basic and abstract generators draw each action's
    stroke at random per image, or normal (`if stamp` = 0)."""
    first = list(range(min(DECODE_FIRST, positives)))
    with stages("decode"):
        decoded = perception.decode_each([images[k] for k in first], beam=FORM_BEAM)
    formed = formed_from(perception, images, positives, {k: props[0].program for k, props in zip(first, decoded) if props}, stages)
    if formed is None or not stamped(formed.hypothesis):
        return None, None
    with stages("check"):
        context = perception.map(judged_one, [(perception.checkpoint, images[k], formed.hypothesis,
                                                formed.checks[k].placements) for k in formed.explained])
    if min(reading.margin for reading in context) < -STROKE_LOGP_SLACK:
        return None, None
    return formed, context


def stamped(program: ImageProgram) -> bool:
    return any(action.stroke is not StrokeType.NORMAL for shape in program.shapes for action in shape.actions)


def library_problem(perception, images, results, guesses, positives, negatives, stages,
                     free_form_seen: bool, done: dict | None = None) -> list[Perceived]:
    """Images the classifier is sure of read as library shapes without the decoder, the others in full; when
    set A reads as library shapes (`free_form_seen` False: the classifier is sure of nearly all of set A, or
    the decoder read none of the set-A images it was given as free-form), every image is read as library
    shapes from the classifier's plan, without the decoder. `done`: the images already read so (image ->
    `LibraryRead`)."""
    done = dict(done or {})
    rest = [k for k, r in enumerate(results) if r is None]
    unread = [k for k in rest if k not in done]
    if unread:  # one job per image: classified (set A's already are), planned, read as library shapes; where no
        # free-form program was seen, the stroke types of set A's only (`strokes_asked`)
        chosen = [free_form_seen or k < positives for k in unread]
        with stages("search"):
            done.update(zip(unread, perception.library_reads([images[k] for k in unread], [guesses[k] for k in unread],
                                                             free_form_seen, chosen)))
        if not all(chosen):
            other_strokes_read(perception, images, guesses, positives, done, stages)
    for k, found in done.items():
        guesses[k] = found.guesses if found.guesses is not None else guesses[k]
        if found.reading is not None:
            results[k] = replace(found.reading, evidence=library_evidence(found.reading.program, found.plan.confidence))
    unsure = [k for k in rest if done[k].unsure]
    # one ink blob the classifier is unsure of: touching shapes? Decoded, so that the plan splits the ink among the
    # decoder's two shapes (`PixelPerception.plan`): read without, every such image read as one shape. On the CPU
    # each is decoded and read in its own job above (`solver.reading.workers.library_one`); here when it was not
    touching = [k for k in rest if done[k].touching and done[k].reading is None]
    if touching:
        plans = {}
        with stages("decode"):
            for k, props in zip(touching, perception.decode_each([images[k] for k in touching], beam=SPLIT_BEAM)):
                plans[k] = perception.plan(images[k], guesses[k], props)
        with stages("search"):
            for k, r in zip(touching, perception.read_as_library([images[k] for k in touching], [plans[k] for k in touching])):
                results[k] = replace(r, evidence=library_evidence(r.program, plans[k].confidence))
    with stages("read"):
        for k, r in zip(unsure, perception.read_in_full([images[k] for k in unsure], [guesses[k] for k in unsure])):
            results[k] = r
    results = checked_queries(perception, images, results, positives, negatives, stages)
    with stages("reconcile"):
        return reconcile_with_context(images, results, positives, perception.map, negatives)


def library_evidence(program: ImageProgram | None, classifier: float) -> dict:
    """What decided an image read as library shapes: the classifier's confidence and the attributes on which the
    shape table disputes its features (`dsl.features.table_disagreements`), which `solver.solving.confidence` weighs."""
    evidence = {"verdict": "library", "classifier": round(classifier, 4)}
    disputed = table_disagreements(program) if program is not None else ()
    if disputed:
        evidence["disputed"] = list(disputed)
    return evidence


def library_sure(confidence: dict) -> bool:
    """Whether the classifier is sure (TRACE_BELOW_CONFIDENCE) of at least LIBRARY_SURE_A set-A images (`confidence`:
    image -> the classifier's confidence): then set A is read as library shapes first."""
    return sum(value >= TRACE_BELOW_CONFIDENCE for value in confidence.values()) >= LIBRARY_SURE_A


def library_first(perception, images, guesses: list, positives: int, negatives: int, stages: Stages) -> list[Perceived]:
    """Set A read as library shapes first: does it draw one free-form program, strokes and all (`shared_free_form`,
    `stamped_free_form`)? Then that program is H and the problem is checked against it (step 3); else the problem is
    read as library shapes (`library_problem`). Every image is read so in the same round of jobs (no round waits for
    the slowest of set A's; when set A draws a free-form program, rare here, the other images' library reads go
    unused). The stroke types of the images outside set A are not chosen (`strokes_asked`), nor set A's unless the
    classifier offers a shape a free-form program draws for at least MIN_A_EXPLAINED set-A images
    (`free_form_offered`): a set A of fewer draws no free-form program its stroke types could show
    (`shared_free_form`, `strokes_asked`), and no rule of a library problem reads them. Generated tuning seeds: basic
    31414 + 31515 + 31616, 97 of the 110 problems read here; abstract 31414 + 31515, 76 of 79; free-form 3131 + 5151 +
    12121 + 13131 + 33131, each of the 10 problems (of 22 read here) whose H set A's strokes formed offers one for all
    six. One set-A read 29-35 -> 20 ms (basic, one process); `bench paired` against the code before: the same labels,
    rules and confidences on every problem, median s a problem x1.09-1.13 basic, x1.16 abstract, x1.02 free-form."""
    a = range(positives)
    results: list = [None] * len(images)
    strokes_a = sum(free_form_offered(guesses[k]) for k in a) >= MIN_A_EXPLAINED
    with stages("search"):
        done = dict(enumerate(perception.library_reads(images, guesses, False,
                                                       [strokes_a and k in a for k in range(len(images))])))
    formed, context = shared_free_form(perception, images, positives, {k: done[k] for k in a}, stages), None
    if formed is None and drawable_library_shapes(guesses[:positives]):
        formed, context = stamped_free_form(perception, images, positives, stages)
    if formed is not None:
        return check_problem(perception, images, results, positives, negatives, formed, stages, context)
    if strokes_a:
        other_strokes_read(perception, images, guesses, positives, done, stages)
    return library_problem(perception, images, results, guesses, positives, negatives, stages, False, done)
