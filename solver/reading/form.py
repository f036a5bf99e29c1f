"""Step 2 of `solver.reading.pipeline`: the problem's program H formed from decoded set-A images, each reading
checked on set A, the one that explains the most of it taken, written in the free-form generator's direction and in
quarter arcs (`formed_from`, `decoded_and_formed`)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from dsl.canonical import image_key, same_image
from dsl.types import ActionKind, ImageProgram, Shape
from search.completion import completed, worth_trying
from search.neighbourhood import forward_free_form
from search.template import make_target
from solver.reading.jobs import Jobs, Stages
from solver.reading.readings import PerceptionError
from solver.reading.traced import free_form_reading, grid_share
from solver.reading.verdicts import check_job, in_frame_of, judged_readings, set_a_readings, submit_checks
from solver.settings import FORM_BEAM, FORM_GRID_SHARE, LEVEL_PX, MIN_A_EXPLAINED, STROKE_LOGP_SLACK


def free_form_proposed(decoded: dict) -> bool:
    """Whether the decoder proposed a free-form program for one of the images decoded first (a proposal on the
    free-form grid, or a top reading with at least FORM_GRID_SHARE of its values on it): where it did not, reading
    them in full to form a free-form program is not tried."""
    return any(free_form_reading(proposal.program) is not None for props in decoded.values() for proposal in props) or any(
        grid_share(props[0].program) >= FORM_GRID_SHARE for props in decoded.values() if props)


@dataclass(frozen=True)
class Formed:
    """The problem's free-form program H and what set A says of it."""

    hypothesis: ImageProgram
    explained: list  # set-A images H explains
    checks: list  # H checked on each set-A image (no neighbours)
    strokes_read: tuple | None = None  # (poses, stroke reading) of each image H explains, judged along H from its
    # `checks`' placements (`solver.reading.verdicts.judged_readings`), when read while forming H


def worst_explained_fit(checks: list) -> float:
    """H's worst centreline fit (px) on a set-A image it explains (within LEVEL_PX), of its `checks` on set A: how
    badly H may fit an image that draws it."""
    return max(found.fit for found in checks if found.fit <= LEVEL_PX)


def parts_agree(hypothesis: ImageProgram, checks: list) -> bool:
    """Whether set A's ink bears out H's shapes: H is one shape, or its two shapes lie apart in most of the set-A
    images H explains (of its `checks` on set A: their ink in two parts or more, `search.ink.ink_parts`). A one-shape
    picture misread as two shapes (set-A images of one part of ink) explains set A and the near misses of the misread
    fit the queries as well as H (official test_ff, ff_nact5_3001 and ff_nact5_3011: a square with a tail read as a
    square and a separate line, commits 4255033 and 07a6902), so the check of a query searches further only where they
    agree (`solver.reading.verdicts.checked_many`: the ink split as H explains it, H's own neighbours screened from its
    pose)."""
    if len(hypothesis.shapes) == 1:
        return True
    explained = [found for found in checks if found.fit <= LEVEL_PX]
    return 2 * sum(found.parts >= 2 for found in explained) > len(explained)


def _candidate(program: ImageProgram) -> tuple | None:
    """A decoded reading as a free-form hypothesis -> (its `image_key`, the hypothesis, how many of its quarter arcs'
    strokes are a guess), or None when it is not free-form: in quarter arcs, in the generator's direction of travel,
    as the image was drawn (its stamps show it)."""
    plain = free_form_reading(program)
    if plain is None:
        return None
    quarters = quarter_arcs(plain)
    snapped = ImageProgram(tuple(forward_free_form(shape) for shape in quarters.shapes))
    return image_key(snapped), snapped, quarters.n_actions - plain.n_actions


def formed_from(perception, images, positives: int, readings: dict, stages: Stages) -> Formed | None:
    """The free-form hypothesis H among `readings` (image -> program) that explains the most set-A images
    (ties: the lower total fit; `_best`), if it explains at least MIN_A_EXPLAINED; else None."""
    checked = _checked_candidates(perception, images, positives, list(readings.values()), set(), stages)
    return _chosen(perception, images, positives, checked, stages) if checked else None


def _checked_candidates(perception, images, positives: int, programs: list, seen: set, stages: Stages) -> list:
    """The free-form candidates (`_candidate`) among `programs`, one per key and none among `seen` (their keys),
    each checked on set A -> [(hypothesis, its quarter arcs whose strokes are a guess: `quarter_arcs`, checks)]."""
    candidates: dict = {}  # key -> (hypothesis, guessed strokes)
    for program in programs:
        found = _candidate(program)
        if found is not None and found[0] not in seen:
            candidates.setdefault(found[0], found[1:])
    return _on_set_a(perception, images, positives, list(candidates.values()), stages)


def _on_set_a(perception, images, positives: int, candidates: list, stages: Stages) -> list:
    """Each of `candidates` (hypothesis, guessed strokes) checked on set A in the worker processes -> [(hypothesis,
    guessed strokes, checks)]."""
    if not candidates:
        return []
    with stages("check"):
        checks = perception.map(check_job, [(images[k], program, False) for program, _ in candidates
                                            for k in range(positives)])
    return [(program, split, checks[c * positives:(c + 1) * positives])
            for c, (program, split) in enumerate(candidates)]


def _chosen(perception, images, positives: int, checked: list, stages: Stages, more=None) -> Formed | None:
    """Of the candidates (hypothesis, its guessed quarter-arc strokes, its checks on set A), the one that explains
    the most set-A images (ties: the lower total fit, then the first), or its `corners` where one explains more or as
    many and fits closer, if it explains at least MIN_A_EXPLAINED; with its strokes read from set A where they are a
    guess (`strokes_of_set_a`). Else None. `more`: a callable giving more candidates alike (the readings of the set-A
    images not decoded yet, `_more_readings`), asked for when the best so far fits set A as a hypothesis worth
    completing does (`search.completion.worth_trying`: worse on average than COMPLETION_ABOVE_PX, where most true
    programs fit better) or is two shapes set A's ink does not bear out (`_best`), and chosen among with the
    rest."""
    best = _best(checked, positives)
    if more is not None and len(best[3]) >= MIN_A_EXPLAINED and (
            worth_trying([x.fit for x in best[4]]) or not parts_agree(best[1], best[4])):
        best = _best(checked + more(), positives)
    cornered = _cornered(perception, images, positives, best[1], best[2], stages)
    if cornered:  # H drawn with a corner where it reads an arc between two lines, taken where set A says so
        best = _best([(best[1], best[2], best[4])] + cornered, positives)
    _, hypothesis, split, explained, on_a = best
    if len(explained) < MIN_A_EXPLAINED:
        return None
    formed = Formed(hypothesis, explained, on_a)
    with stages("check"):
        formed, added = completed_on_set_a(perception, images, positives, formed)
    if split or added:
        with stages("check"):
            formed = strokes_of_set_a(perception, images, formed, rounds=split + added + 1)
    return formed


def corners(program: ImageProgram) -> list[ImageProgram]:
    """`program` with one of its arcs read between two lines, straight on into it and out of it, drawn as a corner
    instead: the next line turns by the arc's angle (one variant per such arc). The decoder may read a sharp corner
    of two stamped lines as a quarter arc between them (the stamps round it): generated ff seed 103111, the
    two-shape problems ff_nact3_3_0042 and ff_nact2_5_0018, whose H drew such an arc where the generator turned by
    90 degrees; set A's centreline fit tells the two apart (summed over set A 5.04 -> 3.31 px and 4.50 -> 2.65 px
    with the corner) and `_best` chooses between them as between any two readings."""
    variants = []
    for s, shape in enumerate(program.shapes):
        actions = shape.actions
        for i in range(1, len(actions) - 1):
            before, arc, after = actions[i - 1:i + 2]
            if before.is_line and not arc.is_line and after.is_line and arc.turn == 0.0 and after.turn == 0.0:
                drawn = Shape(actions[:i] + (replace(after, turn=arc.angle),) + actions[i + 2:])
                variants.append(ImageProgram(program.shapes[:s] + (drawn,) + program.shapes[s + 1:]))
    return variants


def _cornered(perception, images, positives: int, hypothesis: ImageProgram, split: int, stages: Stages) -> list:
    """The `corners` of H (`hypothesis`, `split` of its quarter arcs' strokes a guess) that are free-form, each
    checked on set A -> [(program, split, checks)]. Only H's: another reading drawn with a corner may draw what H
    draws at another scale (an L of two unit lines, where H's arms are two lines each in different strokes: generated
    seed 103333, ff_nact4_5_0018), and fit set A as closely to within noise."""
    variants: dict = {}  # key -> (hypothesis, guessed strokes)
    for variant in corners(hypothesis):
        found = _candidate(variant)
        if found is not None and found[0] != image_key(hypothesis):
            variants.setdefault(found[0], (found[1], split))
    return _on_set_a(perception, images, positives, list(variants.values()), stages)


def _best(checked: list, positives: int) -> tuple:
    """`_chosen`'s choice among `checked` -> (its key, hypothesis, guessed strokes, set-A images explained, checks).
    A hypothesis whose shapes set A's ink does not bear out (`parts_agree`: two shapes where most images it explains
    are one part of ink) comes after every one that does and explains MIN_A_EXPLAINED: one shape misread as two (a
    stroke broken at a corner, a loop cut open), with a pose and scale per piece, can fit set A a little closer than
    the one program that draws it (generated seeds 101777 + 101888: 16 of 600 one-shape free-form problems ruled by
    two shapes, 8 of their 22 wrong queries)."""
    best = None
    for program, split, on_a in checked:
        explained = [k for k in range(positives) if on_a[k].fit <= LEVEL_PX]
        agree = len(explained) >= MIN_A_EXPLAINED and parts_agree(program, on_a)
        key = (agree, len(explained), -sum(x.fit for x in on_a))
        if best is None or key > best[0]:
            best = (key, program, split, explained, on_a)
    return best


def _more_readings(perception, images, positives: int, decoded: list, seen: set, stages: Stages) -> list:
    """The top readings of the set-A images not in `decoded` (decoded now, beam FORM_BEAM) as free-form candidates
    (`_candidate`) not among `seen` (their keys), each checked on set A -> [(hypothesis, guessed strokes, checks)].
    The decoder may misread one image where it reads another right (an arc taken for its chord or for a corner,
    generated seeds 75111 + 76111: of the 16 problems whose H fitted set A worse than the generator's program by
    more than 0.2 px, 14 had the generator's program as the top reading of one of their six set-A images)."""
    rest = [k for k in range(positives) if k not in decoded]
    with stages("decode"):
        found = perception.decode_each([images[k] for k in rest], beam=FORM_BEAM)
    return _checked_candidates(perception, images, positives, [props[0].program for props in found if props], seen,
                               stages)


def completed_on_set_a(perception, images, positives: int, formed: Formed) -> tuple[Formed, int]:
    """H completed on set A (`search.completion`: an action the reading missed, added where set A's ink lies
    beside H in every image), checked on set A again -> (the Formed, how many actions were added: their strokes are
    normal, a guess `strokes_of_set_a` reads). H as it was when the completed program explains fewer set-A images."""
    fits = [check.fit for check in formed.checks]
    if not worth_trying(fits):
        return formed, 0
    found = completed(formed.hypothesis, [make_target(images[k]) for k in range(positives)],
                      [list(check.placements) for check in formed.checks], fits)
    if not found.edits:
        return formed, 0
    checks = perception.map(check_job, [(images[k], found.program, False) for k in range(positives)])
    explained = [k for k in range(positives) if checks[k].fit <= LEVEL_PX]
    if len(explained) < max(MIN_A_EXPLAINED, len(formed.explained)):
        return formed, 0
    return Formed(found.program, explained, checks), found.added


def _decoded_here(perception, image: np.ndarray) -> list:
    """An image decoded as `_decode_chunk` decodes it in a worker, in this process (no workers)."""
    return perception.decode_each([image], beam=FORM_BEAM)


def decoded_and_formed(perception, images, positives: int, negatives: int, first: list, stages: Stages) -> tuple:
    """Step 2 (`formed_from` of the `first` set-A images' decoded top readings) with no stage waiting for the slowest
    job of the one before (`Jobs`): each image's reading, as it comes, gives its hypothesis, at once checked on set A
    in the worker processes while the other image is still decoded; and the check jobs of step 3 (`check_problem`) go as
    soon as a hypothesis explains MIN_A_EXPLAINED of set A with no stroke to guess (they are used when it is H).
    The same jobs and choices as decoding both images, then checking, then choosing: the same H. -> (image ->
    the decoder's proposals, the Formed or None, the Jobs holding H's check jobs or None)."""

    jobs = Jobs(perception.pool)
    for k in first:
        jobs.submit(("decode", k), *perception.decode_job(images[k], FORM_BEAM),
                    here=functools.partial(_decoded_here, perception, images[k]))
    decoded: dict = {}
    found: dict = {}  # image decoded -> its candidate (`_candidate`) or None
    on_a: dict = {}  # image decoded -> its candidate's checks on set A (None: asked for, not back yet)
    owner: dict = {}  # image decoded -> the image whose reading's checks on set A are its own (the same program)
    ahead = None  # the candidate whose step-3 check jobs went ahead

    def arrived(tag) -> None:
        nonlocal ahead
        if tag[0] == "decode":
            k = tag[1]
            try:
                decoded[k] = jobs.get(tag)[0]
            except Exception as error:
                raise PerceptionError(f"decoding failed: {error}") from error
            perception.remember_decoded(images[k], FORM_BEAM, decoded[k])
            found[k] = _candidate(decoded[k][0].program) if decoded[k] else None
            if found[k] is not None:
                program = found[k][1]
                same = [j for j in on_a if found[j][1] == program]
                if same:  # the other image's reading: checked already
                    owner[k] = same[0]
                    return
                owner[k] = k
                for j in range(positives):
                    jobs.submit(("a", k, j), check_job, (images[j], program, False))
                on_a[k] = [None] * positives
        else:
            _, k, j = tag
            on_a[k][j] = jobs.get(tag)
            if (ahead is None and all(x is not None for x in on_a[k]) and not found[k][2]
                    and sum(x.fit <= LEVEL_PX for x in on_a[k]) >= MIN_A_EXPLAINED):
                ahead = found[k][1]
                submit_checks(jobs, perception, images, positives, negatives, ahead, worst_explained_fit(on_a[k]),
                              parts_agree(found[k][1], on_a[k]))

    def unchecked() -> list:  # the set-A checks asked for and not back yet
        return [("a", k, j) for k in on_a for j in range(positives) if on_a[k][j] is None]

    with stages("decode"):
        while len(decoded) < len(first):
            arrived(jobs.first_of([("decode", k) for k in first if k not in decoded] + unchecked()))
    with stages("check"):
        while unchecked():
            arrived(jobs.first_of(unchecked()))
    candidates: dict = {}  # key -> (hypothesis, guessed strokes, the image decoded it was first read from), in
    # `first`'s order as `formed_from` makes them
    for k in first:
        if found.get(k) is not None:
            key, program, split = found[k]
            candidates.setdefault(key, (program, split, owner[k]))
    more = functools.partial(_more_readings, perception, images, positives, first, set(candidates), stages)
    formed = _chosen(perception, images, positives, [(program, split, on_a[k]) for program, split, k in candidates.values()],
                     stages, more) if candidates else None
    submitted = jobs if formed is not None and ahead is not None and formed.hypothesis == ahead else None
    return {k: decoded[k] for k in first}, formed, submitted


def quarter_arcs(program: ImageProgram) -> ImageProgram:
    """`program` with every arc of n > 1 quarter circles written as n quarter arcs in a row (no turn between them:
    the same picture). The free-form generator draws only quarter arcs, each with its own stroke (its semicircle
    and circle moves are two and four of them, spec 3.2); the decoder may read a run of them as one long arc, and
    one action has one stroke."""
    from perception.decode import FREE_FORM_ARC_STEP

    shapes = []
    for shape in program.shapes:
        actions = []
        for action in shape.actions:
            n = round(abs(action.angle) / FREE_FORM_ARC_STEP) if action.kind is ActionKind.ARC else 1
            if n > 1:
                quarter = replace(action, angle=math.copysign(FREE_FORM_ARC_STEP, action.angle))
                actions += [quarter] + [replace(quarter, turn=0.0)] * (n - 1)
            else:
                actions.append(action)
        shapes.append(Shape(tuple(actions)))
    return ImageProgram(tuple(shapes))


def strokes_of_set_a(perception, images, formed: Formed, rounds: int = 3, readings: list | None = None,
                     alone: bool = False) -> Formed:
    """H's strokes where set A shows them otherwise: H read from one image whose run of quarter arcs the decoder
    read as one long arc carries that arc's stroke on every quarter (`quarter_arcs`), and each quarter has its own;
    a reading of one image may carry a wrong stroke whatever its arcs. The decoder walking H at the set-A images'
    poses (`judged_readings`) names, per image, the action whose stroke it doubts most and the stroke it prefers
    there; the change set A votes for (`voted_strokes`) is taken and set A is read again (at most `rounds` changes).
    When the last reading names no change, it is set A's reading along the final H, kept (`Formed.strokes_read`: the
    context margin of `check_problem` reads the same). `readings`: set A's readings along H, when made already;
    `alone`: as `voted_strokes`'."""
    hypothesis = formed.hypothesis
    a = formed.explained
    for _ in range(rounds):
        if readings is None:
            readings = judged_readings(perception.checkpoint, [images[k] for k in a], hypothesis,
                                        fitted=[formed.checks[k].placements for k in a])
        best = voted_strokes(hypothesis, readings, alone)
        if best is None:
            return replace(formed, hypothesis=hypothesis, strokes_read=tuple(readings))
        hypothesis, readings = best, None
    return replace(formed, hypothesis=hypothesis)


def set_a_along_h(perception, images, formed: Formed, vote: bool = True) -> Formed:
    """`formed` with set A's strokes read along H in the worker processes (`set_a_readings`, from the placements its
    checks fitted) and, with `vote`, H's strokes as set A votes for them (`strokes_of_set_a`, each voting image
    doubting that one action: `alone`); `Formed.strokes_read` holds the readings along the final H."""
    a = formed.explained
    readings = set_a_readings(perception, [images[k] for k in a], formed.hypothesis,
                              [formed.checks[k].placements for k in a])
    if not vote:
        return replace(formed, strokes_read=tuple(readings))
    return strokes_of_set_a(perception, images, formed, readings=readings, alone=True)


def voted_strokes(hypothesis: ImageProgram, readings: list, alone: bool = False) -> ImageProgram | None:
    """H with the one stroke changed that set A votes for, or None: each set-A image's reading along H
    (`readings`: (poses, `perception.decode.StrokeReading`) each) names the change of its worst action when the
    decoder prefers another stroke there by more than STROKE_LOGP_SLACK (`alone`: only when it is the one action
    whose stroke it so doubts, H's other strokes read firmly: where H is read wrong in its geometry, set A's
    strokes read along it are doubted at several actions each, and such doubt names no change); the change most
    images name is voted for when at least half of them name it (two quarters misread split the images between
    them)."""
    def names(reading) -> bool:
        return reading.margin < -STROKE_LOGP_SLACK and (
            not alone or sum(margin < -STROKE_LOGP_SLACK for margin in reading.margins) == 1)

    changed = [in_frame_of(hypothesis, reading.program) for _, reading in readings if names(reading)]
    votes = [(sum(same_image(program, other) for other in changed), program) for program in changed]
    named, best = max(votes, key=lambda vote: vote[0], default=(0, None))
    return best if best is not None and 2 * named >= len(readings) else None


def formed_after_reading(perception, images, positives: int, first: list, guesses: list, decoded: dict, results: list,
                         stages: Stages) -> Formed | None:
    """H formed again when the decoder's top readings of set A's images decoded first explain too little of set A
    but it proposed a free-form program for one of them (`free_form_proposed`): those images read in full (the tracer
    mends the decoder's free-form readings; their readings go into `results`) and their readings tried as H."""
    with stages("read"):
        for k, r in zip(first, perception.read_in_full([images[k] for k in first], [guesses[k] for k in first],
                                                       [decoded[k] for k in first])):
            results[k] = r
    readings = {k: results[k].program for k in first if results[k].program is not None}
    return formed_from(perception, images, positives, readings, stages)
