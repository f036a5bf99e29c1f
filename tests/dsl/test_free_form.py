from dsl.free_form import FF_ARC, FF_LINE, MOVES, free_form_drawable
from dsl.library import load_library
from dsl.types import Action, Shape


def test_every_move_of_the_free_form_generator_is_drawable_at_any_size():
    for _, actions in MOVES:
        shape = Shape(tuple(action.with_turn(turn) for action, turn in actions))
        assert free_form_drawable(shape)
        scaled = Shape(tuple(Action.line(2.5 * a.length).with_turn(a.turn) if a.length else
                             Action.arc(2.5 * a.radius, a.angle).with_turn(a.turn) for a in shape.actions))
        assert free_form_drawable(scaled)


def test_library_shapes_a_free_form_program_draws():
    library = load_library()
    for name in ("closed_circle", "square", "equilateral_traingle", "closed_semi_circle", "regular_hexagon"):
        assert free_form_drawable(library[name].shape), name
    for name in ("regular_pentagon", "asymmetric_fish", "sector30"):  # 108 degree turns, uneven lines, a 30-degree arc
        assert name in library and not free_form_drawable(library[name].shape), name


def test_a_line_twice_an_arc_diameter_or_a_fifth_turn_is_not_drawable():
    assert not free_form_drawable(Shape((FF_LINE, FF_ARC.with_turn(90.0), Action.line(2.0).with_turn(90.0))))
    assert not free_form_drawable(Shape((FF_LINE, FF_LINE.with_turn(72.0))))
    assert not free_form_drawable(Shape((Action.arc(0.5, 45.0),)))
