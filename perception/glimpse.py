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

import functools

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
    return points_grid(glimpse_points(states, reach, size), frame)


def glimpse_points(states: torch.Tensor, reach: tuple[float, float], size: tuple[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    """`glimpse_grid`'s sample points in 512 px, x and y (N, rows, cols) each (one glimpse, any frames)."""
    a, c = _offsets(reach, size, states.device)  # (1, 1, C), (1, R, 1)
    x, y, theta, u = states[:, :, None, None].unbind(1)
    cos, sin = theta.cos(), theta.sin()
    # glimpse +x along the travel direction, +y to its right (pixel frame: a rotation, no mirror)
    px = x + u * (a * cos - c * sin)
    py = y + u * (a * sin + c * cos)
    return px, py


def points_grid(points: tuple[torch.Tensor, torch.Tensor], frame: torch.Tensor) -> torch.Tensor:
    """Sample points (`glimpse_points`) in the frames (N, 3) = (left, top, side) -> grids (N, rows, cols, 2)."""
    px, py = points
    left, top, side = frame[:, :, None, None].unbind(1)
    gx = (px - left) / side * 2 - 1
    gy = (py - top) / side * 2 - 1
    return torch.stack([gx, gy], -1)


@functools.cache
def _offsets(reach: tuple[float, float], size: tuple[int, int], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A glimpse's sample offsets in units along (1, 1, cols) and across (1, rows, 1) the travel direction
    (made once per glimpse kind and device; never written to). Made as ordinary tensors even when first asked for
    under `torch.inference_mode` (decoding), so that training may use them after."""
    rows, cols = size
    with torch.inference_mode(False):
        along = torch.linspace(-1.0, 1.0, cols, device=device) * reach[0]
        across = torch.linspace(-1.0, 1.0, rows, device=device) * reach[1]
    return along[None, None, :], across[None, :, None]
