"""Cited answers, extractive: claims are units taken verbatim from the final context.

``compose_answer(question, result, library, config)`` turns a search result (the
final context passages, in rank order) into an :class:`~engine.types.Answer`:

1. Every passage of the first ``SCORED_PASSAGES`` of the context is split into units
   (sentences, list items, table rows: :mod:`engine.evidence`). Each unit is scored for
   the question: cosine of the embedder's question and unit vectors (the unit is
   embedded with its heading and, for a table row, the header row), plus ``W_LEXICAL`` ×
   the share of the question's *content* words it holds (device names and model codes of
   the passages' documents left out: every passage of a manual shares them), plus
   ``W_CODE`` per exact token shared with the question (``ERR_…``, ``REF27-ALPHA``, ``M8``,
   ``25 N·m``; two at most; model codes left out), plus ``W_TYPE`` when the unit gives an
   attribute the question asks for (a torque for a torque question: :mod:`engine.answertype`),
   plus the retrieval rank prior
   ``W_RANK / rank``, minus ``W_OFF_DEVICE`` when the question names a model that the
   unit's document is not about.
2. **Abstention.** The evidence score is the best unit score (flagged units left
   out) minus ``W_MISSING`` when the question names a code that no passage holds.
   Below the threshold (``config.answer.abstain_threshold``, or
   :data:`CALIBRATED_THRESHOLD` when that is 0.0) the answer abstains: no claims,
   the closest passages as ``to_consult``. (The threshold only catches clearly
   unsupported questions: see the calibration notes at :data:`CALIBRATED_THRESHOLD`.)
   The answer also abstains when the question asks for an attribute (a weight, an IP
   rating, the warranty: :mod:`engine.answertype`) that no unit of the evidence about
   the device it names holds; when it asks for several and only some are missing, it
   answers and notes the missing ones. Before that, passages ranked past the final
   context (within the reranker's input) that give a missing attribute are added to the
   evidence (``MAX_TYPED_EXTRA`` at most), and a note says so.
3. **Claims** (:func:`select_units`): the best unit of each passage whose best unit scores
   within ``PASSAGE_MARGIN`` of the overall best (``MAX_PASSAGES`` at most), then other
   units of those passages within ``MARGIN`` of the best (at most
   ``config.answer.max_claims`` in all), plus the best unit for each part of a compound
   question ("… and …", "et", "und", "및", "和").
4. **Conditions travel.** Warnings and restrictions next to a chosen unit (two
   units either side, same passage) come along with ``is_condition=True``; when
   the section points forward ("the next section must be completed first"), the
   conditions of the next section come too, from ``library.neighbours``.
5. **Conflicts** (:mod:`engine.conflicts`): chosen units are compared with the
   other passages and with the same section in other versions of the same
   document (also when those versions are excluded from retrieval); every value of a
   chosen passage that has another version is compared too, and a unit whose value
   changed becomes a claim. Each side stays a separate claim with its own citation.
6. Units that read as instructions to the system are never followed: they are
   scored down, marked ``flagged`` when shown, and never a side of a conflict.

Claims are grouped by passage (passages by rank, related passages right after
the passage they belong to) and in document order inside a passage. A claim's
text is always ``document_text(path)[char_start:char_end]`` inside its cited
chunk's span.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.answerability import CE_PASSAGES, features
from engine.answertype import ANSWER_TYPES, expected_types, unanswered
from engine.config import Config
from engine.eligibility import Eligibility
from engine.conflicts import (
    Value, column_units, find_conflicts, header_units, statement, table_header, values_in,
)
from engine.evidence import (
    Unit, codes_in, injection_reason, is_condition, refers_forward, split_units, terms,
)
from engine.types import Answer, Chunk, Citation, Claim, Conflict, DocumentMeta, SearchResult, StageStatus

__all__ = [
    "Assessment", "CALIBRATED_THRESHOLD", "ScoredUnit", "abstains", "assess", "compose_answer",
    "abstain_threshold", "citation_for", "content_terms", "device_vocabulary", "rank_prior", "select_units",
]

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
# (W_MISSING). What separates them is the expected answer type (engine.answertype): each
# sample no-answer question asks for an attribute (weight, warranty, IP rating, ...) that no
# passage about its device states: 10/10 abstain, answerable 0/66 (with W_TYPE and the look
# past the final context for a missing attribute). Recalibrate the threshold when a reranker
# that separates them exists.
CALIBRATED_THRESHOLD = 0.83

W_LEXICAL = 0.10  # × share of the question's words found in the unit (with its heading)
W_CODE = 0.05  # per exact code / value shared with the question (2 at most)
W_MISSING = 0.10  # the question names a code that no passage holds
FLAG_PENALTY = 0.10  # instructions to the system are scored down
W_OFF_DEVICE = 0.05  # the question names a model code; the unit's document is about others
W_RANK = 0.04  # × 1/rank of the unit's passage in the final context
W_TYPE = 0.05  # the unit gives an attribute the question asks for (engine.answertype)
MARGIN = 0.03  # claims: units within this of the best score
# passages cited: gaps (best unit score − the gold passage's best unit score) on the answerable
# sample questions whose gold passage is in the context but not first: 0.002–0.048 at
# positions 1–3, 0.064 at position 4 and 0.083 / 0.09 (a paraphrase, a French version
# question) for the runner-up passage
PASSAGE_MARGIN = 0.065
RUNNER_UP_MARGIN = 0.095
MAX_PASSAGES = 4
# units are embedded for the first passages of the context only (latency: ~50 ms a unit on a busy
# 2-core CPU); on the samples every gold passage found sits within the first 5
SCORED_PASSAGES = 5
NEAR_UNITS = 2  # a condition travels when within this many units of a chosen one
MAX_CONDITIONS = 4
MAX_FORWARD_CONDITIONS = 2
# passages past the final context that may be added when they give an attribute asked for
# (engine.answertype) that the context lacks; looked for within the reranker's input window
MAX_TYPED_EXTRA = 2


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
    typed: bool = False  # gives an attribute the question asks for (engine.answertype)


@dataclass(frozen=True, slots=True)
class Assessment:
    """How well the final context supports an answer, before any claim is chosen."""

    question: str
    units: tuple[ScoredUnit, ...]
    evidence: float  # best non-flagged unit score, minus the missing-code penalty
    best_cosine: float
    missing_codes: tuple[str, ...]  # codes in the question that no passage holds
    rerank_top: float | None  # best reranker score of the context, when reranked
    expected: tuple[str, ...] = ()  # attributes the question asks for (engine.answertype)
    unanswered: tuple[str, ...] = ()  # those of them that no unit of the evidence holds

    @property
    def type_missing(self) -> bool:
        """The question asks for attributes and the evidence holds none of them."""
        return bool(self.expected) and len(self.unanswered) == len(self.expected)


def abstains(a: Assessment, threshold: float) -> bool:
    """The abstention rule: weak evidence, no units, or none of the attributes asked for."""
    return a.evidence < threshold or not a.units or a.type_missing


def abstain_threshold(config: Config) -> float:
    t = config.answer.abstain_threshold
    return t if t != 0.0 else CALIBRATED_THRESHOLD


# --- scoring -------------------------------------------------------------------------

_COMPOUND = re.compile(
    r"\s*(?:,\s*)?\b(?:and|as well as|also|et|ainsi que|und|sowie)\b\s*|\s*(?:및|그리고|以及|和|并且|與|和)\s*|[;?？]\s*(?=\S)",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The parts of a compound question (one part when it is not compound)."""
    parts = [p.strip(" ,.?？") for p in _COMPOUND.split(question)]
    parts = [p for p in parts if len(terms(p)) >= 2]
    return parts if len(parts) >= 2 else [question]


class _VectorCache:
    """Unit vectors by (embedder checksum, embedded text), bounded, so a re-asked question costs
    one query. Keyed by the model's checksum, never by object identity: another embedder can
    never receive this one's vectors."""

    def __init__(self, size: int = 4096):
        self.size = size
        self.data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def passages(self, embedder, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), np.float32)
        key = str(getattr(embedder, "checksum", "")) or f"id:{id(embedder)}"
        here: dict[str, np.ndarray] = {}
        for t in dict.fromkeys(texts):
            v = self.data.get((key, t))
            if v is not None:
                here[t] = v
                self.data.move_to_end((key, t))
        missing = [t for t in dict.fromkeys(texts) if t not in here]
        if missing:
            vecs = np.asarray(embedder.embed_passages(missing), dtype=np.float32)
            for t, v in zip(missing, vecs):
                here[t] = v
                self.data[(key, t)] = v
            while len(self.data) > self.size:
                self.data.popitem(last=False)
        return np.stack([here[t] for t in texts])


_CACHE = _VectorCache()


def _headings(unit: Unit, chunk: Chunk) -> str:
    path = list(chunk.heading_path[-2:])
    if unit.heading and unit.heading not in path:
        path = path[-1:] + [unit.heading]
    return " > ".join(path)


def _embed_text(unit: Unit, chunk: Chunk) -> str:
    heading = _headings(unit, chunk)
    header = ""
    if unit.kind == "table_row":
        from engine.conflicts import table_header

        header = table_header(chunk, unit)
    parts = [p for p in (heading, header, unit.text) if p]
    return "\n".join(parts)


def _match_text(unit: Unit, chunk: Chunk) -> str:
    return f"{_headings(unit, chunk)} {unit.text}"


def _exact_tokens(text: str) -> set[str]:
    vals = {f"{v.number:g} {v.unit}" for v in values_in(text)}
    return codes_in(text) | vals


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
        codes |= codes_in(text) | {m.upper() for m in meta.models} | _model_names(meta.title)
    for c in codes:
        words |= terms(c)
    return words, codes


_MODEL_NAME = re.compile(r"(?<![\w-])[^\W\d_]+-\w*\d\w*(?![\w-])")  # Hydra-400, BR-20, KX-7


def _model_names(text: str) -> set[str]:
    """Model-like names (letters, a hyphen, then a part with a digit), upper-cased."""
    return {m.upper() for m in _MODEL_NAME.findall(text)}


def _off_device(question: str, library, chunks: Sequence[Chunk]) -> set[str]:
    """Paths of documents about another device than the one the question names by model code.

    Empty when the question names no model code of these documents (nothing to go by).
    """
    q_codes = {c.upper() for c in codes_in(question)} | _model_names(question)
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
    rerank = result.trace.stage("rerank") if result.trace else None
    rerank_top = max((r.score for r in rerank.ranked), default=None) if rerank and rerank.ranked else None
    haystack = " ".join(
        f"{c.text} {c.context} {' '.join(c.heading_path)} {_meta_words(library, c)}" for c, _ in chunks
    )
    present = _exact_tokens(haystack)
    missing = tuple(sorted(c for c in codes_in(question) if c not in present))
    if not units:
        return Assessment(question, (), -1.0, -1.0, missing, rerank_top)
    qv = np.asarray(library.embedder.embed_queries([question]), dtype=np.float32)[0]
    uv = _CACHE.passages(library.embedder, [_embed_text(u, c) for u, c, _ in units])
    cos = uv @ qv
    expected = expected_types(question)
    scored = []
    pieces = []  # (text, values) of the clean units about the named device, for the answer types
    for (u, c, rank), cs in zip(units, cos):
        mt = _match_text(u, c)
        overlap = len(q_terms & terms(mt)) / len(q_terms) if q_terms else 0.0
        shared = min(2, len(q_exact & _exact_tokens(mt)))
        flag = injection_reason(u.text)
        piece = _typed_piece(u, c) if expected else ("", [])
        typed = bool(expected) and len(unanswered(expected, [piece])) < len(expected)
        if expected and not flag and c.path not in off_device:
            pieces.append(piece)
        score = (float(cs) + W_LEXICAL * overlap + W_CODE * shared + rank_prior(rank)
                 + (W_TYPE if typed else 0.0)
                 - (FLAG_PENALTY if flag else 0.0) - (W_OFF_DEVICE if c.path in off_device else 0.0))
        scored.append(ScoredUnit(u, c, rank, float(cs), overlap, shared, score, is_condition(u.text), flag,
                                 typed))
    clean = [s for s in scored if not s.flagged]
    best = max((s.score for s in clean), default=-1.0)
    evidence = best - (W_MISSING if missing else 0.0)
    best_cos = max((s.cosine for s in clean), default=-1.0)
    return Assessment(question, tuple(scored), evidence, best_cos, missing, rerank_top,
                      tuple(t.name for t in expected), tuple(t.name for t in unanswered(expected, pieces)))


def _typed_piece(unit: Unit, chunk: Chunk) -> tuple[str, list[Value]]:
    """A unit's text with its headings (and table header), and its values, for answer types.

    A unit holding a bare number also counts as holding a value in each unit its chunk uses
    as a column label: a PDF table row ("Bag filter F7 CV-FB7 90 250") under "Replace at (Pa)"."""
    header = table_header(chunk, unit)
    text = f"{' > '.join(chunk.heading_path)} {unit.heading} {header} {unit.text}"
    values = values_in(unit.text, header_units(header) if header else ())
    if re.search(r"\d", unit.text):
        values += [Value(float("nan"), u, f"({u})") for u in column_units(f"{chunk.context}\n{chunk.text}")]
    return text, values


def rank_prior(rank: int) -> float:
    """What the passage's retrieval rank (1 = best) adds to its units' scores."""
    return W_RANK / max(1, rank)


def _meta_words(library, chunk: Chunk) -> str:
    meta = library.meta_of(chunk)
    return f"{meta.title} {' '.join(meta.models)}"


# --- composing ------------------------------------------------------------------------


def citation_for(n: int, chunk: Chunk, meta: DocumentMeta) -> Citation:
    return Citation(
        n=n, chunk_id=chunk.id, doc_id=chunk.doc_id, title=meta.title, version=meta.version,
        date=meta.date, status=meta.status, heading_path=chunk.heading_path, path=chunk.path,
        start_line=chunk.start_line, end_line=chunk.end_line, page=chunk.page,
    )


def compose_answer(question: str, result: SearchResult, library, config: Config,
                   eligibility: Eligibility | None = None) -> Answer:
    """The cited answer for ``question`` built from ``result``'s final context.

    ``eligibility`` is the rule the search ran under (default: the config's filters). Other
    versions of an answered document are looked up under it: a version it excludes only for
    being superseded appears inside a conflict warning (with its own citation, status and
    date) but never as a claim; any other excluded version never appears at all.
    """
    rule = eligibility if eligibility is not None else Eligibility.from_filters(config.filters)
    notes: list[str] = []
    stage_notes = [f"{s.name}: {s.note}" for s in result.trace.stages
                   if s.status is StageStatus.DEGRADED] if result.trace else []
    notes += stage_notes
    if not result.hits:
        return Answer(question, (), (), abstained=True, trace=result.trace,
                      notes=tuple(notes + ["no passage passed the filters"]))
    a = assess(question, result, library, config)
    if a.unanswered:  # look past the final context for a passage that gives what is asked
        typed = _typed_candidates(question, a, result, library)
        if typed:
            b = assess(question, result, library, config, extra=typed)
            # it counts only when a unit giving it would be a claim: about the question, not
            # any value of the right unit ("15 g of grease" does not give a pump's weight)
            ids = {c.id for c, _ in typed}
            best = max((s.score for s in b.units if not s.flagged), default=-1.0)
            if any(s.typed and s.chunk.id in ids and not s.flagged and s.score >= best - PASSAGE_MARGIN
                   for s in b.units):
                found = [t for t in b.expected if t not in b.unanswered and t in a.unanswered]
                notes.append(f"the {_names(found)} asked for was found past the final context "
                             f"(rank {', '.join(str(r) for c, r in typed)})")
                a = b
    verdict = answerability(question, result, library, a, config)
    if verdict is not None:
        notes.append(verdict.note)
    if (abstains(a, abstain_threshold(config)) if verdict is None
            else (verdict.abstain or not a.units)):
        consult = tuple(citation_for(i + 1, h.chunk, library.meta_of(h.chunk))
                        for i, h in enumerate(result.hits[: config.answer.to_consult]))
        if verdict is not None:
            why = verdict.why
            if a.type_missing:
                why += f"; no passage gives the {_names(a.unanswered)} asked for"
        elif a.type_missing:
            why = f"no passage gives the {_names(a.unanswered)} asked for"
        else:
            why = f"evidence {a.evidence:.3f} below threshold {abstain_threshold(config):.3f}"
        if a.missing_codes:
            why += f"; not in these passages: {', '.join(a.missing_codes)}"
        return Answer(question, (), (), abstained=True, to_consult=consult, trace=result.trace,
                      notes=tuple(notes + [f"not found in these documents ({why})"]),
                      answerability=verdict.probability if verdict else None)

    chosen = _choose(question, a, library, config)
    conditions = _conditions(a, chosen, question, library)
    related_units = list(conditions)

    # conflicts: chosen units against the rest of the context and other versions
    anchors = [s for s in chosen if s.unit.kind in ("sentence", "list_item", "table_row")]
    other_chunks = _other_versions(library, [s.chunk for s in anchors], rule)
    warning_only = {c.id for _a, c in other_chunks if not rule.allows(library.meta_of(c))}
    others_units: list[tuple[Unit, Chunk, int]] = []
    anchor_rank = {s.chunk.id: s.rank for s in anchors}
    for s in a.units:
        others_units.append((s.unit, s.chunk, s.rank))
    for anchor_id, c in other_chunks:
        others_units += [(u, c, anchor_rank.get(anchor_id, 99)) for u in split_units(c)]
    meta = _MetaCache(library)
    keys: dict[str, int] = {}  # provisional per-chunk numbers for conflict sides

    def key(c: Chunk) -> int:
        return keys.setdefault(c.id, len(keys))

    other_st = [(statement(u, c, meta(c), bool(injection_reason(u.text))), key(c))
                for u, c, _ in others_units]
    # a section that exists in another version: each of its values is compared, and a unit
    # whose value changed becomes a claim even when another unit of the section scored higher
    versioned = {anchor_id for anchor_id, _ in other_chunks}
    chosen_keys = {(s.chunk.id, s.unit.order) for s in chosen}
    for s in a.units:
        if (s.chunk.id in versioned and (s.chunk.id, s.unit.order) not in chosen_keys and not s.flagged
                and s.unit.kind in ("sentence", "list_item", "table_row") and values_in(s.unit.text)):
            probe = [(statement(s.unit, s.chunk, meta(s.chunk), False), key(s.chunk))]
            if find_conflicts(probe, other_st)[0]:
                chosen.append(s)
                anchors.append(s)
                chosen_keys.add((s.chunk.id, s.unit.order))
    anchor_st = [(statement(s.unit, s.chunk, meta(s.chunk), bool(s.flagged)), key(s.chunk)) for s in anchors]
    conflicts_raw, used = find_conflicts(anchor_st, other_st)

    # assemble claims: (rank, path order, chunk ordinal, unit order) → readable order
    entries: dict[tuple[str, int], tuple[Unit, Chunk, int, bool, str]] = {}
    for s in chosen:
        entries[(s.chunk.id, s.unit.order)] = (s.unit, s.chunk, s.rank, False, s.flagged)
    for s in related_units:
        entries.setdefault((s.chunk.id, s.unit.order), (s.unit, s.chunk, s.rank, True, s.flagged))
    for i in sorted(used):
        u, c, rank = others_units[i]
        if c.id in warning_only:  # an excluded (superseded) version: inside the warning only
            continue
        entries.setdefault((c.id, u.order), (u, c, rank, is_condition(u.text), injection_reason(u.text)))

    in_context = {h.chunk.id for h in result.hits}
    # passages by their best chosen claim (the most direct answer first), then by rank; a related
    # passage (next section, other version) shares its anchor's rank and follows it
    best_at_rank: dict[int, float] = {}
    for s in chosen:
        best_at_rank[s.rank] = max(best_at_rank.get(s.rank, -np.inf), s.score)
    ordered = sorted(entries.values(), key=lambda e: (-best_at_rank.get(e[2], -np.inf), e[2],
                                                      e[1].id not in in_context, e[1].path,
                                                      e[1].ordinal, e[0].order))
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    claims: list[Claim] = []
    for u, c, _, cond, flag in ordered:
        if c.id not in numbers:
            numbers[c.id] = len(numbers) + 1
            citations.append(citation_for(numbers[c.id], c, meta(c)))
        claims.append(Claim(text=u.text, citation=numbers[c.id], char_start=u.char_start,
                            char_end=u.char_end, is_condition=cond, flagged=flag))

    # sides from versions shown only inside the warning get citations after the claims'
    for i in sorted(used):
        c = others_units[i][1]
        if c.id in warning_only and c.id not in numbers:
            numbers[c.id] = len(numbers) + 1
            citations.append(citation_for(numbers[c.id], c, meta(c)))
    # citation numbers of conflict sides: statements were numbered by list index
    conflicts = _renumber(conflicts_raw, keys, numbers)
    if a.unanswered:
        notes.append(f"not found in these documents: the {_names(a.unanswered)} asked for")
    if any(cl.flagged for cl in claims):
        notes.append("text that reads as an instruction to the system is shown as quoted evidence "
                     "and was not followed")
    return Answer(question, tuple(claims), tuple(citations), tuple(conflicts), trace=result.trace,
                  notes=tuple(notes), answerability=verdict.probability if verdict else None)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The learned answerability of one question's evidence (engine.answerability)."""

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
                f"below {self.threshold:.2f}")


def evidence_features(question: str, result: SearchResult, library, a: Assessment,
                      with_ce: bool = True) -> dict[str, float]:
    """engine.answerability.features for this evidence, with the cross-encoder's logits for the
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
    checksum = getattr(library, "reranker_checksum", lambda: None)()
    feats = evidence_features(question, result, library, a, with_ce=model.with_ce is not None
                              and checksum == model.reranker_checksum)
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


def _choose(question: str, a: Assessment, library, config: Config) -> list[ScoredUnit]:
    pool = [s for s in a.units if s.unit.kind != "sentence" or len(s.unit.text) >= 3]
    limit = max(1, config.answer.max_claims)
    chosen = select_units(pool, limit)
    ranked = sorted(pool, key=lambda s: -s.score)
    if chosen and all(s.flagged for s in chosen):  # never answer from an instruction alone
        clean = [s for s in ranked if not s.flagged]
        if clean:
            chosen = [clean[0]] + chosen
    parts = question_parts(question)
    if len(parts) > 1:
        pv = np.asarray(library.embedder.embed_queries(parts), dtype=np.float32)
        uv = _CACHE.passages(library.embedder, [_embed_text(s.unit, s.chunk) for s in a.units])
        per_part = uv @ pv.T  # [units, parts]
        for j in range(len(parts)):
            order = np.argsort(-per_part[:, j])
            for i in order:
                s = a.units[int(i)]
                if not s.flagged:
                    if s not in chosen:
                        chosen.append(s)
                    break
    return chosen


def select_units(pool: Sequence[ScoredUnit], limit: int) -> list[ScoredUnit]:
    """The claims' units: the best unit of each relevant passage, then the closest runners-up.

    A passage is relevant when its best clean unit scores within ``PASSAGE_MARGIN`` of the
    overall best (the runner-up passage within ``RUNNER_UP_MARGIN``); at most
    ``MAX_PASSAGES`` of them, by score. Other units of those passages within ``MARGIN`` of
    the best fill the remaining room, up to ``limit`` in all.
    """
    if not pool:
        return []
    ranked = sorted(pool, key=lambda s: -s.score)
    best = ranked[0].score
    per_passage: dict[str, ScoredUnit] = {}
    for s in ranked:
        if not s.flagged and s.chunk.id not in per_passage:
            per_passage[s.chunk.id] = s
    chosen: list[ScoredUnit] = []
    for i, s in enumerate(per_passage.values()):
        gap = best - s.score
        if len(chosen) < min(limit, MAX_PASSAGES) and (
                i == 0 or gap <= PASSAGE_MARGIN or (i == 1 and gap <= RUNNER_UP_MARGIN)):
            chosen.append(s)
    passages = {s.chunk.id for s in chosen}
    for s in ranked:
        if len(chosen) >= limit or s.score < best - MARGIN:
            break
        if s not in chosen and s.chunk.id in passages:
            chosen.append(s)
    return chosen


def _conditions(a: Assessment, chosen: list[ScoredUnit], question: str, library) -> list[ScoredUnit]:
    """Warnings and restrictions that travel with the chosen units."""
    by_chunk: dict[str, list[ScoredUnit]] = {}
    for s in a.units:
        by_chunk.setdefault(s.chunk.id, []).append(s)
    chosen_keys = {(s.chunk.id, s.unit.order) for s in chosen}
    out: list[ScoredUnit] = []
    seen = set(chosen_keys)
    for s in chosen:
        near = [o for o in by_chunk.get(s.chunk.id, [])
                if o.condition and not o.flagged and abs(o.unit.order - s.unit.order) <= NEAR_UNITS
                and (o.chunk.id, o.unit.order) not in seen]
        for o in sorted(near, key=lambda o: -o.score)[:2]:
            out.append(o)
            seen.add((o.chunk.id, o.unit.order))
    # a section that points forward brings the conditions of the next section
    forward_done: set[str] = set()
    for s in chosen:
        if s.chunk.id in forward_done:
            continue
        forward_done.add(s.chunk.id)
        section = _section_units(s.chunk, by_chunk, library)
        pointer = next((o for o in section if refers_forward(o.unit.text) and not o.flagged), None)
        if pointer is None:
            continue
        if (pointer.chunk.id, pointer.unit.order) not in seen:
            out.append(pointer)
            seen.add((pointer.chunk.id, pointer.unit.order))
        nxt = _next_section_chunk(s.chunk, library)
        if nxt is None:
            continue
        cands = _score_extra(question, nxt, s.rank, library, by_chunk)
        conds = [o for o in cands if o.condition and not o.flagged and (o.chunk.id, o.unit.order) not in seen]
        for o in sorted(conds, key=lambda o: -o.score)[:MAX_FORWARD_CONDITIONS]:
            out.append(o)
            seen.add((o.chunk.id, o.unit.order))
    return out[:MAX_CONDITIONS + MAX_FORWARD_CONDITIONS]


def _section_units(chunk: Chunk, by_chunk: dict[str, list[ScoredUnit]], library) -> list[ScoredUnit]:
    """Units of ``chunk`` and of the following chunks of the same section (two at most)."""
    units = list(by_chunk.get(chunk.id, []))
    cur = chunk
    for _ in range(2):
        nxt = library.neighbours(cur.id)[1]
        if nxt is None or nxt.section_id != chunk.section_id or nxt.path != chunk.path:
            break
        units += by_chunk.get(nxt.id) or _unscored(nxt, 0)
        cur = nxt
    return units


def _unscored(chunk: Chunk, rank: int) -> list[ScoredUnit]:
    return [ScoredUnit(u, chunk, rank, 0.0, 0.0, 0, 0.0, is_condition(u.text), injection_reason(u.text))
            for u in split_units(chunk)]


def _next_section_chunk(chunk: Chunk, library) -> Chunk | None:
    cur = chunk
    for _ in range(4):
        nxt = library.neighbours(cur.id)[1]
        if nxt is None or nxt.path != chunk.path:
            return None
        if nxt.section_id != chunk.section_id:
            return nxt
        cur = nxt
    return None


def _score_extra(question: str, chunk: Chunk, rank: int, library,
                 by_chunk: dict[str, list[ScoredUnit]]) -> list[ScoredUnit]:
    if chunk.id in by_chunk:
        return by_chunk[chunk.id]
    units = split_units(chunk)
    if not units:
        return []
    qv = np.asarray(library.embedder.embed_queries([question]), dtype=np.float32)[0]
    uv = _CACHE.passages(library.embedder, [_embed_text(u, chunk) for u in units])
    return [ScoredUnit(u, chunk, rank, float(c), 0.0, 0, float(c), is_condition(u.text),
                       injection_reason(u.text)) for u, c in zip(units, uv @ qv)]


class _MetaCache:
    def __init__(self, library):
        self.library = library
        self.data: dict[str, DocumentMeta] = {}

    def __call__(self, chunk: Chunk) -> DocumentMeta:
        if chunk.path not in self.data:
            self.data[chunk.path] = self.library.meta_of(chunk)
        return self.data[chunk.path]


def _other_versions(library, chunks: Sequence[Chunk], rule: Eligibility) -> list[tuple[str, Chunk]]:
    """(anchor chunk id, chunk) for the same section in other versions of each anchor's document,
    only those versions ``rule`` lets be a conflict side (``Eligibility.allows_as_conflict_side``)."""
    out: list[tuple[str, Chunk]] = []
    seen: set[str] = {c.id for c in chunks}
    records = None
    for c in chunks:
        if records is None:
            records = [rec for rec in library.documents() if rule.allows_as_conflict_side(rec.meta)]
        found = []
        for rec in records:
            if rec.meta.doc_id == c.doc_id and rec.path != c.path:
                found += [o for o in library.chunks_of(rec.path) if o.heading_path == c.heading_path]
        for o in found:
            if o.id not in seen:
                seen.add(o.id)
                out.append((c.id, o))
    return out


def _renumber(conflicts: list[Conflict], keys: dict[str, int], numbers: dict[str, int]) -> list[Conflict]:
    """Sides were keyed by a provisional per-chunk number; give them their citation numbers."""
    by_key = {k: numbers[cid] for cid, k in keys.items() if cid in numbers}
    return [Conflict(c.subject, tuple(replace(side, citation=by_key[side.citation]) for side in c.sides))
            for c in conflicts]
