"""The decoder's configuration: one dataclass, stored in every checkpoint (no torch needed to read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DecoderConfig:
    image_size: int = 384  # side of the square ink crop fed to the CNN (pixels)
    stem_stride: int = 4  # the stem is a stride x stride patch embedding (lossless with >= stride^2 channels)
    channels: tuple[int, ...] = (24, 32, 64, 128, 192)  # CNN widths: stem, then stages that halve the grid
    grid_stage: int = 3  # the stage whose grid the LSTM attends to (384 px -> 96 -> 48, 24, 12 x 12)
    hidden: int = 256  # LSTM hidden size
    embed: int = 96  # token embedding size
    head_hidden: int = 128  # hidden width of every head's MLP
    mixtures: int = 5  # Gaussian components per continuous head
    min_std: float = 0.006  # floor on component standard deviations (normalised units)
    max_steps: int = 26  # tokens per image including NEXT and STOP (2 shapes x 12 actions + 2)
    max_shape_actions: int = 12  # actions per shape allowed when decoding
    dropout: float = 0.1
    aux_stage: int = 2  # CNN stage with the dense auxiliary head (stroke types / kinds per cell; 24 x 24)
    aux_weight: float = 1.0  # weight of the auxiliary per-cell loss (training only)
    attention_weight: float = 0.5  # weight of the attention supervision: look at the action being emitted
