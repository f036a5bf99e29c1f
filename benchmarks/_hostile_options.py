"""Hostile-input cases about options, output paths, checkpoints, resuming and (with --pixels) perception."""

from __future__ import annotations

import json
import math
import pickle
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from benchmarks._hostile_files import make_root

BAD_NUMBERS = ("-1", "0", "nan", "inf", "-inf", "abc", "", "1.5", "1e9", "99999999999999999999")
FOREIGN = "someone else's notes\n"


def _valid(text: str, kind: str, low: float, high: float) -> bool:
    try:
        value = int(text) if kind == "int" else float(text)
    except ValueError:
        return False
    return math.isfinite(value) and low <= value <= high


def option_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Every numeric option of every command with each of BAD_NUMBERS: a usage error naming the option
    unless the value is valid for it (then the command must run)."""
    root = make_root(data, work / "options" / "data", [ff])
    problem = str(root / "ff" / "images" / ff)
    image = str(root / "ff" / "images" / ff / "1" / "0.png")
    out = work / "options"
    commands = {
        "solve": (["solve", problem, "--oracle"], [("--time-limit", "float", 1e-9, 86400), ("--workers", "int", 1, 64)]),
        "eval": (["eval", "--data", str(root), "--split", "tiny", "--oracle", "--json", "{out}/eval.json"],
                 [("--limit", "int", 1, math.inf), ("--workers", "int", 1, 64), ("--time-limit", "float", 1e-9, 86400)]),
        "explain": (["explain", problem, "--oracle", "--out", "{out}/report"], [("--workers", "int", 1, 64)]),
        "generate": (["generate", "--out", "{out}/generated"],
                     [("--ff", "int", 0, 0), ("--basic", "int", 0, 0), ("--abstract", "int", 0, 0),
                      ("--seed", "int", 0, 2**32 - 1), ("--workers", "int", 1, 64), ("--size", "int", 64, 2048)]),
        "decode": (["decode", image], [("--top-k", "int", 1, 100), ("--beam", "int", 1, 128), ("--sample", "int", 0, 0),
                                       ("--seed", "int", 0, 2**32 - 1)]),
        "bench-solve": (["bench", "solve", "--data", str(root), "--split", "tiny", "--oracle"],
                        [("--limit", "int", 1, math.inf), ("--repeat", "int", 1, 100), ("--time-limit", "float", 1e-9, 86400),
                         ("--noise", "float", 0, 1)]),
    }
    cases = []
    for command, (base, options) in commands.items():
        for option, kind, low, high in options:
            for value in BAD_NUMBERS:
                folder = out / f"{command}{option}{value}".replace("/", "_")
                argv = [a.replace("{out}", str(folder)) for a in base] + [option, value]
                valid = _valid(value, kind, low, high)
                cases.append({"family": "option", "name": f"{command} {option} {value!r}", "argv": argv,
                              "expect": "ok" if valid else "error", "needles": (option,)})
    return cases


def _foreign(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FOREIGN)
    return path


def _bad_paths(base: Path) -> dict[str, str]:
    (base / "a-folder").mkdir(parents=True, exist_ok=True)
    (base / "a-file").write_text("x")
    return {"a-folder": str(base / "a-folder"), "under-a-file": str(base / "a-file" / "out.json"), "empty": "",
            "unwritable": "/proc/bongard-hostile/out.json"}


def output_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Output paths that are folders, under files, empty, unwritable, or someone else's files."""
    base = work / "output"
    root = make_root(data, base / "data", [ff])
    problem = str(root / "ff" / "images" / ff)
    image = str(root / "ff" / "images" / ff / "1" / "0.png")
    evaluate = ["eval", "--data", str(root), "--split", "tiny", "--oracle", "--json"]
    cases = []
    for name, path in _bad_paths(base).items():
        file_path = path if name != "a-folder" else path
        folder_path = path.replace("/out.json", "") if name in ("under-a-file", "unwritable") else path
        folder_path = str(base / "a-file") if name == "a-folder" else folder_path
        for command, argv, needle in (
            ("eval", evaluate + [file_path], "--json"),
            ("explain", ["explain", problem, "--oracle", "--out", folder_path], "--out"),
            ("generate", ["generate", "--out", folder_path, "--ff", "1"], "--out"),
            ("decode-json", ["decode", image, "--json", file_path], "--json"),
            ("decode-picture", ["decode", image, "--picture", file_path], "--picture"),
            ("eval-dump", evaluate + [str(base / f"dump-{name}.json"), "--dump", folder_path], "--dump"),
        ):
            cases.append({"family": "output", "name": f"{command}:{name}", "expect": "error", "argv": argv,
                          "needles": (needle, folder_path or "empty")})
    foreign = {k: _foreign(base / "foreign" / k) for k in ("eval.json", "jsonl.json.jsonl", "decode.json",
                                                            "picture.png", "report" + "/" + ff + ".html", "report/" + ff + ".json")}
    dataset = make_root(data, base / "foreign-dataset", [ff])
    split = dataset / "ShapeBongard_V2_split.json"
    cases += [
        {"family": "output", "name": "eval:foreign-summary", "expect": "error", "argv": evaluate + [str(foreign["eval.json"])],
         "needles": (str(foreign["eval.json"]),), "foreign": [foreign["eval.json"]]},
        {"family": "output", "name": "eval:foreign-journal", "expect": "error",
         "argv": evaluate + [str(base / "foreign" / "jsonl.json")], "needles": (str(foreign["jsonl.json.jsonl"]),),
         "foreign": [foreign["jsonl.json.jsonl"]]},
        {"family": "output", "name": "decode:foreign-json", "expect": "error", "argv": ["decode", image, "--json", str(foreign["decode.json"])],
         "needles": (str(foreign["decode.json"]),), "foreign": [foreign["decode.json"]]},
        {"family": "output", "name": "decode:foreign-picture", "expect": "error",
         "argv": ["decode", image, "--picture", str(foreign["picture.png"])], "needles": (str(foreign["picture.png"]),),
         "foreign": [foreign["picture.png"]]},
        {"family": "output", "name": "explain:foreign-report", "expect": "error",
         "argv": ["explain", problem, "--oracle", "--out", str(base / "foreign" / "report")],
         "needles": (str(base / "foreign" / "report"),), "foreign": [foreign["report/" + ff + ".html"], foreign["report/" + ff + ".json"]]},
        {"family": "output", "name": "generate:into-a-dataset", "expect": "error", "argv": ["generate", "--out", str(dataset), "--ff", "1"],
         "needles": (str(dataset),), "foreign": [split, dataset / "ff" / "ff_action_programs.json"]},
        {"family": "output", "name": "eval:new-deep-folder", "expect": "ok", "argv": evaluate + [str(base / "new" / "deep" / "e.json")]},
    ]
    for name in ("missing", "a-folder", "empty", "text", "random-bytes", "pickle-with-code", "wrong-dict"):
        checkpoint = _checkpoint(base / "checkpoints", name)
        for command, argv in (
            ("eval", ["eval", "--data", str(root), "--split", "tiny", "--limit", "1", "--workers", "1",
                      "--json", str(base / f"ck-{name}.json"), "--checkpoint", str(checkpoint)]),
            ("decode", ["decode", image, "--checkpoint", str(checkpoint)]),
            ("solve", ["solve", problem, "--workers", "1", "--checkpoint", str(checkpoint)]),
        ):
            cases.append({"family": "checkpoint", "name": f"{command}:{name}", "expect": "error", "argv": argv,
                          "needles": (str(checkpoint),), "check": _not_run(base / "pwned")})
    return cases


class _Exploit:
    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.touch, (Path(self.target),))


def _checkpoint(base: Path, name: str) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{name}.pt"
    if name == "a-folder":
        path.mkdir(exist_ok=True)
    elif name == "empty":
        path.write_bytes(b"")
    elif name == "text":
        path.write_text("this is not a checkpoint\n")
    elif name == "random-bytes":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif name == "pickle-with-code":
        path.write_bytes(pickle.dumps({"config": _Exploit(str(base.parent / "pwned"))}))
    elif name == "wrong-dict":
        import torch

        torch.save({"config": {"hidden": "many"}, "model": {}}, path)
    return path


def _not_run(marker: Path):
    return lambda: f"{marker} was created: the checkpoint's code ran" if marker.exists() else None


def _journal_lines(out: Path) -> list[dict]:
    path = out.with_name(out.name + ".jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def resume_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """A second eval over the first's files: other options must be refused, --retry-failed re-solves."""
    from solver.app.cli import main

    base = work / "resume"
    root = make_root(data, base / "data", [ff])
    table_path = root / "ff" / "ff_action_programs.json"
    good = table_path.read_text()
    evaluate = ["eval", "--data", str(root), "--split", "tiny", "--json"]
    cases = []
    for name, first, second in (
        ("oracle-then-pixels", ["--oracle"], ["--workers", "1"]),
        ("time-limit-changed", ["--oracle", "--time-limit", "5"], ["--oracle", "--time-limit", "7"]),
        ("other-split-file", ["--oracle"], ["--oracle"]),
    ):
        out = base / f"{name}.json"
        steps = [lambda first=first, out=out: main(evaluate + [str(out)] + first)]
        if name == "other-split-file":
            other = make_root(data, base / "other", [ff])
            argv = ["eval", "--data", str(other), "--split", "tiny", "--json", str(out)] + second
        else:
            argv = evaluate + [str(out)] + second
        cases.append({"family": "resume", "name": name, "expect": "error", "argv": argv,
                      "needles": (str(out), "--json"), "before": steps})

    out = base / "retry.json"

    def break_then_run():
        broken = json.loads(good)
        broken[ff][0][0][0][0] = "line_normal_2.500-0.500"
        table_path.write_text(json.dumps(broken))
        main(evaluate + [str(out), "--oracle"])
        table_path.write_text(good)

    def retried() -> str | None:
        last = {r["name"]: r for r in _journal_lines(out) if "name" in r}[ff]
        return f"the record of {ff} is still an error: {last['error']}" if last.get("error") else None

    cases.append({"family": "resume", "name": "retry-failed", "expect": "ok", "before": [break_then_run],
                  "argv": evaluate + [str(out), "--oracle", "--retry-failed"], "check": retried})
    same = base / "same.json"
    cases.append({"family": "resume", "name": "same-options-resume", "expect": "ok",
                  "before": [lambda: main(evaluate + [str(same), "--oracle"])], "argv": evaluate + [str(same), "--oracle"],
                  "check": lambda: None if len([r for r in _journal_lines(same) if "name" in r]) == 1 else "a problem solved twice"})
    return cases


def pixel_cases(data: Path, work: Path, ff: str) -> list[dict]:
    """Runs of the decoder on problems with a blank image, all-noise images, a corrupt image."""
    base = work / "pixels"
    cases = []
    rng = np.random.default_rng(0)
    for name in ("one-blank", "all-noise", "all-blank", "one-corrupt"):
        root = make_root(data, base / name, [ff])
        folder = root / "ff" / "images" / ff
        if name == "one-blank":
            Image.new("L", (512, 512), 255).save(folder / "1" / "2.png")
        elif name == "one-corrupt":
            (folder / "0" / "3.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
        else:
            for side in "01":
                for k in range(7):
                    pixels = (rng.random((512, 512)) * 255).astype(np.uint8) if name == "all-noise" else np.full((512, 512), 255, np.uint8)
                    Image.fromarray(pixels).save(folder / side / f"{k}.png")
        expect = "ok" if name.startswith("one") else "error"
        cases.append({"family": "pixels", "name": name, "expect": expect, "argv": ["solve", str(folder), "--workers", "1"],
                      "needles": (str(folder),)})
    shutil.rmtree(base / "unused", ignore_errors=True)
    return cases
