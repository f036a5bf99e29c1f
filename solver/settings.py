"""The constants of `solver` that were chosen by hand: meaning, unit and how each was chosen.

The modules named in each section import their constants from here. Tuning used generated problems
(`bongard-solver generate --seed S`); official dev is a sanity check. Not here: safety limits of bad input,
file names, report layout and the weights fitted by `bench calibration --fit` (shipped in `solver/data/`).
"""

from __future__ import annotations

# solver.reading.traced: gates of the free-form tracer on the product's path, tuned on generated free-form problems
# (seed 4242) with the figures below; official dev checked.
TRACE = True  # free-form readings are checked by the tracer (`traced_reading`), off-grid ones traced
# (`traced_off_grid`)
FREE_FORM_MIN_ACTIONS = {1: 4, 2: 2}  # actions per shape of a free-form image of one or two shapes (spec §3.2: 4-9
# alone, 2-5 in pairs); an off-grid image traced with fewer is not taken for free-form (abstract shapes of two
# segments trace as two unit lines)
OFF_GRID_FULL_FROM = 0.7  # an off-grid image's first trace (the top reading's starts) must cover this much
# of the ink before the full trace (three readings, the painter's units, the ink's ends) runs
FIRST_UNIT_SLACK = 0.15  # ... and walk at units within FREE_FORM_UNITS +- this: basic shapes whose first trace
# covers the ink do so at their larger units (official dev: 73 of 108 traced dev_bd images ran the full trace
# without this, 6 with it, against 50 and 42 of the 53 traced dev_ff images; 3.3 s -> 0.2 s per dev_bd problem)
UNITS_WITHIN = True  # the tracer reads only walks at FREE_FORM_UNITS, when there are any: a free-form shape read
# as fewer actions at a unit the painter does not draw (one large arc over a cusp of two) won the tracer's
# score, and an off-grid image's whole reading was then rejected. Product's path with the shipped decoder's
# readings, exact: the off-grid full trace so, official dev_ff 87.5 -> 88.1 %, tuning set (seed 4242)
# 85.1 -> 85.7 %; the on-grid check too when the decoded reading is drawn at those units
# (`_at_free_form_units`), 88.1 % and 86.6 % (86.9 % always, but then 8 of the 17 official dev_hd images
# read on the grid changed, 2 of them from right to wrong). No official dev_bd or dev_hd image takes an
# off-grid traced reading either way.
REPAIR = True  # an off-grid image the tracer reads no free-form program from is traced again, seeded first by the
# decoder's top reading without a stray part (`repaired_reading`, `search.repair`): a line read as two, one short;
# a shape drawn over the other's ink. Product's path with the shipped decoder's readings, exact: official dev_ff
# 88.1 -> 89.0 %, tuning set (seed 4242) 86.6 -> 86.9 %, no image lost; no official dev_bd or dev_hd image is
# taken for free-form. (Seeding with the repair always, not only after a failed trace: dev_ff 89.0 %, the tuning
# set 86.3 %, three of its images lost.)
REPAIR_FIT = 1.05  # ... a repair's centreline fit at most this times the top reading's
ARCS_AGREE_RETRY = True  # a full trace (its walks' arcs turning one way, search.settings.ARCS_AGREE) that does not
# cover the ink is run again with walks free to turn their arcs both ways, and that reading is taken if it
# covers more and its arcs turn one way after all: with other walks kept, the beam can end elsewhere (official
# dev_ff image 168: the constrained trace's best pair covered 92 % of the ink, the free one's all; tuning image
# 275: 90 % and all, the decoder's reading)
SECOND_TRACE = True  # an off-grid image whose first trace failed its gate, read as library shapes that draw its
# ink poorly, is traced in full after all (`second_trace`)
POOR_FIT = 1.5  # px: ... when the library reading's centreline fit (`search.pose.fit`) is above this
GRID_SHARE = 0.3  # ... and at least this share of the decoder's top reading lies on the free-form grid (official
# dev: 101 dev_bd and 239 dev_hd images are read that poorly, larger shapes fit worse; 8 and 4 of them with an
# unsure classifier and this share; a full trace takes 1-25 s there)

# solver.reading.reconcile: free-form readings made without a hypothesis, tuned on generated free-form problems (seeds 4242
# and 8080).
CONSENSUS_MIN = 3  # set-A images that must agree on a free-form reading before the others are checked against it
CONSENSUS_MARGIN = 0.0  # ... and an image takes it if it draws the image within this (mean grey difference) of its own
STROKE_SLACK = 2.0  # window pixel-score units beyond the A images' least stroke margin before a stroke is changed

# solver.solving.folder: reading a problem's files; measured.
READ_THREADS = 2  # threads reading a problem's image files (`solver.solving.folder.solve_folder`): Pillow's PNG decoder lets
# the other thread run, so the 14 official RGB images of a problem take about half as long (33 -> 18 ms on 2 cores)

# solver.reading.evidence: which images can be drawings at all; set by hand from official images (the figures below).
INK_BELOW = 128  # grey levels under this are ink (images: 255 = white background)
MAX_INK_SHARE = 0.15  # share of pixels that are ink, at most; official images: at most 0.034
MAX_ISOLATED_SHARE = 0.05  # share of ink pixels with no ink neighbour; official images: 0
MIN_READABLE = 2  # readable context images each side needs for a rule to be induced

# solver.induction.facts: tolerances of near stroke-sequence facts: name -> (length tolerance in units, angle tolerance in
# degrees, stroke types ignored). Their cost is in sequence.lp; set by hand.
TOLERANCES: dict[str, tuple[float, float, bool]] = {
    "values": (0.1, 10.0, False),
    "loose": (0.25, 25.0, False),
    "strokes": (0.1, 10.0, True),
}

# solver.induction.facts: where attributes come from; chosen, not tuned (the abstract generator draws by the table's
# labels, spec 3.4); `bench ablations --attributes` measures each source.
ATTRIBUTE_SOURCE = "both"  # an `AttributeSource`: "geometry" (measured), "table" (a recognised library shape takes the
# shape table's labels) or "both" (as "table", the measure kept where it disputes a label, for the explanation)

# solver.induction.optimal: the clingo budget; set by hand.
DEFAULT_TIME_LIMIT = 10.0  # seconds per problem
DEFAULT_MAX_RULES = 64  # optimal rules enumerated at most

# solver.induction.weighing: which rules compete in the abstract vote; set by hand.
ALL_FITTING_RULES = 4096  # best-fitting attribute and count rules enumerated at most
EXTRA_ERRORS = 2  # rules misclassifying up to this many more context images than the best also compete (the
# posterior charges each misfit NOISE): the table labels a few shapes against their drawing (docs/attributes.md), and
# a true concept that two such images break lost to coincidences. Generated abstract problems, oracle, seeds
# 9001-9006 (1200): 1 -> 2, rule_match 96.83 -> 97.08 %, no problem lost, no slower
EXTRA_CATEGORY_ERRORS = 2  # ... and rules of shape categories up to this many more (perception misreads a shape
# in one or two images of A; generated basic problems from pixels, tuning seed 3131)

# solver.induction.posterior: the size principle's prior and noise, tuned on generated abstract problems (oracle programs).
LENGTH_PENALTY = 2.0  # nats per unit of rule length
NEGATION_PENALTY = 2.0  # nats per negated literal, beyond its length
NOISE = 0.02  # chance that a context image lies outside the pools of the concept, for programs read from pixels
NOISE_TRUE_PROGRAMS = 3e-4  # ... and for true programs (a library shape exactly, labelled by the shape table): on
# generated abstract problems, seeds 60001 + 60002 (800 problems), 0 of 9,600 context images lie outside their true
# concept's pools as the facts read them; 3e-4 is that count's 95 % upper bound (3 / 9,600). The known source: two
# library shapes drawn alike and labelled otherwise (sector180, closed_semi_circle: exist_sector)
KEEP = 1e-4  # rules whose posterior is below KEEP times the best are dropped
NOT_A_CONCEPT_PENALTY = 15.0  # nats for a rule of attributes and counts that names none of the generator's 220
# concepts (solver.induction.concepts: a negation, a threshold, a count no attribute names, a pair the generator
# never pairs); it replaces two charges of 6 nats each (a count equality no attribute names; a pair with a pool under
# ten shapes) set on generated abstract problems, oracle programs, seeds 3131 / 4242 / 5353, and was checked on
# seeds 5201-5203 (issue 52)

# solver.induction.prior -> family.lp: the family prior. A context shape is read as a library shape when it has a category
# (`search.categories`); how often, under each kind of generator, is evidence for the generator (family.lp), charged to
# stroke sequences on library readings and to categories on free-form ones, in misclassified images (NOISE above).
LIBRARY_READINGS = {  # generator -> probability that one of its context shapes is read as a library shape
    "library": 0.995,  # basic and abstract generators: their shapes are library shapes, perception misreads a few.
    # Generated tuning problems from pixels (the shipped perception): basic 1728 of 1736 shapes (seed 4646), 895 of 898
    # (3131), 898 of 900 (8181); abstract 1908 of 1909 (4545), 476 of 480 (8181), 480 of 480 (9191); with programs all
    "free_form": 0.21,  # free-form generator: many of its programs draw library shapes (a circle of four quarter
    # arcs, an open right triangle). Generated free-form problems from pixels, seed 8181: 147 of 696 shapes (matched
    # categories); with programs (exact categories), seeds 3131 8181 8282 9191 9292 4343: 298 of 4872
}

# solver.facts_in.solve: the language bias of problems given as facts; set by hand.
MAX_ATOMS = 3  # facts in one literal's conjunction at most
ERROR_WEIGHT = 3  # a misclassified context image costs as much as this many facts of a rule

# solver.explaining.explanation: set by hand.
UNDECIDED = 0.5  # a chosen rule scoring less than this: the text says the evidence does not decide

# solver.reading.pipeline and its steps (library, form, check, verdicts): the problem-level perception, tuned on the
# generated tuning set (seed 3131).
LIBRARY_SURE_A = 4  # set-A images (of 6) the classifier must be sure of for the problem to be read as library
# shapes at once; with fewer, two set-A images are decoded first to look for a free-form program. Generated tuning
# seeds 3131 + 1212 + 5151 + 5252 (160 problems per type): exactly 4 sure in 3 free-form, 16 basic and 16 abstract
# problems; read as library shapes at once (against 5) the same labels, 1 abstract rule more right and 1 free-form
# rule fewer (its set A read as `bird4`, labels still right), median seconds of those basic problems 1.30 -> 0.82,
# abstract 0.94 -> 0.54. With 3: 9 free-form problems, 2 labels lost
LIBRARY_AGREE_CONFIDENCE = 0.5  # the classifier's top probability (for an image of two ink parts: its less sure part's)
# from which its first library shape counts towards set A's shared library reading when it is sure of fewer than
# LIBRARY_SURE_A set-A images (`solver.reading.pipeline._library_drawn`). Generated tuning seeds 3131 + 5151: each of the 17
# basic problems whose set A took the decode path has one library reading named so for at least 4 set-A images (that
# program fits 3-6 of them within LEVEL_PX), as have 17 of the 74 such free-form problems (it fits 8 of those)
LIBRARY_STROKES_VARY = 0.05  # coefficient of variation (std / mean, no unit) of set A's ink pixels per px of the
# centreline of the library shapes the classifier names (`solver.reading.pipeline._ink_per_length`, the scale read from
# the ink's spread), over the set-A images named so, from which their strokes are taken to differ from image to image
# (a basic problem's) and the problem is read as library shapes at once (`solver.reading.pipeline._library_drawn`).
# Generated tuning seeds 3131 + 5151 + 12121 (ff), the problems that pass the test before: free-form 30, 0.001-0.040
# (one program, the same strokes); basic 17, 0.013-0.176, 14 of them >= 0.059 (the other 3 take the decode path)
DRAWABLE_TOLERANCE = 0.1  # relative tolerance (of a line's length to the others', of a turn to 30 degrees, of an arc to
# a quarter circle of half a line's radius; `dsl.free_form.free_form_drawable`) within which a library shape counts as
# one a free-form program draws (`solver.reading.pipeline._drawable_names`): 0.1 of a 150-260 px line is 15-26 px, far
# beyond LEVEL_PX. The same 32 of the 627 shapes at 0.01-0.1 (36 at 0.2), so the choice hardly matters
OFFERED_NAMES = 2  # groups of names per image (or ink part) taken as what the classifier offers for it, among which a
# shape a free-form program draws keeps set A's strokes that do not vary a sign of a free-form program
# (`solver.reading.pipeline._library_drawn`); set by hand: a stamped circle (tests) has `closed_circle` second
CHECK_BATCH = 3  # set-B images of a free-form problem checked against H in one job, their strokes read in one batch
# of the decoder (`solver.reading.pipeline._checked_many`), each query first in a job with CHECK_BATCH of them (a job per
# query alone: the same labels, rules and confidences on generated ff tuning seeds 3131 + 5151 + 12121 + 13131, 200
# problems, check stage median 0.28 -> 0.26 s)
CONTEXT_JOBS = 2  # jobs reading the strokes of a free-form problem's set-A images for the context margin
# (`solver.reading.pipeline._context_margin`), in the worker processes as they come free of the check jobs. Read in this
# process instead, beside the two workers (three processes on two cores): generated ff tuning seeds 3131 + 5151 +
# 12121 + 13131 (200 problems, the two codes alternating problem by problem, --workers 2): the same labels, rules and
# confidences; median s a problem 0.628 -> 0.598, and 0.99 -> 0.73 on the 21 problems more than 0.15 s faster
DECODE_FIRST = 2  # set-A images read in full to form the free-form hypotheses
CHECKED_READ_BEAM = 3  # beam width decoding the images of a free-form problem read in full once H is known (doubtful
# queries, images nothing explains; `solver.reading.pipeline._read_checked`): generated ff tuning seeds 3131 + 1212 + 5151,
# 120 problems, the doubtful queries alone: the same labels, rules and confidences as BEAM = 6, read stage 0.38 ->
# 0.34 s a problem (mean)
FORM_BEAM = 3  # beam width decoding them: their top reading is all a hypothesis needs (generated ff tuning seeds
# 3131 + 4343, 120 problems: the same labels and confidences as the full BEAM = 6, 15 % less time per problem; 2 lost 2)
FORM_GRID_SHARE = 0.9  # share of a decoded set-A image's top reading on the free-form grid (solver.reading.traced.grid_share)
# from which its full reading may form a free-form program, when no proposal lies on the grid (`_free_form_proposed`).
# Generated tuning seeds: 1212, every free-form problem's two decoded images have a proposal on the grid (beam 3),
# no basic problem's, and 1 of 40 basic problems has a top reading with share >= 0.9 (3 >= 0.6); 7070, one free-form
# problem (ff_nact7_0001) has no proposal on the grid, and a top reading with share 1.0. Before, 12 of seed 1212's 40
# basic problems read their two images in full (0.3-2.6 s a problem) and found no program
DRAWABLE_A = 3  # set-A images (of 6) whose classifier names a library shape a free-form program also draws, from
# which a problem read as library shapes at once decodes set A to look for a stamped free-form program
# (`_stamped_free_form`). Generated tuning seeds 3131 + 1212 + 5151 + 5252, problems read as library shapes at once:
# free-form 9 (counts 0, 0, 0, 0, 3, 3, 6, 6, 6), basic 130 (all 0-1 but one 6), abstract 157 (one 3, six 2); 4 missed
# ff_nact4_0001 of seed 3131 (a circle of four stamped quarter arcs the classifier names `closed_circle` in 3
# images, `symm_trans_turtle` in 3)
MIN_A_EXPLAINED = 4  # set-A images (of 6) a hypothesis must explain to be taken as the problem's program
SHARED_STAMPS = 3  # stamped actions of one shape whose strokes set A's readings share where only a free-form problem's
# set A would (`solver.solving.folder._shared_stamps`). Counted on true programs: a shape with 3 or more stamped actions
# of one multiset of strokes in 4 of 6 set-A images in 0 of 720 basic problems (generated seeds 102666 + 102888), 0 of
# 240 abstract ones (103222) and 559 of 600 free-form ones (102777); with one or two, a one-action circle stamped alike
# by chance in 4 of 6 is about 6 % likely per shape (five stroke types drawn at random)
SET_A_CANDIDATE_READS = 2  # set-A images (of 6) whose library readings must agree for that reading to be checked on
# the rest of set A as a library problem's H where no reading is shared by MIN_A_EXPLAINED
# (`solver.reading.library_check.set_a_checked`). Not fitted: the least that makes a reading more than one image's,
# so at most three candidates (each a check of six images), and a split of set A in two pairs and two singles is
# still checked
STROKE_LOGP_SLACK = 2.0  # nats: an action takes the decoder's stroke when it prefers it to H's by more than this
# (tuning set, seed 3131, 40 problems, true H: 2 of 40 positive queries flagged, 1 of 91 stroke near misses missed)
CHECK_MARGIN_PX = 0.5  # px of centreline fit: a library problem's query takes set A's shapes H when H fits it within
# LEVEL_PX and better than its own reading, and no near miss of H fits it better by more than this
# (`solver.reading.library_check`). Fitted on a probe checking every image of generated seeds 79111, 80111 and 80222
# (`generate --basic 240`, 720 problems) against H and its near misses as `check_job` checks a query: of the 3,942
# set-A images H fits within LEVEL_PX (each draws H), a near miss fits none better by 0.5 px or more (at most by
# 0.48; by 0.25 or more 13 images, by 0.1 or more 47); of the 4,284 set-B images (each draws a near miss) 178 would
# take H at this margin, 236 at 1.0 px (the margin until then, set on tuning seed 5111). H had to beat the reading by
# this margin too until generated tuning seed 60201 (240 basic problems): 4 of its 11 wrong positive queries were read
# as a near miss that H fitted better by 0.01-0.93 px, while every negative query read as its near miss fitted that
# better than H by 0.36 px or more
SURE_NEIGHBOUR_MARGIN_PX = 0.25  # px of centreline fit by which a query's neighbour of H fits it better than H, from
# which the neighbour verdict is sure though H fits the query within set A's fits (`solver.reading.check.sure_neighbour`).
# Generated ff tuning seeds 58101 + 59001 (480 problems): the one positive query with a neighbour verdict in doubt had it
# by 0.07 px (earlier seeds 12121 + 13131: 4, by 0.05 px or less); a negative whose near miss walks a circle on past its
# start and off it, by 0.35 px (ff_nact4_5_0017 of 58101). A library query's reading that the basic generator cannot
# have drawn there keeps the query from H only by this margin too (`solver.reading.library_check.reading_bar`)
STRAY_SHARE = 0.02  # share of an image's sampled ink (`search.pose.stray_share`: farther than CAP px beyond the
# pen's edge from H where H is placed) by which a query H explains may exceed the most any set-A image H explains holds,
# before it is read in full (`solver.reading.check.stray_beyond`): ink H does not draw, as a negative's changed action
# shows where H misses an action the generator drew twice (a side walked over again). Looked at on generated seeds
# 101555 + 101777 + 101888 (60 one-shape problems with H, 26 with a wrong query): positive queries held at most 0.009
# more than their set A, 5 of the 14 negatives taken as H held 0.03-0.09; 0.02 is between (2.6 of 128 samples)
LEVEL_PX = 2.5  # px of centreline fit (`search.pose.fit`, 512 px images) within which a hypothesis or neighbour
# explains an image (tuning set, seed 3131: set-A images fit their true program at 0.3-2.2 px; a hypothesis read
# wrongly fits set A at 3.8-5.4 px)

# solver.reading.perception, plans and workers: the per-image reading (decoder, classifier, search); set by hand or tuned
# on generated problems as each line says (solver/reading/perception.py's docstring has the figures).
TOP_K = 6  # decoder proposals kept per image (the beam's best distinct readings)
TRACE_BELOW_CONFIDENCE = 0.9  # off-grid images are traced only when the shape classifier is less sure than
# this of a library shape (official dev: abstract images 0.998 median, basic 0.97, off-grid free-form 0.43)
LIBRARY_DECODED = 0  # decoded proposals kept beside the library proposals for library-like images (see below)
BEAM = 6  # beam width of the decoder's search
CLASSIFY_BATCH = 3  # set-A images the shape classifier takes in one batch (`PixelPerception.guesses`): CPU per image
# 15.7 -> 9 ms, ink parts included (generated seed 3131, 24 free-form set-A images, one thread), two jobs for six
DECODE_BATCH = 7  # images decoded together (a problem's 14 in two batches, whatever the number of workers)
REFINE_BUDGET_MS = None  # None: the search's budget is counted (deterministic), not timed; see `_budget`
REFINE_CANDIDATES = 0  # structures scored, at most (counted budget; the starting proposals always are: 0 = only they)
REFINE_POLISH_EVALS = 240  # pose-polishing evaluations of the stroke stage (counted budget; half each for two ink parts)
LIBRARY_TOP = 5  # the classifier's best groups for the whole image, proposed as one-shape programs
PAIR_TOP = 4  # ... combined in pairs when the decoder reads two shapes that do not fall apart into two ink parts
PART_BUDGET_SHARE = 0.5  # each ink part of a two-part image is searched with this share of the image's budget
SPLIT_TOUCHING = True  # an image of one ink blob read as two shapes is also searched part by part (`_split_plan`)
SPLIT_BELOW_CONFIDENCE = 0.5  # ... when the classifier's top probability for the whole blob is under this
SPLIT_READINGS = 3  # the decoder's best readings of two shapes tried in turn until one splits the ink
SPLIT_BEAM = 1  # beam width decoding an image that may be touching shapes (`_library_problem`): the split needs
# readings of two shapes, not the best reading (generated tuning seeds 1212 + 3131, 80 basic problems: against the
# full BEAM = 6 the same labels, confidences and rules with beam 2; beam 1 against 2 the same records, CPU per
# touching image read 0.31 -> 0.26 s, 26 touching images of the first 25 basic problems of each seed, one process)
CLASSIFIER_PRIOR = True  # library shapes reached by the search's edits pay the classifier's log-probability
LIBRARY_LOGP_SCALE = 10.0  # the classifier's log-probabilities are given to the search times this (0.2 px per nat)
# library shapes the enumerator starts from when no decoder is used (the "search without the decoder" ablation)
SEED_LIBRARY_SHAPES = ("equilateral_traingle", "square", "closed_circle", "regular_hexagon", "closed_semi_circle")

# solver.solving.confidence: the evidence features of a query's confidence; set by hand (the weights are fitted: solver/data/).
STROKE_SCALE = 30.0  # stroke-margin units counted as one px of geometric margin. Chosen for the window pixel
# scores the stroke check first used (tuning set, seed 3131: 7-200 units on set A); the check now gives decoder
# nats (-26 to +5 on the same set), so this scale shrinks the stroke side: to be refitted with the weights (the
# shipped weight of h_margin is 0, so the confidences do not depend on it today)
MARGIN_CLIP = 3.0  # px: the h_margin feature is clipped to +- this
LOGIT_CLIP = 6.0  # the classifier_logit feature (a probability as a logit) is clipped to +- this
