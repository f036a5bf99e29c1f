"""Broken files for the hostile-input campaign: fuzzed action strings, malformed program entries and JSON
texts, damaged images, and the small dataset copies they go into."""

from __future__ import annotations

import io
import json
import random
import shutil
import string
import zlib
import struct
from pathlib import Path

import numpy as np
from PIL import Image

FUZZ_SEED = 24
VALID_ACTIONS = ("line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.833", "line_circle_0.354-0.750",
                 "arc_square_0.250_0.875-0.083", "line_triangle_0.707-0.167")
ODD_CHARACTERS = string.ascii_letters + string.digits + "_-. .\u00e9\u2212\x00\n\t\\\"'{}[]"


def make_root(data: Path, root: Path, names: list[str], split: bool = True) -> Path:
    """A dataset root at `root` holding the problems `names` of `data` (folders, program entries, and a
    split file {"tiny": names} unless `split` is False)."""
    for name in names:
        kind = name[:2]
        shutil.copytree(data / kind / "images" / name, root / kind / "images" / name)
        table = json.loads((data / kind / f"{kind}_action_programs.json").read_text())
        path = root / kind / f"{kind}_action_programs.json"
        mine = json.loads(path.read_text()) if path.exists() else {}
        mine[name] = table[name]
        path.write_text(json.dumps(mine))
    if split:
        (root / "ShapeBongard_V2_split.json").write_text(json.dumps({"tiny": names}))
    return root


def _mutate(rng: random.Random, text: str) -> str:
    position = rng.randrange(len(text) + 1)
    how = rng.randrange(5)
    if how == 0:
        return text[:position] + rng.choice(ODD_CHARACTERS) + text[position:]
    if how == 1:
        return text[:position] + text[position + 1:]
    if how == 2:
        return text[:position] + rng.choice(ODD_CHARACTERS) + text[position + 1:]
    if how == 3:
        return text[:position]
    return text[:position] + text[position:position + rng.randrange(1, 6)] * 2 + text[position:]


SEMANTIC = (
    "line_normal_2.500-0.500", "line_normal_1.000-1.500", "arc_normal_0.500_1.625-0.500", "line_normal_-1.000-0.500",
    "line_normal_nan-0.500", "line_normal_inf-0.500", "line_normal_1e3-0.500", "line_normal_1.000-0.500 ",
    " line_normal_1.000-0.500", "LINE_normal_1.000-0.500", "line_Normal_1.000-0.500", "line_dotted_1.000-0.500",
    "curve_normal_1.000-0.500", "arc_normal_0.500-0.500", "line_normal_0.500_0.500-0.500", "", "_", "-",
    "line_normal_" + "9" * 5000 + "-0.500", "line_normal_0." + "9" * 5000 + "-0.500", "x" * 100_000,
    "line_normal_1.000-0.500\n", "line_normal_\u0661.000-0.500", "arc_circle_0.000_0.000-0.000",
    "line_normal_0.000-0.000", "arc_normal_1.000_1.000-1.000",
)
WRONG_TYPES = (0, 1.5, None, True, [], {}, ["line_normal_1.000-0.500"], {"line": 1}, [[["x"]]])


def fuzzed_actions(rng: random.Random, count: int) -> list:
    """`count` odd actions: the semantic cases, the wrong JSON types, then random character mutations."""
    actions = list(SEMANTIC) + list(WRONG_TYPES)
    while len(actions) < count:
        text = rng.choice(VALID_ACTIONS)
        for _ in range(rng.randrange(1, 4)):
            text = _mutate(rng, text)
        actions.append(text)
    return actions[:count]


def _nested(depth: int) -> list:
    value: list = ["line_normal_1.000-0.500"]
    for _ in range(depth):
        value = [value]
    return value


def program_entries(data: Path, name: str) -> list[tuple[str, object]]:
    """A problem's program entry broken at every level: (case name, entry)."""
    entry = json.loads((data / name[:2] / f"{name[:2]}_action_programs.json").read_text())[name]
    pos, neg = entry
    shape = pos[0][0]
    return [
        ("not-a-list", "positives"), ("one-side", [pos]), ("three-sides", [pos, neg, neg]), ("a-dict", {"a": pos}),
        ("six-images", [pos[:6], neg]), ("eight-images", [pos + pos[:1], neg]), ("no-images", [[], neg]),
        ("side-a-string", ["abc", neg]), ("side-a-number", [7, neg]), ("image-no-shapes", [[[]] + pos[1:], neg]),
        ("image-three-shapes", [[[shape, shape, shape]] + pos[1:], neg]), ("image-a-string", [["abc"] + pos[1:], neg]),
        ("shape-empty", [[[[]]] + pos[1:], neg]), ("shape-a-string", [[["line_normal_1.000-0.500"]] + pos[1:], neg]),
        ("shape-40-actions", [[[shape[:1] * 40]] + pos[1:], neg]),
        ("shape-5000-actions", [[[shape[:1] * 5000]] + pos[1:], neg]),
        ("shape-100000-actions", [[[shape[:1] * 100_000]] + pos[1:], neg]),
        ("image-nested-30", [[_nested(30)] + pos[1:], neg]), ("null", None), ("number", 3),
        ("negatives-null", [pos, None]), ("image-null", [[None] + pos[1:], neg]), ("shape-null", [[[None]] + pos[1:], neg]),
    ]


def json_texts(data: Path, name: str) -> list[tuple[str, bytes, str]]:
    """Whole action-program files: (case name, bytes, expectation)."""
    good = json.dumps(json.loads((data / name[:2] / f"{name[:2]}_action_programs.json").read_text()))
    return [
        ("empty", b"", "error"), ("truncated", good[: len(good) // 2].encode(), "error"),
        ("utf16", good.encode("utf-16"), "error"), ("latin1-byte", good.replace("}", ', "caf\u00e9": 1}', 1).encode("latin-1"), "error"),
        ("utf8-bom", b"\xef\xbb\xbf" + good.encode(), "any"), ("nan-literal", good.replace("{", '{"x": NaN, ', 1).encode(), "error"),
        ("deep-list", b"[" * 100_000 + b"]" * 100_000, "error"), ("deep-object", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "error"),
        ("a-list", b"[]", "error"), ("a-string", b'"x"', "error"), ("whitespace-padded", b" " * 2_000_000 + good.encode(), "ok"),
        ("other-problem-only", json.dumps({"ff_nact4_9999": json.loads(good)[name]}).encode(), "error"),
        ("binary", bytes(range(256)) * 10, "error"), ("a-folder", b"", "folder"),
    ]


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _huge_png(width: int, height: int) -> bytes:
    """A valid greyscale PNG of width x height white pixels, a few kB on disk (a decompression bomb)."""
    row = b"\x00" + b"\xff" * width
    compressor = zlib.compressobj(9)
    body = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def _write(relative: str, payload):
    def damage(folder: Path) -> Path:
        path = folder / relative
        if payload is None:
            path.unlink()
        elif payload == "folder":
            path.unlink()
            path.mkdir()
        elif isinstance(payload, bytes):
            path.write_bytes(payload)
        else:
            path.write_bytes(payload(path))
        return path
    return damage


def _remove(relative: str, replace_with: str | None = None):
    def damage(folder: Path) -> Path:
        path = folder / relative
        shutil.rmtree(path)
        if replace_with is not None:
            path.write_text(replace_with)
        return path
    return damage


def _extra(relative: str, payload: bytes):
    def damage(folder: Path) -> Path:
        (folder / relative).write_bytes(payload)
        return folder / relative
    return damage


def broken_images() -> list[tuple[str, object, str]]:
    """(case name, damage(folder) -> the damaged path, expectation): expectation "error" for a file the
    tool cannot read, "any" for an odd but readable one, "error-layout" for a broken problem folder."""
    white = Image.new("L", (512, 512), 255)
    cut = _png(white)[:60]
    return [
        ("empty-file", _write("1/0.png", b""), "error"), ("truncated", _write("1/0.png", cut), "error"),
        ("text", _write("1/0.png", b"not a png at all\n"), "error"),
        ("jpeg", _write("1/0.png", lambda p: _as(p, "JPEG")), "any"), ("gif", _write("1/0.png", lambda p: _as(p, "GIF")), "any"),
        ("bomb-20000", _write("1/0.png", _huge_png(20_000, 20_000)), "error"),
        ("bomb-9000", _write("1/0.png", _huge_png(9_000, 9_000)), "error"),
        ("wide-1x100000", _write("1/0.png", _huge_png(100_000, 1)), "any"),
        ("one-pixel", _write("1/0.png", _png(Image.new("L", (1, 1), 255))), "any"),
        ("rgba", _write("1/0.png", lambda p: _as(p, "PNG", "RGBA")), "any"),
        ("sixteen-bit", _write("1/0.png", lambda p: _as(p, "PNG", "I;16")), "any"),
        ("palette", _write("1/0.png", lambda p: _as(p, "PNG", "P")), "any"),
        ("bad-crc", _write("1/0.png", lambda p: _bad_crc(p)), "any"),
        ("a-folder", _write("1/0.png", "folder"), "error-layout"), ("missing", _write("1/3.png", None), "error-layout"),
        ("extra-png", _extra("1/7.png", _png(white)), "error-layout"), ("extra-text", _extra("1/notes.txt", b"x"), "any"),
        ("label-missing", _remove("0"), "error-layout"), ("label-a-file", _remove("0", "x"), "error-layout"),
        ("symlink-loop", lambda folder: _loop(folder / "1" / "2.png"), "error-layout"),
    ]


def _as(path: Path, fmt: str, mode: str | None = None) -> bytes:
    with Image.open(path) as image:
        image = image.convert(mode) if mode else image.convert("L")
        if mode == "I;16":
            image = Image.fromarray((np.asarray(Image.open(path).convert("L")).astype(np.uint16) * 257))
        buffer = io.BytesIO()
        image.save(buffer, format=fmt)
    return buffer.getvalue()


def _bad_crc(path: Path) -> bytes:
    raw = bytearray(path.read_bytes())
    raw[29] ^= 0xFF  # inside the IHDR chunk's CRC
    return bytes(raw)


def _loop(path: Path) -> Path:
    path.unlink()
    path.symlink_to(path)
    return path
