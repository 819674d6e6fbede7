"""BM25 lexical index (bm25s) over the terms of engine.lang.words.tokenize.

``LexicalIndex`` keeps bm25s's precomputed sparse score matrix and scores a
query by summing the matrix columns of its terms; eligibility is a hard filter.
An index records the tokenizer version it was built with (a query must be cut
into the same terms as the documents).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from engine.errors import IndexCorrupt
from engine.lang.names import joined, name_terms
from engine.lang.words import TOKENIZER_VERSION, tokenize

__all__ = ["TOKENIZER_VERSION", "LexicalIndex", "tokenize"]

FORMAT_VERSION = 1
META_NAME = "lexical.json"


class LexicalIndex:
    """BM25 over a fixed list of texts; row i is ``texts[i]``."""

    __slots__ = ("_bm25", "_vocab", "_count", "_k1", "_b", "_data", "_indices", "_indptr", "_joined")

    def __init__(self, bm25: bm25s.BM25 | None, vocab: dict[str, int], count: int, k1: float, b: float):
        self._bm25 = bm25
        self._vocab = vocab
        self._count = count
        self._k1 = k1
        self._b = b
        self._joined: dict[str, tuple[int, ...]] | None = None  # joined spelling -> term ids, made when asked
        if bm25 is not None:
            self._data = np.asarray(bm25.scores["data"], dtype=np.float32)
            self._indices = np.asarray(bm25.scores["indices"], dtype=np.int64)
            self._indptr = np.asarray(bm25.scores["indptr"], dtype=np.int64)
        else:
            self._data = np.zeros(0, np.float32)
            self._indices = np.zeros(0, np.int64)
            self._indptr = np.zeros(1, np.int64)

    @classmethod
    def build(cls, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> LexicalIndex:
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for text in texts:
            row = []
            for tok in tokenize(text):
                tid = vocab.get(tok)
                if tid is None:
                    tid = vocab[tok] = len(vocab)
                row.append(tid)
            ids.append(row)
        if not vocab:
            return cls(None, {}, len(ids), k1, b)
        bm25 = bm25s.BM25(k1=k1, b=b)
        bm25.index((ids, vocab), create_empty_token=False, show_progress=False)
        return cls(bm25, bm25.vocab_dict, len(ids), k1, b)

    def __len__(self) -> int:
        return self._count

    def search(self, query: str, k: int, eligible: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top ``k`` rows by BM25 score, descending (ties: lower row first).

        Only rows with ``eligible[row]`` true and a score above zero are returned.
        """
        if k <= 0 or self._bm25 is None:
            return []
        if eligible is not None:
            eligible = np.asarray(eligible, dtype=bool)
            if eligible.shape != (self._count,):
                raise ValueError(f"eligible has shape {eligible.shape}, expected ({self._count},)")
        term_ids = sorted({self._vocab[t] for t in tokenize(query) if t in self._vocab})
        if not term_ids:
            return []
        ptr = self._indptr
        if len(term_ids) == 1:
            t = term_ids[0]
            rows = self._indices[ptr[t] : ptr[t + 1]]
            vals = self._data[ptr[t] : ptr[t + 1]]
            scores = np.zeros(self._count, np.float64)
            scores[rows] = vals
        else:
            rows = np.concatenate([self._indices[ptr[t] : ptr[t + 1]] for t in term_ids])
            vals = np.concatenate([self._data[ptr[t] : ptr[t + 1]] for t in term_ids])
            scores = np.bincount(rows, weights=vals, minlength=self._count)
        cand = np.flatnonzero(scores > 0)
        if eligible is not None:
            cand = cand[eligible[cand]]
        if cand.size == 0:
            return []
        s = scores[cand]
        if cand.size > k:
            part = np.argpartition(-s, k - 1)[:k]
            # keep every row tied with the k-th score so the tie-break is stable
            kth = s[part].min()
            sel = np.flatnonzero(s >= kth)
            cand, s = cand[sel], s[sel]
        order = np.lexsort((cand, -s))[:k]
        return [(int(cand[i]), float(s[i])) for i in order]

    def sight(self, query: str) -> float:
        """How much of the query the lexical branch can see: the IDF-weighted share of its terms
        that occur in the index (1.0: every term is known; near 0: a question in another language
        than the documents, whose few shared terms are identifiers). An unknown term weighs as the
        rarest known one would. 0.0 for an empty query or index."""
        toks = tokenize(query)
        if not toks or self._bm25 is None:
            return 0.0
        n = self._count
        ptr = self._indptr
        seen, total = 0.0, 0.0
        for t in dict.fromkeys(toks):
            tid = self._vocab.get(t)
            df = int(ptr[tid + 1] - ptr[tid]) if tid is not None else 0
            idf = float(np.log((n + 1) / (df + 0.5)))
            total += idf
            if df:
                seen += idf
        return seen / total if total > 0 else 0.0

    def rows_with(self, word: str) -> np.ndarray:
        """The rows that hold every term of ``word`` (its tokens: "Octopus" -> octopus)."""
        rows: np.ndarray | None = None
        for t in dict.fromkeys(tokenize(word)):
            tid = self._vocab.get(t)
            if tid is None or self._bm25 is None:
                return np.zeros(0, dtype=np.int64)
            have = self._rows(tid)
            rows = have if rows is None else np.intersect1d(rows, have)
        return np.zeros(0, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)

    def unknown(self, words: Sequence[str], eligible: np.ndarray | None = None) -> tuple[str, ...]:
        """The ``words`` no row holds (no ``eligible`` row, when given) by any of their terms
        (engine.lang.names.name_terms: ``SD-Karte`` is known where ``sd`` is) or by the same
        spelling joined (``WiFi`` is known where ``Wi-Fi`` is, and the other way round): what a
        question names that the library never mentions."""
        if eligible is not None:
            eligible = np.asarray(eligible, dtype=bool)
            if eligible.shape != (self._count,):
                raise ValueError(f"eligible has shape {eligible.shape}, expected ({self._count},)")

        def held(tid: int) -> bool:
            rows = self._rows(tid)
            return bool(rows.size) if eligible is None else bool(eligible[rows].any())

        def ids(word: str) -> set[int]:
            terms = name_terms(word)
            out = {self._vocab[t] for t in terms if t in self._vocab}
            return out | set(self._joined_ids().get(joined(terms[0]), ())) if terms else out

        return tuple(w for w in words if not any(held(t) for t in ids(w)))

    def _rows(self, tid: int) -> np.ndarray:
        """The rows that hold term ``tid`` (its postings)."""
        return self._indices[self._indptr[tid]:self._indptr[tid + 1]]

    def _joined_ids(self) -> dict[str, tuple[int, ...]]:
        if self._joined is None:
            by: dict[str, list[int]] = {}
            for term, tid in self._vocab.items():
                by.setdefault(joined(term), []).append(tid)
            self._joined = {k: tuple(v) for k, v in by.items()}
        return self._joined

    # ---- persistence -------------------------------------------------------

    def save(self, dir: Path) -> None:
        dir = Path(dir)
        dir.mkdir(parents=True, exist_ok=True)
        if self._bm25 is not None:
            self._bm25.save(dir, show_progress=False)
        meta = {
            "format": FORMAT_VERSION,
            "tokenizer": TOKENIZER_VERSION,
            "count": self._count,
            "vocab_size": len(self._vocab),
            "empty": self._bm25 is None,
            "k1": self._k1,
            "b": self._b,
        }
        (dir / META_NAME).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, dir: Path, *, check_tokenizer: bool = True) -> LexicalIndex:
        dir = Path(dir)
        meta_path = dir / META_NAME
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise IndexCorrupt(f"lexical index: {meta_path} is missing") from e
        except (OSError, ValueError) as e:
            raise IndexCorrupt(f"lexical index: {meta_path} is unreadable: {e}") from e
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise IndexCorrupt(f"lexical index: {meta_path} has unknown format {meta!r:.80}")
        if check_tokenizer and meta.get("tokenizer") != TOKENIZER_VERSION:
            raise IndexCorrupt(
                f"lexical index was built with tokenizer {meta.get('tokenizer')!r}, "
                f"this version uses {TOKENIZER_VERSION!r}: rebuild the index"
            )
        try:
            count = int(meta["count"])
            vocab_size = int(meta["vocab_size"])
            k1, b = float(meta["k1"]), float(meta["b"])
            empty = bool(meta["empty"])
        except (KeyError, TypeError, ValueError) as e:
            raise IndexCorrupt(f"lexical index: {meta_path} lacks a field: {e}") from e
        if empty:
            return cls(None, {}, count, k1, b)
        needed = ["data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy",
                  "vocab.index.json", "params.index.json"]
        missing = [n for n in needed if not (dir / n).is_file()]
        if missing:
            raise IndexCorrupt(f"lexical index in {dir}: missing {', '.join(missing)}")
        try:
            bm25 = bm25s.BM25.load(dir, show_progress=False, allow_pickle=False)
        except Exception as e:  # bm25s raises whatever numpy/json raise on bad bytes
            raise IndexCorrupt(f"lexical index in {dir} is unreadable: {type(e).__name__}: {e}") from e
        _validate(bm25, dir, count, vocab_size)
        return cls(bm25, bm25.vocab_dict, count, k1, b)


def _validate(bm25: bm25s.BM25, dir: Path, count: int, vocab_size: int) -> None:
    def bad(msg: str) -> IndexCorrupt:
        return IndexCorrupt(f"lexical index in {dir}: {msg}")

    vocab = bm25.vocab_dict
    if not isinstance(vocab, dict) or len(vocab) != vocab_size:
        raise bad(f"vocabulary has {len(vocab) if isinstance(vocab, dict) else '?'} terms, manifest says {vocab_size}")
    values = list(vocab.values())
    if not all(isinstance(v, int) for v in values) or sorted(values) != list(range(vocab_size)):
        raise bad("vocabulary ids are not 0..n-1")
    sc = bm25.scores
    data, indices, indptr = sc["data"], sc["indices"], sc["indptr"]
    if sc.get("num_docs") != count:
        raise bad(f"bm25s params say {sc.get('num_docs')} documents, manifest says {count}")
    for name, arr in (("data", data), ("indices", indices), ("indptr", indptr)):
        if not isinstance(arr, np.ndarray) or arr.ndim != 1:
            raise bad(f"{name} array is not one-dimensional")
    if data.dtype.kind != "f" or indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise bad("score arrays have wrong dtypes")
    if indptr.shape[0] != vocab_size + 1 or data.shape != indices.shape:
        raise bad("score matrix shape does not match the vocabulary")
    if indptr[0] != 0 or indptr[-1] != data.shape[0] or np.any(np.diff(indptr) < 0):
        raise bad("score matrix pointers are inconsistent")
    if indices.size and (indices.min() < 0 or indices.max() >= count):
        raise bad("score matrix names rows outside the corpus")
    if not np.all(np.isfinite(data)):
        raise bad("score matrix holds non-finite values")
