"""The cases of the hostile-input campaign (`benchmarks.hostile`), built on copies of a small dataset.

A case is a dict: `family`, `name`, `expect` ("error": must be refused; "ok": must be accepted; "any":
either a valid result or a clear error), `argv` (a command line) or `call` (an API call), `needles` (an
error must name one of them: the file or option at fault), `foreign` (files the tool must leave as they
are), `before` (steps run just before the case). Only modules that every version of the tool has are
imported here, so the same cases measure older code (`--code`).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from benchmarks._hostile_files import (FUZZ_SEED, broken_images, fuzzed_actions, json_texts, make_root,
                                      program_entries)


def _solve_argv(root: Path, name: str) -> list[str]:
    return ["solve", str(root / name[:2] / "images" / name), "--oracle", "--json"]


def action_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Fuzzed action strings in one image's program: solve --oracle (and eval for every fourth)."""
    cases = []
    for k, action in enumerate(fuzzed_actions(random.Random(FUZZ_SEED), 200)):
        root = make_root(data, work / "action" / str(k), [ff])
        table = json.loads((root / "ff" / "ff_action_programs.json").read_text())
        table[ff][0][k % 7][0][k % len(table[ff][0][k % 7][0])] = action
        path = root / "ff" / "ff_action_programs.json"
        path.write_text(json.dumps(table))
        needles = (str(path), "action")
        if k % 4 == 3:
            argv = ["eval", "--data", str(root), "--split", "tiny", "--oracle", "--json", str(root / "out.json")]
        else:
            argv = _solve_argv(root, ff)
        cases.append({"family": "action", "name": f"{k}:{json.dumps(action)[:40]}", "expect": "any",
                      "argv": argv, "needles": needles})
    return cases


def program_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Malformed action-program JSON: entries of the wrong shape, and whole files (encodings, depth)."""
    cases = []
    for k, (name, entry) in enumerate(program_entries(data, ff)):
        root = make_root(data, work / "program" / f"e{k}", [ff])
        path = root / "ff" / "ff_action_programs.json"
        path.write_text(json.dumps({ff: entry}))
        cases.append({"family": "program", "name": f"entry:{name}", "expect": "error", "argv": _solve_argv(root, ff),
                      "needles": (str(path),)})
    for k, (name, raw, expect) in enumerate(json_texts(data, ff)):
        for command in ("solve", "eval"):
            root = make_root(data, work / "program" / f"f{k}{command}", [ff])
            path = root / "ff" / "ff_action_programs.json"
            if expect == "folder":
                path.unlink()
                path.mkdir()
            else:
                path.write_bytes(raw)
            wanted = "error" if expect == "folder" else expect
            argv = (_solve_argv(root, ff) if command == "solve" else
                    ["eval", "--data", str(root), "--split", "tiny", "--oracle", "--json", str(root / "out.json")])
            cases.append({"family": "program", "name": f"file:{name}:{command}",
                          "expect": "any" if command == "eval" and wanted == "error" else wanted,
                          "argv": argv, "needles": (str(path),)})
    return cases


def split_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Broken split files and dataset roots, through eval and bench solve."""
    texts = {
        "missing": None, "empty": b"", "not-json": b"{tiny: [", "a-list": b"[1, 2]", "names-not-list": b'{"tiny": "x"}',
        "names-not-str": b'{"tiny": [1, 2]}', "utf16": json.dumps({"tiny": [ff]}).encode("utf-16"),
        "latin1": '{"tiny": ["caf\u00e9"]}'.encode("latin-1"), "deep": b"[" * 100_000 + b"]" * 100_000,
        "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "other-split": b'{"other": []}',
        "absent-problem": json.dumps({"tiny": ["ff_nact4_9999"]}).encode(),
        "odd-name": json.dumps({"tiny": ["../../etc"]}).encode(), "folder": "folder",
    }
    cases = []
    for name, raw in texts.items():
        for command in ("eval", "bench"):
            root = make_root(data, work / "split" / f"{name}-{command}", [ff], split=False)
            split = root / "ShapeBongard_V2_split.json"
            if raw == "folder":
                split.mkdir()
            elif raw is not None:
                split.write_bytes(raw)
            out = str(root / "out.json")
            argv = (["eval", "--data", str(root), "--split", "tiny", "--oracle", "--json", out] if command == "eval" else
                    ["bench", "solve", "--data", str(root), "--split", "tiny", "--oracle"])
            per_problem = name in ("absent-problem", "odd-name") and command == "eval"
            cases.append({"family": "split", "name": f"{name}:{command}", "expect": "any" if per_problem else "error",
                          "argv": argv, "needles": (str(split), "--split", "tiny")})
    for name, target in (("root-missing", work / "split" / "nowhere"), ("root-a-file", work / "split" / "a-file")):
        if name == "root-a-file":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
        cases.append({"family": "split", "name": name, "expect": "error", "needles": (str(target),),
                      "argv": ["eval", "--data", str(target), "--split", "tiny", "--oracle",
                               "--json", str(work / "split" / f"{name}.json")]})
    return cases


def image_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Broken image files and problem folders: explain --oracle reads the pixels, solve --oracle the layout."""
    cases = []
    for k, (name, damage, expect) in enumerate(broken_images()):
        for command in ("explain", "solve"):
            root = make_root(data, work / "image" / f"{k}{command}", [ff])
            folder = root / "ff" / "images" / ff
            target = damage(folder)
            argv = ([command, str(folder), "--oracle", "--out", str(root / "report")] if command == "explain"
                    else _solve_argv(root, ff))
            wanted = expect if command == "explain" or expect == "error-layout" else "any"
            cases.append({"family": "image", "name": f"{name}:{command}",
                          "expect": "error" if wanted == "error-layout" else wanted, "argv": argv,
                          "needles": (str(target), str(folder))})
    return cases


def path_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Valid ways to name a problem folder under --oracle: relative, '.', with '..', trailing slash."""
    import os

    root = make_root(data, work / "paths", [ff])
    folder = root / "ff" / "images" / ff
    home = str(work / "cwd")  # where `benchmarks.hostile` runs the cases
    forms = {"dot": (folder, "."), "bare-name": (folder.parent, ff), "label-dotdot": (work, str(folder / "1" / "..")),
             "trailing-slash": (work, str(folder) + "/"), "relative-up": (folder / "1", "..")}
    cases = []
    for name, (cwd, given) in forms.items():
        for command in ("solve", "explain"):
            argv = (["solve", given, "--oracle"] if command == "solve"
                    else ["explain", given, "--oracle", "--out", str(work / "paths" / f"out-{name}")])
            cases.append({"family": "path", "name": f"{name}:{command}", "expect": "ok", "argv": argv,
                          "before": [lambda cwd=cwd: os.chdir(cwd)], "after": [lambda: os.chdir(home)]})
    return cases


def build_cases(data: Path, work: Path, pixels: bool = False) -> list[dict]:
    from benchmarks._hostile_api import api_cases
    from benchmarks._hostile_faults import fault_cases
    from benchmarks._hostile_options import option_cases, output_cases, resume_cases, pixel_cases

    data, work = data.resolve(), work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    split = json.loads((data / "ShapeBongard_V2_split.json").read_text())
    ff = sorted(split["ff"])[0]
    cases = (action_cases(data, work, ff) + program_cases(data, work, ff) + split_cases(data, work, ff)
             + image_cases(data, work, ff) + path_cases(data, work, ff) + option_cases(data, work, ff)
             + output_cases(data, work, ff) + resume_cases(data, work, ff) + api_cases(data, work, ff)
             + fault_cases(data, work, pixels))
    if pixels:
        cases += pixel_cases(data, work, ff)
    return cases
