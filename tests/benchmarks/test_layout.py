"""`bench layout`: two-shape images whose ink is one part, read from the pictures alone."""

import numpy as np
from PIL import Image

from benchmarks.layout import measure, two_shapes


def _image(path, boxes):
    pixels = np.full((64, 64), 255, dtype=np.uint8)
    for r0, r1, c0, c1 in boxes:
        pixels[r0:r1, c0:c1] = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def test_touching_shapes_are_one_part_and_apart_ones_two(tmp_path):
    folder = tmp_path / "bd" / "images" / "bd_a-b_0000"
    _image(folder / "1" / "0.png", [(5, 10, 5, 30), (8, 30, 25, 30)])  # two strokes that cross: one part
    _image(folder / "0" / "0.png", [(5, 10, 5, 20), (40, 50, 40, 60)])  # apart: two parts
    _image(tmp_path / "bd" / "images" / "bd_a_0000" / "1" / "0.png", [(5, 10, 5, 30)])  # one shape: not counted
    found = measure(tmp_path, "bd")
    assert (found["problems"], found["images"], found["one_part"]) == (1, 2, 0.5)
    assert 40 < found["centroid_distance_px_median"] < 60
    assert two_shapes("ff_nact2_5_0000") and not two_shapes("ff_nact5_0000") and not two_shapes("bd_a_0000")
