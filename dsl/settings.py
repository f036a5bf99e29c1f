"""The constants of `dsl` that were chosen by hand: meaning, unit and how each was chosen.

The modules named in each section import their constants from here. Not here: the facts of Bongard-LOGO
itself (pen and stamp widths, turtle scales in `dsl.turtle`, the official view measured in `dsl.raster`, the
free-form grid), the official generator's own numbers (`dsl.free_form`, `dsl.generate`) and the size limits of
bad input (`dsl.limits`), which are not tuned.
"""

from __future__ import annotations

import math

# dsl.raster: fitted on official dev images (`bench fidelity`, render IoU against the official PNGs).
RASTER_WIDENING = 1.2  # turtle units added to pen and stamp-outline widths (Ghostscript inks every pixel touched)

# dsl.geometry: tolerances of the geometric attributes, chosen so that the attributes of the shape table's programs
# agree with the table's labels (`bench attributes`).
RELATIVE_TOLERANCE = 0.025  # snapping / touching distance, as a share of the drawing's diameter (about a pen width)
SYMMETRY_TOLERANCE = 0.024  # largest mismatch of a symmetric drawing and its image, same unit
ARC_STEP = math.radians(4.0)  # radians: sampling step of arcs for areas, hulls and symmetry (fine enough; not tuned)
CORNER_DEGREES = 5.5  # a tangent jump of at least this many degrees is a corner
RIGHT_ANGLE_DEGREES = 4.5  # a corner within this many degrees of 90 is a right angle
GRAZING_DEPTH = 0.5  # two crossings enclosing a lens thinner than this many tolerances are one touch

# dsl.stroke_graph: as dsl.geometry (`bench attributes` on rounded programs).
SLIVER_SIZE = 2.0  # an enclosed cycle whose outline fits in this many tolerances is one point (the pen fills it)
MAX_SLIVER_ROUNDS = 3  # rounds of removing sliver cycles (the table's programs need at most this; not tuned)

# dsl.features: attribute thresholds, as dsl.geometry (agreement with the shape table's labels, `bench attributes`).
MEETING_ENDS = 6  # stroke ends at one node from which three or more figures meet there: their lines cross
THIN_RATIO = 0.36  # minimum width / diameter of the hull below this: a thin shape
THIN_BAND = 0.1  # or enclosed regions this thin: mean thickness 2 * area / perimeter, over the diameter
CONVEX_FILL = 0.98  # area of the outline / area of its hull at least this: convex
BALANCED_RATIO = 0.6  # smaller / larger area of two parts at least this: balanced
UNBALANCED_RATIO = 0.47  # at most this: unbalanced; in between neither can be said (None)
NECK_PINCH = 0.15  # overhang / waist length above this on all four ends: a neck (see geometry.neck_pinch)
NECK_SIDE_SHARE = 0.15  # each side of a neck holds at least this share of the area
REGULAR_SPREAD = 0.08  # relative spread (std / mean) of side lengths of a (nearly) regular polygon
REGULAR_TURN_DEGREES = 11.0  # spread (max - min) of its turns

# dsl.canonical: canonical keys of programs; set by hand with the canonical form, not tuned.
CLOSED_TOLERANCE = 0.02  # end point within this distance of the start point (shape units, scale 1)
LENGTH_QUANTUM = 0.01  # shape units: lengths and radii are rounded to this in canonical keys
ANGLE_QUANTUM = 1.0  # degrees: turns and sweeps are rounded to this in canonical keys

# dsl.align: aligning an image's program with a rule's for explanations; set by hand, not tuned.
GAP_COST = 2.5  # an action of one shape with no counterpart in the other (more than any one substitution)

# dsl.walk: centrelines of the turtle state in pixels; set by hand (enough for render-and-compare), not tuned.
ARC_POINTS = 9  # points per arc centreline

# dsl.categories: the library look-up of exact shape categories; set by hand.
LENGTH_BUCKET = 0.05  # units of total line length per bucket of the library look-up (rounding moves a total < 0.005)
