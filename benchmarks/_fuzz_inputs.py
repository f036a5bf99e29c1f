"""The mutation engine of `bench fuzz`: hostile inputs for the file surfaces, each made from (seed, surface, index)
alone, so that any input can be made again.

    action   an action string          (valid official strings, mutated character by character and number by number)
    program  action-program JSON bytes (a valid entry mutated node by node, or byte by byte)
    split    split-file JSON bytes     (the same, with problem names mutated)
    facts    facts-in JSON bytes       (a valid problem given as facts, its facts mutated)
    png      image-file bytes          (valid images of odd modes and sizes, mutated byte by byte, chunk by chunk,
                                        truncated, or with a header whose CRC is made right again)
"""

from __future__ import annotations

import functools
import io
import json
import random
import struct
import zlib

from PIL import Image, ImageDraw

VALID_ACTIONS = ("line_normal_1.000-0.500", "arc_zigzag_0.500_0.625-0.833", "line_circle_0.354-0.750",
                 "arc_square_0.250_0.875-0.083", "line_triangle_0.707-0.167", "arc_normal_0.500_0.375-0.500",
                 "line_zigzag_0.000-1.000", "arc_circle_1.000_0.000-0.000")
ODD_CHARACTERS = ("0", "1", "5", ".", "_", "-", "+", "e", "E", " ", "\t", "\n", "\r", "\x00", "\\", '"', "'", "{", "}",
                  "[", "]", "(", ")", ",", ":", "%", "#", "\u0660", "\u0665", "\u06f5", "\u0967", "\uff10", "\uff15",
                  "\uff0e", "\u00b2", "\u00bd", "\U0001d7d3", "\u2212", "\u00a0", "\u200b", "\ufeff", "\u00e9",
                  "\U0001f600", "\u0301", "\ud800", "x", "Z")
ODD_NUMBERS = ("0", "1", "0.5", "1.000", "-0.000", "+0.5", "1e3", "1E-3", "nan", "NaN", "inf", "-inf", "Infinity",
               "1_000", " 1", "1 ", "0x10", "1" * 500, "0." + "0" * 5000 + "1", "9" * 400, "1e308", "1e309", ".5",
               "5.", "\u0660.\u0665", "\uff10.\uff15", "0,5", "\u0661", "-1", "99999999999999999999", "0.50000000000",
               "00000000000000.5", "0.1234567890123", "")
ODD_NAMES = ("", "x", "ff_", "ff_nact4_0000", "../../etc", "ff_..", "ff_a/b", "ff_a\\b", "ff_\x00", "ff_\n", "FF_x",
             "ff_" + "a" * 5000, "ff_\u00e9", "ff_\ud800", "/abs", "ff_ space", ".hidden", "ff_nact4_0000 ")
ODD_FACTS = ("X", "_", "p(X)", "a :- b", "#const n=1", "not p", "p(1..1000000)", "p(" * 60 + "a" + ")" * 60,
             "p(99999999999999999999)", "p(\"a\\\"b\")", "p(,)", "p()", ".", "", " ", "% comment", "p(a);q(b)",
             "p(a,b,c,d,e)", "\u00e9t\u00e9(a)", "p(a)..", "-p(a)", "p(#inf)", "p(#sup)", "p(1,2,3)", "obj(o1)",
             "rel(o1,ride,o1)", "cls(o1,\"\")", "p(a)\x00", "p(\ud800)", "f(g(h(i(j(k(l))))))", "p(a) :- .", "p:-")
JSON_ODDITIES = (None, True, False, 0, -1, 1.5, 1e308, float("nan"), float("inf"), "", "x", [], {}, [[[]]],
                 {"A": []}, 10**30, -(10**30))


def rng_for(seed: int, surface: str, index: int) -> random.Random:
    """The generator of one input: seeded by a string, so the same on every machine and run."""
    return random.Random(f"{seed}/{surface}/{index}")


# --------------------------------------------------------------------------------------------------
# Text, bytes and JSON mutations


def mutate_text(rng: random.Random, text: str, edits: int | None = None) -> str:
    """`text` with 1-4 edits: a character inserted, deleted or replaced, a cut, a repeat, a number swapped."""
    for _ in range(edits or rng.randrange(1, 5)):
        at = rng.randrange(len(text) + 1)
        how = rng.randrange(7)
        if how == 0:
            text = text[:at] + rng.choice(ODD_CHARACTERS) + text[at:]
        elif how == 1:
            text = text[:at] + text[at + 1:]
        elif how == 2:
            text = text[:at] + rng.choice(ODD_CHARACTERS) + text[at + 1:]
        elif how == 3:
            text = text[:at]
        elif how == 4:
            text = text[:at] + text[at:at + rng.randrange(1, 8)] * rng.choice((2, 3, 50)) + text[at:]
        elif how == 5:
            text = _swap_number(rng, text)
        else:
            text = text[:at] + chr(rng.randrange(0x20, 0x3000)) + text[at:]
    return text


def _swap_number(rng: random.Random, text: str) -> str:
    """A run of digits and dots in `text` replaced by an odd number."""
    spans, start = [], None
    for k, char in enumerate(text + "|"):
        if char.isdigit() or char == ".":
            start = k if start is None else start
        elif start is not None:
            spans.append((start, k))
            start = None
    if not spans:
        return text + rng.choice(ODD_NUMBERS)
    a, b = rng.choice(spans)
    return text[:a] + rng.choice(ODD_NUMBERS) + text[b:]


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    """`raw` with 1-8 bytes flipped, inserted or deleted, or cut short."""
    data = bytearray(raw)
    for _ in range(rng.randrange(1, 9)):
        at = rng.randrange(len(data) + 1)
        how = rng.randrange(4)
        if how == 0 and at < len(data):
            data[at] = rng.randrange(256)
        elif how == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif how == 2:
            del data[at:at + rng.randrange(1, 16)]
        else:
            del data[at:]
    return bytes(data)


def _paths(value, here=()) -> list[tuple]:
    """Every node of a JSON value, as a path of keys and indexes."""
    found = [here]
    if isinstance(value, list):
        for k, item in enumerate(value[:40]):
            found += _paths(item, here + (k,))
    elif isinstance(value, dict):
        for key, item in list(value.items())[:40]:
            found += _paths(item, here + (key,))
    return found


def _replaced(value, path: tuple, new):
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


def _get(value, path: tuple):
    for key in path:
        value = value[key]
    return value


def mutate_json(rng: random.Random, value, leaf=None):
    """`value` with one node replaced: an oddity, a nested or repeated copy, a mutated string (`leaf` mutates
    strings: action strings, fact strings), a list grown, shrunk or emptied."""
    path = rng.choice(_paths(value))
    node = _get(value, path)
    how = rng.randrange(7)
    if how == 0:
        new = rng.choice(JSON_ODDITIES)
    elif how == 1:
        new = node
        for _ in range(rng.choice((2, 10, 70))):  # deeper: as text, in `json_bytes`
            new = [new]
    elif how == 2 and isinstance(node, list) and node:
        new = node * rng.choice((2, 9, 500)) if len(node) < 50 else node[:1]
    elif how == 3 and isinstance(node, list):
        new = node[: rng.randrange(len(node) + 1)]
    elif how == 4 and isinstance(node, str):
        new = (leaf or mutate_text)(rng, node)
    elif how == 5 and isinstance(node, dict):
        new = {mutate_text(rng, str(k)): v for k, v in node.items()}
    else:
        new = [node, node] if not isinstance(node, dict) else {**node, rng.choice(ODD_NAMES): node}
    return _replaced(value, path, new)


def json_bytes(rng: random.Random, value, leaf=None) -> bytes:
    """A JSON file's bytes made from `value`: mutated as JSON (most), then maybe as text or bytes or re-encoded."""
    for _ in range(rng.randrange(1, 4)):
        value = mutate_json(rng, value, leaf)
    text = json.dumps(value)
    how = rng.randrange(10)
    if how == 0:
        return mutate_text(rng, text).encode("utf-8", "surrogatepass")
    if how == 1:
        return mutate_bytes(rng, text.encode())
    if how == 2:
        return text.encode(rng.choice(("utf-16", "utf-32", "utf-8-sig", "latin-1")), "replace")
    if how == 3:
        return text.replace("{", '{"dup": 1, "dup": 2, ', 1).encode()
    if how == 4:
        depth = rng.choice((100, 3000, 100_000))
        return ("[" * depth + text + "]" * depth).encode() if rng.random() < 0.5 else (
            '{"a":' * depth + text + "}" * depth).encode()
    return text.encode()


# --------------------------------------------------------------------------------------------------
# The surfaces


def action_input(rng: random.Random) -> str:
    """An action string: a valid one mutated (most), or junk."""
    if rng.random() < 0.1:
        return "".join(rng.choice(ODD_CHARACTERS) for _ in range(rng.randrange(0, 80)))
    text = rng.choice(VALID_ACTIONS)
    if rng.random() < 0.15:
        return text  # valid inputs stay accepted
    return mutate_text(rng, text)


def action_leaf(rng: random.Random, text: str) -> str:
    return action_input(rng) if rng.random() < 0.5 else mutate_text(rng, text)


def program_entry(rng: random.Random) -> list:
    """A problem's valid entry [positives, negatives] of 7 images of one or two shapes."""
    def image() -> list:
        return [[rng.choice(VALID_ACTIONS) for _ in range(rng.randrange(1, 6))] for _ in range(rng.randrange(1, 3))]

    return [[image() for _ in range(7)], [image() for _ in range(7)]]


def program_input(rng: random.Random, name: str) -> bytes:
    return json_bytes(rng, {name: program_entry(rng)}, action_leaf)


def split_input(rng: random.Random, name: str) -> bytes:
    names = [name] if rng.random() < 0.7 else [name, mutate_text(rng, name)] if rng.random() < 0.5 else [rng.choice(ODD_NAMES)]
    return json_bytes(rng, {"tiny": names, "other": []}, lambda r, text: r.choice(ODD_NAMES) if r.random() < 0.5
                      else mutate_text(r, text))


def facts_problem(rng: random.Random) -> dict:
    """A valid problem given as facts: people riding, feeding or leading horses or camels."""
    def image(action: str, thing: str) -> list[str]:
        facts = ["obj(o1)", "obj(o2)", "cls(o1,person)", f"cls(o2,{thing})", f"rel(o1,{action},o2)"]
        return facts if rng.random() < 0.7 else [f for f in facts if not f.startswith("obj")]

    things = ("horse", "camel")
    return {"name": "fuzz", "A": [image("ride", rng.choice(things)) for _ in range(rng.randrange(1, 7))],
            "B": [image(rng.choice(("feed", "lead")), rng.choice(things)) for _ in range(rng.randrange(1, 7))],
            "queries": [image(rng.choice(("ride", "feed")), "horse") for _ in range(rng.randrange(0, 3))]}


def fact_leaf(rng: random.Random, text: str) -> str:
    return rng.choice(ODD_FACTS) if rng.random() < 0.5 else mutate_text(rng, text)


def facts_input(rng: random.Random) -> bytes:
    problem = facts_problem(rng)
    if rng.random() < 0.15:
        return json.dumps(problem).encode()
    return json_bytes(rng, problem, fact_leaf)


# --------------------------------------------------------------------------------------------------
# Image files

MODES = ("1", "L", "LA", "P", "RGB", "RGBA", "I;16")
SIZES = ((1, 1), (7, 3), (3, 40), (64, 64), (128, 128), (300, 200), (512, 512))
CLAIMED_SIZES = (0, 1, 2, 255, 4096, 4097, 65535, 20_000, 2**31 - 1, 2**32 - 1)


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def drawing(size: tuple[int, int], mode: str, rng: random.Random) -> bytes:
    """A PNG of a few random lines, in `mode` and `size`."""
    image = Image.new("L", size, 255)
    pen = ImageDraw.Draw(image)
    for _ in range(rng.randrange(0, 4)):
        pen.line([(rng.randrange(size[0]), rng.randrange(size[1])) for _ in range(2)], fill=0, width=2)
    image = image.convert(mode) if mode not in ("I;16",) else image.convert("I").convert("I;16")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@functools.cache
def bomb(width: int, height: int) -> bytes:
    """A valid greyscale PNG of width x height white pixels, a few kB (a decompression bomb within the limit)."""
    compressor = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * width
    body = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


def chunks(raw: bytes) -> list[tuple[bytes, bytes]]:
    """The chunks of a PNG (kind, payload); what cannot be read as chunks is left out."""
    found, at = [], 8
    while at + 8 <= len(raw):
        (length,) = struct.unpack(">I", raw[at:at + 4])
        found.append((raw[at + 4:at + 8], raw[at + 8:at + 8 + length]))
        at += 12 + length
    return found


def assembled(parts: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(_chunk(kind, payload) for kind, payload in parts)


def _header_mutated(rng: random.Random, raw: bytes) -> bytes:
    """The IHDR fields changed and its CRC made right again, so the decoder reads on."""
    parts = chunks(raw)
    if not parts or parts[0][0] != b"IHDR" or len(parts[0][1]) != 13:
        return mutate_bytes(rng, raw)
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    field = rng.randrange(5)
    if field == 0:
        width = rng.choice(CLAIMED_SIZES)
    elif field == 1:
        height = rng.choice(CLAIMED_SIZES)
    elif field == 2:
        depth = rng.choice((0, 1, 2, 4, 8, 16, 7, 255))
    elif field == 3:
        colour = rng.choice((0, 2, 3, 4, 6, 1, 5, 7))
    else:
        compression, filtering, interlace = rng.choice((0, 1, 255)), rng.choice((0, 1)), rng.choice((0, 1, 2))
    header = struct.pack(">IIBBBBB", width, height, depth, colour, compression, filtering, interlace)
    return assembled([(b"IHDR", header)] + parts[1:])


def _chunks_mutated(rng: random.Random, raw: bytes) -> bytes:
    parts = chunks(raw)
    if len(parts) < 2:
        return mutate_bytes(rng, raw)
    k = rng.randrange(len(parts))
    how = rng.randrange(5)
    if how == 0:
        del parts[k]
    elif how == 1:
        parts.insert(k, parts[k])
    elif how == 2:
        parts.insert(k, (rng.choice((b"ABCD", b"tEXt", b"zTXt", b"PLTE", b"tRNS", b"IDAT")),
                         bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))))
    elif how == 3:
        parts[k] = (parts[k][0], mutate_bytes(rng, parts[k][1]))
    else:
        rng.shuffle(parts)
    return assembled(parts)


def png_input(rng: random.Random) -> bytes:
    """Image-file bytes: a valid image of an odd mode or size (some), or one damaged in one of several ways."""
    raw = drawing(rng.choice(SIZES), rng.choice(MODES), rng)
    how = rng.randrange(10)
    if how == 0:
        return raw
    if how in (1, 2):
        return mutate_bytes(rng, raw)
    if how in (3, 4):
        return _header_mutated(rng, raw)
    if how == 5:
        return _chunks_mutated(rng, raw)
    if how == 6:
        return raw[: rng.randrange(len(raw) + 1)]
    if how == 7:
        return raw + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if how == 8:
        return bomb(*rng.choice(((4096, 4096), (4097, 4096), (1, 100_000), (100_000, 1), (2000, 2000))))
    image = Image.open(io.BytesIO(raw))
    buffer = io.BytesIO()
    fmt = rng.choice(("JPEG", "GIF", "BMP", "TIFF", "WEBP", "PPM"))
    image.convert("RGB" if fmt in ("JPEG", "PPM") else image.mode if fmt == "TIFF" else "L").save(buffer, format=fmt)
    return buffer.getvalue()
