"""Scoring every unit of the final context for the question (the Assessment): cosine of the
question and unit vectors, plus the share of the question's content words it holds, exact codes
shared (not those most of the context holds: its topic; neither for a unit that only echoes the
question's words), an answer type given, and the passage's rank; minus instructions to the
system and documents about another device than the one the question names.

A device's model code in the question says which manual to read, not which of its statements
answers: every passage of that manual shares it, and an overview sentence that names the device
("The BR-20 is a 15 kW screw compressor") is closest to any question about it. The cosine that
ranks units is therefore taken with the question less the devices it names, by code and by the
title words before it ("Borée BR-20": engine.lang.codes.content_question; the search embeds it
with the question, in one call), as the lexical share already counts content words only; the
plain question's cosine stays the evidence measure (``ScoredUnit.cosine``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.answer.answertype import expected_types, unanswered
from engine.answer.units import _CACHE, _embed_text, _exact_tokens, _match_text, _typed_piece
from engine.config import Config
from engine.lang.codes import content_question, exact_codes, model_names
from engine.lang.cues import injection_reason, is_condition
from engine.lang.units import SAFETY_ADMONITIONS, Unit, split_units
from engine.lang.words import term_held, terms
from engine.search.devices import device_names, document_codes, names_of
from engine.types import Chunk, SearchResult

W_LEXICAL = 0.10  # × share of the question's words found in the unit (with its heading)
W_CODE = 0.05  # per exact code / value shared with the question (2 at most; not the context's topic)
W_MISSING = 0.10  # the question names a code that no passage holds
FLAG_PENALTY = 0.10  # instructions to the system are scored down
W_OFF_DEVICE = 0.05  # the question names a model code; the unit's document is about others
W_RANK = 0.04  # × 1/rank of the unit's passage in the final context
W_TYPE = 0.05  # the unit gives an attribute the question asks for (engine.answer.answertype)
# W_RANK and W_LEXICAL checked on the train splits through the whole pipeline as of manuals never
# seen (five sets cross-fitted, WLED and ZMK; 546 questions; 2026-12-02): first claim / cited for
# W_RANK 0, .02, .04, .1, .2, .5: 340 / 451, 370 / 451, 382 / 450, 374 / 429, 373 / 396, 373 / 381;
# W_LEXICAL .05, .10, .20: 380 / 452, 382 / 450, 376 / 448
# units are embedded for the first passages of the context only (latency: ~50 ms a unit on a busy
# 2-core CPU); on the samples every gold passage found sits within the first 5
SCORED_PASSAGES = 5


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    unit: Unit
    chunk: Chunk
    rank: int  # rank of the passage in the final context (related passages: their anchor's)
    cosine: float
    overlap: float  # share of question words in the unit
    codes: int  # exact codes/values shared with the question
    score: float
    condition: bool
    flagged: str
    typed: bool = False  # gives an attribute the question asks for (engine.answer.answertype)

    @property
    def key(self) -> tuple[str, int]:
        """The unit's identity: its passage and its place there (the same unit scored twice)."""
        return self.chunk.id, self.unit.order


@dataclass(frozen=True, slots=True)
class Assessment:
    """How well the final context supports an answer, before any claim is chosen."""

    question: str
    units: tuple[ScoredUnit, ...]
    evidence: float  # best non-flagged unit score, minus the missing-code penalty
    best_cosine: float
    missing_codes: tuple[str, ...]  # codes in the question that no passage holds
    rerank_top: float | None  # best reranker score of the context, when reranked
    expected: tuple[str, ...] = ()  # attributes the question asks for (engine.answer.answertype)
    unanswered: tuple[str, ...] = ()  # those of them that no unit of the evidence holds
    query_vector: np.ndarray | None = field(default=None, compare=False, repr=False)  # the question's

    @property
    def type_missing(self) -> bool:
        """The question asks for attributes and the evidence holds none of them."""
        return bool(self.expected) and len(self.unanswered) == len(self.expected)


def device_vocabulary(library, chunks: Sequence[Chunk]) -> tuple[set[str], set[str]]:
    """(terms, codes) that name the devices of ``chunks``' documents: title and model words.

    They say which manual a passage comes from, not what it says: every passage of the
    manual shares them, so they neither pick the answering unit nor show that one exists.
    """
    words: set[str] = set()
    codes: set[str] = set()
    for path in dict.fromkeys(c.path for c in chunks):
        meta = library.meta_of(next(c for c in chunks if c.path == path))
        text = f"{meta.title} {' '.join(meta.models)}"
        words |= terms(text)
        codes |= exact_codes(text) | {m.upper() for m in meta.models} | model_names(meta.title)
    for c in codes:
        words |= terms(c)
    return words, codes


def _off_device(question: str, library, chunks: Sequence[Chunk]) -> set[str]:
    """Paths of documents about another device than the one the question names by model code.

    Empty when the question names no model code of these documents (nothing to go by).
    """
    q_codes = {c.upper() for c in exact_codes(question)} | model_names(question)
    per_path: dict[str, set[str]] = {}
    for c in chunks:
        if c.path not in per_path:
            per_path[c.path] = device_vocabulary(library, [c])[1]
    named = {code for codes in per_path.values() for code in codes} & q_codes
    if not named:
        return set()
    return {p for p, codes in per_path.items() if not codes & named}


def content_terms(question: str, device_words: set[str]) -> set[str]:
    """The question's words that say what is asked: its terms less the device vocabulary."""
    return terms(question) - device_words


def assess(question: str, result: SearchResult, library, config: Config,
           extra: Sequence[tuple[Chunk, int]] = ()) -> Assessment:
    """Score every unit of the final context (and of ``extra`` (chunk, anchor rank) pairs)."""
    chunks: list[tuple[Chunk, int]] = [(h.chunk, h.rank) for h in result.hits[:SCORED_PASSAGES]] + list(extra)
    units: list[tuple[Unit, Chunk, int]] = []
    for chunk, rank in chunks:
        units += [(u, chunk, rank) for u in split_units(chunk)]
    device_words, device_codes = device_vocabulary(library, [c for c, _ in chunks]) if chunks else (set(), set())
    off_device = _off_device(question, library, [c for c, _ in chunks])
    q_terms = content_terms(question, device_words) or terms(question)
    q_exact = {t for t in _exact_tokens(question) if t not in device_codes}
    q_exact -= topic_codes(q_exact, [c for c, _ in chunks])
    asked = terms(question)
    rerank = result.trace.stage("rerank") if result.trace else None
    rerank_top = max((r.score for r in rerank.ranked), default=None) if rerank and rerank.ranked else None
    haystack = " ".join(
        f"{c.text} {c.context} {' '.join(c.heading_path)} {_meta_words(library, c)}" for c, _ in chunks
    )
    present = _exact_tokens(haystack)
    missing = tuple(sorted(c for c in exact_codes(question) if c not in present))
    if not units:
        return Assessment(question, (), -1.0, -1.0, missing, rerank_top)
    qv = question_vector(library, question, result.query_vector if result.question == question else None)
    uv = _CACHE.passages(library, [_embed_text(u, c) for u, c, _ in units])
    cos = uv @ qv
    by_content = content_vector(library, question, result, chunks)
    ranking_cos = cos if by_content is None else uv @ by_content
    expected = expected_types(question)
    scored = []
    pieces = []  # (text, values) of the clean units about the named device, for the answer types
    for (u, c, rank), cs, rc in zip(units, cos, ranking_cos):
        mt = _match_text(u, c)
        held = terms(mt)
        overlap = sum(1 for t in q_terms if term_held(t, held)) / len(q_terms) if q_terms else 0.0
        shared = min(2, len(q_exact & _exact_tokens(mt)))
        if terms(u.text) <= asked:  # it only echoes the question ("RAK4631" in a list of parts)
            overlap, shared = 0.0, 0
        flag = injection_reason(u.text)
        piece = _typed_piece(u, c) if expected else ("", [])
        typed = bool(expected) and len(unanswered(expected, [piece])) < len(expected)
        if expected and not flag and c.path not in off_device:
            pieces.append(piece)
        score = (float(rc) + W_LEXICAL * overlap + W_CODE * shared + rank_prior(rank)
                 + (W_TYPE if typed else 0.0)
                 - (FLAG_PENALTY if flag else 0.0) - (W_OFF_DEVICE if c.path in off_device else 0.0))
        scored.append(ScoredUnit(u, c, rank, float(cs), overlap, shared, score, states_condition(u, c), flag,
                                 typed))
    clean = [s for s in scored if not s.flagged]
    best = max((s.score for s in clean), default=-1.0)
    evidence = best - (W_MISSING if missing else 0.0)
    best_cos = max((s.cosine for s in clean), default=-1.0)
    return Assessment(question, tuple(scored), evidence, best_cos, missing, rerank_top,
                      tuple(t.name for t in expected), tuple(t.name for t in unanswered(expected, pieces)), qv)


def topic_codes(codes: set[str], chunks: Sequence[Chunk]) -> set[str]:
    """The question's ``codes`` that most of the context's passages hold (more than half, of two
    or more): they say what the passages are about, not which statement answers. "What must I
    install before SHAPER_CALIBRATE works?" is answered by the one passage about installing, among
    four that show the command; an error code asked about stays in the passage that explains it."""
    passages = list({c.id: c for c in chunks}.values())
    if not codes or len(passages) < 2:
        return set()
    held = [_exact_tokens(f"{c.text} {' '.join(c.heading_path)}") for c in passages]
    return {t for t in codes if 2 * sum(t in h for h in held) > len(held)}


def content_vector(library, question: str, result: SearchResult,
                   chunks: Sequence[tuple[Chunk, int]]) -> np.ndarray | None:
    """The vector that ranks units: the question's less the devices it names, as the search
    embedded it (``SearchResult.content_vector``), else embedded now with the codes and titles of
    the context's documents; None when it names none (the question's own cosine ranks them)."""
    if result.question == question and result.query_vector is not None:
        return None if result.content_vector is None else np.asarray(result.content_vector, dtype=np.float32)
    metas = {c.path: library.meta_of(c) for c, _ in chunks}
    codes = set().union(*(document_codes(m) for m in metas.values())) if metas else set()
    content = content_question(question, codes, names_of(codes, device_names(metas)))
    return None if content is None else question_vector(library, content)


def question_vector(library, question: str, known: np.ndarray | None = None) -> np.ndarray:
    """The question's embedding: ``known`` (the search's) when given, else embedded now."""
    if known is not None:
        return np.asarray(known, dtype=np.float32)
    return np.asarray(library.embedder.embed_queries([question]), dtype=np.float32)[0]


def states_condition(unit: Unit, chunk: Chunk) -> bool:
    """A warning or restriction (engine.lang.cues.is_condition, or a statement inside the manual's
    warning markup), unless the unit is a table's caption, which the chunker carries in the
    chunk's context: "Table 3 (dry threads unless stated)" describes the table, it does not
    govern a step. Code is one only inside the warning markup: its words are lines to type."""
    return (((unit.kind != "code" and is_condition(unit.text)) or unit.admonition in SAFETY_ADMONITIONS)
            and unit.text.strip() not in chunk.context)


def rank_prior(rank: int) -> float:
    """What the passage's retrieval rank (1 = best) adds to its units' scores."""
    return W_RANK / max(1, rank)


def _meta_words(library, chunk: Chunk) -> str:
    meta = library.meta_of(chunk)
    return f"{meta.title} {' '.join(meta.models)}"


def _unscored(chunk: Chunk, rank: int) -> list[ScoredUnit]:
    return [ScoredUnit(u, chunk, rank, 0.0, 0.0, 0, 0.0, states_condition(u, chunk), injection_reason(u.text))
            for u in split_units(chunk)]


def _score_extra(question: str, chunk: Chunk, rank: int, library,
                 by_chunk: dict[str, list[ScoredUnit]], qv: np.ndarray | None = None) -> list[ScoredUnit]:
    if chunk.id in by_chunk:
        return by_chunk[chunk.id]
    units = split_units(chunk)
    if not units:
        return []
    qv = question_vector(library, question, qv)
    uv = _CACHE.passages(library, [_embed_text(u, chunk) for u in units])
    return [ScoredUnit(u, chunk, rank, float(c), 0.0, 0, float(c), states_condition(u, chunk),
                       injection_reason(u.text)) for u, c in zip(units, uv @ qv)]
