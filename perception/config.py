"""The decoder's configuration: one dataclass, stored in every checkpoint (no torch needed to read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DecoderConfig:
    global_size: int = 64  # the global view: ink crop and drawn-so-far canvas at this side (pixels)
    local_size: int = 48  # the local glimpse around the turtle (pixels a side)
    strip_size: tuple[int, int] = (24, 48)  # the stroke strip along an action (rows across, columns along)
    channels: tuple[int, ...] = (16, 32, 64, 64)  # widths of the stride-2 conv stages of every view's CNN
    feature: int = 160  # features per view (global, local); the strip gets half
    hidden: int = 256  # LSTM hidden size
    embed: int = 64  # token embedding size
    head_hidden: int = 128  # hidden width of every head's MLP
    mixtures: int = 5  # components per continuous head
    min_std: float = 0.006  # floor on component standard deviations (normalised units)
    max_steps: int = 28  # steps per image: NEXT, up to 12 actions, NEXT, up to 12 actions, STOP
    max_shape_actions: int = 12  # actions per shape allowed when decoding
    dropout: float = 0.1
    correction_gain: float = 1.0  # decoding: the share of the correction head's re-centring applied per step
