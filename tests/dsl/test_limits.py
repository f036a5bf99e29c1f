"""Size limits (`dsl.limits`), marked outputs (`dsl.owned`) and the argparse types (`dsl.options`)."""

from __future__ import annotations

import argparse
import json
import struct
import zlib

import pytest

from dsl.dataset import DatasetError, read_image, read_json
from dsl.limits import MAX_ACTIONS_PER_SHAPE, LimitError, json_depth, loads_limited
from dsl.options import count, seconds
from dsl.owned import OutputError, check_output_file, check_replaceable, marked_json
from dsl.syntax import ActionStringError, parse_image


def bomb(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels (its data: one row; the header is all that may be read)."""
    body = zlib.compress(b"\x00" + b"\xff" * width)

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path):
    path = tmp_path / "0.png"
    path.write_bytes(bomb(20_000, 20_000))
    with pytest.raises(DatasetError, match=f"{path}: image .*over the limit"):
        read_image(path)


def test_json_depth_is_limited_without_recursion(tmp_path):
    assert json_depth('[["[[[", {"a": [1]}]]') == 4
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DatasetError, match="nested 100000 deep"):
        read_json(path)
    assert loads_limited(json.dumps([[[1]]])) == [[[1]]]
    with pytest.raises(LimitError):
        loads_limited("[" * 70 + "]" * 70)


def test_actions_per_shape_are_limited():
    shape = ["line_normal_1.000-0.500"]
    assert parse_image([shape * MAX_ACTIONS_PER_SHAPE])
    with pytest.raises(ActionStringError, match="5000 actions is over the limit"):
        parse_image([shape * 5000])
    with pytest.raises(ActionStringError, match="1 to 2 shapes"):
        parse_image([shape] * 3)


def test_long_inputs_give_short_errors():
    with pytest.raises(ActionStringError) as error:
        parse_image([["x" * 100_000]])
    assert len(str(error.value)) < 300


@pytest.mark.parametrize("text", ["-1", "nan", "inf", "abc", "", "1.5", "101"])
def test_counts_reject_bad_numbers(text):
    with pytest.raises(argparse.ArgumentTypeError):
        count(0, 100)(text)


@pytest.mark.parametrize("text", ["0", "-2", "nan", "inf", "-inf", "1e9", "x"])
def test_seconds_reject_bad_numbers(text):
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)


def test_outputs_of_the_tool_are_replaceable_and_others_are_not(tmp_path):
    ours = tmp_path / "ours.json"
    ours.write_text(marked_json({"x": 1}))
    assert check_replaceable(ours, "--json") == ours
    theirs = tmp_path / "theirs.json"
    theirs.write_text('{"x": 1}')
    with pytest.raises(OutputError, match="not written by bongard-solver"):
        check_replaceable(theirs, "--json")
    with pytest.raises(OutputError, match="is a folder"):
        check_output_file(tmp_path, "--json")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output_file(theirs / "x.json", "--json")
    with pytest.raises(OutputError, match="empty path"):
        check_output_file("", "--json")
