"""Pool workers leave Ctrl-C to their parent and do not outlive it (`dsl.processes`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SCRIPT = textwrap.dedent("""
    import os, sys, time
    from multiprocessing import get_context
    from dsl.processes import worker_setup

    def nap(_):
        time.sleep(60)

    if __name__ == "__main__":
        with get_context("fork").Pool(2, initializer=worker_setup, initargs=(os.getpid(),)) as pool:
            result = pool.map_async(nap, range(2))
            print(" ".join(str(p.pid) for p in pool._pool), flush=True)
            try:
                result.get()
            except KeyboardInterrupt:
                sys.exit(130)
""")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    script = tmp_path / "pool.py"
    script.write_text(SCRIPT)
    root = str(Path(__file__).resolve().parents[2])
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, start_new_session=True,
                               env={**os.environ, "PYTHONPATH": root},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    workers = [int(p) for p in process.stdout.readline().split()]
    time.sleep(0.5)
    return process, workers


def test_ctrl_c_stops_the_pool_promptly(tmp_path):
    process, workers = start(tmp_path)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    assert process.wait(timeout=15) == 130
    time.sleep(1)
    assert not any(alive(w) for w in workers)


def test_workers_die_with_a_killed_parent(tmp_path):
    process, workers = start(tmp_path)
    process.kill()
    process.wait(timeout=5)
    deadline = time.time() + 5
    while any(alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(alive(w) for w in workers)
