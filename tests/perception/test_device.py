"""`--device`: auto resolves to the CPU without a GPU; the training helpers on one process change nothing."""

from __future__ import annotations

import pytest
import torch

from perception import distributed
from perception.device import resolve_device
from solver.reading.perception import PixelPerception


def test_auto_resolves_to_the_cpu_without_a_gpu(monkeypatch):
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == resolve_device(None) == resolve_device("cpu") == "cpu"
    assert PixelPerception(device="auto").device == "cpu"
    with pytest.raises(ValueError, match="--device cuda: torch sees no CUDA device"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="expected one of auto, cpu, cuda"):
        resolve_device("tpu")


def test_one_process_trains_as_before(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ranks = distributed.setup("auto")
    assert (ranks.rank, ranks.world, ranks.device, ranks.main, ranks.distributed) == (0, 1, "cpu", True, False)
    model = torch.nn.Linear(2, 2)
    assert distributed.wrap(model, ranks) is model
    batch = {"x": torch.ones(2)}
    assert distributed.on_device(batch, ranks) is batch
    assert distributed.per_rank_batch(32, ranks) == 32
    assert distributed.any_rank(True, ranks) and not distributed.any_rank(False, ranks)
    with pytest.raises(ValueError, match="does not split evenly over 3 processes"):
        distributed.per_rank_batch(32, distributed.Ranks(0, 3))
