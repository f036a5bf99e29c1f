"""Derived tables kept in the user cache folder (`dsl.jit.stored_arrays`)."""

import numpy as np

import dsl.jit
import search.neighbourhood as neighbourhood


def _build(calls):
    def build():
        calls.append(1)
        return {"names": np.array(["a", "bc"]), "values": np.arange(6, dtype=np.float64).reshape(2, 3) / 7}
    return build


def test_built_once_then_read_back_the_same(monkeypatch, tmp_path):
    path = tmp_path / "table.npz"
    monkeypatch.setattr(dsl.jit, "cached_file", lambda stem: path)
    calls = []
    made = dsl.jit.stored_arrays("table", _build(calls))
    read = dsl.jit.stored_arrays("table", _build(calls))
    assert len(calls) == 1 and path.is_file() and not list(tmp_path.glob(".*.tmp"))
    assert read["names"].tolist() == ["a", "bc"] and np.array_equal(read["values"], made["values"])


def test_a_damaged_file_is_built_again_and_replaced(monkeypatch, tmp_path):
    path = tmp_path / "table.npz"
    monkeypatch.setattr(dsl.jit, "cached_file", lambda stem: path)
    for damage in (b"not an npz file", b"PK\x03\x04 truncated zip"):
        path.write_bytes(damage)
        calls = []
        assert dsl.jit.stored_arrays("table", _build(calls))["names"].tolist() == ["a", "bc"] and calls == [1]
        assert dsl.jit.stored_arrays("table", _build(calls))["names"].tolist() == ["a", "bc"] and calls == [1]


def test_no_folder_builds_every_time_and_writes_nothing(monkeypatch, tmp_path):
    for path in (None, tmp_path / "gone" / "table.npz"):
        monkeypatch.setattr(dsl.jit, "cached_file", lambda stem: path)
        calls = []
        dsl.jit.stored_arrays("table", _build(calls))
        dsl.jit.stored_arrays("table", _build(calls))
        assert calls == [1, 1]
    assert not (tmp_path / "gone").exists()


def test_the_library_tables_read_back_are_the_tables_computed(monkeypatch, tmp_path):
    monkeypatch.setattr(dsl.jit, "cached_file", lambda stem: tmp_path / f"{stem}.npz")
    computed = neighbourhood._library_arrays()
    dsl.jit.stored_arrays("library_travel", neighbourhood._library_arrays)
    read = dsl.jit.stored_arrays("library_travel", lambda: {})
    assert set(read) == set(computed)
    for key, array in computed.items():
        assert read[key].dtype == array.dtype and np.array_equal(read[key], array), key
