"""Touching shapes split by a reading: the ink of one blob shared out among the shapes a program draws.

    touching_parts(image, program) -> [part image, ...] or []

Two shapes of a basic problem that touch or cross form one ink component, so the shape classifier sees
them together and is unsure of both (`perception.shapes.ink_parts` only splits separate components). A
reading of two shapes, even a rough one, says where each lies: its shapes' poses are fitted to the image
(`search.pose.fit_poses`), each shape is drawn alone with normal strokes, and every ink pixel goes to the
shape drawn nearest to it. Each part image holds its ink alone on white, like `ink_parts`' parts.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from dsl.raster import render_program
from dsl.types import ImageProgram, StrokeType
from search.pose import fit_poses
from search.settings import INK_THRESHOLD, MIN_SHARE
from search.template import make_target


def touching_parts(image: np.ndarray, program: ImageProgram, min_share: float = MIN_SHARE) -> list[np.ndarray]:
    """The ink of `image` split among the shapes of `program` (each ink pixel to the shape drawn nearest
    to it at the program's fitted poses) -> one image per shape, or [] if a part would hold less than
    `min_share` of the ink (or the program has fewer than two shapes)."""
    grey = np.asarray(image)
    if grey.ndim == 3:
        grey = grey[..., 0]
    if len(program.shapes) < 2:
        return []
    plain = program.with_strokes(StrokeType.NORMAL)
    poses = fit_poses(plain, make_target(grey))
    distances = []
    for shape, pose in zip(plain.shapes, poses):
        drawn = render_program(ImageProgram((shape,)), [pose], size=grey.shape[0]) < INK_THRESHOLD
        if not drawn.any():
            return []
        distances.append(ndimage.distance_transform_edt(~drawn))
    owner = np.argmin(np.stack(distances), axis=0)
    ink = grey < 255  # faint edge pixels too: each part keeps its strokes' edges
    total = (grey < INK_THRESHOLD).sum()
    parts = []
    for k in range(len(plain.shapes)):
        mine = ink & (owner == k)
        if (mine & (grey < INK_THRESHOLD)).sum() < min_share * total:
            return []
        alone = np.full_like(grey, 255)
        alone[mine] = grey[mine]
        parts.append(alone)
    return parts
