"""The learned passage order: the top fused candidates re-ordered by a linear score of features
that hold for any corpus, fitted on training questions (``models/passage_order/fit.py``).

RRF sees ranks only. Two things it cannot see decide many questions on long manuals:

- how close the passage's *best statement* is to the question (``best_unit_cosine``: the
  answer units' vectors, stored by the build, against the question's; a long section whose one
  sentence answers scores low as a whole passage but high here),
- how much of the question's content the passage holds (``lexical_cover``: the share of the
  question's terms in its text, context and heading path; an identifier also by its words,
  engine.lang.words.term_held),

next to the passage's own cosine and its fused rank (``1 / (rank_c + rank)``). (Not the cosine of
its heading path alone, embedded as a passage: tried 2026-12-03 on WLED + ZMK train, 150
questions through the shipped order, the standardised heading cosine added to the order's score
at weights .1 to 1.2: R@1 .787 / .693 at 0 falls at every weight, to .613 / .533 at 1.2, with the
query encoder's or the embedder's vector; the passage's own vector already reads its headings.)
The cosines are those of one vector of the question, named by the model (``question_vector``):
the query encoder's (``"query_encoder"``, models/query_encoder/: trained to find the passage a
question asks for, where the embedder's own vector is trained to find paraphrases) or the
embedder's own (``"embedder"``, the order fitted before the query encoder existed). The score is
``w · (x - mean) / scale``; its weights, the features' names and ``rank_c`` are a fact about the
models they were fitted with (``embedder_checksum``, and ``query_encoder_checksum`` for the query
encoder's vector), kept in ``models/passage_order/passage_order.json``. Only the first
``retrieval.rerank_input`` fused candidates are re-ordered; the trace records the result as the
``order`` stage. Numpy only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.fitted import load_fitted
from engine.lang.words import term_held, terms
from engine.types import Chunk

__all__ = ["ORDER_FEATURES", "QUESTION_VECTORS", "OrderModel", "PassageOrder", "QuestionVectors",
           "candidate_features", "load_order_model", "snapshot_features"]

ORDER_FEATURES = ("fused_rank", "cosine", "best_unit_cosine", "lexical_cover")
QUESTION_VECTORS = ("embedder", "query_encoder")  # whose vector of the question the cosines are of

# chunk -> the vectors of its answer units that the build stored (may be empty: not built yet)
UnitVectors = Callable[[Chunk], np.ndarray]


@dataclass(frozen=True, slots=True)
class QuestionVectors:
    """A question's vectors from the search's one embedding run: the embedder's own (``own``) and
    the query encoder's (``tuned``; None without one); ``content`` / ``tuned_content``: the same of
    the question less the devices it names (engine.lang.codes.content_question; None when it names
    none). Inside one device's manual every passage shares the device's name, so the question less
    it is what tells them apart."""

    own: np.ndarray
    tuned: np.ndarray | None = None
    content: np.ndarray | None = None
    tuned_content: np.ndarray | None = None

    def for_order(self, question_vector: str) -> np.ndarray | None:
        """The vector whose cosines an order fitted on ``question_vector`` reads (None: the query
        encoder's, and there is none)."""
        if question_vector == "query_encoder":
            return self.tuned if self.tuned_content is None else self.tuned_content
        return self.own if self.content is None else self.content


def candidate_features(question: str, qvec: np.ndarray, chunks: Sequence[Chunk], cosines: Sequence[float],
                       unit_vectors: UnitVectors, rank_c: float) -> np.ndarray:
    """``[len(chunks), len(ORDER_FEATURES)]`` for candidates in fused order (rank 1 first);
    ``cosines``: each passage's cosine with the question. Without stored unit vectors a passage's
    best unit cosine is its own cosine."""
    q_terms = terms(question)
    rows = []
    for rank, (chunk, cos) in enumerate(zip(chunks, cosines), 1):
        uv = unit_vectors(chunk)
        best = float(np.max(uv @ qvec)) if len(uv) else float(cos)
        have = terms(chunk.search_text)  # its text, context and heading path
        cover = sum(1 for t in q_terms if term_held(t, have)) / len(q_terms) if q_terms else 0.0
        rows.append((1.0 / (rank_c + rank), float(cos), best, cover))
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(ORDER_FEATURES))


def snapshot_features(snap, question: str, qvec: np.ndarray, chunks: Sequence[Chunk],
                      unit_vectors: UnitVectors, rank_c: float) -> np.ndarray:
    """``candidate_features`` of ``chunks`` (in fused order) with their cosines read from the
    snapshot's vectors: what the order stage scores, and what its fit learns from."""
    cosines = snap.vectors.matrix[[snap.by_id[c.id] for c in chunks]] @ qvec
    return candidate_features(question, qvec, chunks, cosines, unit_vectors, rank_c)


@dataclass(frozen=True, slots=True)
class OrderModel:
    """A fitted linear order: score = ((x - mean) / scale) · weights."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    rank_c: float
    embedder_checksum: str
    source: str = ""
    record: Mapping | None = None  # how it was fitted (command, questions, cross-validated numbers)
    question_vector: str = "embedder"  # one of QUESTION_VECTORS: whose cosines the features hold
    query_encoder_checksum: str = ""  # engine.models.query_encoder_identity, when question_vector names it

    def scores(self, features: np.ndarray) -> np.ndarray:
        return ((features - self.mean) / self.scale) @ self.weights

    def describe(self) -> str:
        return "learned passage order (" + ", ".join(
            f"{n} {w:+.2f}" for n, w in zip(self.names, self.weights)) + ")" + (
            "; cosines of the query encoder's vector" if self.question_vector == "query_encoder" else "")

    def to_json(self) -> dict:
        d = {"format": 1 if self.question_vector == "embedder" else 2, "features": list(self.names),
             "mean": self.mean.tolist(), "scale": self.scale.tolist(), "weights": self.weights.tolist(),
             "rank_c": self.rank_c, "embedder_checksum": self.embedder_checksum}
        if self.question_vector != "embedder":
            d |= {"question_vector": self.question_vector, "query_encoder_checksum": self.query_encoder_checksum}
        return d | {"source": self.source, "record": dict(self.record or {})}

    @classmethod
    def from_json(cls, d: Mapping) -> OrderModel:
        """Format 1: cosines of the embedder's vector; format 2 names the question's vector."""
        if d.get("format") not in (1, 2):
            raise ValueError(f"passage order model: unknown format {d.get('format')!r}")
        question_vector = str(d["question_vector"]) if d["format"] == 2 else "embedder"
        if question_vector not in QUESTION_VECTORS:
            raise ValueError(f"passage order model: question_vector {question_vector!r}, "
                             f"not one of {list(QUESTION_VECTORS)}")
        encoder = str(d["query_encoder_checksum"]) if question_vector == "query_encoder" else ""
        names = tuple(d["features"])
        if names != ORDER_FEATURES:
            raise ValueError(f"passage order model: features {list(names)}, this version computes "
                             f"{list(ORDER_FEATURES)}")
        arrays = [np.asarray(d[k], dtype=np.float64) for k in ("mean", "scale", "weights")]
        if any(a.shape != (len(names),) for a in arrays) or not np.all(arrays[1] > 0):
            raise ValueError("passage order model: arrays do not match its feature list")
        return cls(names, *arrays, float(d["rank_c"]), str(d["embedder_checksum"]), str(d.get("source", "")),
                   dict(d.get("record") or {}), question_vector, encoder)


def load_order_model(path: Path) -> OrderModel:
    """Read a fitted order; ``ValueError`` / ``OSError`` name what is wrong."""
    return load_fitted(path, OrderModel.from_json)


class PassageOrder:
    """One library's learned passage order: the fitted model, read on first use, or why there
    is none (``status``); and where the answer units' stored vectors come from."""

    def __init__(self, path: Path | None, embedder_checksum: str, unit_vectors: UnitVectors,
                 model: OrderModel | None = None, query_encoder_checksum: str = ""):
        """``query_encoder_checksum``: the library's query encoder ('' = none)."""
        self.path = path
        self.embedder_checksum = embedder_checksum
        self.query_encoder_checksum = query_encoder_checksum
        self.unit_vectors = unit_vectors
        self._model = model
        self._why = ""  # why there is no model ('' = not read yet, or read)
        self._lock = threading.Lock()

    def model(self) -> OrderModel | None:
        with self._lock:
            if self._model is None and not self._why:
                self._model, self._why = self._load()
            return self._model

    @property
    def status(self) -> str:
        m = self.model()
        return f"learned: {m.source}" if m is not None else self._why

    def _load(self) -> tuple[OrderModel | None, str]:
        if self.path is None:
            return None, "retrieval.passage_order = ''"
        if not self.path.is_file():
            return None, f"no passage order model at {self.path}"
        try:
            model = load_order_model(self.path)
        except (OSError, ValueError) as e:
            return None, f"passage order model unreadable ({e})"
        if model.embedder_checksum != self.embedder_checksum:
            return None, f"{self.path} was fitted with another embedder"
        if model.question_vector == "query_encoder" and model.query_encoder_checksum != self.query_encoder_checksum:
            return None, (f"{self.path} was fitted with " + (
                "another query encoder" if self.query_encoder_checksum else "the query encoder, which is off "
                "(models.query_encoder = '')"))
        return model, ""
