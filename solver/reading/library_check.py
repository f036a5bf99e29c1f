"""A library problem's hypothesis checked on its queries (step 4 of `solver.reading.pipeline`, after the library
reads): the library shapes set A draws (H: a basic problem's one or two shapes) against each query read otherwise,
by render-and-compare of H's shapes together, each with its own pose, against the query's own reading and against
H's near misses (each shape of H swapped for another of its super class: what the basic generator draws in set B and
in the negative query, spec 3.3).

A query read as library shapes is read on its own: the classifier names its ink parts one by one, and where two
shapes touch or cross, or a stroke type blurs a shape, it may name a look-alike or one shape for both, and the query
loses the concept although it draws H (official-generator basic problems: 4 of 320 queries, every one a positive
query read without one of H's shapes). The check asks instead how well H explains the ink: a query takes H when H's
centreline fits it within LEVEL_PX, better than its own reading (`beats_reading`; a reading the generator cannot
have drawn in the problem must fit better than H by SURE_NEIGHBOUR_MARGIN_PX to keep it, `reading_bar`), and no near
miss of H fits it better by more than CHECK_MARGIN_PX (a near miss that fits alike is a look-alike the ink cannot
tell from H: the generator draws a particular look-alike in at most one query in 2 x the super class's size, H in
one in two).
Every other query keeps its reading. Set B is not checked (the generator never draws H there).

Every fit here is taken on the image's ink with the hollows of its stamps filled (`search.template.make_target`,
`stamps_filled`): a circle or square stamp is a hollow outline a stamp's radius off the stroke's centreline on either
side, where H's centreline and a look-alike's a px or two away fit alike (open_s3 drawn with circle stamps, 12 poses:
the true shape fitted better than open_line_s3 in 8 of 12 images, 12 with the hollows filled; square stamps 4 and 11).

H is the shapes at least MIN_A_EXPLAINED set-A readings name (`set_a_names`). Where no reading is shared so widely
(a shape's look-alike, or strokes that blur it, split set A's readings 3 : 3 or 3 : 2 : 1), the readings that several
set-A images share are checked on the rest of set A instead of counted (`set_a_checked`), and the one that explains
the most is H, the set-A images it explains read as H; the queries are then checked against it as above.

LEVEL_PX is how well H fits an image that draws it with most stroke types; stroke types that lay their ink off the
centreline (zigzags, circles, squares along a stroke) fit worse. Set A shows how well H fits an image that draws H in
this problem's strokes: where a query is held back by the level alone (H fits it beyond LEVEL_PX but better than
its reading), H's fits on the set-A images read as H are found (`set_a_level`) and the query is checked again
within the worst of them, the same measure as a free-form query's context (`solver.reading.check.sure_neighbour`).
Generated tuning seeds 80111 + 80222 (477 basic problems, a probe): 11 problems had a query so held back; the level
from set A let 2 positive queries take H and no negative query or set-B image."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import replace

import numpy as np

from dsl.categories import exact_shape_categories
from dsl.features import remember_features, shape_features
from dsl.library import load_library, look_alikes
from dsl.types import ImageProgram, StrokeType
from search.near_miss import (centreline_fit, centreline_laid_on, centreline_refit, centreline_templates,
                              nearest_neighbour, retried)
from search.template import make_target
from solver.reading.readings import Perceived
from solver.reading.switches import PRODUCT
from solver.settings import (CHECK_MARGIN_PX, LEVEL_PX, MIN_A_EXPLAINED, SET_A_CANDIDATE_READS,
                             SURE_NEIGHBOUR_MARGIN_PX)


def library_names(program: ImageProgram | None) -> tuple[str, ...] | None:
    """The library shapes a program draws exactly (the first name of each shape's, strokes aside), sorted; None when
    a shape draws none."""
    if program is None:
        return None
    names = [exact_shape_categories(shape) for shape in program.shapes]
    return tuple(sorted(found[0] for found in names)) if all(names) else None


def set_a_read(results: list, positives: int) -> list:
    """The library shapes each set-A reading draws (`library_names`; None for an image read otherwise or not at all)."""
    return [library_names(r.program) if r is not None else None for r in results[:positives]]


def set_a_names(results: list, positives: int) -> tuple[str, ...] | None:
    """The library shapes at least MIN_A_EXPLAINED set-A readings draw (`library_names`), or None."""
    counted = Counter(names for names in set_a_read(results, positives) if names is not None)
    if not counted:
        return None
    names, count = counted.most_common(1)[0]
    return names if count >= MIN_A_EXPLAINED else None


@functools.lru_cache(maxsize=32)
def library_program(names: tuple[str, ...]) -> ImageProgram:
    """The library shapes `names`, drawn with normal strokes."""
    library = load_library()
    return ImageProgram(tuple(library[name].shape.with_strokes(StrokeType.NORMAL) for name in names))


@functools.lru_cache(maxsize=32)
def near_misses(names: tuple[str, ...]) -> tuple:
    """H's near misses as the basic generator draws them: one shape swapped for another of its super class (exact
    name), the other kept -> ((slot, name), program, its centreline templates) each."""
    out = []
    for slot, name in enumerate(names):
        for other in look_alikes(name):
            swapped = names[:slot] + (other,) + names[slot + 1:]
            program = library_program(swapped)
            out.append(((slot, other), program, centreline_templates(program)))
    return tuple(out)


def check_job(job: tuple) -> dict:
    """One query checked against H (`names`), in a worker process -> the centreline fits (px) of H, of the query's
    own reading (normal strokes) and of H's best near miss (screened only where H explains the query better than its
    reading, `takes_hypothesis`; none with `near_misses` False, the ablation `Switches.near_misses`), with H's poses
    and its shapes' features and categories (what the facts will ask of them). H is fitted from scratch and also from
    where the reading's shapes lie (`centreline_refit`: a reading that names a look-alike of one of H's shapes has
    placed it near H's pose, which a fit from scratch may miss) and laid on the reading's shapes' ink
    (`centreline_laid_on`: their centroids and sizes, every heading; a start point means another point of the
    picture in another shape); the best fit counts. Generated seeds 80111 + 80222 (tuning, 480 basic problems): 2
    positive queries gained, none lost. Where H explains the query no
    better than LEVEL_PX, H is fitted again from more heading guesses and each of its two shapes on the ink the other
    leaves (`search.near_miss.retried`: where the shapes cross, the ink is one part), and where that
    makes H rival the reading or the best near miss, they are fitted again alike: H fitted from more headings is not
    weighed against rivals fitted from fewer. `job`: (image, names, the query's reading or None[, near misses
    screened: True][, the level H must fit within: LEVEL_PX])."""
    image, names, reading, *rest = job
    neighbours, level = (*rest, *(True, LEVEL_PX)[len(rest):])
    target = make_target(image, stamps_filled=True)  # a stamped stroke's ink around its centreline
    program = library_program(names)
    fit, placements = centreline_fit(program, target, regroup=True)  # which ink is whose: decided by H
    normal = reading.with_strokes(StrokeType.NORMAL) if reading is not None else None  # the reading's centreline
    own, read_placements = centreline_fit(normal, target) if normal is not None else (float("inf"), [])
    if read_placements:  # H also started where the reading lies: its look-alike's pose is near H's own, and its
        # look-alike's ink is where H's shape would lie
        for refit, refit_placements in (centreline_refit(program, target, read_placements),
                                        centreline_laid_on(program, normal, target, read_placements)):
            if refit < fit:
                fit, placements = refit, refit_placements
    first = fit
    if fit > LEVEL_PX:  # H explains no more than that from the first headings: from more
        fit, placements = retried(program, target, fit, placements, apart=True)
    if fit < first and fit < own and normal is not None:  # H, fitted from more headings, now beats the reading:
        # the reading is fitted so too
        own = retried(normal, target, own, read_placements, apart=True)[0]
    outside = reading is not None and drawn_outside(library_names(reading), names)
    asked = neighbours and beats_reading(fit, reading_bar({"read_fit": own, "read_outside": outside}), level)  # else
    # H loses anyway
    best = nearest_neighbour(near_misses(names), target) if asked else None
    if best is not None and fit < first and fit < best[1] + CHECK_MARGIN_PX:  # ... and the near miss that rivals it
        best = (best[0], *retried(best[0][1], target, best[1], best[2], apart=True))
    return {"fit": fit, "read_fit": own, "read_outside": outside,
            "neighbour_fit": best[1] if best is not None else float("inf"),
            "neighbour": best[0][0][1] if best is not None else None,
            "poses": tuple(p.pose(target) for p in placements), "features": shape_features(program)}


def beats_reading(fit: float, read_fit: float, level: float = LEVEL_PX) -> bool:
    """Whether H (centreline fit `fit`, px) explains a query and explains it better than the query's own reading: by
    any margin, for the basic generator draws H or one of its near misses in a query, and H with odds of at least
    2 x (the super class's size - 1) : 1 against a particular near miss (module docstring), so a reading that fits no
    better than H does not outweigh them (a reading the generator cannot draw, neither H nor a near miss, even less).
    Within LEVEL_PX: a positive query whose two shapes touch (the ink in one part) fits H at 3-6 px and is lost, but
    at a looser level (5 px, its near misses fitted as carefully as H; 8e90a77, reverted) as many negative queries took
    H, their look-alike fitting alike where nothing fits well: docs/two_shapes.md."""
    return fit <= level and fit < read_fit


def takes_hypothesis(found: dict, level: float = LEVEL_PX) -> bool:
    """Whether a checked query draws H (module docstring): H beats its reading within `level` and no near miss
    beats H."""
    return (beats_reading(found["fit"], reading_bar(found), level)
            and found["fit"] < found["neighbour_fit"] + CHECK_MARGIN_PX)


def held_back(found: dict) -> bool:
    """Whether a checked query loses H by the level alone: H fits it beyond LEVEL_PX, better than its reading."""
    return found["fit"] > LEVEL_PX and found["fit"] < reading_bar(found)


def drawn_outside(read: tuple[str, ...] | None, names: tuple[str, ...]) -> bool:
    """Whether a query's reading names library shapes (`library_names`: `read`) that the basic generator cannot have
    drawn in this problem: neither H (`names`) nor one of its near misses (`near_misses`)."""
    if read is None or read == names:
        return False
    drawn = {tuple(sorted(names[:slot] + (other,) + names[slot + 1:])) for (slot, other), *_ in near_misses(names)}
    return read not in drawn


def reading_bar(found: dict) -> float:
    """The fit (px) H must beat to take a query from its own reading (`check_job`'s `found`): the reading's fit, plus
    SURE_NEIGHBOUR_MARGIN_PX where the generator cannot have drawn the reading (`drawn_outside`): such a reading must
    fit better than H by the margin that makes a neighbour verdict sure to keep the query. Looked-at seeds 87111-89111
    (`generate --basic 240`, a probe checking every image): 3 positive queries read as shapes outside the problem
    fitted better than H by 0.09-0.13 px; with the margin 2 of them take H, no negative query and 1 more of the
    4,320 set-B images; tuning seeds 79111, 80111, 80222: no query and no set-B image changes."""
    return found["read_fit"] + (SURE_NEIGHBOUR_MARGIN_PX if found.get("read_outside") else 0.0)


def set_a_level(perception, images: list[np.ndarray], results: list, positives: int, names: tuple[str, ...]) -> float:
    """The level a query's fit of H is judged within, from set A (module docstring): the worst fit of H (px, as
    `check_job` fits a query) on the set-A images read as H, LEVEL_PX where that is lower or none is so read."""
    explained = [k for k, read in enumerate(set_a_read(results, positives)) if read == names]
    found = perception.map(check_job, [(images[k], names, results[k].program, False) for k in explained])
    return max([LEVEL_PX] + [checked["fit"] for checked in found])


def explains_set_a(found: dict) -> bool:
    """Whether a candidate H checked on a set-A image (`check_job`'s `found`, near misses not screened) explains it:
    within LEVEL_PX, and no worse than the image's own reading by CHECK_MARGIN_PX or more. Every set-A image draws the
    concept, so a reading that fits alike is a look-alike the ink cannot tell from the candidate (the margin a near
    miss must beat H by to keep a query from it)."""
    return found["fit"] <= LEVEL_PX and found["fit"] < found["read_fit"] + CHECK_MARGIN_PX


def set_a_checked(perception, images: list[np.ndarray], results: list, positives: int,
                  stages) -> tuple[list, tuple[str, ...] | None]:
    """H for a library problem whose set-A readings agree on no shapes (`set_a_names` gives None), found by checking
    instead of counting: each reading that SET_A_CANDIDATE_READS or more set-A images share is checked on all six
    (`check_job`; an image read otherwise it explains by `explains_set_a`), and the one that explains the most (ties:
    the one read most often, then the one whose centreline fits the six closest on average) is H when it explains at
    least MIN_A_EXPLAINED -> (`results` with the set-A images it explains read as H, H's names); else (`results`,
    None). Where a shape has a look-alike (an S-curve and an S with a line in it, a rectangle with an arc and a
    hexagon) or its strokes blur it, set A's six readings may split 3 : 3 or 3 : 2 : 1 between H and look-alikes; the
    rule induced from them then names neither, and the queries are never checked against H (generated seeds
    98111-99444, judged: 6 of the 15 wrong basic queries)."""
    read = set_a_read(results, positives)
    counted = Counter(names for names in read if names is not None)
    candidates = sorted((names for names, count in counted.items() if count >= SET_A_CANDIDATE_READS),
                        key=lambda names: (-counted[names], names))
    if not candidates:
        return results, None
    jobs = [(names, k) for names in candidates for k in range(positives)]  # an image read as the candidate: its fit
    with stages("check"):  # alone, for the tie-break
        found = perception.map(check_job, [(images[k], names, results[k].program if read[k] != names
                                            and results[k] is not None else None, False) for names, k in jobs])
    explained, fits = {names: {} for names in candidates}, {names: [] for names in candidates}
    for (names, k), checked in zip(jobs, found):
        fits[names].append(checked["fit"])
        if read[k] != names and explains_set_a(checked):
            explained[names][k] = checked
    names = max(candidates, key=lambda names: (counted[names] + len(explained[names]), counted[names],
                                               -float(np.mean(fits[names]))))
    if counted[names] + len(explained[names]) < MIN_A_EXPLAINED:
        return results, None
    out = list(results)
    for k, checked in explained[names].items():
        remember_features(checked["features"])
        out[k] = Perceived(library_program(names), checked["poses"], None,
                           evidence={"verdict": "library_hypothesis", "fit": round(checked["fit"], 3),
                                     "read_fit": round(min(checked["read_fit"], 99.0), 3)})
    return out, names


def checked_queries(perception, images: list[np.ndarray], results: list, positives: int, negatives: int,
                    stages) -> list:
    """`results` with each query that set A's library shapes (`set_a_names`) explain better than its own reading
    read as those shapes (module docstring); the others as they were. Each checked query's evidence keeps the fits."""
    names = set_a_names(results, positives)
    if names is None:
        results, names = set_a_checked(perception, images, results, positives, stages)
    if names is None:
        return results
    queries = [k for k in range(positives + negatives, len(images))
               if results[k] is None or library_names(results[k].program) != names]
    if not queries:
        return results
    with stages("check"):
        neighbours = getattr(perception, "switches", PRODUCT).near_misses
        jobs = [(images[k], names, results[k].program if results[k] is not None else None, neighbours)
                for k in queries]
        found = perception.map(check_job, jobs)
        level = LEVEL_PX
        if any(held_back(checked) for checked in found):  # set A says how well H fits here
            level = set_a_level(perception, images, results, positives, names)
            again = [n for n, checked in enumerate(found) if held_back(checked) and checked["fit"] <= level]
            for n, checked in zip(again, perception.map(check_job, [(*jobs[n], level) for n in again])):
                found[n] = checked
    out = list(results)
    for k, checked in zip(queries, found):
        remember_features(checked["features"])
        fits = {"fit": round(checked["fit"], 3), "read_fit": round(min(checked["read_fit"], 99.0), 3),
                "neighbour_fit": round(min(checked["neighbour_fit"], 99.0), 3)}
        if level > LEVEL_PX:
            fits["level"] = round(level, 3)
        if takes_hypothesis(checked, level):
            out[k] = Perceived(library_program(names), checked["poses"], None,
                               evidence={"verdict": "library_hypothesis", **fits})
        elif out[k] is not None:
            out[k] = replace(out[k], evidence={**(out[k].evidence or {}), "library_check": fits})
    return out
