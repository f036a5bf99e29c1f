import collections

from dsl.library import ATTRIBUTES, load_library, super_classes


def test_library_has_the_627_shapes_of_spec_5():
    library = load_library()
    assert len(library) == 627
    sizes = collections.Counter(len(s.shape) for s in library.values())
    assert sizes == {1: 6, 2: 42, 3: 61, 4: 109, 5: 76, 6: 127, 7: 83, 8: 94, 9: 29}
    assert sum(len(s.shape) for s in library.values()) == 3445
    assert sum(s.if_stamp for s in library.values()) == 312
    assert all(s.shape.actions[0].turn == 0 for s in library.values())
    assert {a.radius for s in library.values() for a in s.shape if not a.is_line} == {0.5}


def test_super_classes_and_attribute_counts():
    groups = super_classes()
    assert len(groups) == 17 and len(groups["arc"]) == 103 and len(groups["triangle*"]) == 4
    library = load_library().values()
    assert len(ATTRIBUTES) == 26
    counts = collections.Counter(s.attributes["convex"] for s in library)
    assert counts == {1: 75, 0: 152, -1: 400}
    derived = collections.Counter(s.attributes["symmetric_transposed"] for s in library)
    assert derived == {1: 57, 0: 570}


def test_stray_table_value_is_kept_out_of_both_pools():
    shape = load_library()["exist_triangle_three_lines4"]
    assert shape.attributes["unbalanced_two"] == 10
