"""Answerability: the probability that the evidence answers the question, learned, not listed.

One calibrated number per question, from features that hold for any corpus:

- how close the evidence is in the embedding view (best unit and best passage cosine, the
  passage's margin over the runner-up, and how far the best unit and passage stand above the
  crowd of the vector branch's list: its mean cosine past rank ``CROWD_FROM``; cosines run higher
  or lower with the library's style and the question's length, the crowd with them),
- how much of the question's content the evidence holds in the lexical view (share of the
  question's terms in the best passage and in the best unit),
- whether the two branches agree (the vector branch's first passage in the lexical list), and
  how much of the question the lexical branch can see at all (engine.index.lexical's ``sight``: low
  for a question in another language than the manuals, whose cosines run lower too); the
  lexical views count words for a same-language question only (between two languages shared
  words say nothing, and in a library of several languages a question's words in a passage of
  its own language about something else are no evidence for an answer in another), codes and
  numbers in any language,
- whether the question is in another language than the first passage (engine.lang.text's
  ``question_language``; 0.5 when unsure),
- the cross-encoder's logits for the first context passages, when a cross-encoder is built,
  counted for a same-language question only (the shipped one was trained on same-language
  pairs: a cross-lingual pair scores low whether or not it answers),
- a code the question names that no passage holds, an answer type asked for and not given
  (engine.answer.answertype: one feature among the others, never the rule),
- a name the question gives (a product, a board, a brand: engine.lang.names, by its shape) that no
  eligible passage of the library mentions at all (``Trace.unknown_names``): a question about the
  "Creality Sonic Pad" is not answered by the passages about the neighbouring topic,
- the question's own wording (``question_prior``, engine.answer.question_prior: a logistic model of
  its hashed words and character n-grams, fitted with the rest on the manual sets' train questions,
  stored in the same file): some kinds of question manuals answer more often than others; and the
  same read through the question's embedding (``question_vector_prior``: a direction in the
  embedder's space, fitted on the same questions), which carries a kind of question across
  languages and wordings no training question used.

A logistic regression over those (standardised) features gives the probability; its weights,
the feature names and the abstention threshold are a fact about the models they were fitted
with, stored in ``models/answerability/answerability.json`` by ``models/answerability/fit.py``
(training questions only: the train splits of the manual sets and of Wikipedia QA, each also
asked with its gold passages removed, which makes realistic "not in these documents" cases). Two
variants are fitted, with and without the cross-encoder's features, so a machine without the reranker
still abstains by a learned rule; the cross-encoder's is used when the rerank stage ran (its
logits are at hand) or ``answer.answerability_cross_encoder`` asks for it. Numpy only at run time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.answer.question_prior import QuestionPrior, VectorPrior
from engine.fitted import load_fitted
from engine.lang.language import question_language
from engine.lang.words import terms
from engine.types import Chunk, SearchResult

__all__ = ["AnswerabilityModel", "BASE_FEATURES", "CE_FEATURES", "CE_PASSAGES", "PRIOR_FEATURES", "features",
           "load_model"]

BASE_FEATURES = (
    "unit_cos", "passage_cos", "passage_margin", "lex_cover_top", "lex_cover_best", "unit_overlap",
    "branch_agree", "lexical_found", "lexical_sight", "cross_lingual", "missing_code", "type_asked",
    "type_missing", "question_terms", "name_unknown", "unit_gap", "passage_gap",
)
CE_FEATURES = ("ce_top", "ce_first", "ce_margin")  # counted for same-language pairs only (below)
# the fitted QuestionPrior's and VectorPrior's logits (AnswerabilityModel.with_prior)
PRIOR_FEATURES = ("question_prior", "question_vector_prior")
# the lexical view of the evidence, counted for a same-language question only (below); the lexical
# covers count the question's words that way too, and its codes and numbers in any language
LEXICAL_FEATURES = ("unit_overlap", "branch_agree")
CE_PASSAGES = 3  # context passages the cross-encoder scores for answerability
CROWD_FROM = 10  # the vector branch's ranks from here on are the crowd the best passages stand out of


def features(question: str, result: SearchResult, assessment, ce_scores: Sequence[float] | None,
             device_words: set[str] = frozenset(), sight: float = 1.0) -> dict[str, float]:
    """The features of one question's evidence (``assessment``: engine.answer.Assessment)."""
    trace = result.trace
    vec = trace.stage("vector") if trace else None
    lex = trace.stage("lexical") if trace else None
    vec_scores = [r.score for r in vec.ranked] if vec else []
    q_terms = (terms(question) - set(device_words)) or terms(question)
    hits = [h.chunk for h in result.hits]
    cross = _cross_lingual(question, hits[0] if hits else None)
    covers = [_cover(q_terms, c, 1.0 - cross) for c in hits] or [0.0]
    clean = [s for s in assessment.units if not s.flagged]
    crowd = vec_scores[CROWD_FROM - 1:] or vec_scores
    crowd_cos = float(np.mean(crowd)) if crowd else 0.0
    f = {
        "unit_cos": assessment.best_cosine,
        "passage_cos": vec_scores[0] if vec_scores else 0.0,
        "passage_margin": vec_scores[0] - vec_scores[1] if len(vec_scores) > 1 else 0.0,
        "lex_cover_top": covers[0],
        "lex_cover_best": max(covers),
        "unit_overlap": max((s.overlap for s in clean), default=0.0),
        "branch_agree": _agreement(lex, vec),
        "lexical_found": min(len(lex.ranked), 10) / 10 if lex else 0.0,
        "lexical_sight": sight,
        "missing_code": 1.0 if assessment.missing_codes else 0.0,
        "type_asked": 1.0 if assessment.expected else 0.0,
        "type_missing": 1.0 if assessment.type_missing else 0.0,
        "question_terms": math.log1p(len(q_terms)),
        "name_unknown": 1.0 if trace is not None and trace.unknown_names else 0.0,
        "unit_gap": assessment.best_cosine - crowd_cos if vec_scores else 0.0,
        "passage_gap": vec_scores[0] - crowd_cos if vec_scores else 0.0,
    }
    f["cross_lingual"] = cross
    for name in LEXICAL_FEATURES:  # shared words are no evidence between two languages (nor their absence)
        f[name] *= 1.0 - cross
    if ce_scores is not None and len(ce_scores):
        ce = [float(x) * (1.0 - cross) for x in ce_scores]
        top2 = sorted(ce, reverse=True)[:2]
        f["ce_top"] = top2[0]
        f["ce_first"] = ce[0]
        f["ce_margin"] = top2[0] - top2[1] if len(top2) > 1 else 0.0
    return f


def _cross_lingual(question: str, chunk: Chunk | None) -> float:
    """1.0 when the question's language is known and is not the passage's, 0.0 when it is,
    0.5 when either is unknown."""
    q = question_language(question)
    p = (chunk.language if chunk is not None else "").split("-")[0].lower()
    if not q or not p:
        return 0.5
    return 0.0 if q == p else 1.0


def _cover(q_terms: set[str], chunk: Chunk, word_weight: float = 1.0) -> float:
    """Share of the question's terms in the passage: a code or number (a term with a digit or an
    underscore: ``err_pv_overvolt``, ``tmc2209``) counts in any language, a word with
    ``word_weight`` (0 when the question's language is not the passage's)."""
    if not q_terms:
        return 0.0
    have = terms(chunk.search_text)  # its text, context and heading path
    shared = q_terms & have
    codes = sum(1 for t in shared if _is_code(t))
    return (codes + word_weight * (len(shared) - codes)) / len(q_terms)


def _is_code(term: str) -> bool:
    return "_" in term or any(ch.isdigit() for ch in term)


def _agreement(lex, vec) -> float:
    """1/rank of the vector branch's first passage in the lexical list (0 when absent)."""
    if not lex or not vec or not vec.ranked:
        return 0.0
    rank = lex.rank_of(vec.ranked[0].chunk_id)
    return 1.0 / rank if rank else 0.0


@dataclass(frozen=True, slots=True)
class Variant:
    """One fitted logistic regression: P = sigmoid(w · (x - mean) / scale + b)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float  # abstain below this probability

    def probability(self, feats: Mapping[str, float]) -> float:
        x = np.array([feats[n] for n in self.names], dtype=np.float64)
        z = float(((x - self.mean) / self.scale) @ self.weights + self.bias)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def to_json(self) -> dict:
        return {"features": list(self.names), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "weights": self.weights.tolist(), "bias": self.bias, "threshold": self.threshold}

    @classmethod
    def from_json(cls, d: Mapping) -> Variant:
        names = tuple(d["features"])
        arrays = [np.asarray(d[k], dtype=np.float64) for k in ("mean", "scale", "weights")]
        if any(a.shape != (len(names),) for a in arrays) or not np.all(arrays[1] > 0):
            raise ValueError("answerability model: arrays do not match its feature list")
        unknown = set(names) - set(BASE_FEATURES) - set(CE_FEATURES) - set(PRIOR_FEATURES)
        if unknown:
            raise ValueError(f"answerability model: unknown features {sorted(unknown)}")
        return cls(names, *arrays, float(d["bias"]), float(d["threshold"]))


@dataclass(frozen=True, slots=True)
class AnswerabilityModel:
    """The fitted variants: ``with_ce`` when the cross-encoder's scores are at hand, else ``base``."""

    base: Variant
    with_ce: Variant | None
    embedder_checksum: str  # the features are cosines of this embedder's vectors
    reranker_checksum: str  # ... and logits of this cross-encoder (with_ce)
    source: str = ""
    prior: QuestionPrior | None = None  # the question_prior feature's model, when the variants use it
    vector_prior: VectorPrior | None = None  # the question_vector_prior feature's, likewise

    def with_prior(self, question: str, feats: Mapping[str, float],
                   question_vector: np.ndarray | None = None) -> dict[str, float]:
        """``feats`` and the priors' logits: the question prior's for ``question``, the vector
        prior's for ``question_vector`` (its query vector; needed when the model has one)."""
        out = dict(feats)
        if self.prior is not None:
            out["question_prior"] = self.prior.logit(question)
        if self.vector_prior is not None:
            if question_vector is None:
                raise ValueError("answerability model: its question vector prior needs the question's vector")
            out["question_vector_prior"] = self.vector_prior.logit(question_vector)
        return out

    def variant(self, feats: Mapping[str, float], reranker_checksum: str | None) -> Variant:
        if (self.with_ce is not None and reranker_checksum == self.reranker_checksum
                and all(n in feats for n in self.with_ce.names)):
            return self.with_ce
        return self.base

    def to_json(self) -> dict:
        return {"format": 1, "embedder_checksum": self.embedder_checksum,
                "reranker_checksum": self.reranker_checksum, "source": self.source,
                "base": self.base.to_json(), "with_ce": self.with_ce.to_json() if self.with_ce else None,
                "question_prior": self.prior.to_json() if self.prior is not None else None,
                "question_vector_prior": self.vector_prior.to_json() if self.vector_prior is not None else None}

    @classmethod
    def from_json(cls, d: Mapping) -> AnswerabilityModel:
        if d.get("format") != 1:
            raise ValueError(f"answerability model: unknown format {d.get('format')!r}")
        base = Variant.from_json(d["base"])
        with_ce = Variant.from_json(d["with_ce"]) if d.get("with_ce") else None
        prior = QuestionPrior.from_json(d["question_prior"]) if d.get("question_prior") else None
        vector_prior = VectorPrior.from_json(d["question_vector_prior"]) if d.get("question_vector_prior") else None
        for name, have, what in (("question_prior", prior, "question prior"),
                                 ("question_vector_prior", vector_prior, "question vector prior")):
            if have is None and any(name in v.names for v in (base, with_ce) if v is not None):
                raise ValueError(f"answerability model: a variant uses {name} but the file has no {what}")
        return cls(base, with_ce, str(d["embedder_checksum"]), str(d.get("reranker_checksum", "")),
                   str(d.get("source", "")), prior, vector_prior)


def load_model(path: Path) -> AnswerabilityModel:
    """Read a fitted model; ``ValueError`` / ``OSError`` name what is wrong."""
    return load_fitted(path, AnswerabilityModel.from_json)
