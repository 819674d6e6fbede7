"""The question's own wording as one piece of evidence for answerability, learned, not listed.

Manuals answer some kinds of questions more often than others: "my printer stops at the second
layer, why?" is most often answered by a troubleshooting section, "how much does the toolboard
cost?" or "what is the maximum cable length at 1 Mbit?" most often is not. ``QuestionPrior`` is a
logistic model over the question's hashed words and character 2- to 4-grams (so it reads any
language and script the same way, with no word list), fitted by ``models/answerability/fit.py`` on
the manual sets' train questions (answerable against no-answer). Its logit is the answerability
feature ``question_prior``; the evidence features still decide (the prior is one weighted input
of the logistic regression in engine.answer.answerability, never the rule), and a question with
strong evidence is answered however it is worded.

``VectorPrior`` reads the same thing through the question's embedding (the search's query
vector, so it costs nothing more): a logistic direction in the embedder's space, fitted on the
same questions. Where the hashed n-grams know only the wordings and scripts they were fitted on,
the embedding puts "wie viel kostet", "how much does ... cost" and "얼마" near each other, so a
question in a language or a wording no training question used still gets its kind's prior. Its
logit is the feature ``question_vector_prior``. Numpy and zlib only.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

__all__ = ["DIM", "NGRAMS", "QuestionPrior", "VectorPrior", "question_indices", "question_matrix"]

DIM = 16384  # hashed feature slots
NGRAMS = (2, 3, 4)  # character n-grams of the lower-cased question, padded with a space each side
_WORD = re.compile(r"\w+")


def question_indices(question: str, dim: int = DIM, ngrams: tuple[int, ...] = NGRAMS) -> np.ndarray:
    """The distinct hashed slots of the question's words and character n-grams (CRC-32, stable
    across processes and machines, unlike Python's ``hash``)."""
    q = question.lower()
    slots = {zlib.crc32(b"w" + w.encode("utf-8")) % dim for w in _WORD.findall(q)}
    padded = f" {q} "
    for n in ngrams:
        slots.update(zlib.crc32(b"c" + padded[i:i + n].encode("utf-8")) % dim for i in range(len(padded) - n + 1))
    return np.fromiter(sorted(slots), dtype=np.int64, count=len(slots))


def question_matrix(questions: list[str], dim: int = DIM, ngrams: tuple[int, ...] = NGRAMS) -> np.ndarray:
    """One row per question: 1/sqrt(n) on each of its n slots (unit length), for the fit."""
    x = np.zeros((len(questions), dim), dtype=np.float32)
    for row, q in enumerate(questions):
        idx = question_indices(q, dim, ngrams)
        if len(idx):
            x[row, idx] = 1.0 / np.sqrt(len(idx))
    return x


@dataclass(frozen=True, slots=True)
class QuestionPrior:
    """logit = weights · x + bias, x the question's unit-length hashed slots (``question_matrix``)."""

    weights: np.ndarray  # [dim]
    bias: float
    ngrams: tuple[int, ...] = NGRAMS

    def logit(self, question: str) -> float:
        idx = question_indices(question, len(self.weights), self.ngrams)
        if not len(idx):
            return self.bias
        return float(self.weights[idx].sum() / np.sqrt(len(idx)) + self.bias)

    def to_json(self) -> dict:
        """The weights as little-endian float32, base64 (one line of the model file, not 16k)."""
        return {"dim": len(self.weights), "ngrams": list(self.ngrams), "bias": self.bias,
                "weights_f32_base64": _to_base64(self.weights)}

    @classmethod
    def from_json(cls, d: Mapping) -> QuestionPrior:
        weights = _from_base64(d["weights_f32_base64"], int(d["dim"]), "question prior", "weights")
        ngrams = tuple(int(n) for n in d["ngrams"])
        if not all(n > 0 for n in ngrams):
            raise ValueError(f"question prior: bad n-gram sizes {list(ngrams)}")
        return cls(weights, float(d["bias"]), ngrams)


@dataclass(frozen=True, slots=True)
class VectorPrior:
    """logit = weights · (v - mean) / scale + bias, v the question's embedding (its query vector)."""

    mean: np.ndarray  # [dim] of the embedder
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def logit(self, question_vector: np.ndarray) -> float:
        v = np.asarray(question_vector, dtype=np.float64).reshape(-1)
        if v.shape != self.mean.shape:
            raise ValueError(f"question vector prior: a vector of {v.shape[0]} dimensions, expected {len(self.mean)}")
        return float(((v - self.mean) / self.scale) @ self.weights + self.bias)

    def to_json(self) -> dict:
        return {"dim": len(self.weights), "bias": self.bias,
                **{f"{k}_f32_base64": _to_base64(getattr(self, k)) for k in ("mean", "scale", "weights")}}

    @classmethod
    def from_json(cls, d: Mapping) -> VectorPrior:
        dim = int(d["dim"])
        mean, scale, weights = (_from_base64(d[f"{k}_f32_base64"], dim, "question vector prior", k)
                                for k in ("mean", "scale", "weights"))
        if not np.all(scale > 0):
            raise ValueError("question vector prior: scale is not all positive")
        return cls(mean, scale, weights, float(d["bias"]))


def _to_base64(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _from_base64(text: str, dim: int, what: str, name: str) -> np.ndarray:
    """Little-endian float32 values, base64: ``dim`` of them, all finite, else ``ValueError``."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{what}: {name} are not base64 ({e})") from None
    if len(raw) != 4 * dim:
        raise ValueError(f"{what}: {name} do not match its dim")
    values = np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what}: {name} are not all finite")
    return values
