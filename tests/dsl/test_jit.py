"""The project's kernels (`dsl.jit.njit`): compiled once for their argument types, whatever constants a calling
kernel passes them (issue 53: each literal argument was a compile of its own on a first run)."""

import os
import subprocess
import sys

import numpy as np

from dsl.jit import njit
from dsl.processes import checkout_path


@njit
def _pick(values, k, negated):
    return -values[k] if negated else values[k]


@njit
def _constants_and_variables(values, k):
    return _pick(values, 0, False) + _pick(values, 1, True) + _pick(values, k, k > 1)


@njit(cache=False)
def _with_options(values):
    return _pick(values, 2, False)


def test_a_kernel_called_with_constants_compiles_once_for_their_types():
    values = np.array([1.0, 2.0, 4.0])
    assert _constants_and_variables(values, 2) == 1.0 - 2.0 - 4.0
    assert _with_options(values) == 4.0
    assert [str(s) for s in _pick.signatures] == ["(Array(float64, 1, 'C', False, aligned=True), int64, bool)"]


_CALLERS = """
import numpy as np
from search import kernels

rng = np.random.default_rng(3)
points, samples = rng.uniform(0, 60, (40, 2)), rng.uniform(0, 64, (30, 2))
radii, owner, dt = np.full(40, 1.5), np.zeros(40, dtype=np.int64), rng.uniform(0, 5, (64, 64))
pose, params = np.array([[2.0, 60.0, 1.0, 0.0]]), np.array([[2.0, 60.0, 0.0, 1.0]])
kernels.sparse_score(points, radii, owner, pose, dt, samples, 8.0, 10.0)
kernels.best_sparse_scores(points, radii, owner, pose[None], dt, samples, 8.0, 10.0, 1)
kernels.pattern_search(points, radii, owner, params, np.ones(1, dtype=np.bool_), dt, samples, 8.0, 10.0,
                       np.array([1.0, 1.0, 2.0, 0.02]), 30, 0.1, 4.0)
print(len(kernels._reverse_sum.signatures))
"""


def test_the_reverse_sum_compiles_once_for_every_kernel_that_calls_it(tmp_path):
    """Its three callers, compiled in a fresh process with an empty cache (a kernel loaded from the cache does
    not compile the kernels it calls), give it one signature (they gave three: two constants, lists left out)."""
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=checkout_path())
    done = subprocess.run([sys.executable, "-c", _CALLERS], env=environment, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1"]


def test_kernels_import_with_numba_switched_off(tmp_path):
    """NUMBA_DISABLE_JIT (Numba's switch for debugging kernels as Python) leaves plain functions: they stay so."""
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=checkout_path())
    script = ("from search import kernels\nfrom tests.dsl import test_jit\n"
              "print(type(kernels.sparse_score).__name__, type(test_jit._pick).__name__)")
    done = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["function", "function"]
