"""Typed neighbourhoods: every neighbour is a well-typed program; snapping and library matches."""

from dsl.library import load_library
from dsl.syntax import parse_image
from dsl.types import ImageProgram, StrokeType
from search.neighbourhood import (
    library_matches, off_grid_count, snap_free_form, stroke_variants, structural_neighbours,
)

PROGRAM = parse_image([["line_zigzag_1.000-0.500", "arc_normal_0.500_0.625-0.750"], ["line_circle_1.000-0.500"]])


def test_structural_neighbours_are_programs_and_differ():
    neighbours = list(structural_neighbours(PROGRAM))
    assert len(neighbours) > 20
    kinds = {edit.kind for edit, _ in neighbours}
    assert {"turn", "kind", "delete", "insert", "merge"} <= kinds
    for _, program in neighbours:
        assert isinstance(program, ImageProgram) and program != PROGRAM


def test_snap_free_form_restores_grid_values():
    jittered = parse_image([["line_normal_0.960-0.500", "arc_normal_0.470_0.630-0.820"]]).shapes[0]
    snapped = snap_free_form(jittered)
    line, arc = snapped.actions
    assert (line.length, line.turn) == (1.0, 0.0)
    assert (arc.radius, arc.angle, arc.turn) == (0.5, 90.0, 120.0)
    assert off_grid_count(ImageProgram((jittered,))) > 0
    assert off_grid_count(ImageProgram((snapped,))) == 0


def test_library_matches_find_the_shape_itself():
    library = load_library()
    for name in list(library)[::60]:
        cost, found = library_matches(library[name].shape, 1)[0]
        assert cost < 1e-6


def test_stroke_variants_cover_the_other_types():
    action = PROGRAM.shapes[0].actions[0]
    assert {a.stroke for a in stroke_variants(action)} == {
        StrokeType.NORMAL, StrokeType.CIRCLE, StrokeType.SQUARE, StrokeType.TRIANGLE
    }


def test_free_form_shapes_read_backwards_are_turned_forwards_and_snapped():
    from dsl.canonical import same_shape
    from search.neighbourhood import forward_free_form, free_form_share

    # a free-form shape in canonical (backwards) form: its arcs have negative angles
    backwards = parse_image([["arc_normal_0.500_0.375-0.500", "arc_square_0.500_0.375-0.500",
                              "line_triangle_1.000-1.000", "arc_circle_0.500_0.375-1.000"]]).shapes[0]
    forwards = forward_free_form(backwards)
    assert same_shape(backwards, forwards)
    assert all(a.angle > 0 for a in forwards.actions if a.radius > 0)
    assert off_grid_count(ImageProgram((backwards,))) == 0  # -90 degree arcs are free-form values too
    assert same_shape(backwards, snap_free_form(backwards))  # snapping keeps the sign of an arc
    from dsl.types import Action, Shape

    jittered = Shape((Action.line(1.19, 0.0), Action.line(0.9, 93.0), Action.arc(0.52, 84.0, 0.0),
                      Action.line(0.5, 0.0)))
    assert free_form_share(jittered) == 0.75
