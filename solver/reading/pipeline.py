"""Perceiving a problem, not 14 images: a hypothesis formed once from the context, checked on every other image by
render-and-compare; the full reading (decoder, classifier, search, tracer) only where no hypothesis explains an image.

    readings = perceive_problem(perception, images, positives, negatives, stages)   # one `Perceived` per image

The steps (images in solving order: set A, set B, the queries), each in a module of its own:
  1. classify   the shape classifier names set A's images (`solver.reading.plans.classifier_confidence`);
  2. form       a few set-A images decoded, their readings checked on set A, the best is H (`solver.reading.form`);
  3. check      every set-B image and query checked against H and its near misses (`solver.reading.check`,
                the jobs in `solver.reading.verdicts`);
  4. read       what nothing explains read in full, or the problem read as library shapes
                (`solver.reading.library.library_problem`, `PixelPerception.read_in_full`), a query read without
                the library shapes set A draws checked against them (`solver.reading.library_check`);
  5. reconcile  readings made without H reconciled with the context (`solver.reading.reconcile`).

The strategies that choose between them, one line each (their docstrings have the measures):
  * `library_sure`: the classifier is sure of at least LIBRARY_SURE_A set-A images: set A is read as library shapes first;
  * `library_drawn`: one library program draws set A with strokes that vary per image: read as library shapes at once;
  * `shared_free_form`: set A's library readings share one stamped free-form program: that program is H;
  * `stamped_free_form`: set A is named as shapes a free-form program draws (a circle): decoded to look for a stamped H;
  * `free_form_offered`: set A's stroke types are chosen only when the classifier offers such shapes for most of set A;
  * `strokes_asked`: the other images' stroke types are chosen only when set A's readings share an all-normal program;
  * `free_form_proposed`: no H from the decoder's top readings: set A's decoded images read in full and H tried again;
  * `other_writings`: an image no near miss explains is checked against H written otherwise;
  * `overdrawn`: an image H explains is checked against the near misses of H walked on round a loop of its arcs;
  * `stroke_doubted` / `sure_neighbour` / `in_doubt`: which checked queries keep their verdict, and which are read in full.

`perceive_free_form` is the second look `solver.solving.folder.solve_images` asks for when a problem's readings give a
rule that misclassifies context images (read as library shapes, or by an H formed from the images decoded first).
Each image's `Perceived.evidence` keeps what decided it (fits, margins, verdict): the confidence of a query's label
is computed from it (`solver.solving.confidence`).
"""

from __future__ import annotations

import numpy as np

from dsl.types import ImageProgram
from solver.reading.check import check_problem
from solver.reading.form import decoded_and_formed, formed_after_reading, formed_from, free_form_proposed, set_a_along_h
from solver.reading.jobs import Stages
from solver.reading.library import library_drawn, library_first, library_problem, library_sure, stamped
from solver.reading.plans import classifier_confidence
from solver.reading.readings import Perceived
from solver.settings import DECODE_FIRST, FORM_BEAM, STROKE_LOGP_SLACK


def perceive_problem(perception, images: list[np.ndarray], positives: int, negatives: int, stages: Stages) -> list[Perceived]:
    """The readings of one problem's images (set A: the first `positives`, set B: the next `negatives`, then the
    queries), perceived as a whole (the module docstring). `perception`: a `solver.reading.PixelPerception`."""
    a = list(range(positives))
    guesses: list = [None] * len(images)
    with stages("classify"):  # 1. classify set A
        for k, found in zip(a, perception.guesses([images[k] for k in a])):
            guesses[k] = found
        confidence = {k: classifier_confidence(guesses[k]) for k in a}
    if library_sure(confidence) or library_drawn(perception, images, guesses, confidence, a, stages):
        return library_first(perception, images, guesses, positives, negatives, stages)  # 4. (or 2.-3.)
    first = sorted(a, key=lambda k: (confidence[k], k))[:DECODE_FIRST]
    decoded, formed, submitted = decoded_and_formed(perception, images, positives, negatives, first, stages)  # 2.
    if formed is not None:
        return check_problem(perception, images, [None] * len(images), positives, negatives, formed, stages,
                             submitted=submitted)  # 3. check
    results: list = [None] * len(images)
    if free_form_proposed(decoded):  # 2. again, from set A's decoded images read in full
        formed = formed_after_reading(perception, images, positives, first, guesses, decoded, results, stages)
    if formed is not None:
        return check_problem(perception, images, results, positives, negatives, formed, stages)  # 3. check
    return library_problem(perception, images, results, guesses, positives, negatives, stages,
                           free_form_seen(decoded, results))  # 4. read, 5. reconcile


def free_form_seen(decoded: dict, results: list) -> bool:
    """Whether the decoder's top readings or the full readings of set A hold a free-form program."""
    from solver.reading.traced import free_form_reading

    seen = [props[0].program for props in decoded.values() if props]
    seen += [r.program for r in results if r is not None and r.program is not None]
    return any(free_form_reading(program) is not None for program in seen)


def perceive_free_form(perception, images: list[np.ndarray], positives: int, negatives: int,
                       stages: Stages, besides: ImageProgram | None = None) -> list[Perceived] | None:
    """The problem perceived as free-form when the rule induced from `perceive_problem`'s readings misclassifies
    context images, or it read as library shapes a set A that shares stamps (`solver.solving.folder.solve_images`
    asks): every set-A image decoded (beam FORM_BEAM), H formed from their readings (`formed_from`) and checked on
    the other images as in step 3; None when no reading explains MIN_A_EXPLAINED of set A. The classifier may be
    sure of a free-form program's images (it names a library shape they resemble) or the images decoded first may be
    the hard ones (two shapes touching): on generated tuning seeds 3131 + 5151, set A's six readings formed H in
    each of the 80 free-form problems and in none of the 80 basic and 80 abstract ones. Where the decoder proposes
    no free-form program for any of the six (`free_form_proposed`) nothing more is tried. Where the classifier is sure
    of set A (`library_sure`, as in step 1) the first DECODE_FIRST images are decoded first, and the other four only
    if they propose one; else all six are decoded, in one round of jobs: a two-shape image may be read as no program
    at all while the others are read right. Looked-at seed 79111: 2 of its 300 two-shape free-form problems (3
    queries wrong) came here, their first two images proposed none, the classifier was sure of none of set A, and all
    six formed the generator's H; tuning seed 80111: 39 of the 240 basic problems came here, their first two images
    proposed none, the classifier was sure of set A in 18, no problem formed H from all six, and decoding the other
    four took 0.45 s."""
    a = list(range(positives))
    with stages("classify"):  # set A's guesses: `perceive_problem` made them (remembered, `PixelPerception.remembering`)
        guesses = perception.guesses([images[k] for k in a])
    sure = library_sure({k: classifier_confidence(found) for k, found in zip(a, guesses)})
    # not sure: all six are decoded whatever the first propose, so at once
    first, rest = (a[:DECODE_FIRST], a[DECODE_FIRST:]) if sure else (a, [])
    with stages("decode"):
        decoded = dict(zip(first, perception.decode_each([images[k] for k in first], beam=FORM_BEAM)))
    if sure and not free_form_proposed(decoded):
        return None
    if rest:
        with stages("decode"):
            decoded.update(zip(rest, perception.decode_each([images[k] for k in rest], beam=FORM_BEAM)))
    if not free_form_proposed(decoded):
        return None
    formed = formed_from(perception, images, positives, {k: props[0].program for k, props in decoded.items() if props}, stages)
    if formed is not None and stamped(formed.hypothesis):
        with stages("check"):
            formed = strokes_shared(perception, images, formed)
    if formed is None or formed.hypothesis == besides:  # `besides`: H formed already, checked on every image
        return None
    return check_problem(perception, images, [None] * len(images), positives, negatives, formed, stages)


def strokes_shared(perception, images: list[np.ndarray], formed):
    """`formed` with its strokes as set A votes for them (`solver.reading.form.set_a_along_h`), or None where set A
    does not share them: more than half of the set-A images H explains read H's strokes otherwise (the decoder
    walking H at their poses prefers another stroke for some action by more than STROKE_LOGP_SLACK). H drawn with
    stamps was read from one image; its geometry fits set A, its strokes are that image's. A free-form problem's set
    A shares them; the basic generator draws a library shape's actions in strokes drawn afresh for each image (spec
    3.3), and a second look (`perceive_free_form`) that takes one image's strokes as H's gives a stroke-sequence
    rule every other positive query breaks: generated seed 102666, where bd_closed_circle-symm_trans_turtle_0000's H
    (a circle of four circle-stamped arcs, one of four triangle-stamped ones) had all five set-A images it explains
    reject its strokes at 2-7 of 8 actions (-13.5 to -31.5 nats), and a positive query was taken for B."""
    formed = set_a_along_h(perception, images, formed)
    if formed.strokes_read is None:  # set A voted for a change in each of its rounds
        return formed
    rejecting = sum(reading.margin < -STROKE_LOGP_SLACK for _, reading in formed.strokes_read)
    return None if 2 * rejecting > len(formed.strokes_read) else formed
