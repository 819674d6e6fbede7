"""A deterministic stand-in embedder for tests (no model files): hashed character 3-grams."""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import Sequence

import numpy as np


class HashEmbedder:
    """Deterministic stand-in embedder for tests: hashed character 3-grams of words.

    Not a model: similar spellings give similar vectors, which is all the tests need.
    """

    model_id = "test-hash"
    checksum = "test-hash-v1"
    dim = 384
    pools_spans = True  # embed_passages_pooled: a span's vector is the vector of its own text

    def __init__(self, delay_s: float = 0.0):
        self.delay_s = delay_s
        self.passage_calls = 0
        self.passages_embedded = 0

    def count_tokens(self, text: str) -> int:
        return len(re.findall(r"\w+|[^\w\s]", text))

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            w = f"#{word}#"
            for i in range(max(1, len(w) - 2)):
                h = zlib.crc32(w[i:i + 3].encode())
                v[h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        n = float(np.linalg.norm(v))
        if n == 0:
            v[0] = 1.0
            n = 1.0
        return v / n

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passage_calls += 1
        self.passages_embedded += len(texts)
        if self.delay_s:
            time.sleep(self.delay_s * len(texts))
        return self.embed_queries(texts)

    def embed_passages_pooled(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]):
        vecs = self.embed_passages(texts)
        return vecs, [[self._vec(t[a:b]) for a, b in sp] for t, sp in zip(texts, spans)]


class TunedHash:
    """A hash embedder with a planted "query encoder" (named ``checksum``, as
    ``Embedder.query_checksum``) whose vector of any question is the vector of ``target``'s text:
    its list, or the cosines read off it, must show where the query encoder's vector reaches."""

    def __init__(self, inner: HashEmbedder, target: str, checksum: str = "enc-1"):
        self._inner, self._target, self.query_checksum = inner, target, checksum

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def tuned_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.repeat(self._inner.embed_passages([self._target]), len(texts), axis=0)
