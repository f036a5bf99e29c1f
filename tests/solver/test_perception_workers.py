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


def test_a_remembering_call_keeps_its_decoder_work_to_itself():
    import pickle

    from perception.beam import remembered_work
    from solver.reading.overlaid import overlaid_job
    from solver.reading.verdicts import judged_readings
    from solver.reading.workers import remembering

    counts = []

    @remembering
    def job(inner: bool) -> None:
        work = remembered_work()
        work["n"] = work.get("n", 0) + 1
        counts.append(work["n"])
        if inner:
            job(False)  # a call inside another shares its work

    job(True)
    job(False)  # a call after another starts afresh: what it computes does not hang on what ran before
    assert counts == [1, 2, 1] and remembered_work() is None
    for function in (overlaid_job, judged_readings):  # worker jobs: sent to the workers by name
        assert pickle.loads(pickle.dumps(function)) is function
