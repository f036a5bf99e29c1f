"""H written otherwise, drawing the same picture, and those writings' one-action neighbours: the near misses the
generator may have made from a writing of H other than the one read from set A (`other_writings`: another start, the
other way along, a loop the other way round, the mirror image of a symmetric shape; `overdrawn_writings`: a loop of
arcs walked on past its start). The check of a query (`solver.reading.verdicts`) screens them where H's own neighbours
explain it no better."""

from __future__ import annotations

import functools
from dataclasses import replace

from dsl.canonical import from_travel_form, image_key, loop_reversals, reversed_shape, to_travel_form, travel_variants
from dsl.features import shape_facts, symmetry_attributes
from dsl.free_form import FREE_FORM_SETTINGS
from dsl.types import Action, ActionKind, ImageProgram, Shape, StrokeType
from search.near_miss import centreline_templates, geometric_neighbours, neighbours_drawn
from search.neighbourhood import forward_free_form
from solver.reading.traced import free_form_reading


def overdrawn_writings(hypothesis: ImageProgram) -> tuple[ImageProgram, ...]:
    """H with a shape's closing run of arcs walked on round its loop (`walked_on`), one more arc at a time while the
    image's actions number at most the generator's most (`FREE_FORM_SETTINGS`), or its opening run walked on before
    its start (`_walked_on_before`): each draws H's picture. A shape a mirror maps onto itself is walked on as its
    mirror image's writings too (`_mirrored_variants`)."""
    room = max(sum(setting) for setting in FREE_FORM_SETTINGS) - sum(len(shape.actions) for shape in hypothesis.shapes)
    found, seen = [], set()
    for s, shape in enumerate(hypothesis.shapes):
        for forward in (forward_free_form(shape),) + _mirrored_variants(shape):
            for walk in (walked_on, _walked_on_before):
                for extra in range(1, room + 1):
                    longer = walk(forward, extra)
                    if longer is None:
                        break
                    other = ImageProgram(hypothesis.shapes[:s] + (longer,) + hypothesis.shapes[s + 1:])
                    key = _written(other)
                    if key not in seen:
                        seen.add(key)
                        found.append(other)
    return tuple(found)


def walked_on(shape: Shape, extra: int) -> Shape | None:
    """`shape` walked `extra` arcs on round the loop its last arcs close (a run of like arcs, each straight on
    from the one before, sweeping a full turn or more), each new arc like them, straight on, its stroke normal; None
    when its last arcs close no loop."""
    start = loop_start(shape)
    if start is None:
        return None
    last = shape.actions[-1]
    more = Action.arc(last.radius, last.angle, 0.0, StrokeType.NORMAL)
    return Shape(shape.actions + (more,) * extra)


def loop_start(shape: Shape) -> int | None:
    """The first action of the loop `shape`'s last arcs close (a run of like arcs, each straight on from the one
    before, sweeping a full turn or more: the arc a walk on past the loop's start draws over), or None."""
    actions = shape.actions
    last = actions[-1]
    if last.kind is not ActionKind.ARC:
        return None
    start = len(actions) - 1
    while (start > 0 and abs(actions[start].turn) < 1e-6 and actions[start - 1].kind is ActionKind.ARC
           and abs(actions[start - 1].radius - last.radius) < 1e-6
           and abs(actions[start - 1].angle - last.angle) < 1e-6):
        start -= 1
    return start if sum(abs(a.angle) for a in actions[start:]) >= 360.0 - 1e-6 else None


def _walked_on_before(shape: Shape, extra: int) -> Shape | None:
    """`shape` with `extra` arcs walked round the loop its first arcs close before it starts (`walked_on` of it
    traced the other way, traced back), in the generator's direction of travel: a circle with a tail may be written
    from the circle, walked on past its start before the tail leaves it (generated seed 68111, ff_nact7_0022: six
    quarter arcs and a line, read from set A as four and the line); None when its first arcs close no loop."""
    longer = walked_on(reversed_shape(shape), extra)
    return None if longer is None else forward_free_form(reversed_shape(longer))


@functools.lru_cache(maxsize=64)
def overdrawn_neighbours(hypothesis: ImageProgram) -> tuple:
    """The neighbours of H's `overdrawn_writings` that draw a picture H and its own neighbours do not
    (`_new_neighbours`)."""
    return _new_neighbours(hypothesis, overdrawn_writings(hypothesis))


@functools.lru_cache(maxsize=64)
def written_otherwise_neighbours(hypothesis: ImageProgram) -> tuple:
    """The neighbours of H written otherwise (`other_writings`) that draw a picture H and its own neighbours do not
    (`_new_neighbours`): the same for every image `_otherwise_written` checks against H, so made once."""
    return _new_neighbours(hypothesis, other_writings(hypothesis))


def _new_neighbours(hypothesis: ImageProgram, writings: tuple[ImageProgram, ...]) -> tuple:
    """The neighbours of `writings` (each draws H's picture) that draw a picture neither H nor one of its own
    neighbours draws, each picture once (`image_key`, strokes aside: the same picture written otherwise fits an image
    as well) -> ((change, neighbour, its templates, the writing's index), ...). The templates are made for the
    pictures kept only: most of the writings' neighbours draw a picture seen already (4 in 5 on generated seed
    79111's free-form problems)."""
    candidates = []
    seen = {image_key(hypothesis, ignore_strokes=True)}
    seen |= {image_key(neighbour, ignore_strokes=True) for _, neighbour, *_ in neighbours_drawn(hypothesis)}
    for k, other in enumerate(writings):
        for change, neighbour in geometric_neighbours(other):
            key = image_key(neighbour, ignore_strokes=True)
            if key not in seen:
                seen.add(key)
                candidates.append((change, neighbour, centreline_templates(neighbour), k))
    return tuple(candidates)


def _written(program: ImageProgram) -> tuple:
    """`program` as written, action by action (values rounded to the free-form grid's quanta)."""
    return tuple(tuple((a.kind, a.stroke, round(a.turn) % 360, round(a.length, 2), round(a.radius, 2), round(a.angle))
                       for a in shape.actions) for shape in program.shapes)


@functools.lru_cache(maxsize=64)
def other_writings(hypothesis: ImageProgram) -> tuple[ImageProgram, ...]:
    """H written otherwise, drawing the same picture: one shape at a time started at another joint (a closed
    shape) or walked the other way, each in the free-form generator's direction of travel (`forward_free_form`)
    and on its grid (`free_form_reading`), the other shapes as in H. A near miss is the program as the generator
    wrote it with one action changed, and set A's ink cannot tell how it was written: H read from it may start a
    closed shape at another joint or walk an all-line shape the other way, and then the near misses are no
    neighbours of H as written (generated tuning seeds 3131 + 5151: of 22 set-B images no neighbour explained, 7
    were read wrong in full). Each of these writings with one loop inside it walked the other way round too
    (`loop_reversals`: a triangle and its tail, started at the joint they share, may go round either way). A shape
    a mirror maps onto itself is written as its mirror image too (`_mirrored_variants`)."""
    found, seen = [], {_written(hypothesis)}
    for s, shape in enumerate(hypothesis.shapes):
        for variant in [*_drawn_alike(shape), *_mirrored_variants(shape)]:
            other = ImageProgram(hypothesis.shapes[:s] + (forward_free_form(variant),)
                                 + hypothesis.shapes[s + 1:])
            key = _written(other)
            if key not in seen and free_form_reading(other) is not None:
                seen.add(key)
                found.append(other)
    return tuple(found)


def _drawn_alike(shape: Shape) -> list[Shape]:
    """The writings of `shape`'s picture: its travel forms (another start of a closed shape, the other
    way along) and each of those with one loop inside it walked the other way round (`loop_reversals`)."""
    variants = [from_travel_form(variant) for variant in travel_variants(shape)]
    return variants + [from_travel_form(loop) for variant in variants for loop in loop_reversals(variant)]


@functools.lru_cache(maxsize=256)
def _mirrored_variants(shape: Shape) -> tuple[Shape, ...]:
    """The writings of `shape`'s mirror image (every turn and sweep of its travel form negated; `_drawn_alike` of
    it, each in the generator's direction of travel) when a mirror maps `shape`'s picture onto itself
    (`dsl.features`'s `symmetric`), else none. Such a picture is its mirror image turned, so these draw it too, and
    their one-action neighbours are near misses H's own writings do not reach: a square with two arcs bulging from
    one side, read from set A as the square then the arcs and written by the generator as the arcs then the square,
    has the generator's writing only among its mirror image's (generated seed 68111, ff_nact6_0019)."""
    facts = shape_facts(shape)
    if facts is None or not symmetry_attributes(facts)["symmetric"]:
        return ()
    mirror = from_travel_form([replace(segment, curvature=-segment.curvature + 0.0, turn=-segment.turn + 0.0)
                               for segment in to_travel_form(shape)])
    return tuple(forward_free_form(variant) for variant in [mirror] + _drawn_alike(mirror))
