"""What the decoder sees around its turtle: canvases of the drawn-so-far trace and glimpses.

The decoder keeps a turtle state (`dsl.walk.State`: position in the pixels of the 512 px image, travel
direction, pixels per unit) and looks at the image through glimpses placed at that state:

  local glimpse   a window of +-LOCAL_REACH units around the turtle, rotated so that the travel direction
                  points along +x: what leaves the turtle here, and what is already drawn;
  stroke strip    a narrow window along the middle of one action (given its kind and values): the stroke
                  type (stamps are 0.111 u apart at any scale, the magnifier effect, so the strip has the
                  same number of stamps at every scale).

Shared by training (`perception.data`, true states) and decoding (`perception.decode`, decoded states),
so both see exactly the same glimpses of the same kind of state.
"""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image, ImageDraw


# ------------------------------------------------------------------------------------ canvases


def crop_transform(box: tuple[float, float, float], size: int) -> tuple[float, float, float]:
    """(left, top, factor): crop pixel = (x - left) * factor for an ink box (left, top, side)."""
    left, top, side = box
    return float(left), float(top), size / float(side)


def draw_paths(canvas: Image.Image, paths: list[np.ndarray], box: tuple[float, float, float], width: float) -> None:
    """Draw centrelines (pixels of the 512 image) into a canvas over the ink crop `box`."""
    left, top, factor = crop_transform(box, canvas.size[0])
    draw = ImageDraw.Draw(canvas)
    w = max(1, int(round(width * factor)))
    for path in paths:
        pts = [((x - left) * factor, (y - top) * factor) for x, y in path]
        draw.line(pts, fill=255, width=w)


def pen_width(u: float) -> float:
    """Width of the drawn-so-far trace in 512 px: the ink of a stroke, stamps included (~0.12 units)."""
    return max(5.0, 0.12 * u)


# ------------------------------------------------------------------------------------- glimpses


def glimpse_grid(states: torch.Tensor, reach: tuple[float, float], size: tuple[int, int], frame: torch.Tensor) -> torch.Tensor:
    """Sampling grids for `grid_sample`: states (N, 4) = (x, y, theta, u) in 512 px; a window of
    +-reach[0] units along theta and +-reach[1] across, sampled at size = (rows, cols); `frame` (N, 3)
    = (left, top, side) of the image being sampled in 512 px (a 512 image: (0, 0, 512)). -> (N, rows, cols, 2)."""
    rows, cols = size
    along = torch.linspace(-1.0, 1.0, cols) * reach[0]
    across = torch.linspace(-1.0, 1.0, rows) * reach[1]
    a, c = along[None, None, :], across[None, :, None]  # (1, 1, C), (1, R, 1)
    x, y, theta, u = (states[:, i, None, None] for i in range(4))
    cos, sin = theta.cos(), theta.sin()
    # glimpse +x along the travel direction, +y to its right (pixel frame: a rotation, no mirror)
    px = x + u * (a * cos - c * sin)
    py = y + u * (a * sin + c * cos)
    left, top, side = (frame[:, i, None, None] for i in range(3))
    gx = (px - left) / side * 2 - 1
    gy = (py - top) / side * 2 - 1
    return torch.stack([gx, gy], -1)
