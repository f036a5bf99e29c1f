"""The constants of `perception` that were chosen by hand: meaning, unit and how each was chosen.

The modules named in each section import their constants from here. The decoder's sizes are in
`perception.config.DecoderConfig` (stored in each checkpoint). Changing a constant marked "fixed before
training" changes what the shipped checkpoints were trained on: retrain them after.
"""

from __future__ import annotations

import math

# perception.data: the ink crop every network sees; fixed before training, set by hand, not tuned.
INK_THRESHOLD = 48  # ink level (0-255) that counts as drawn when finding the crop
CROP_MARGIN = 0.06  # margin around the ink, a fraction of the ink's larger side, plus 3 px
MIN_CROP = 48  # smallest crop side in pixels (at 512)

# perception.data: the decoder's training noise (teacher forcing from jittered turtle states); fixed before training
# the shipped decoder, set by hand, not tuned.
JITTER = (0.05, math.radians(4.0), 0.06)  # std of the state jitter: position (units), direction, log u ...
JITTER_SCALES = (0.5, 1.0, 2.0)  # ... times one of these per step: small and large errors both seen
STRIP_JITTER = (0.04, math.radians(4.0))  # std of the stroke strip's jitter: position (units), direction

# perception.glimpse: the decoder's views of the image; fixed before training, set by hand, not tuned.
LOCAL_REACH = 1.3  # the local glimpse spans +-1.3 program units around the turtle
START_REACH = 0.2  # the upright glimpse around a start candidate spans +-0.2 crop sides
STRIP_ALONG, STRIP_ACROSS = 0.6, 0.36  # the stroke strip: 0.6 x 0.36 program units around an action's middle
CANVAS = 128  # the drawn-so-far canvas: the ink crop at 128 x 128

# perception.shapes: the library-shape classifier's training mix (fixed before training, set by hand) and how an
# image falls apart into parts (set by hand; PART_MIN_SHARE lowered from 0.15 to 0.03 when images of two ink parts
# came to be searched part by part).
PAIR_SHARE = 0.4  # training images with two shapes
FULL_STROKES_SHARE = 0.6  # single-shape images whose stroke types are drawn from all five (else an abstract concept's)
PART_MIN_SHARE = 0.03  # an ink component is a part if it holds at least this share of the ink
PART_DILATION = 9  # ink dilated by this many pixels (at 512) before components are found: stamps are dotted

# perception.beam: the decoder's beam search; set by hand.
MIN_NEXT_LOGP = -6.0  # NEXT is offered only where its probability is above ~0.25 %
