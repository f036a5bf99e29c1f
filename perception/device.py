"""Which device the decoder runs on: `--device cpu|cuda|auto` of `decode`, `train-decoder` and `eval`.

`auto` is CUDA when torch sees a GPU, else the CPU (the tested default: CI and the developers' machines
have no GPU). On the CPU the decoder's readings are exactly those of the code before devices existed.
"""

from __future__ import annotations

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str | None = "auto") -> str:
    """"cpu" or "cuda" (or "cuda:N") for a `--device` value; CUDA asked for without a GPU is an error."""
    import torch  # (here: the command line's parser reads DEVICES without loading torch)

    name = str(name or "auto")
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: torch sees no CUDA device here (torch {torch.__version__})")
    if name != "cpu" and not name.startswith("cuda"):
        raise ValueError(f"--device {name}: expected one of {', '.join(DEVICES)}")
    return name

