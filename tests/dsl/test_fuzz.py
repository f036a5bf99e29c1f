"""Fuzz: action strings, program JSON, JSON files and image files give a clear error or a valid result,
never another exception (hypothesis)."""

from __future__ import annotations

import io
import json
import string
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from dsl.dataset import DatasetError, parse_programs, read_image, read_json
from dsl.syntax import ActionStringError, parse_action, parse_image
from dsl.types import Action, ImageProgram

ALPHABET = string.ascii_letters + string.digits + "_-. \u00e9\x00\n"
ACTION_LIKE = st.from_regex(r"(line|arc|curve)_[a-z]{0,9}_[0-9.]{0,7}(_[0-9.]{0,7})?-[0-9.]{0,7}", fullmatch=True)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(ALPHABET, max_size=30) | ACTION_LIKE,
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(ALPHABET, max_size=8), inner, max_size=4),
    max_leaves=60,
)


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.text(ALPHABET, max_size=60), ACTION_LIKE))
def test_action_strings_parse_or_fail_clearly(text):
    try:
        action = parse_action(text)
    except ActionStringError as error:
        assert "\n" not in str(error) and len(str(error)) < 400
        return
    assert isinstance(action, Action)


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_program_json_parses_or_fails_clearly(value):
    try:
        program = parse_image(value)
    except ActionStringError as error:
        assert len(str(error)) < 400
        return
    assert isinstance(program, ImageProgram)


@settings(max_examples=80, deadline=None)
@given(JSON_VALUES)
def test_program_tables_parse_or_fail_naming_the_file(value):
    path = Path("/nowhere/ff_action_programs.json")
    try:
        parse_programs(path, value)
    except DatasetError as error:
        assert str(error).startswith(str(path))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_json_files_load_or_fail_naming_the_file(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fuzz") / "file.json"
    path.write_bytes(raw)
    try:
        read_json(path)
    except DatasetError as error:
        assert str(error).startswith(str(path))


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (width, height), 255).save(buffer, format="PNG")
    return buffer.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.integers(1, 64), st.data())
def test_damaged_image_files_read_or_fail_naming_the_file(tmp_path_factory, width, height, data):
    raw = bytearray(_png(width, height))
    for _ in range(data.draw(st.integers(0, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    path = tmp_path_factory.mktemp("fuzz") / "0.png"
    path.write_bytes(bytes(raw[:cut]))
    try:
        pixels = read_image(path)
    except DatasetError as error:
        assert str(error).startswith(str(path))
        return
    assert pixels.dtype == np.uint8 and pixels.ndim == 2
