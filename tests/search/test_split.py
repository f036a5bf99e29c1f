"""Touching shapes split by a reading: each ink pixel goes to the shape drawn nearest to it."""

import numpy as np

from dsl.library import load_library
from dsl.raster import render_program
from dsl.types import ImageProgram, Pose
from perception.shapes import ink_parts
from search.split import touching_parts

POSES = [Pose(-60.0, 0.0, 0.0, 180.0), Pose(20.0, -40.0, 90.0, 160.0)]


def _touching() -> tuple[ImageProgram, np.ndarray]:
    library = load_library()
    program = ImageProgram((library["square"].shape, library["closed_circle"].shape))
    return program, render_program(program, POSES)


def test_two_touching_shapes_split_into_their_own_ink():
    program, image = _touching()
    assert ink_parts(image) == []  # one ink component
    parts = touching_parts(image, program)
    assert len(parts) == 2
    ink = image < 128
    assert np.array_equal((parts[0] < 128) | (parts[1] < 128), ink)  # every ink pixel in one part
    own = [render_program(ImageProgram((shape,)), [pose]) < 128 for shape, pose in zip(program.shapes, POSES)]
    mine = [part < 128 for part in parts]
    # the parts come in any order (the reading's poses may be fitted to either shape): match them up
    order = [int(np.argmax([(m & o).sum() for o in own])) for m in mine]
    assert sorted(order) == [0, 1]
    for m, k in zip(mine, order):
        assert (m & own[k]).sum() > 0.9 * m.sum()  # a part's ink is one shape's
        assert (m & own[k]).sum() > 0.8 * own[k].sum()  # ... and most of that shape's ink

def test_a_reading_that_does_not_split_the_ink_gives_no_parts():
    program, image = _touching()
    square = load_library()["square"].shape
    assert touching_parts(image, ImageProgram((square,))) == []  # one shape
    lone = render_program(ImageProgram((square,)), POSES[:1])
    assert touching_parts(lone, program) == []  # the circle would get (almost) no ink
