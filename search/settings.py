"""The constants of `search` that were chosen by hand: meaning, unit and how each was chosen.

The modules named in each section import their constants from here. "Set by hand" means chosen when the
code was written and checked on a few generated and official dev images, not fitted by a sweep. Not here:
the free-form grid (`search.neighbourhood`, `search.trace`: spec §3.2) and sizes of caches.
"""

from __future__ import annotations

import numpy as np

from dsl.types import StrokeType
from dsl.walk import PIXELS_PER_UNIT

# search.template: targets and templates for render-and-compare; set by hand.
CENTRELINE_SPACING = 0.04  # centreline sample spacing at scale 1 (shape units)
COARSE_POINTS = 64  # centreline points kept per shape for pose search
SAMPLES = 128  # ink pixels kept for pose search
INK_THRESHOLD = 128  # grey level below which a pixel is ink
CLOSING = 2  # iterations of binary closing: fills the gaps between stamps, not their hollows (13-72 px^2 are left
# inside circle, square and triangle stamps: `STAMP_HOLLOW_AREA`)
CROP_MARGIN = 24  # pixels around the ink kept in the crop
STAMP_HOLLOW_AREA = 120  # px^2 (512 px images): the largest white region inside a stamp's outline that
# `make_target(stamps_filled=True)` counts as ink. A circle stamp at the largest scale factor (radius 7.5 x 220 / 180
# turtle units, spec 2.5) covers 113 px^2 with its outline; after CLOSING, the hollows rendered for circle, square
# and triangle strokes of open_s3, closed_circle and right_hexagon at scale factors 150-220 are 13-72 px^2, the
# smallest region a library shape encloses 5,756 px^2. Not fitted
# Stamps as the official PNGs show them, relative to dsl.turtle's polygons (fitted by hand on a few
# official dev images: the official stamps look larger and bolder than `dsl.raster` draws them).
STAMP_ENLARGEMENT: dict[StrokeType, float] = {StrokeType.CIRCLE: 1.1, StrokeType.SQUARE: 1.12, StrokeType.TRIANGLE: 0.9}

# search.pose: pose fitting (the sparse chamfer score and its local search); set by hand, measured by `bench refine`
# on synthetic proposals for generated images.
CAP = 8.0  # px: truncation of the forward term
REACH = 10.0  # px: truncation of the reverse term
HEADINGS = np.arange(0.0, 360.0, 10.0)  # degrees: heading guesses tried for a shape's pose
ORDER_REUSE_TOLERANCE = 1.5  # px: reuse an earlier shape-to-ink assignment unless the score is this much worse
ORDER_REUSE_LIMIT = 2.5  # ... or worse than this (px): then every assignment is tried (a poor first candidate
# must not fix the assignment for the rest of the search)
REGROUP_ABOVE_PX = 2.5  # px (the sparse chamfer of `pose.fit`): a two-shape fit worse than this on an image's first
# two-shape fit has the ink split in two otherwise (`pose._regrouped`); the level at which H stops explaining an image
# (solver LEVEL_PX, 2.5 px). Not fitted.
REGROUP_CLUSTERS = 4  # parts (or k-means clusters) whose splits in two are tried: 7 splits. Not fitted: the fewest
# that put a small shape crossing a larger one on a side of its own in the failing images of generated seed 51003.
FIT_EVALS = 60  # sparse-score evaluations refining each of the FIT_GUESSES best heading guesses
FIT_GUESSES = 2  # heading guesses (the best of the HEADINGS scan by the coarse sparse score) refined when a shape is
# fitted from scratch. 6 was tried on generated basic problems (seeds 4141, 5151): open and S-like arc shapes
# (bird8, open_band_three_arcs1, ...) lose the right basin with 2 and a look-alike fits better; 6 read 5 more of
# 1554 shapes right on 4141 (64 -> 59 misread), but every fit from scratch costs about 3x (the checks of free-form
# problems fit from scratch too): median s per problem on tuning seed 3131 rose 14 % (ff) and 30 % (bd) at the same
# accuracy and rule_match, so 2 is kept
RETRY_GUESSES = 8  # heading guesses refined per shape (`pose.fit`'s keep) when a problem's hypothesis H, fitted from
# FIT_GUESSES, is about to lose a query (a library problem's H explains it no better than LEVEL_PX; a free-form H's
# neighbour fits it better): H is fitted once more from these, on the ink groups as they stand (`near_miss.retried`).
# Generated tuning seeds 60201 + 60301 + 60401 (basic, 720 problems): of 12 positive queries H did not explain, 2 / 8 /
# 36 guesses (the ink regrouped too) brought 0 / 5 / 6 within LEVEL_PX, 36 at about 3 x the time of 8; regrouping
# the ink in the retry cost 27 % of the median time, and without it 4 of those 5 are labelled right. Free-form seed
# 61101, ff_nact3_5_0020: a positive query H fitted at 2.08 px from 2 guesses, a neighbour at 1.40, H 0.42 from 8
EXPLAINED_PX = 12.0  # px (512-px images): ink within this distance of one shape's drawn centreline counts as that
# shape's when `near_miss.retried` fits the other shape of a two-shape program again on the ink left
# (`near_miss.explained_apart`). From the stamp geometry (spec 2.5), not fitted: a stamp's outline reaches up to about
# 10 px from the centreline at the basic painter's largest scale (a square's half-diagonal or a triangle's
# circumradius, 9.2 turtle units x 260/180 x 512/782 px, and the outline), and a fitted centreline lies 1-2 px off.
# 9 px left a square stamp's corners as ink to explain (generated seed 88111, bd_large_union_circle-asymmetric_crown,
# looked at)
EXPLAINED_ROUNDS = 2  # times each shape of a two-shape program is fitted again on the ink the other leaves, in turn
# (`near_miss.explained_apart`): the second round starts from the other shape as the first round left it. Not fitted
MIN_LEFT_SHARE = 0.05  # share of the ink: the least the other shape must leave for a shape to be fitted on it. A guard,
# not fitted
NEAR_HEADINGS = np.arange(-30.0, 31.0, 15.0)  # degrees: heading guesses around a known pose
STEPS = (1.5, 1.5, 4.0, 0.04)  # first step sizes of the local search: cx, cy (px), theta (degrees), log s
STEP_GROWTH = 8.0  # an improving move of the local search is tried again at twice its step while it improves, up to
# this many times the step (turns and scalings made about the shape's centroid, not its start). Fixed steps from the
# start point left fits of FIT_EVALS far from their optimum (generated ff seed 66101, ff_nact4_0046, the true program
# on its set-A images: 0.69-3.05 px, 1.3 px at 200 evaluations, 0.8 px at 1000; with growth 8: 0.32-0.83 px at 60)
POLISH_STEPS = (0.5, 0.5, 1.0, 0.01)  # ... when polishing a pose, same units
MIN_STEP_FRACTION = 1.0 / 8.0  # the local search stops when its steps have shrunk to this share of the first
RENDER_OUTLINE_RADIUS = 1.25  # px: official stamp outlines look about 1.5 x as wide as spec'd (0.82 px); by hand

# search.kernels: how the sparse score's reverse term finds each ink sample's nearest posed point. Speed only: every
# value gives the same scores (the points skipped are those the plain loop's test rejects); set on the kernel calls of
# 6 generated ff problems' checks (tuning seed 1212): pattern search 390 -> 200 us per call.
BLOCK = 8  # consecutive posed points per box: a box farther than the best distance so far is skipped whole
LIST_SLACK = 10.0  # px: near-point lists made at one pose serve every trial pose whose points moved at most this far
# (pattern search); 3 px: 250 us, 10 and 15 px: 200 us per call
SKIP_MARGIN = 1e-6  # px: a point is skipped only when it lies this much beyond any distance that could count (rounding)

# search.matching: library-shape matching by descriptors; set by hand.
MATCH_POINTS = 160  # points per shape, spread evenly along its centreline
RADIUS_BINS = 8  # radius bins of the polar histogram
ANGLE_BINS = 72  # angle bins of the polar histogram (5 degrees each)
PREFILTER = 16  # library shapes kept by the rotation-invariant pre-filter
ROTATION_PEAKS = 4  # correlation peaks refined per candidate
TIE_DISTANCE = 0.01  # chamfer distance (unit RMS radius) below which two drawings are the same shape
SCORE_SCALE = 0.5  # chamfer distance (unit RMS radius) at which a match's score falls to 0

# search.neighbourhood: costs of one edit of a proposal (chamfer pixels, added to the structure score); set by hand.
EDIT_COST = {
    "turn": 0.05,
    "kind": 0.08,
    "snap": 0.0,
    "delete": 0.15,
    "insert": 0.3,
    "library": 0.05,
    "split": 0.6,
    "merge": 0.6,
}
MISSING_ACTION_COST = 0.5  # added to a library match that needs an action the shape lacks

# search.refine: search costs (chamfer pixels, the structure score's unit) and budgets, tuned by hand on synthetic
# proposals for generated images (`bench refine`).
PROJECTED_STRUCTURES = 1  # best distinct structures whose shapes are projected onto the library
PROJECTIONS = 3  # library shapes tried in place of each non-free-form shape of the best structure
RESCORE = 3  # best distinct structures fitted again from scratch before the stroke stage
LOGP_WEIGHT = 0.02  # chamfer pixels per nat of decoder log-probability below the best proposal
OFF_GRID_COST = 0.15  # chamfer pixels per action whose values are neither free-form nor library values
NON_LIBRARY_COST = 0.3  # chamfer pixels per shape that is neither free-form nor a library shape
INSERT_GAIN = 6.0  # weight of the unexplained ink near a joint in the estimate of an insertion
QUICK_EVALS = 16  # sparse-score evaluations refining a neighbour's pose from its parent's
LIBRARY_STRUCTURES = 3  # structures polished and ranked by their pixel score when the best has a
# library (non-free-form) shape, else 1: look-alike library shapes are told apart by their pixel scores only
STRUCTURE_MARGIN = 0.5  # ... if their structure score is within this of the best
# Several structures are ranked drawn as they are (the library's normal strokes, polished) and the winner's strokes
# chosen after, not each with strokes of its own (strokes let a look-alike draw stamps and zigzags it has no geometry
# for): generated tuning seeds 3131 + 1212, 80 basic + 80 abstract problems: 6 problems' labels or rules changed, all
# 6 for the better (basic 1212: accuracy 96.25 -> 100 %, rule_match 95 -> 100 %; abstract rule_match 3131 95 ->
# 97.5 %, accuracy 1212 98.75 -> 100 %); 15 % less CPU per library read (seed 3131's first 6 problems, 84 images
# each, one process, both ways alternated twice: basic 49.8 -> 42.4 ms, abstract 32.4 -> 27.7 ms)
OVERRUN_MS = 0.0  # a further structure is ranked only if the last one's stage fits in the budget + this
FINAL_STRUCTURE_WEIGHT = 0.6  # final rank: pixel score + this x structure score (0.3 before the counted budget)
PIXEL_WEIGHT = 100.0  # pixel score = PIXEL_WEIGHT * mean |grey difference| (0-1)
LIBRARY_TOP = 3  # library shapes proposed per shape of a starting proposal
POLISH_MS = 50.0  # time the stroke stage takes with POLISH_EVALS (fewer evaluations when less is left)
STROKE_RESERVE_MS = 75.0  # time kept for rescoring and the stroke stage
CONSENSUS_TEMPERATURES = (1.0, 0.0)  # majority programs started from: votes weighted by exp(t * logp)
FREE_FORM_SHARE = 0.75  # a shape with this share of its actions near the free-form grid is snapped to it

# search.strokes: choosing stroke types by pixel score; set by hand.
STROKE_PRIOR = 4.0  # window pixel-score units (ink pixels) for leaving the decoder's stroke
TRACED_STROKE_PRIOR = 4.0  # ... for leaving the stroke a `prior` gives (the decoded stroke where a traced action
# lies); 32 before the direction of travel was chosen too (`assign_strokes_either_way`)
STROKE_PASSES = 2  # rounds of (polish, choose strokes)
WINDOW_MARGIN = 6  # pixels around an action's marks in its window
POLISH_EVALS = 60  # pixel-score evaluations polishing each shape's pose
MIN_POLISH_EVALS = 12  # ... at least, when the budget is short
OVERLAP_PX = 3.0  # pixels: centreline points this near another action's are drawn over by it
OVERLAP_SHARE = 0.6  # share of an action's centreline that must be covered for a pair to overlap
EITHER_WAY_ROUNDS = 2  # times a shape is turned round (`assign_strokes_either_way`): again after turning it back won
# with a better pose (official dev_ff image 181: turned at once its pose was not good enough to win)
WINDOW_SHIFT = 2  # pixels the window of an action may shift when its stroke options are compared

# search.paths: centrelines of the ink; set by hand.
END_TIP = 5.0  # pixels (along the ink) at an end of the ink whose middle is taken as the centreline's end
END_REACH, END_RING = 17.0, 3.0  # the ink 17 +- 3 pixels along from there gives the heading
MIN_PART_PIXELS = 30  # ink parts smaller than this have no ends traced
CHAMFER_CAP = 10.0  # pixels: distances capped when readings are compared by their centrelines

# search.split: reading two shapes part by part; set by hand.
MIN_SHARE = 0.15  # each part must hold this share of the ink, else the reading does not split the image

# search.repair: stray actions of a decoded free-form reading; set by hand from the free-form grid.
SHORT_LINE = 0.6  # shape units (a free-form line is 1 long)
SHORT_ARC = 45.0  # degrees (a free-form arc turns 90)

# search.retrace: set by hand from the free-form grid.
RETRACE_TOLERANCE = 0.1  # shape units (a free-form line is 1 long): how near the other actions every point must be

# search.trace: the free-form tracer, tuned by hand on generated free-form problems (seed 4242).
START_TURNS = (10.0, -10.0, 20.0, -20.0, 30.0, -30.0)  # first moves from an end of the ink, whose heading is
# only estimated (from the ink near the end: up to ~20 degrees off where the shape ends in an arc)
TRACE_POINTS = 12  # centreline points per move
BEAM = 10  # partial traces kept per step
MAX_ACTIONS = 12  # per shape (as the decoder)
MAX_FORWARD = 0.15  # units: a move further than this from the ink on average is not followed
TRACE_CAP = 0.3  # units: distance transform truncation
TRACE_REACH = 0.12  # units: an ink sample this near a move is covered by it
FORWARD_WEIGHT = 3.0  # per unit of mean distance to the ink, summed over the moves
ACTION_COST = 0.015  # share of ink an action must cover to be worth drawing
DEVIATION_COST = 0.03  # per move off the grammar of positive shapes (`_grammar`)
ARCS_AGREE = True  # a walk's arcs all turn one way: the free-form generator draws every arc counter-clockwise
# (spec §3.2: `arc_<t>_0.500_0.625`; a negative changes a turn, a stroke or a line into such an arc), so a
# shape traced either way has all its arcs turn to one side. A walk whose arcs turn both ways is no free-form
# program; before, it only paid DEVIATION_COST, and the best walks of shapes with a cusp went round it that
# way (the arc before a 150-degree turn walked back from the far end)
DECODER_BONUS = 0.01  # the decoder's reading wins ties (different tracings of the same ink)
SHAPE_COST = 0.02  # added to a reading's J (module docstring of search.trace) per shape
OVERLAP_COST = 2.0  # per share of the ink covered by both shapes of a pair
READINGS = 3  # distinct decoded readings whose starts seed the tracer
REFITTED = 2  # best readings whose poses are fitted and traced again
MAX_SAMPLES = 600  # ink samples for coverage
RANKED = 200  # readings (walks and pairs of walks) ranked to find the best distinct ones
GRID_TOLERANCE = (0.05, 5.0)  # a decoded reading within this of the grid (units, degrees) is walked as a candidate
FULL_COVERAGE = 0.98  # below this share of ink covered, the starts are traced again at the units of UNITS
UNIT_MULTIPLES = (1.5, 1.0 / 1.5)  # a traced shape of MULTIPLE_MAX_ACTIONS actions or fewer is traced again from
# its start at these multiples of its unit, where they lie within FREE_FORM_UNITS
MULTIPLE_MAX_ACTIONS = 3  # see UNIT_MULTIPLES
SAME_PATH = 3.0  # pixels: readings whose centrelines lie this close draw the same path (`search.paths.path_gap`)
FREE_FORM_UNITS = (0.85 * 80.0 * PIXELS_PER_UNIT, 1.1 * 140.0 * PIXELS_PER_UNIT)  # pixels per unit: the free-form
# painter's scales (80-140, spec §2.6) with some slack; basic and abstract shapes are painted at 150-320
UNITS = tuple(80.0 * 1.05**k * PIXELS_PER_UNIT for k in range(12))  # 80-140 in steps of 5 %: the free-form
# painter's scales (80-140, spec §2.6) in pixels per unit: the decoder's readings of the images it gets
# wrong often have the unit wrong by 15-50 %

# search.trace_readout: set by hand.
MATCH_REACH = 0.25  # units: a traced action takes the stroke of a decoded action whose midpoint is this near

# search.near_miss: checking a free-form hypothesis and its one-action neighbours; set by hand, checked on the
# generated tuning set (seed 3131: 315 of 320 set-B images and queries given the right geometry with the true H).
NEAR_MISS_TURNS = tuple(float(t) for t in range(-150, 151, 30))  # degrees: the turns a near miss gives an action
# (spec 3.2, the free-form generator's signed turn set; not 180)
NEAR_MISS_TURN_CHANGE = 45.0  # degrees: a near miss's new turn departs from the action's own by more (spec 3.2,
# direct_angle: |new - old| > 45, signed turns, no wrapping); a 30-degree neighbour draws a picture no negative draws
SCREEN_EVALS = 20  # sparse-score evaluations refining a neighbour's best heading guess when the neighbours are
# screened (`search.near_miss.nearest_neighbour`; a full fit refines the two best guesses with FIT_EVALS = 60 each)
SCREEN_REFINED = 8  # neighbours (the best by the sparse score at their best heading guess, `_screen_starts`) refined
# with SCREEN_EVALS for the screen; the others are not (0: all are). Set on generated ff tuning seeds 3131 + 5151 +
# 12121 + 13131 (200 problems, eval --workers 2) against refining all: 8, the same labels and rules, one confidence
# changed (a wrong positive query of 13131 now right); 4, five confidences changed. The true H checked on 240 set-B
# images and queries of 12121: no verdict changed (16 neighbour fits moved), CPU of the checks 7.0-7.2 -> 5.4-6.0 s
# (one thread). A coarser heading scan for the screen (20 degrees) lost two near misses there (0.4 -> 4.4 px)
SCREEN_KEEP = 2  # neighbours fitted in full after the screen, best screened first
SYMMETRY_TURNS = np.arange(0.0, 360.0, 30.0)  # degrees: turns of a shape's fitted pose about its centroid
# (search.pose.turned) refined to find the poses its centreline cannot tell apart. A free-form shape's symmetries turn
# it by multiples of 30 degrees (its turns are); a circle's centreline fits every turn and only its strokes tell which
# is right (the decoder choosing among the poses, solver.reading.pipeline._judged_readings). On 24 random poses each (seed 7) of
# a circle of four stamped quarter arcs and a straight run of two lines, the poses whose strokes the decoder then
# misjudged: 0 of 24 and 0 of 24 (every 10 degrees, 36 poses to judge for a circle: 0 and 0; 8 heading guesses from
# the ink's moments, as before: 8 and 7)
SYMMETRY_JUDGED = 3  # ... of those poses, the best by the pixel score judged by the strokes (the decoder's
# judgement costs about 36 ms + 7 ms a pose, one thread): on the 24 + 24 poses above, 0 and 0 misjudged with 3 (with 2:
# 1 circle), as with all 12; a circle has 12, a square 4
SYMMETRY_EVALS = 30  # sparse-score evaluations refining each of them
SYMMETRY_TOLERANCE = 0.4  # px: refined centreline fits within this of the best are such poses (a shape with a
# symmetry fits its ink as well turned round; only its strokes tell which way it lies)
STROKE_POLISH_EVALS = 60  # pixel-score evaluations polishing the chosen pose (as search.strokes.POLISH_EVALS)

# search.completion: a free-form hypothesis completed on set A by one-action edits; set on generated ff tuning seed
# 66101 (600 problems, the true programs known): with these, 3 of its 76 wrong hypotheses (an action missed: a line
# leaving a circle, a last arc; a turn) were made the true program, none of its 524 right ones changed
COMPLETION_ABOVE_PX = 1.0  # px of H's centreline fit, averaged over set A, below which no completion is tried (its
# cost, about 0.15 s a problem, kept to the problems that may need it): the H's completed on seed 66101 fitted set A at
# 1.38-2.29 px, the true programs of 85 % of its problems at less than 1.0
COMPLETION_GAIN_PX = 0.3  # px of centreline fit, averaged over set A, by which an edit must improve H (and improve
# it on every set-A image but one); a missing line of the free-form unit leaves H 1.0-2.2 px behind its true program
COMPLETION_KEEP = 12  # edits, the best by the screen's summed sparse score, fitted in full (8: seed 66101's
# ff_nact2_5_0024, a line leaving a circle, ranks 9th)
COMPLETION_LOOP_STARTS = 2  # joints of a closed shape (those set A's unexplained ink lies nearest) where an action
# is added with the loop started there
COMPLETION_TURNS = (0.0,) + tuple(sign * 7.5 * k for k in range(1, 7) for sign in (-1.0, 1.0))  # degrees a closed
# shape with an action added is turned about its centre in the screen (a loop of quarter arcs has a joint every 90
# degrees): in steps of 15 degrees, a line leaving a circle was screened out (ranked below a line 30 degrees off
# tangent, 0.65-0.96 px against 0.09-0.25: tests/search/test_completion.py)
COMPLETION_ROUNDS = 2  # edits taken one after another at most

# search.categories: library categories of decoded shapes; set by hand.
MIN_MATCH_SCORE = 0.95  # `search.matching` score (0-1) a decoded shape needs to take a library group's names
