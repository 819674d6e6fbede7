"""HNSW recall against brute force, filters as hard limits, persistence checks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import IndexCorrupt
from engine.index.vectors import VectorIndex

DIM = 32


def unit_rows(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return unit_rows(1500)


@pytest.fixture(scope="module")
def index(data) -> VectorIndex:
    return VectorIndex.build(data)


def brute(data: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[int]:
    sims = data @ q
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
    order = np.argsort(-sims, kind="stable")[:k]
    return [int(i) for i in order if np.isfinite(sims[i])]


def test_hnsw_recall_against_brute_force(data, index):
    queries = unit_rows(50, seed=1)
    hits = 0
    for q in queries:
        got = [r for r, _ in index.search(q, 10, exact_below=0)]  # force the graph
        hits += len(set(got) & set(brute(data, q, 10)))
    assert hits / (10 * len(queries)) >= 0.95


def test_exact_path_matches_brute_force(data, index):
    q = unit_rows(1, seed=2)[0]
    res = index.search(q, 10, exact_below=10**9)
    assert [r for r, _ in res] == brute(data, q, 10)
    np.testing.assert_allclose([s for _, s in res], (data @ q)[brute(data, q, 10)], rtol=1e-5)


def test_scores_are_cosine_descending(data, index):
    q = data[7] * 3.0  # unnormalised query is normalised
    res = index.search(q, 5, exact_below=0)
    assert res[0][0] == 7 and res[0][1] == pytest.approx(1.0, abs=1e-5)
    scores = [s for _, s in res]
    assert scores == sorted(scores, reverse=True)


def test_k_larger_than_eligible(data, index):
    mask = np.zeros(len(data), bool)
    mask[[3, 400, 999]] = True
    res = index.search(data[0], 50, mask, exact_below=0)
    assert sorted(r for r, _ in res) == [3, 400, 999]
    assert index.search(data[0], 5000)[-1][0] in range(len(data))
    assert len(index.search(data[0], 5000)) == len(data)
    assert index.search(data[0], 5, np.zeros(len(data), bool)) == []


def test_dimension_and_mask_checked(index):
    with pytest.raises(ValueError):
        index.search(np.ones(DIM + 1, np.float32), 3)
    with pytest.raises(ValueError):
        index.search(np.ones(DIM, np.float32), 3, np.ones(4, bool))


@settings(max_examples=40, deadline=None)
@given(
    mask_seed=st.integers(0, 2**32 - 1),
    frac=st.floats(0.0, 1.0),
    k=st.integers(1, 60),
    exact_below=st.sampled_from([0, 100, 10**9]),
)
def test_filter_property(data, index, mask_seed, frac, k, exact_below):
    rng = np.random.default_rng(mask_seed)
    mask = rng.random(len(data)) < frac
    q = unit_rows(1, seed=mask_seed % 1000 + 10)[0]
    res = index.search(q, k, mask, exact_below=exact_below)
    rows = [r for r, _ in res]
    assert all(mask[r] for r in rows)
    assert len(rows) == len(set(rows)) == min(k, int(mask.sum()))


def test_empty_index(tmp_path):
    idx = VectorIndex.build(np.zeros((0, DIM), np.float32))
    assert len(idx) == 0 and idx.search(np.ones(DIM, np.float32), 3) == []
    idx.save(tmp_path)
    assert len(VectorIndex.load(tmp_path)) == 0


def test_save_load_round_trip(data, index, tmp_path):
    index.save(tmp_path / "vec")
    loaded = VectorIndex.load(tmp_path / "vec", dim=DIM)
    assert len(loaded) == len(index) and loaded.dim == DIM
    np.testing.assert_array_equal(loaded.matrix, data)
    for q in unit_rows(5, seed=3):
        assert loaded.search(q, 10, exact_below=0) == index.search(q, 10, exact_below=0)
    meta = json.loads((tmp_path / "vec" / "vectors.json").read_text())
    assert meta["space"] == "cosine" and meta["dim"] == DIM and meta["count"] == len(data)


def _damage(d, how):
    meta_path = d / "vectors.json"
    meta = json.loads(meta_path.read_text())
    if how == "dim_in_manifest":
        meta["dim"] = DIM * 2
        meta_path.write_text(json.dumps(meta))
    elif how == "count_in_manifest":
        meta["count"] -= 1
        meta_path.write_text(json.dumps(meta))
    elif how == "space":
        meta["space"] = "l2"
        meta_path.write_text(json.dumps(meta))
    elif how == "matrix_of_other_dim":
        np.save(d / "vectors.npy", unit_rows(200, DIM * 2))
        meta["dim"] = DIM * 2
        meta_path.write_text(json.dumps(meta))
    elif how == "graph_of_other_vectors":
        np.save(d / "vectors.npy", unit_rows(200, seed=9))
    elif how == "missing_graph":
        (d / "hnsw.bin").unlink()
    elif how == "truncated_graph":
        raw = (d / "hnsw.bin").read_bytes()
        (d / "hnsw.bin").write_bytes(raw[:50])
    elif how == "missing_matrix":
        (d / "vectors.npy").unlink()
    elif how == "missing_manifest":
        meta_path.unlink()


@pytest.mark.parametrize(
    "how",
    ["dim_in_manifest", "count_in_manifest", "space", "matrix_of_other_dim", "graph_of_other_vectors",
     "missing_graph", "truncated_graph", "missing_matrix", "missing_manifest"],
)
def test_corrupt_or_mismatched_raises(tmp_path, how):
    VectorIndex.build(unit_rows(200)).save(tmp_path)
    _damage(tmp_path, how)
    with pytest.raises(IndexCorrupt):
        VectorIndex.load(tmp_path)


def test_expected_dim_mismatch_raises(tmp_path):
    VectorIndex.build(unit_rows(20)).save(tmp_path)
    with pytest.raises(IndexCorrupt, match="dimension"):
        VectorIndex.load(tmp_path, dim=DIM + 1)


def _crafted(tmp_path, index, edit) -> str:
    """Save ``index``, let ``edit(bytearray, header)`` alter its graph file, return the loader's error."""
    from engine.index.hnsw_file import HEADER

    vdir = tmp_path / "crafted"
    index.save(vdir)
    graph = vdir / "hnsw.bin"
    body = bytearray(graph.read_bytes())
    edit(body, HEADER.unpack(bytes(body[:HEADER.size])))
    graph.write_bytes(bytes(body))
    with pytest.raises(IndexCorrupt) as e:
        VectorIndex.load(vdir, dim=DIM)
    return str(e.value)


def test_crafted_graph_files_are_refused_before_hnswlib_follows_them(index, tmp_path):
    """hnswlib follows a link id or count as an offset: each of these would read outside its
    memory at search time, so the loader refuses them first."""
    from engine.index.hnsw_file import HEADER

    def row0(header):  # byte offset of element 0's base-layer record
        return HEADER.size

    def far_link(body, h):
        body[row0(h) + 4:row0(h) + 8] = (10 ** 6).to_bytes(4, "little")
        body[row0(h):row0(h) + 2] = max(1, int.from_bytes(body[row0(h):row0(h) + 2], "little")).to_bytes(2, "little")

    def long_count(body, h):
        body[row0(h):row0(h) + 2] = (h[9] + 1).to_bytes(2, "little")  # maxM0 + 1

    def entry_point(body, h):
        body[52:56] = (10 ** 6).to_bytes(4, "little")  # enterpoint past the last element

    def upper_size(body, h):
        start = HEADER.size + h[2] * h[3]
        body[start:start + 4] = (7).to_bytes(4, "little")  # not a whole number of levels

    assert "points past the last element" in _crafted(tmp_path / "a", index, far_link)
    assert "exceeds its list" in _crafted(tmp_path / "b", index, long_count)
    assert "out of range" in _crafted(tmp_path / "c", index, entry_point)
    assert "impossible upper-layer size" in _crafted(tmp_path / "d", index, upper_size)
    assert "bytes after the graph" in _crafted(tmp_path / "e", index, lambda b, h: b.extend(b"\0" * 8))


def test_a_graph_file_written_short_is_a_write_error_not_a_saved_index(index, tmp_path, monkeypatch):
    """hnswlib ignores write errors (a full disk leaves a short file): save checks what it wrote."""
    import errno

    import hnswlib

    real = hnswlib.Index.save_index

    def short_write(self, path):
        real(self, path)
        with open(path, "r+b") as f:
            f.truncate(f.seek(0, 2) // 2)

    monkeypatch.setattr(hnswlib.Index, "save_index", short_write)
    with pytest.raises(OSError) as e:
        index.save(tmp_path / "v")
    assert e.value.errno == errno.EIO and "disk full" in str(e.value)
