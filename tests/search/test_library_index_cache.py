"""The library index kept in the user cache folder (`search.matching.library_index`, `dsl.jit.stored_arrays`)."""

import numpy as np

import dsl.jit
import search.matching as matching


def _fresh(monkeypatch, path):
    monkeypatch.setattr(dsl.jit, "cached_file", lambda stem: path)
    matching.library_index.cache_clear()
    try:
        return matching.library_index()
    finally:
        matching.library_index.cache_clear()


def test_the_index_read_back_is_the_index_computed(monkeypatch, tmp_path):
    path = tmp_path / "library_index.npz"
    made = _fresh(monkeypatch, path)
    assert path.is_file() and not list(tmp_path.glob("*.npz.*"))  # written whole, no temporary left
    read = _fresh(monkeypatch, path)
    assert read.names == made.names
    assert all(np.array_equal(a, b) for a, b in zip(read.points, made.points))
    assert np.array_equal(read.invariants, made.invariants)
    assert read.component(0) == made.component(0)


def test_a_damaged_or_unwritable_cache_is_rebuilt_or_skipped(monkeypatch, tmp_path):
    path = tmp_path / "library_index.npz"
    path.write_bytes(b"not an npz file")
    rebuilt = _fresh(monkeypatch, path)
    assert len(rebuilt.names) == 627
    with np.load(path) as written:  # written again, whole
        assert len(written["names"]) == 627
    assert len(_fresh(monkeypatch, None).names) == 627  # no cache folder: computed, nothing written
    missing = tmp_path / "gone" / "library_index.npz"  # a folder that is not there: computed, nothing fails
    assert len(_fresh(monkeypatch, missing).names) == 627 and not missing.exists()
