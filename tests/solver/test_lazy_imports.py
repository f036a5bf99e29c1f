"""Commands load only the libraries they use (issue 53): `--help` none of the solver's, `generate` and
`solve --oracle` no torch and no Ray; Numba's cache lives in a user folder and a folder that cannot be written turns
it off without failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dsl.dataset import list_problems, problem_folder

HEAVY = ("torch", "clingo", "numba", "ray", "numpy", "scipy", "sympy", "networkx", "PIL")
LOADED = """
import json, sys
from solver.app.cli import build_parser, main
code = main(sys.argv[1:]) if len(sys.argv) > 1 else build_parser() and 0
print(json.dumps({"code": code, "loaded": sorted(m for m in %r if m in sys.modules)}), file=sys.stderr)
""" % (HEAVY,)


def _loaded(*argv: str, cwd: Path) -> tuple[int, list[str]]:
    """(exit code, heavy libraries loaded) of one command run in a fresh process; none: the parser only."""
    done = subprocess.run([sys.executable, "-c", LOADED, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    answer = json.loads(done.stderr.strip().splitlines()[-1])
    return answer["code"], answer["loaded"]


def test_building_the_command_line_loads_none_of_the_solvers_libraries(tmp_path):
    assert _loaded(cwd=tmp_path) == (0, [])


def test_generate_and_solve_oracle_load_no_torch_nor_ray(tmp_path):
    code, loaded = _loaded("generate", "--out", str(tmp_path / "data"), "--abstract", "1", "--workers", "1",
                           cwd=tmp_path)
    assert code == 0 and not {"torch", "ray", "clingo"} & set(loaded)
    folder = problem_folder(tmp_path / "data", list_problems(tmp_path / "data")[0])
    code, loaded = _loaded("solve", str(folder), "--oracle", cwd=tmp_path)
    assert code == 0 and not {"torch", "ray"} & set(loaded)


CACHE = """
import json, os, sys
from dsl import jit
folder = jit.cache_folder()
from dsl.raster import render_program
print(json.dumps({"folder": None if folder is None else str(folder)}))
"""


def _cache_folder(env: dict, cwd: Path) -> str | None:
    done = subprocess.run([sys.executable, "-c", CACHE], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), **env), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["folder"]


def test_the_kernels_cache_in_a_user_folder_keyed_by_the_sources(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": ""}
    folder = Path(_cache_folder(env, tmp_path))
    assert folder.parent == tmp_path / "cache" / "bongard-solver" / "numba" and folder.is_dir()
    assert _cache_folder({"NUMBA_CACHE_DIR": str(tmp_path / "given")}, tmp_path) == str(tmp_path / "given")


def test_a_cache_folder_that_cannot_be_written_turns_the_cache_off(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert _cache_folder({"XDG_CACHE_HOME": str(blocked), "NUMBA_CACHE_DIR": ""}, tmp_path) is None
    assert _cache_folder({"NUMBA_CACHE_DIR": str(blocked / "numba")}, tmp_path) is None

