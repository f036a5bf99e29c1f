"""From pixels to programs: the decoder and the shape classifier propose, the enumerator refines.

`PixelPerception` is the perception `solve_problem` takes: it decodes all images of a problem in one
batch (`perception.decode`), names the library shapes of every image that does not read as free-form
(`perception.shapes`), then refines every image's proposals by render-and-compare (`search.refine`), in
parallel across processes when `workers` > 1. A failure on one image is recorded on that image (and the
best program found so far is used) — it never stops the problem.

Modes (for the ablations): `refine=False` keeps the decoder's top proposal ("decoder without search");
`use_decoder=False` starts the enumerator from generic seed programs instead of the decoder's and the
classifier's proposals ("search without the decoder": library shapes and grid values only).

Per problem (`reconcile_with_context`, when the caller says which images are set A and set B): the A
images of a free-form problem draw one program; the reading that draws most of them at least as well as
their own readings is drawn into the queries (and into the A images read otherwise), which take it if it
draws them at least as well as their own readings (generated free-form problems, seed 4242: 75 % -> 83 %
of queries; seed 8080: 75 % -> 92 %). Set B keeps its readings. An image outside A that reads as the
consensus is then checked for a free-form near miss in one action's stroke type, against the stroke
margins the A images show.

Per image (`refine_perceived`):
  * a decoded top proposal that lies on the free-form grid (snapped, retraced end actions dropped:
    `search.retrace`) is checked by the free-form tracer (`search.trace`), seeded by the starts of the
    decoder's best readings: the tracer follows the ink with the generator's moves and prefers the
    shortest walk that covers it, so it mends readings with an action too many or too few or a wrong
    unit; the decoder's reading is kept when the tracer's best walk draws the same picture, else the traced
    program takes the decoder's strokes where its actions lie, chosen again by the pixel score with each
    shape's direction of travel (`search.strokes.assign_strokes_either_way`). Free-form searches by
    `search.refine` lost to the decoder's top-1 (72.3 % vs 67.3 % exact on official dev_ff) because the
    pixel score does not object to extra actions over drawn ink;
  * an image whose top reading is off the grid and that the shape classifier is unsure of (top probability
    under TRACE_BELOW_CONFIDENCE) is traced too, from the decoder's snapped readings: a free-form image
    read wrongly has its trace cover the ink at the free-form painter's units (FREE_FORM_UNITS); basic and
    abstract shapes, painted larger, do not (official dev: 34 of the 54 off-grid free-form images then
    have the right structure; no basic or abstract image is taken for free-form). A first trace from the
    top reading's starts gates the full one (it is slow on large shapes); an image it stops, read as
    library shapes that draw its ink poorly, is traced in full after all when enough of the decoder's
    reading lies on the free-form grid (`_second_trace`);
  * any other image (basic and abstract shapes) is searched from the classifier's library shapes
    (`library_plan`: an image of two separate ink parts part by part, each part from its own best
    groups; else the whole image's best groups, and their pairs when the decoder reads two shapes), or
    from the generic seed programs when there is no classifier. The
    decoder's own readings of library shapes are rough (continuous values) and led the search astray, so
    they are not searched from (LIBRARY_DECODED = 0). Every library shape the search reaches, by an edit
    too, pays the classifier's log-probability of it (`ClassifierPrior`): the search's library edits had
    let look-alikes the classifier rules out win by a fraction of a pixel (category top-1 per shape on
    generated basic problems, seeds 5555 / 6161 / 7272: 95.7 / 93.3 / 91.6 % -> 96.7 / 95.9 / 93.3 %).
    Touching shapes make one ink blob that the classifier is unsure of: when the decoder reads two shapes
    there, the ink is split among them (`search.split`) and the parts are searched alone too; the reading
    that draws the image better is kept (same seeds: 97.0 / 96.8 / 93.2 %).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dsl.library import load_library
from dsl.types import Action, ActionKind, ImageProgram, Pose, Shape, StrokeType
from search.refine import Proposal, refine_image
from search.template import VIEW

TOP_K = 6
TRACE = True  # free-form readings are checked by the tracer (`_traced`), off-grid ones traced (`_traced_off_grid`)
FREE_FORM_UNITS = (0.85 * 80 * VIEW.pixels_per_unit, 1.1 * 140 * VIEW.pixels_per_unit)  # px per unit: the free-form
# painter's scales (80-140, spec §2.6) with some slack; basic and abstract shapes are painted at 150-320
FREE_FORM_MIN_ACTIONS = {1: 4, 2: 2}  # actions per shape of a free-form image of one or two shapes (spec §3.2: 4-9
# alone, 2-5 in pairs); an off-grid image traced with fewer is not taken for free-form (abstract shapes of two
# segments trace as two unit lines)
OFF_GRID_FULL_FROM = 0.7  # an off-grid image's first trace (the top reading's starts) must cover this much
# of the ink before the full trace (three readings, the painter's units, the ink's ends) runs
FIRST_UNIT_SLACK = 0.15  # ... and walk at units within FREE_FORM_UNITS +- this: basic shapes whose first trace
# covers the ink do so at their larger units (official dev: 73 of 108 traced dev_bd images ran the full trace
# without this, 6 with it, against 50 and 42 of the 53 traced dev_ff images; 3.3 s -> 0.2 s per dev_bd problem)
TRACE_BELOW_CONFIDENCE = 0.9  # off-grid images are traced only when the shape classifier is less sure than
# this of a library shape (official dev: abstract images 0.998 median, basic 0.97, off-grid free-form 0.43)
SECOND_TRACE = True  # an off-grid image whose first trace failed its gate, read as library shapes that draw its
# ink poorly, is traced in full after all (`_second_trace`)
POOR_FIT = 1.5  # px: ... when the library reading's centreline fit (`search.pose.fit`) is above this
GRID_SHARE = 0.3  # ... and at least this share of the decoder's top reading lies on the free-form grid (official
# dev: 101 dev_bd and 239 dev_hd images are read that poorly, larger shapes fit worse; 8 and 4 of them with an
# unsure classifier and this share; a full trace takes 1-25 s there)
LIBRARY_DECODED = 0  # decoded proposals kept beside the library proposals for library-like images (see below)
BEAM = 6
REFINE_BUDGET_MS = 80.0
LIBRARY_TOP = 5  # the classifier's best groups for the whole image, proposed as one-shape programs
PAIR_TOP = 4  # ... combined in pairs when the decoder reads two shapes that do not fall apart into two ink parts
PART_BUDGET_SHARE = 0.5  # each ink part of a two-part image is searched with this share of the image's budget
CONSENSUS_MIN = 3  # set-A images that must agree on a free-form reading before the others are checked against it
CONSENSUS_MARGIN = 0.0  # ... and an image takes it if it draws the image within this (mean grey difference) of its own
STROKE_SLACK = 2.0  # window pixel-score units beyond the A images' least stroke margin before a stroke is changed
SPLIT_TOUCHING = True  # an image of one ink blob read as two shapes is also searched part by part (`_split_plan`)
SPLIT_BELOW_CONFIDENCE = 0.5  # ... when the classifier's top probability for the whole blob is under this
SPLIT_READINGS = 3  # the decoder's best readings of two shapes tried in turn until one splits the ink
CLASSIFIER_PRIOR = True  # library shapes reached by the search's edits pay the classifier's log-probability
LIBRARY_LOGP_SCALE = 10.0  # the classifier's log-probabilities are given to the search times this (0.2 px per nat)
SEED_LIBRARY_SHAPES = ("equilateral_traingle", "square", "closed_circle", "regular_hexagon", "closed_semi_circle")


class PerceptionError(RuntimeError):
    """The images of a problem could not be perceived at all (e.g. no decoder checkpoint)."""


@dataclass(frozen=True, slots=True)
class Perceived:
    """What perception made of one image."""

    program: ImageProgram | None
    poses: tuple[Pose, ...] | None = None
    score: float | None = None
    proposals: tuple = ()
    error: str | None = None


def seed_proposals() -> list[Proposal]:
    """Generic starting points for the enumerator when no decoder is used."""
    library = load_library()
    seeds = [Shape((Action.line(1.0),)), Shape((Action.arc(0.5, 90.0),))]
    seeds += [library[name].shape for name in SEED_LIBRARY_SHAPES if name in library]
    singles = [Proposal(ImageProgram((s,)), 0.0) for s in seeds]
    pairs = [Proposal(ImageProgram((seeds[0], s)), 0.0) for s in seeds[:4]]
    return singles + pairs


def _scaled_logp(p: float) -> float:
    return LIBRARY_LOGP_SCALE * math.log(max(p, 1e-9))


def library_proposals(guesses: list, pair_guesses: list | None = None) -> list[Proposal]:
    """Programs of library shapes from the shape classifier's guesses ([(group names, probability), ...],
    best first, from `perception.shapes.library_guesses`): one shape per top group; and with
    `pair_guesses` (when the decoder reads two touching shapes), pairs of their top groups. Log-probabilities
    are the classifier's (summed over a pair) times LIBRARY_LOGP_SCALE, most probable first."""
    library = load_library()

    def shape(group) -> Shape:
        return library[group[0]].shape

    def logp(*ps: float) -> float:
        return float(sum(_scaled_logp(p) for p in ps))

    out = [Proposal(ImageProgram((shape(g),)), logp(p)) for g, p in guesses[:LIBRARY_TOP]]
    if pair_guesses:
        pairs = itertools.combinations(pair_guesses[:PAIR_TOP], 2)
        out += [Proposal(ImageProgram((shape(a), shape(b))), logp(pa, pb)) for (a, pa), (b, pb) in pairs]
    return sorted(out, key=lambda p: -p.logp)


@dataclass(frozen=True)
class ClassifierPrior:
    """The shape classifier's log-probability (times LIBRARY_LOGP_SCALE, as its proposals carry) of the
    library shape a shape draws, None for a shape that is no library shape: `refine_image`'s `shape_logp`,
    so that a library shape the search reaches by an edit pays what the classifier thinks of it."""

    logp: dict  # library name -> LIBRARY_LOGP_SCALE x log-probability of its group

    @classmethod
    def from_guesses(cls, ranked: list) -> "ClassifierPrior":
        return cls({name: _scaled_logp(p) for group, p in ranked for name in group})

    def __call__(self, shape: Shape) -> float | None:
        from solver.categories import exact_shape_categories  # memoised; the classifier's groups are its names

        names = exact_shape_categories(shape)
        return self.logp.get(names[0], _scaled_logp(0.0)) if names else None


@dataclass(frozen=True)
class LibraryPlan:
    """The classifier's proposals for one image: programs for the whole image or, when the image has two
    separate ink parts, one-shape programs for each part (each part is then searched alone, on an image
    holding only its ink, and the two programs are joined). Both for touching shapes split by the
    decoder's reading (`_split_plan`): the reading that draws the image better is kept."""

    whole: tuple = ()
    parts: tuple = ()  # ((part image, proposals), (part image, proposals))
    confidence: float = 1.0  # the classifier's top probability for the whole image, or for its less sure part
    whole_prior: ClassifierPrior | None = None  # the classifier's belief in each library shape, whole image
    part_priors: tuple = ()  # ... per part


def library_plan(guesses: dict, shapes_read: int) -> LibraryPlan:
    """A `LibraryPlan` from `perception.shapes.library_guesses` (with part images) and the number of
    shapes the decoder reads."""
    whole = guesses["whole"][0][1] if guesses["whole"] else 0.0
    if len(guesses["parts"]) == 2:
        parts = tuple((image, tuple(library_proposals(part))) for image, part in zip(guesses["part_images"], guesses["parts"]))
        confidence = max(whole, min(part[0][1] if part else 0.0 for part in guesses["parts"]))
        priors = tuple(ClassifierPrior.from_guesses(part) for part in guesses["parts"])
        return LibraryPlan(parts=parts, confidence=confidence, part_priors=priors)
    pairs = guesses["whole"] if shapes_read == 2 else None
    return LibraryPlan(
        tuple(library_proposals(guesses["whole"], pairs)), confidence=whole,
        whole_prior=ClassifierPrior.from_guesses(guesses["whole"]),
    )


def _split_plan(plan: LibraryPlan, guesses: dict, model, image: np.ndarray, readings: list) -> LibraryPlan:
    """`plan` with parts from the ink split among the two shapes of the decoder's best reading of two
    shapes that splits it (`search.split`): touching shapes, which the classifier is unsure of together.
    The whole image's proposals stay: both are searched and the reading that draws the image better is
    kept (`refine_perceived`). `guesses`: the classifier's on the whole image (`plan` came from them)."""
    from perception.shapes import ranked_groups
    from search.split import touching_parts

    parts = next((found for found in (touching_parts(image, reading) for reading in readings) if found), None)
    if not parts:
        return plan
    ranked = ranked_groups(model, parts, top=model.classes)
    split = library_plan(dict(guesses, parts=ranked, part_images=parts), shapes_read=2)
    return replace(split, whole=plan.whole, whole_prior=plan.whole_prior, confidence=plan.confidence)


_WORKER_DECODERS: dict = {}


def _decode_chunk(job: tuple) -> list[tuple]:
    """Decode some images in a worker process (its own copy of the model, loaded once per process)."""
    checkpoint, top_k, beam, images = job
    import torch

    from perception.decode import decode_images, load_decoder

    torch.set_num_threads(1)
    key = str(checkpoint)
    if key not in _WORKER_DECODERS:
        _WORKER_DECODERS[key] = load_decoder(checkpoint)
    decoded = decode_images(_WORKER_DECODERS[key], images, top_k=top_k, beam_width=beam)
    return [tuple(Proposal(p.program, p.logp) for p in props) for props in decoded]


def free_form_reading(program: ImageProgram) -> ImageProgram | None:
    """The program snapped to the free-form grid if it already lies on it (every line of length 1, every
    arc a quarter circle of radius 0.5, turns multiples of 30 degrees, within 0.05 / 5 degrees), its
    retraced end actions dropped (`search.retrace`: a closed outline read as going round once more), else
    None."""
    from dsl.canonical import same_image
    from perception.decode import snap_free_form
    from search.retrace import without_retraced_ends

    snapped = snap_free_form(program)
    return without_retraced_ends(snapped) if same_image(program, snapped, length_tol=0.05, angle_tol=5.0) else None


def _traced(image: np.ndarray, free_form: ImageProgram, proposals: tuple) -> Perceived:
    """A free-form reading checked by the tracer (`search.trace`), seeded by the decoder's readings: kept
    (poses fitted) when the tracer's best walk draws the same picture, else the traced program
    (`_with_strokes`)."""
    from dsl.canonical import same_image
    from perception.decode import snap_free_form
    from search.pose import fit_poses
    from search.template import make_target
    from search.trace import trace_free_form

    target = make_target(image)
    readings = [free_form] + [snap_free_form(p.program) for p in proposals[1:]]
    traced = trace_free_form(target, readings) if TRACE else None
    if traced is None or same_image(traced.program, free_form, 0.02, 2.0, ignore_strokes=True):
        return Perceived(free_form, fit_poses(free_form, target), None, proposals)
    return _with_strokes(traced, free_form, target, proposals)


def _traced_off_grid(image: np.ndarray, proposals: tuple, gate: bool = True) -> tuple[Perceived | None, bool]:
    """An image whose decoded top reading is off the free-form grid, traced from the decoder's snapped
    readings -> (reading, stopped by the gate). The reading is the traced program if it covers the ink
    (`search.trace.FULL_COVERAGE`) at the free-form painter's units (FREE_FORM_UNITS) with as many actions
    as the generator draws (FREE_FORM_MIN_ACTIONS), else None (the image is read as library shapes).
    The gate (`gate=True`): a first trace from the top reading's starts alone must cover
    OFF_GRID_FULL_FROM of the ink at about the free-form units (FIRST_UNIT_SLACK) before the full one runs."""
    from perception.decode import snap_free_form
    from search.retrace import without_retraced_ends
    from search.template import make_target
    from search.trace import FULL_COVERAGE, trace_free_form

    target = make_target(image)
    programs = [without_retraced_ends(snap_free_form(p.program)) for p in proposals]
    low, high = FREE_FORM_UNITS
    if gate:
        first = trace_free_form(target, programs, readings=1, retry_from=2.0)
        if first is None or first.coverage < OFF_GRID_FULL_FROM or not all(
            low * (1 - FIRST_UNIT_SLACK) <= s.u <= high * (1 + FIRST_UNIT_SLACK) for s in first.starts
        ):
            return None, True
    traced = trace_free_form(target, programs)
    if traced is None or traced.coverage < FULL_COVERAGE or not all(low <= s.u <= high for s in traced.starts):
        return None, False
    counts = [len(shape) for shape in traced.program.shapes]
    if min(counts) < FREE_FORM_MIN_ACTIONS[len(counts)]:  # the generator draws no such free-form image
        return None, False
    return _with_strokes(traced, programs[0], target, proposals), False


def grid_share(program: ImageProgram) -> float:
    """Share of the program's actions on the free-form grid, roughly: lines of length 1 (+- 0.1), quarter
    arcs (+- 15 degrees) of radius 0.5 (+- 0.1)."""
    from perception.decode import FREE_FORM_ARC_STEP, FREE_FORM_LENGTH, FREE_FORM_RADIUS

    actions = [a for shape in program.shapes for a in shape.actions]
    on = [
        abs(a.length - FREE_FORM_LENGTH) <= 0.1 if a.kind is ActionKind.LINE
        else abs(a.radius - FREE_FORM_RADIUS) <= 0.1 and abs(abs(a.angle) - FREE_FORM_ARC_STEP) <= 15.0
        for a in actions
    ]
    return float(np.mean(on)) if on else 0.0


def _centreline_fit(target, program: ImageProgram) -> float:
    """Mean centreline distance (px, `search.pose.fit`) of the program drawn with normal strokes."""
    from search.pose import fit
    from search.template import template

    return fit([template(shape.with_strokes(StrokeType.NORMAL)) for shape in program.shapes], target)[1]


def _second_trace(image: np.ndarray, reading: Perceived, proposals: tuple) -> Perceived:
    """A library `reading` of an off-grid image whose first trace failed its gate: when the reading draws
    the ink poorly (centreline fit over POOR_FIT px), the full trace runs without the gate, and its reading
    is kept if it draws the centrelines closer. (Two free-form shapes far apart of which the decoder saw one,
    or one whose decoded unit is far off, fail the gate: on generated free-form tuning problems, seed 4242,
    80.1 -> 82.1 % of images exact; official dev_ff 83.3 -> 84.8 %.)"""
    from search.template import make_target

    target = make_target(image)
    own = _centreline_fit(target, reading.program)
    if own <= POOR_FIT:
        return reading
    traced, _ = _traced_off_grid(image, proposals, gate=False)
    if traced is None or _centreline_fit(target, traced.program) >= own:
        return reading
    return traced


def _with_strokes(traced, decoded: ImageProgram, target, proposals: tuple) -> Perceived:
    """The traced program, each action with the stroke of the `decoded` action drawn where it lies as the
    decoder's preference, the strokes then chosen by the pixel score with each shape traced either way
    (`search.strokes.assign_strokes_either_way`), poses where the tracer walked (polished). (Keeping the
    decoded strokes as they are instead made 2 fewer official dev_ff images exact; choosing the direction
    of travel too, with the preference for the decoded strokes 4 instead of 32: free-form tuning set, seed
    4242, 82.1 -> 84.2 % exact, official dev_ff 84.8 -> 85.7 %. Checking the strokes of kept decoder
    readings the same way lost: 79.5 and 82.1 %.)"""
    from search.strokes import assign_strokes_either_way
    from search.trace import traced_placements, with_decoded_strokes

    program, decoded_strokes = with_decoded_strokes(traced, decoded, target)
    placements = traced_placements(traced)
    program, placements = assign_strokes_either_way(program, placements, target, decoded_strokes)
    return Perceived(program, tuple(p.pose(target) for p in placements), traced.score, proposals)


def _refine_one(job: tuple) -> Perceived:
    return refine_perceived(*job)


def _refine_parts(plan: LibraryPlan, budget_ms: float) -> Perceived:
    """Each ink part searched alone (PART_BUDGET_SHARE of the budget each); the programs, poses and scores joined."""
    priors = plan.part_priors if CLASSIFIER_PRIOR and plan.part_priors else (None,) * len(plan.parts)
    results = [
        refine_image(image, list(props), budget_ms=budget_ms * PART_BUDGET_SHARE, shape_logp=prior)
        for (image, props), prior in zip(plan.parts, priors)
    ]
    program = ImageProgram(tuple(shape for r in results for shape in r.program.shapes))
    poses = tuple(pose for r in results for pose in r.poses)
    return Perceived(program, poses, float(sum(r.score for r in results)))


def refine_perceived(
    image: np.ndarray, proposals: tuple, budget_ms: float, library: LibraryPlan | None = None, decoded: bool = True
) -> Perceived:
    """One image's program from the decoder's `proposals` and the classifier's `library` plan (see the
    module docstring); `decoded=False`: `proposals` are seed programs, searched as they are."""
    try:
        free_form = free_form_reading(proposals[0].program) if decoded and proposals else None
        if free_form is not None:  # the decoder reads free-form programs better than refinement does
            return _traced(image, free_form, proposals)
        unsure = library is None or library.confidence < TRACE_BELOW_CONFIDENCE
        second = False  # the library reading is checked by a second, ungated trace (`_second_trace`)
        if decoded and proposals and TRACE and unsure:  # off the grid: a free-form image read wrongly?
            traced, gated = _traced_off_grid(image, proposals)
            if traced is not None:
                return traced
            second = SECOND_TRACE and gated and grid_share(proposals[0].program) >= GRID_SHARE
        starts, parted = proposals, None
        if decoded and library is not None and library.parts:  # two separate shapes: each searched alone
            parted = replace(_refine_parts(library, budget_ms), proposals=proposals)
            if not library.whole:
                return _second_trace(image, parted, proposals) if second else parted
        if decoded:  # library-like: searched from the classifier's library shapes, else the generic seeds
            floor = min(p.logp for p in proposals) if proposals else 0.0
            whole = library.whole if library is not None else ()
            starts = tuple(proposals[:LIBRARY_DECODED]) + (
                tuple(whole) if whole else tuple(Proposal(s.program, floor) for s in seed_proposals())
            )
        prior = library.whole_prior if decoded and CLASSIFIER_PRIOR and library is not None and library.whole else None
        result = refine_image(image, list(starts), budget_ms=budget_ms, shape_logp=prior)
        searched = Perceived(result.program, result.poses, result.score, proposals)
        if parted is not None:  # touching shapes split by the decoder's reading, and the whole blob searched
            searched = min((searched, parted), key=lambda reading: pixel_fit(image, reading.program)[0])
        if second:
            return _second_trace(image, searched, proposals)
    except Exception as error:  # one image's failure is recorded (the decoder's best reading kept), the problem goes on
        fallback = proposals[0].program if proposals else None
        return Perceived(fallback, proposals=proposals, error=f"refinement failed: {error!r}")
    return searched


def pixel_fit(image: np.ndarray, program: ImageProgram) -> tuple[float, tuple[Pose, ...]]:
    """How well `program` draws `image`: the mean absolute grey difference (0-1) of its render (stroke
    types included) in the image's ink crop, lower is better, and its fitted poses
    (`search.pose.fitted_pixel_cost`)."""
    from search.pose import fitted_pixel_cost
    from search.template import make_target

    return fitted_pixel_cost(program, make_target(image))


def _pixel_fit_job(job: tuple) -> tuple[float, tuple[Pose, ...]]:
    return pixel_fit(*job)


def _margins_job(job: tuple) -> tuple[list, list, tuple[Pose, ...]]:
    """(image, program) -> `search.strokes.stroke_margins` of the program in the image, poses as Poses."""
    from search.strokes import stroke_margins
    from search.template import make_target

    image, program = job
    target = make_target(image)
    margins, alternatives, placements = stroke_margins(program, target)
    return margins, alternatives, tuple(p.pose(target) for p in placements)


def reconcile_with_context(
    images: list[np.ndarray], results: list[Perceived], positives: int, map_=map, negatives: int = 0
) -> list[Perceived]:
    """Problem-level perception for free-form problems: the images of set A (the first `positives`) draw
    one program.
    1. Consensus. Every distinct free-form reading of an A image is drawn into every A image; the reading
       that draws the most A images at least as well as their own readings (`pixel_fit`, within
       CONSENSUS_MARGIN; ties: the lower total) is the consensus if it draws at least CONSENSUS_MIN of
       them. When all A images read alike, nothing is changed.
    2. Misreadings. Every image read otherwise takes the consensus if it draws the image at least as well
       as its own reading, except the `negatives` images that follow A (set B: they violate A's concept, so
       A's program is never forced on them; a reading that overlays two shapes can draw a near miss as
       well as its own reading does).
    3. Stroke near misses (`_stroke_near_misses`): an image outside A that reads as the consensus may
       differ from it in one action's stroke type (spec §3.2).
    Library readings are left alone. `map_`: a map to run the fits with (e.g. a process pool's)."""
    from dsl.canonical import image_key

    free = [k for k, r in enumerate(results) if r.program is not None and free_form_reading(r.program) is not None]
    a_free = [k for k in free if k < positives]
    candidates: dict[tuple, ImageProgram] = {}
    for k in a_free:
        candidates.setdefault(image_key(results[k].program), results[k].program)
    if len(a_free) < CONSENSUS_MIN or len(candidates) < 2 and len(a_free) == positives:
        return results  # too few free-form readings, or all of A already agree (checking the strokes of the
        # other images then too made one more query wrong on the tuning problems and none right)
    keys = {k: image_key(results[k].program) for k in free}
    jobs = [(images[k], results[k].program) for k in a_free]  # the A images' own readings
    jobs += [(images[k], c) for key, c in candidates.items() for k in a_free if keys[k] != key]
    values = [value for value, _ in map_(_pixel_fit_job, jobs)]
    own = dict(zip(a_free, values[: len(a_free)]))
    fits = iter(values[len(a_free):])
    ranked = []
    for key, c in candidates.items():
        drawn = {k: (next(fits) if keys[k] != key else own[k]) for k in a_free}
        explained = sum(drawn[k] <= own[k] + CONSENSUS_MARGIN for k in a_free)
        ranked.append((-explained, sum(drawn.values()), key))
    explained, _, best = min(ranked)
    if -explained < CONSENSUS_MIN:
        return results
    consensus = candidates[best]
    others = [k for k in free if keys[k] != best and not positives <= k < positives + negatives]
    unseen = [k for k in others if k not in own]  # queries (and B when not named): their own readings fitted now
    jobs = [(images[k], results[k].program) for k in unseen] + [(images[k], consensus) for k in others]
    done = list(map_(_pixel_fit_job, jobs))
    own.update((k, value) for k, (value, _) in zip(unseen, done))
    fitted = done[len(unseen):]
    out = list(results)
    for k, (value, poses) in zip(others, fitted):
        if value <= own[k] + CONSENSUS_MARGIN:
            out[k] = replace(results[k], program=consensus, poses=poses, score=None)
    return _stroke_near_misses(images, out, positives, best, consensus, map_)


def _stroke_near_misses(
    images: list[np.ndarray], out: list[Perceived], positives: int, best: tuple, consensus: ImageProgram, map_
) -> list[Perceived]:
    """Images outside A that read as the consensus, checked for a near miss in one action's stroke: each
    action's stroke margin in the image (`search.strokes.stroke_margins`) against the A images' margins for
    that action (drawn by the consensus by definition, they show the stroke test's noise there): below the
    least of them by their spread (at least STROKE_SLACK), the action takes its best other stroke."""
    from dsl.canonical import image_key

    drawn = [k for k in range(positives, len(out)) if out[k].program is not None and image_key(out[k].program) == best]
    if not drawn:
        return out
    checked = list(map_(_margins_job, [(images[k], consensus) for k in list(range(positives)) + drawn]))

    def floor(values: list[float]) -> float:
        return min(0.0, min(values)) - max(STROKE_SLACK, max(values) - min(values))

    noise = [[floor([checked[a][0][s][i] for a in range(positives)]) for i in range(len(shape))]
             for s, shape in enumerate(consensus.shapes)]
    for k, (margins, alternatives, poses) in zip(drawn, checked[positives:]):
        worst, s, i = min((m - noise[s][i], s, i) for s, row in enumerate(margins) for i, m in enumerate(row))
        if worst < 0.0:
            shapes = list(consensus.shapes)
            shapes[s] = Shape(shapes[s].actions[:i] + (alternatives[s][i],) + shapes[s].actions[i + 1:])
            out[k] = replace(out[k], program=ImageProgram(tuple(shapes)), poses=poses, score=None)
    return out


def require_programs(results: list[Perceived], names: list[str]) -> list[ImageProgram]:
    """The programs of `results`; a PerceptionError naming the first image that has none."""
    missing = [k for k, r in enumerate(results) if r.program is None]
    if missing:
        first = missing[0]
        raise PerceptionError(f"no program for {len(missing)} images, first {names[first]}: {results[first].error}")
    return [r.program for r in results]


class PixelPerception:
    """Callable images -> programs for `solve_problem`; `perceive` keeps poses, scores and errors."""

    reconciles = True  # takes `positives=` and `negatives=` (set A first, then set B): see `reconcile_with_context`

    def __init__(
        self,
        checkpoint: Path | str | None = None,
        top_k: int = TOP_K,
        budget_ms: float = REFINE_BUDGET_MS,
        workers: int = 1,
        refine: bool = True,
        use_decoder: bool = True,
        beam: int = BEAM,
        shapes_checkpoint: Path | str | None = None,
        use_classifier: bool = True,
    ) -> None:
        self.checkpoint = checkpoint
        self.beam = beam
        self.top_k = top_k
        self.budget_ms = budget_ms
        self.workers = max(1, int(workers))
        self.refine = refine
        self.use_decoder = use_decoder
        self.shapes_checkpoint = shapes_checkpoint
        self.use_classifier = use_classifier and use_decoder
        self._classifier = None
        self._model = None
        self._pool = None

    def decoder(self):
        """The decoder model, loaded on first use."""
        if self._model is None:
            from perception.decode import load_decoder

            self._model = load_decoder(self.checkpoint)
        return self._model

    def classifier(self):
        """The library-shape classifier, loaded on first use."""
        if self._classifier is None:
            from perception.shapes import load_classifier

            self._classifier = load_classifier(self.shapes_checkpoint)
        return self._classifier

    def library(self, images: list[np.ndarray], proposals: list[tuple]) -> list[LibraryPlan | None]:
        """The shape classifier's `LibraryPlan` per image (None for an image whose decoded top reading is
        free-form: it is kept as decoded)."""
        if not self.use_classifier:
            return [None] * len(images)
        from perception.shapes import library_guesses

        out = []
        for image, props in zip(images, proposals):
            if props and free_form_reading(props[0].program) is not None:
                out.append(None)
                continue
            shapes_read = len(props[0].program.shapes) if props else 1
            model = self.classifier()
            guesses = library_guesses(model, image, top=model.classes)
            plan = library_plan(guesses, shapes_read)
            if SPLIT_TOUCHING and not plan.parts and plan.confidence < SPLIT_BELOW_CONFIDENCE:
                readings = [p.program for p in props if len(p.program.shapes) == 2][:SPLIT_READINGS]
                plan = _split_plan(plan, guesses, model, image, readings)
            out.append(plan)
        return out

    def proposals(self, images: list[np.ndarray]) -> list[tuple]:
        if not self.use_decoder:
            return [tuple(seed_proposals())] * len(images)
        if self._pool is not None and len(images) > 1:  # the images split across the worker processes
            chunks = [images[k :: self.workers] for k in range(self.workers)]
            done = self._pool.map(_decode_chunk, [(self.checkpoint, self.top_k, self.beam, c) for c in chunks if c])
            out: list = [None] * len(images)
            for k, props in enumerate(done):
                out[k :: self.workers] = props
            return out
        from perception.decode import decode_images

        decoded = decode_images(self.decoder(), images, top_k=self.top_k, beam_width=self.beam)
        return [tuple(Proposal(p.program, p.logp) for p in props) for props in decoded]

    def _refine_all(self, jobs: list) -> list[Perceived]:
        if self._pool is None or len(jobs) == 1:
            return [_refine_one(job) for job in jobs]
        return self._pool.map(_refine_one, jobs)

    def perceive(self, images: list[np.ndarray], positives: int | None = None, negatives: int = 0) -> list[Perceived]:
        """Every image's program. `positives`: the first this many images are set A of one problem (the
        readings are then reconciled with the context: `reconcile_with_context`); `negatives`: the next
        this many are set B (kept as read)."""
        images = [np.asarray(image) for image in images]
        if self.workers > 1 and self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(self.workers)  # before torch starts threads
        try:
            proposals = self.proposals(images)
        except Exception as error:
            raise PerceptionError(f"decoding failed: {error}") from error
        try:
            library = self.library(images, proposals) if self.refine else [None] * len(images)
        except Exception as error:
            raise PerceptionError(f"shape classification failed: {error}") from error
        if not self.refine:
            return [
                Perceived(p[0].program if p else None, proposals=p, error=None if p else "no proposal decoded")
                for p in proposals
            ]
        jobs = [(image, props, self.budget_ms, lib, self.use_decoder) for image, props, lib in zip(images, proposals, library)]
        results = self._refine_all(jobs)
        if positives:
            results = reconcile_with_context(images, results, positives, self._pool.map if self._pool else map, negatives)
        return results

    def __call__(self, images: list[np.ndarray], positives: int | None = None, negatives: int = 0) -> list[ImageProgram]:
        return require_programs(self.perceive(images, positives, negatives), [f"image {k}" for k in range(len(images))])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None

    def __enter__(self) -> "PixelPerception":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
