"""Dense vector index: hnswlib HNSW graph plus the full float32 matrix.

Rows are L2-normalised embeddings; the score is cosine similarity (higher is
better), converted from hnswlib's distance at this boundary and recomputed
exactly from the stored matrix so the HNSW and exact paths agree.

Small or heavily filtered searches run exactly in numpy: it is faster there and
never misses a row. The matrix is kept for that, and so the graph can be
rebuilt without re-embedding. Do not add rows while searching; build anew.
"""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path

import hnswlib
import numpy as np

from engine.errors import IndexCorrupt
from engine.index.hnsw_file import graph_problem

__all__ = ["VectorIndex"]

FORMAT_VERSION = 1
SPACE = "cosine"
META_NAME = "vectors.json"
MATRIX_NAME = "vectors.npy"
GRAPH_NAME = "hnsw.bin"


class VectorIndex:
    """Cosine search over a fixed matrix; row i is ``vectors[i]``."""

    __slots__ = ("_matrix", "_graph", "_m", "_ef_construction", "_seed", "_lock")

    def __init__(self, matrix: np.ndarray, graph: hnswlib.Index | None, m: int, ef_construction: int, seed: int):
        self._matrix = matrix
        self._graph = graph
        self._m = m
        self._ef_construction = ef_construction
        self._seed = seed
        self._lock = threading.Lock()  # set_ef + knn_query must not interleave

    @classmethod
    def build(
        cls, vectors: np.ndarray, *, m: int = 16, ef_construction: int = 200, seed: int = 0
    ) -> VectorIndex:
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise ValueError(f"vectors must be a (n, dim) array, got shape {matrix.shape}")
        if not np.all(np.isfinite(matrix)):
            raise ValueError("vectors hold NaN or infinite values")
        graph = None
        n, dim = matrix.shape
        if n:
            graph = hnswlib.Index(space=SPACE, dim=dim)
            graph.init_index(max_elements=n, M=m, ef_construction=ef_construction, random_seed=seed)
            graph.add_items(matrix, np.arange(n))
        return cls(matrix, graph, m, ef_construction, seed)

    def __len__(self) -> int:
        return self._matrix.shape[0]

    @property
    def dim(self) -> int:
        return self._matrix.shape[1]

    @property
    def space(self) -> str:
        return SPACE

    @property
    def matrix(self) -> np.ndarray:
        """The stored float32 rows (read-only view)."""
        view = self._matrix.view()
        view.flags.writeable = False
        return view

    def search(
        self,
        query: np.ndarray,
        k: int,
        eligible: np.ndarray | None = None,
        *,
        ef: int = 64,
        exact_below: int = 5000,
    ) -> list[tuple[int, float]]:
        """Top ``k`` rows by cosine similarity, descending (ties: lower row first).

        Only rows with ``eligible[row]`` true are returned. HNSW is used when at
        least ``exact_below`` rows are eligible and ``k`` is below that count;
        otherwise (and whenever HNSW cannot fill ``k``) the search is exact.
        """
        n = len(self)
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise ValueError(f"query has dimension {q.shape[0]}, index has {self.dim}")
        if k <= 0 or n == 0:
            return []
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        if eligible is not None:
            eligible = np.asarray(eligible, dtype=bool)
            if eligible.shape != (n,):
                raise ValueError(f"eligible has shape {eligible.shape}, expected ({n},)")
            count = int(eligible.sum())
            if count == 0:
                return []
            if count == n:
                eligible = None
        else:
            count = n
        if count < exact_below or k >= count or self._graph is None:
            return self._exact(q, k, eligible, count)
        labels = self._hnsw(q, k, eligible, ef)
        if labels is None:
            return self._exact(q, k, eligible, count)
        sims = self._matrix[labels] @ q
        order = np.lexsort((labels, -sims))
        return [(int(labels[i]), float(sims[i])) for i in order]

    def _hnsw(self, q: np.ndarray, k: int, eligible: np.ndarray | None, ef: int) -> np.ndarray | None:
        assert self._graph is not None
        filt = None
        if eligible is not None:
            mask = eligible

            def filt(label: int) -> bool:
                return bool(mask[label])

        try:
            with self._lock:
                self._graph.set_ef(max(ef, k))
                labels, _ = self._graph.knn_query(q, k=k, num_threads=1, filter=filt)
        except RuntimeError:  # fewer than k rows reached through the filter
            return None
        labels = labels.reshape(-1).astype(np.int64)
        if eligible is not None and not eligible[labels].all():
            return None  # never trust the filter alone
        return labels

    def _exact(self, q: np.ndarray, k: int, eligible: np.ndarray | None, count: int) -> list[tuple[int, float]]:
        n = len(self)
        if eligible is None:
            rows = None
            sims = self._matrix @ q
        elif count * 4 < n:  # few rows: gather them, cheaper than scoring all
            rows = np.flatnonzero(eligible)
            sims = self._matrix[rows] @ q
        else:
            rows = np.flatnonzero(eligible)
            sims = (self._matrix @ q)[rows]
        kk = min(k, sims.shape[0])
        if kk < sims.shape[0]:
            top = np.argpartition(-sims, kk - 1)[:kk]
            kth = sims[top].min()
            top = np.flatnonzero(sims >= kth)  # keep ties for a stable order
        else:
            top = np.arange(sims.shape[0])
        ids = top if rows is None else rows[top]
        s = sims[top]
        order = np.lexsort((ids, -s))[:kk]
        return [(int(ids[i]), float(s[i])) for i in order]

    # ---- persistence -------------------------------------------------------

    def save(self, dir: Path) -> None:
        dir = Path(dir)
        dir.mkdir(parents=True, exist_ok=True)
        np.save(dir / MATRIX_NAME, self._matrix, allow_pickle=False)
        if self._graph is not None:
            self._graph.save_index(str(dir / GRAPH_NAME))
            # hnswlib ignores write errors: a full disk leaves a short file behind, silently
            problem = graph_problem(dir / GRAPH_NAME, len(self), self.dim)
            if problem:
                raise OSError(errno.EIO, f"the vector graph was not written completely ({problem}): "
                                         "is the disk full?", str(dir / GRAPH_NAME))
        meta = {
            "format": FORMAT_VERSION,
            "space": SPACE,
            "dim": self.dim,
            "count": len(self),
            "m": self._m,
            "ef_construction": self._ef_construction,
            "seed": self._seed,
        }
        (dir / META_NAME).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, dir: Path, *, dim: int | None = None) -> VectorIndex:
        """Load and validate; ``dim``, when given, must match (the embedder's)."""
        dir = Path(dir)

        def bad(msg: str) -> IndexCorrupt:
            return IndexCorrupt(f"vector index in {dir}: {msg}")

        try:
            meta = json.loads((dir / META_NAME).read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise bad(f"{META_NAME} is missing") from e
        except (OSError, ValueError) as e:
            raise bad(f"{META_NAME} is unreadable: {e}") from e
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise bad(f"{META_NAME} has an unknown format")
        if meta.get("space") != SPACE:
            raise bad(f"space is {meta.get('space')!r}, expected {SPACE!r}")
        try:
            mdim, count = int(meta["dim"]), int(meta["count"])
            m, efc, seed = int(meta["m"]), int(meta["ef_construction"]), int(meta["seed"])
        except (KeyError, TypeError, ValueError) as e:
            raise bad(f"{META_NAME} lacks a field: {e}") from e
        if dim is not None and mdim != dim:
            raise bad(f"dimension is {mdim}, expected {dim}: rebuild the index")
        try:
            matrix = np.load(dir / MATRIX_NAME, allow_pickle=False)
        except FileNotFoundError as e:
            raise bad(f"{MATRIX_NAME} is missing") from e
        except (OSError, ValueError, EOFError) as e:
            raise bad(f"{MATRIX_NAME} is unreadable: {e}") from e
        if matrix.dtype != np.float32 or matrix.shape != (count, mdim):
            raise bad(f"{MATRIX_NAME} is {matrix.dtype} {matrix.shape}, manifest says float32 ({count}, {mdim})")
        if count == 0:
            return cls(matrix, None, m, efc, seed)
        graph = _load_graph(dir / GRAPH_NAME, count, mdim, matrix, bad)
        return cls(matrix, graph, m, efc, seed)


def _normalised(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1)


def _load_graph(graph_path: Path, count: int, mdim: int, matrix: np.ndarray, bad) -> hnswlib.Index:
    """The HNSW graph, its every offset, count and link checked (engine.index.hnsw_file) before
    hnswlib reads it, and a probe of its vectors against the matrix after."""
    try:
        problem = graph_problem(graph_path, count, mdim)
    except FileNotFoundError as e:
        raise bad(f"{GRAPH_NAME} is missing") from e
    except (OSError, ValueError) as e:
        raise bad(f"{GRAPH_NAME} is unreadable: {e}") from e
    if problem:
        raise bad(f"{GRAPH_NAME} is not a valid graph of {count} vectors of {mdim} dims: {problem}")
    graph = hnswlib.Index(space=SPACE, dim=mdim)
    try:
        graph.load_index(str(graph_path), max_elements=count)
        probe = np.unique(np.linspace(0, count - 1, num=min(count, 8)).astype(np.int64))
        stored = np.asarray(graph.get_items(probe), dtype=np.float32)
    except (RuntimeError, ValueError) as e:
        raise bad(f"{GRAPH_NAME} is unreadable: {e}") from e
    if not np.allclose(stored, _normalised(matrix[probe]), atol=1e-4):
        raise bad(f"{GRAPH_NAME} does not hold the vectors of {MATRIX_NAME}")
    return graph
