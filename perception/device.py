"""Which device the decoder runs on: `--device cpu|cuda|auto` of `decode`, `train-decoder` and `eval`.

`auto` is CUDA when torch sees a GPU, else the CPU (the tested default: CI and the developers' machines
have no GPU). On the CPU the decoder's readings are exactly those of the code before devices existed.
"""

from __future__ import annotations

import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str | torch.device | None = "auto") -> str:
    """"cpu" or "cuda" (or "cuda:N") for a `--device` value; CUDA asked for without a GPU is an error."""
    name = str(name or "auto")
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: torch sees no CUDA device here (torch {torch.__version__})")
    if name != "cpu" and not name.startswith("cuda"):
        raise ValueError(f"--device {name}: expected one of {', '.join(DEVICES)}")
    return name


def model_device(model: torch.nn.Module) -> torch.device:
    """The device a model's weights are on."""
    return next(model.parameters()).device
