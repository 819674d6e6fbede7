"""Cited answers, extractive: claims are units taken verbatim from the final context.

``compose_answer(question, result, library, config)`` turns a search result (the
final context passages, in rank order) into an :class:`~engine.types.Answer`:

1. Every passage is split into units (sentences, list items, table rows:
   :mod:`engine.evidence`). Each unit is scored for the question: cosine of the
   embedder's question and unit vectors (the unit is embedded with its heading
   and, for a table row, the header row), plus ``W_LEXICAL`` × the share of
   question words it holds, plus ``W_CODE`` per exact token shared with the
   question (``ERR_…``, ``REF27-ALPHA``, ``M8``, ``25 N·m``; two at most).
2. **Abstention.** The evidence score is the best unit score (flagged units left
   out) minus ``W_MISSING`` when the question names a code that no passage holds.
   Below the threshold (``config.answer.abstain_threshold``, or
   :data:`CALIBRATED_THRESHOLD` when that is 0.0) the answer abstains: no claims,
   the closest passages as ``to_consult``.
3. **Claims.** Units within ``MARGIN`` of the best score (at most
   ``config.answer.max_claims``), plus the best unit for each part of a compound
   question ("… and …", "et", "und", "및", "和").
4. **Conditions travel.** Warnings and restrictions next to a chosen unit (two
   units either side, same passage) come along with ``is_condition=True``; when
   the section points forward ("the next section must be completed first"), the
   conditions of the next section come too, from ``library.neighbours``.
5. **Conflicts** (:mod:`engine.conflicts`): chosen units are compared with the
   other passages and with the same section in other versions of the same
   document; each side stays a separate claim with its own citation.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.config import Config
from engine.conflicts import Statement, find_conflicts, statement, values_in
from engine.evidence import (
    Unit, codes_in, injection_reason, is_condition, refers_forward, split_units, terms,
)
from engine.types import Answer, Chunk, Citation, Claim, Conflict, DocumentMeta, SearchResult

__all__ = [
    "Assessment", "CALIBRATED_THRESHOLD", "ScoredUnit", "assess", "compose_answer",
    "abstain_threshold", "citation_for",
]

# Calibrated by bench/answers.py on samples/questions.tsv (66 answerable, 10 no-answer; e5-small,
# no reranker): evidence of answerable questions min 0.757 / p5 0.884 / p10 0.894 / p50 0.954;
# of no-answer questions min 0.929 / p50 0.972. The highest threshold keeping answerable
# abstention <= 5 % is 0.8826. The embedder alone does NOT separate near-miss no-answer
# questions (they score higher); only questions naming a code absent from the evidence
# abstain (W_MISSING). Recalibrate once the reranker exists.
CALIBRATED_THRESHOLD = 0.88

W_LEXICAL = 0.10  # × share of the question's words found in the unit (with its heading)
W_CODE = 0.05  # per exact code / value shared with the question (2 at most)
W_MISSING = 0.10  # the question names a code that no passage holds
FLAG_PENALTY = 0.10  # instructions to the system are scored down
MARGIN = 0.03  # claims: units within this of the best score
NEAR_UNITS = 2  # a condition travels when within this many units of a chosen one
MAX_CONDITIONS = 4
MAX_FORWARD_CONDITIONS = 2


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


@dataclass(frozen=True, slots=True)
class Assessment:
    """How well the final context supports an answer, before any claim is chosen."""

    question: str
    units: tuple[ScoredUnit, ...]
    evidence: float  # best non-flagged unit score, minus the missing-code penalty
    best_cosine: float
    missing_codes: tuple[str, ...]  # codes in the question that no passage holds
    rerank_top: float | None  # best reranker score of the context, when reranked


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
    """Unit vectors by embedded text (bounded), so a re-asked question costs one query."""

    def __init__(self, size: int = 4096):
        self.size = size
        self.data: OrderedDict[tuple[int, str], np.ndarray] = OrderedDict()

    def passages(self, embedder, texts: Sequence[str]) -> np.ndarray:
        key = id(embedder)
        missing = [t for t in dict.fromkeys(texts) if (key, t) not in self.data]
        if missing:
            vecs = np.asarray(embedder.embed_passages(missing), dtype=np.float32)
            for t, v in zip(missing, vecs):
                self.data[(key, t)] = v
            while len(self.data) > self.size:
                self.data.popitem(last=False)
        return np.stack([self.data[(key, t)] for t in texts]) if texts else np.zeros((0, 1), np.float32)


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


def assess(question: str, result: SearchResult, library, config: Config,
           extra: Sequence[tuple[Chunk, int]] = ()) -> Assessment:
    """Score every unit of the final context (and of ``extra`` (chunk, anchor rank) pairs)."""
    chunks: list[tuple[Chunk, int]] = [(h.chunk, h.rank) for h in result.hits] + list(extra)
    units: list[tuple[Unit, Chunk, int]] = []
    for chunk, rank in chunks:
        units += [(u, chunk, rank) for u in split_units(chunk)]
    q_terms = terms(question)
    q_exact = _exact_tokens(question)
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
    scored = []
    for (u, c, rank), cs in zip(units, cos):
        mt = _match_text(u, c)
        overlap = len(q_terms & terms(mt)) / len(q_terms) if q_terms else 0.0
        shared = min(2, len(q_exact & _exact_tokens(mt)))
        flag = injection_reason(u.text)
        score = float(cs) + W_LEXICAL * overlap + W_CODE * shared - (FLAG_PENALTY if flag else 0.0)
        scored.append(ScoredUnit(u, c, rank, float(cs), overlap, shared, score, is_condition(u.text), flag))
    clean = [s for s in scored if not s.flagged]
    best = max((s.score for s in clean), default=-1.0)
    evidence = best - (W_MISSING if missing else 0.0)
    best_cos = max((s.cosine for s in clean), default=-1.0)
    return Assessment(question, tuple(scored), evidence, best_cos, missing, rerank_top)


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


def compose_answer(question: str, result: SearchResult, library, config: Config) -> Answer:
    """The cited answer for ``question`` built from ``result``'s final context."""
    notes: list[str] = []
    stage_notes = [f"{s.name}: {s.note}" for s in result.trace.stages
                   if s.note.startswith("degraded")] if result.trace else []
    notes += stage_notes
    if not result.hits:
        return Answer(question, (), (), abstained=True, trace=result.trace,
                      notes=tuple(notes + ["no passage passed the filters"]))
    a = assess(question, result, library, config)
    threshold = abstain_threshold(config)
    if a.evidence < threshold or not a.units:
        consult = tuple(citation_for(i + 1, h.chunk, library.meta_of(h.chunk))
                        for i, h in enumerate(result.hits[: config.answer.to_consult]))
        why = f"evidence {a.evidence:.3f} below threshold {threshold:.3f}"
        if a.missing_codes:
            why += f"; not in these passages: {', '.join(a.missing_codes)}"
        return Answer(question, (), (), abstained=True, to_consult=consult, trace=result.trace,
                      notes=tuple(notes + [f"not found in these documents ({why})"]))

    chosen = _choose(question, a, library, config)
    conditions = _conditions(a, chosen, question, library)
    related_units = list(conditions)

    # conflicts: chosen units against the rest of the context and other versions
    anchors = [s for s in chosen if s.unit.kind in ("sentence", "list_item", "table_row")]
    other_chunks = _other_versions(library, [s.chunk for s in anchors])
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

    anchor_st = [(statement(s.unit, s.chunk, meta(s.chunk), bool(s.flagged)), key(s.chunk)) for s in anchors]
    other_st = [(statement(u, c, meta(c), bool(injection_reason(u.text))), key(c))
                for u, c, _ in others_units]
    conflicts_raw, used = find_conflicts(anchor_st, other_st)

    # assemble claims: (rank, path order, chunk ordinal, unit order) → readable order
    entries: dict[tuple[str, int], tuple[Unit, Chunk, int, bool, str]] = {}
    for s in chosen:
        entries[(s.chunk.id, s.unit.order)] = (s.unit, s.chunk, s.rank, False, s.flagged)
    for s in related_units:
        entries.setdefault((s.chunk.id, s.unit.order), (s.unit, s.chunk, s.rank, True, s.flagged))
    for i in sorted(used):
        u, c, rank = others_units[i]
        entries.setdefault((c.id, u.order), (u, c, rank, is_condition(u.text), injection_reason(u.text)))

    in_context = {h.chunk.id for h in result.hits}
    # passages by rank; a related passage (next section, other version) right after its anchor
    ordered = sorted(entries.values(), key=lambda e: (e[2], e[1].id not in in_context, e[1].path,
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

    # citation numbers of conflict sides: statements were numbered by list index
    conflicts = _renumber(conflicts_raw, keys, numbers)
    if any(cl.flagged for cl in claims):
        notes.append("text that reads as an instruction to the system is shown as quoted evidence "
                     "and was not followed")
    return Answer(question, tuple(claims), tuple(citations), tuple(conflicts), trace=result.trace,
                  notes=tuple(notes))


def _choose(question: str, a: Assessment, library, config: Config) -> list[ScoredUnit]:
    pool = [s for s in a.units if s.unit.kind != "sentence" or len(s.unit.text) >= 3]
    best = max(s.score for s in pool)
    ranked = sorted(pool, key=lambda s: -s.score)
    chosen = [s for s in ranked if s.score >= best - MARGIN][: max(1, config.answer.max_claims)]
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


def _other_versions(library, chunks: Sequence[Chunk]) -> list[tuple[str, Chunk]]:
    """(anchor chunk id, chunk) for the same section in other versions of each anchor's document.

    Uses ``library.other_versions(chunk)`` when the library has it, else
    ``library.documents()`` + ``library.chunks_of(path)``.
    """
    out: list[tuple[str, Chunk]] = []
    seen: set[str] = {c.id for c in chunks}
    finder: Callable[[Chunk], Sequence[Chunk]] | None = getattr(library, "other_versions", None)
    records = None
    for c in chunks:
        if finder is not None:
            found = list(finder(c))
        else:
            if records is None:
                records = list(library.documents())
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
