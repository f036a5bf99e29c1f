"""The report's pictures: each image with the program the solver read drawn over it, and the parts where
the image departs from the rule (`Why.marked`: the differing actions, the look-alike shape) in a second
colour, zoomed to the drawing so that the eye goes to the difference."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable

import numpy as np
from PIL import Image
from scipy.ndimage import maximum_filter

from dsl.align import align
from dsl.raster import render_program
from dsl.turtle import execute_shape
from dsl.types import ImageProgram, Pose, Shape

SIZE = 512
THUMBNAIL = 240
PROGRAM_COLOUR = (40, 100, 215)  # the program the solver read (blue)
DIFFERENCE_COLOUR = (240, 120, 0)  # where the image departs from the rule (orange)
PROGRAM_ALPHA = 0.6
DIFFERENCE_GROW = 7  # pixels: the marked ink is drawn this much wider, so it shows around the blue
MIN_CROP = 170  # pixels of the 512 image: the zoom never goes closer than this
CROP_MARGIN = 0.12


def _hex(colour: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in colour)


PROGRAM_HEX, DIFFERENCE_HEX = _hex(PROGRAM_COLOUR), _hex(DIFFERENCE_COLOUR)


def marked_parts(program: ImageProgram, poses: tuple[Pose, ...],
                 marked: Iterable[tuple[int, int | None]]) -> list[tuple[ImageProgram, tuple[Pose]]]:
    """The marked parts as one-shape programs with their poses: a whole shape where it is, an action
    drawn from where the turtle stands before it, so it lands on its place in the whole drawing."""
    parts = []
    for shape_index, action in marked:
        if not 0 <= shape_index < len(program.shapes):
            continue
        shape, pose = program.shapes[shape_index], poses[shape_index]
        if action is None:
            parts.append((ImageProgram((shape,)), (pose,)))
            continue
        if not 0 <= action < len(shape):
            continue
        geometry = execute_shape(shape, pose)
        x, y = geometry.end_points[action]
        heading = pose.heading if action == 0 else float(geometry.headings[action - 1])
        one = ImageProgram((Shape((shape.actions[action],)),))
        parts.append((one, (Pose(float(x), float(y), heading, pose.scale),)))
    return parts


def to_drawn(program: ImageProgram, drawn: ImageProgram | None, marked) -> list[tuple[int, int | None]]:
    """Marked parts of `program` as parts of `drawn` (its fitted twin): the same action where the shapes
    have the same number of actions, else the action the alignment pairs it with."""
    marked = [tuple(m) for m in marked]
    if drawn is None or drawn == program or len(drawn.shapes) != len(program.shapes):
        return marked
    mapped = []
    for shape_index, action in marked:
        if not 0 <= shape_index < len(program.shapes):
            continue
        source, target = program.shapes[shape_index], drawn.shapes[shape_index]
        if action is None or len(source) == len(target):
            mapped.append((shape_index, action))
            continue
        pairs = {s.reference.index: s.other.index for s in align(source, target).steps if s.reference and s.other}
        if action in pairs:
            mapped.append((shape_index, pairs[action]))
    return mapped


def _ink(program: ImageProgram, poses, size: int) -> np.ndarray:
    return 1.0 - render_program(program, list(poses), size=size) / 255.0


def _crop_box(ink: np.ndarray) -> tuple[int, int, int, int]:
    """A square around the ink with a margin, at least MIN_CROP (scaled) pixels wide, inside the image."""
    size = ink.shape[0]
    rows, cols = np.nonzero(ink > 0.2)
    if rows.size == 0:
        return 0, 0, size, size
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    side = max(bottom - top, right - left) * (1 + 2 * CROP_MARGIN)
    side = int(min(size, max(side, MIN_CROP * size / SIZE)))
    cy, cx = (top + bottom) / 2, (left + right) / 2
    r0 = int(np.clip(round(cy - side / 2), 0, size - side))
    c0 = int(np.clip(round(cx - side / 2), 0, size - side))
    return r0, c0, r0 + side, c0 + side


def _paint(rgb: np.ndarray, colour: tuple[int, int, int], alpha: np.ndarray) -> np.ndarray:
    alpha = alpha[:, :, None]
    return rgb * (1 - alpha) + np.array(colour, np.float32) * alpha


def why_picture(pixels: np.ndarray | None, program: ImageProgram | None, poses: tuple[Pose, ...] | None,
                marked: Iterable[tuple[int, int | None]] = (), zoom: bool = True) -> np.ndarray:
    """RGB picture: the image in grey, `program` (drawn at `poses`) in blue over it, the `marked` parts of
    the program in orange; without poses, the image alone (or the program drawn alone, without pixels)."""
    if pixels is None and program is not None and poses is None:
        poses = tuple(Pose() for _ in program.shapes)
    size = pixels.shape[0] if pixels is not None else SIZE
    base = pixels if pixels is not None else np.full((size, size), 255, np.uint8)
    rgb = np.repeat(base[:, :, None].astype(np.float32), 3, axis=2)
    seen = 1.0 - base / 255.0
    if program is not None and poses is not None:
        ink = _ink(program, poses, size)
        seen = np.maximum(seen, ink)
        parts = marked_parts(program, poses, marked)
        part_ink = np.maximum.reduce([_ink(p, q, size) for p, q in parts]) if parts else None
        if part_ink is not None:  # a halo under the marked actions, so that thin ones catch the eye
            halo = maximum_filter(part_ink, size=DIFFERENCE_GROW)
            rgb = _paint(rgb, DIFFERENCE_COLOUR, 0.45 * halo)
            seen = np.maximum(seen, halo)
        rgb = _paint(rgb, PROGRAM_COLOUR, PROGRAM_ALPHA * ink)
        if part_ink is not None:
            rgb = _paint(rgb, DIFFERENCE_COLOUR, 0.95 * part_ink)
    picture = rgb.clip(0, 255).astype(np.uint8)
    if not zoom:
        return picture
    r0, c0, r1, c1 = _crop_box(seen)
    return picture[r0:r1, c0:c1]


def png_data_uri(rgb: np.ndarray, size: int = THUMBNAIL) -> str:
    picture = Image.fromarray(rgb).resize((size, size), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
