"""When to say "not found in these documents": the learned answerability verdict
(engine.answer.answerability) or, without a fitted model, the hand rule (evidence score below a
threshold, no unit, or none of the attributes asked for); and the look past the final context
for a passage giving an attribute the question asks for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.answer.answerability import CE_PASSAGES, features
from engine.answer.answertype import ANSWER_TYPES, unanswered
from engine.answer.scoring import SCORED_PASSAGES, Assessment, _off_device, device_vocabulary, question_vector
from engine.answer.units import _typed_piece
from engine.config import Config
from engine.lang.cues import injection_reason
from engine.lang.units import split_units
from engine.types import Chunk, SearchResult

# Calibrated on samples/questions.tsv (66 answerable, 10 no-answer; e5-small) with the scores
# below (rank prior, device words left out of the lexical share).
# Without a reranker: evidence of answerable questions min 0.777 / then 0.861, 0.866, 0.869 /
# p50 0.958; of no-answer questions min 0.892 / p50 0.932 / max 0.973.
# With reranker run 3 (not shipped): answerable questions whose gold passage is in the context
# min 0.839, 0.854, 0.872; no-answer min 0.909. With run 5 (shipped, retrieval.rerank off by
# default) switched on: answerable 1/66, no-answer 10/10 on the samples.
# piaf-fr dev (bench/answers.py --dev piaf-fr --limit 100, all answerable): min 0.858 / p5 0.877.
# 0.83 answers every answerable question whose gold passage is in the context, with or without
# the reranker. It abstains on 1/66 answerable questions without the reranker (a retrieval miss)
# and on 0/10 no-answer questions: the embedder does NOT separate near-miss no-answer questions
# (they score higher than many answerable ones). Neither did (measured, same sets): the cosine of
# the question minus its device names (no-answer 0.79-0.88, answerable 0.79-0.90), its margin
# over the median unit (0.019-0.053 vs 0.014-0.12), per content-term best cosines (min 0.78-0.84
# vs 0.73-0.85), the lexical share of content terms in the best unit (0-0.5 vs 0-1; paraphrase
# and cross-lingual answerable questions score 0) nor the reranker's top score (no-answer
# 7.4-14.0, answerable 1.8-17.6). Only questions naming a code absent from the evidence abstain
# (W_MISSING). What separates them is the expected answer type (engine.answer.answertype): each
# sample no-answer question asks for an attribute (weight, warranty, IP rating, ...) that no
# passage about its device states: 10/10 abstain, answerable 0/66 (with W_TYPE and the look
# past the final context for a missing attribute). Recalibrate the threshold when a reranker
# that separates them exists.
CALIBRATED_THRESHOLD = 0.83
# passages past the final context that may be added when they give an attribute asked for
# (engine.answer.answertype) that the context lacks; looked for within the reranker's input window
MAX_TYPED_EXTRA = 2


def abstains(a: Assessment, threshold: float) -> bool:
    """The abstention rule: weak evidence, no units, or none of the attributes asked for."""
    return a.evidence < threshold or not a.units or a.type_missing


def abstain_threshold(config: Config) -> float:
    t = config.answer.abstain_threshold
    return t if t != 0.0 else CALIBRATED_THRESHOLD


@dataclass(frozen=True, slots=True)
class Verdict:
    """The learned answerability of one question's evidence (engine.answer.answerability)."""

    probability: float
    threshold: float
    variant: str  # "with cross-encoder" or "base"
    features: tuple[tuple[str, float], ...]

    @property
    def abstain(self) -> bool:
        return self.probability < self.threshold

    @property
    def note(self) -> str:
        return f"answerability {self.probability:.2f} (abstains below {self.threshold:.2f}; {self.variant})"

    @property
    def why(self) -> str:
        return (f"the closest passages do not answer it: answerability {self.probability:.2f} "
                f"below {self.threshold:.2f}; {self.variant}")


def evidence_features(question: str, result: SearchResult, library, a: Assessment,
                      with_ce: bool = True) -> dict[str, float]:
    """engine.answer.answerability.features for this evidence, with the cross-encoder's logits for the
    first context passages when ``with_ce`` and the library has a cross-encoder."""
    chunks = [h.chunk for h in result.hits[:SCORED_PASSAGES]]
    device_words = device_vocabulary(library, chunks)[0] if chunks else set()
    scorer = getattr(library, "cross_scores", None)  # test doubles may have no cross-encoder
    ce = scorer(question, chunks[:CE_PASSAGES]) if (with_ce and scorer is not None and chunks) else None
    sight = getattr(library, "lexical_sight", lambda q: 1.0)(question)
    return features(question, result, a, ce, device_words, sight)


def answerability(question: str, result: SearchResult, library, a: Assessment, config: Config) -> Verdict | None:
    """The learned verdict, or None when no answerability model is configured (the hand rule
    ``abstains`` then applies)."""
    model = getattr(library, "answerability_model", None)
    model = model() if callable(model) else None
    if model is None or config.answer.abstain_threshold != 0.0:  # an explicit threshold wins
        return None
    use_ce = model.with_ce is not None and (config.retrieval.rerank or config.answer.answerability_cross_encoder)
    checksum = getattr(library, "reranker_checksum", lambda: None)() if use_ce else None
    qvec = None
    if model.vector_prior is not None:  # the assessment's query vector, else the search's for this question
        qvec = a.query_vector if a.query_vector is not None else question_vector(
            library, question, result.query_vector if result.question == question else None)
    feats = model.with_prior(question, evidence_features(question, result, library, a,
                                                         with_ce=use_ce and checksum == model.reranker_checksum),
                             qvec)
    variant = model.variant(feats, checksum)
    p = variant.probability(feats)
    threshold = config.answer.answerability_threshold
    threshold = variant.threshold if threshold < 0 else threshold
    name = "with cross-encoder" if variant is model.with_ce else "base"
    return Verdict(p, threshold, name, tuple((n, round(feats[n], 4)) for n in variant.names))


def _typed_candidates(question: str, a: Assessment, result: SearchResult, library) -> list[tuple[Chunk, int]]:
    """Passages ranked past the final context (within the reranker's input) that give an
    attribute the question asks for and the context lacks, about the device it names:
    at most ``MAX_TYPED_EXTRA``, best rank first."""
    stage = (result.trace.stage("rerank") or result.trace.stage("fused")) if result.trace else None
    if stage is None:
        return []
    missing = [t for t in ANSWER_TYPES if t.name in a.unanswered]
    context = [h.chunk for h in result.hits]
    seen = {c.id for c in context}
    out: list[tuple[Chunk, int]] = []
    for r in stage.ranked:
        if r.chunk_id in seen:
            continue
        try:
            chunk = library.chunk(r.chunk_id)
        except KeyError:
            continue
        if chunk.path in _off_device(question, library, context + [chunk]):
            continue
        pieces = [_typed_piece(u, chunk) for u in split_units(chunk) if not injection_reason(u.text)]
        if len(unanswered(missing, pieces)) < len(missing):
            out.append((chunk, r.rank))
            if len(out) >= MAX_TYPED_EXTRA:
                break
    return out


def _names(types: Sequence[str]) -> str:
    return " and ".join(types)
