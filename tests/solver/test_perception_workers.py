"""Perception's worker processes start whatever torch did before in the process that forks them: a pool forked
after torch had run on several threads here (the second split of `eval --split all`) hung in its first torch call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FORKED_AFTER_TORCH = """
import json
import torch
from solver.reading import PixelPerception

def threads(_):
    return torch.get_num_threads()

def work(_):
    return float(torch.ones(4_000_000, dtype=torch.float64).float().sum())  # several threads unless told otherwise

torch.set_num_threads(2)
work(0)  # torch's threads started in this process
with PixelPerception(workers=2) as perception:
    perception._start_workers()
    print(json.dumps({"sums": perception.map(work, [0, 1]), "threads": perception.map(threads, [0, 1])}))
"""


def test_workers_forked_after_torch_ran_here_do_not_hang(tmp_path):
    done = subprocess.run([sys.executable, "-c", FORKED_AFTER_TORCH], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"sums": [4_000_000.0, 4_000_000.0], "threads": [1, 1]}
