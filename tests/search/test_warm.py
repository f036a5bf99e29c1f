"""The helper that compiles kernels ahead on a first run (`search.warm`): its list names kernels that exist, and
what it compiles is found in the cache by the next process."""

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from search import warm

ROOT = Path(__file__).resolve().parents[2]


def test_the_list_names_kernels_of_the_code_with_types_numba_reads():
    listed = warm.kernels()
    assert listed, "search/data/warm_kernels.json is empty"
    for module, function, types in listed:
        assert module.split(".")[0] in ("dsl", "search")
        kernel = getattr(importlib.import_module(module), function)
        assert hasattr(kernel, "compile"), f"{module}.{function} is not a Numba kernel"
        parameters = inspect.signature(kernel.py_func).parameters.values()
        required = sum(p.default is inspect.Parameter.empty for p in parameters)
        assert required <= len(warm.signature(types)) <= len(parameters), f"{module}.{function}: stale types"


def _helper(folder: Path, listed: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "search.warm", str(folder), str(os.getpid()), str(listed)], env=env,
                          capture_output=True, text=True, timeout=600)


def _one_kernel_list(tmp_path: Path) -> Path:
    listed = tmp_path / "list.json"
    entry = {"module": "search.kernels", "function": "_moved_by",
             "types": "(Array(float64, 1, 'C', False, aligned=True),) * 4"}
    stale = {"module": "search.kernels", "function": "no_such_kernel", "types": "(int64,)"}
    listed.write_text(json.dumps({"kernels": [stale, entry]}))
    return listed


@pytest.mark.skipif(os.name != "posix", reason="the helper runs on POSIX only")
def test_the_helper_stores_its_kernels_for_the_next_process_and_marks_the_folder(tmp_path):
    folder = tmp_path / "numba"
    folder.mkdir()
    done = _helper(folder, _one_kernel_list(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (folder / warm.DONE).exists()  # a stale entry is passed over, not fatal
    check = ("import numpy as np\nfrom search import kernels\nx = np.zeros(3)\nkernels._moved_by(x, x, x, x)\n"
             "print(sum(kernels._moved_by.stats.cache_hits.values()))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder), PYTHONPATH=str(ROOT))
    hits = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=600)
    assert hits.returncode == 0, hits.stderr
    assert hits.stdout.split() == ["1"]  # loaded from the cache, not compiled again


@pytest.mark.skipif(os.name != "posix", reason="the helper runs on POSIX only")
def test_a_second_helper_leaves_the_folder_to_the_first(tmp_path):
    import fcntl

    folder = tmp_path / "numba"
    folder.mkdir()
    with open(folder / warm.LOCK, "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # as a running helper holds it
        done = _helper(folder, _one_kernel_list(tmp_path))
    assert done.returncode == 0, done.stderr
    assert not (folder / warm.DONE).exists()


def test_no_helper_once_the_folder_is_marked(tmp_path, monkeypatch):
    import dsl.jit

    monkeypatch.setattr(dsl.jit, "cache_folder", lambda: tmp_path)
    (tmp_path / warm.DONE).touch()
    assert warm.start() is None
    monkeypatch.setattr(dsl.jit, "cache_folder", lambda: None)  # no folder can be written: nothing to warm
    assert warm.start() is None


def test_bench_warm_list_records_a_list_the_helper_reads(tmp_path):
    from benchmarks import warm_list

    out = tmp_path / "kernels.json"
    assert warm_list.main(["--ff", "1", "--basic", "0", "--abstract", "0", "--out", str(out),
                           "--json", str(tmp_path / "figures.json")]) == 0
    listed = warm.kernels(out)
    names = {f"{module}.{function}" for module, function, _ in listed}
    assert "search.kernels.best_sparse_scores" in names  # the first pose fit of a free-form reading
    assert all(module.split(".")[0] in ("dsl", "search") for module, _, _ in listed)
    for _, _, types in listed:
        warm.signature(types)
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert all(row["seconds"] >= 0 for row in figures["kernels"])


def test_no_helper_without_an_interpreter_to_start(tmp_path, monkeypatch):
    import dsl.jit

    monkeypatch.setattr(dsl.jit, "cache_folder", lambda: tmp_path)
    monkeypatch.setattr(sys, "executable", "")  # embedded Python
    assert warm.start() is None


def test_claimed_kernels_are_compiled_after_the_rest(tmp_path, monkeypatch):
    order = [("search.kernels", name, "(int64,)") for name in "abc"]
    (tmp_path / warm.claim_name(*order[0])).touch()  # the command has started compiling the first
    compiled = []
    monkeypatch.setattr(warm, "_compile", lambda *entry: compiled.append(entry))
    warm.compile_all(order, tmp_path)
    assert compiled == order[1:] + order[:1]  # passed over, then compiled (found in the cache) once the rest are done
    compiled.clear()
    assert warm.compile_all(order)
    assert compiled == order


def test_a_helper_asked_to_stop_ends_after_the_kernel_in_hand(monkeypatch):
    order = [("search.kernels", name, "(int64,)") for name in "abc"]
    compiled = []
    monkeypatch.setattr(warm, "_compile", lambda *entry: compiled.append(entry))
    assert not warm.compile_all(order, stopped=lambda: len(compiled) >= 1)  # asked while compiling the first
    assert compiled == order[:1]  # that one finished and stored, no other started: not marked done


def test_a_command_claims_the_kernels_it_starts_compiling(tmp_path):
    claims = tmp_path / "claims"
    types = "(Array(float32, 1, 'C', False, aligned=True),) * 4"
    check = ("import numpy as np\nfrom pathlib import Path\nfrom search import kernels, warm\n"
             f"warm._claim_what_this_process_compiles(Path({str(claims)!r}))\n"
             "x = np.zeros(3, dtype=np.float32)\nkernels._moved_by(x, x, x, x)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    named = repr(warm.signature(types))
    assert (claims / warm.claim_name("search.kernels", "_moved_by", named)).exists()
