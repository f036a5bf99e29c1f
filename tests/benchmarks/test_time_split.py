"""`bench time_split`: the networks' and the kernels' calls are timed while it runs and left alone after (no
timing is checked: machines differ)."""

from __future__ import annotations

import json

import numpy as np
import torch
from torch import nn

from benchmarks import time_split
from dsl.jit import _Kernel
from search.kernels import stable_argsort


def test_a_kernel_and_a_module_called_inside_are_timed_nested_modules_once():
    net = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 2)))
    keys = np.array([3.0, 1.0, 2.0])
    stable_argsort(keys)  # compiled (or loaded) before the timing
    with time_split.timing(time_split.Split()) as split:
        assert stable_argsort(keys).tolist() == [1, 2, 0]  # the kernel's result, through the timed call
        assert split.kernels > 0 and split.network == 0
        with torch.no_grad():
            net(torch.ones(3, 4))
        assert split.network > 0 and split._depth == 0  # every module entered was left: the outermost timed
        network, kernels = split.take()
        assert network > 0 and kernels > 0 and split.take() == (0.0, 0.0)
    assert "__call__" not in _Kernel.__dict__  # the dispatcher's own call again
    with torch.no_grad():
        net(torch.ones(1, 4))
    stable_argsort(keys)
    assert split.take() == (0.0, 0.0)  # the hooks are gone


def test_the_split_of_each_type_from_pixels(tmp_path, capsys):
    out = tmp_path / "split.json"
    assert time_split.main(["--types", "hd", "--limit", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["written_by"] == "bongard-solver" and list(result["types"]) == ["hd"]
    figures = result["types"]["hd"]
    assert figures["problems"] == 1 and figures["own_s"] > 0
    assert figures["network_s"] > 0 and figures["kernels_s"] > 0  # a pixel solve runs both
    parts = figures["network_s"] + figures["kernels_s"] + figures["rest_s"]
    assert abs(parts - figures["own_s"]) < 1e-3
    assert abs(figures["floor_per_problem_s"] - (figures["network_s"] + figures["kernels_s"]) / 2) < 1e-3
    assert "network" in capsys.readouterr().out
