"""The search stages over one snapshot, each recorded in the trace:

1. eligibility mask (engine.search.eligibility), passed *into* both branches;
2. lexical: ``LexicalIndex.search(q, lexical_depth, eligible=mask)``;
3. vector: ``VectorIndex.search(embed(q), vector_depth, eligible=mask)``;
4. fused: reciprocal rank fusion, one candidate per chunk id, top ``fused_window``; the lexical
   ranking weighs what it can see of the question (``lexical_weight``), and a third ranking
   joins when the question names a device code some document is about (engine.search.devices);
5. order: the top ``rerank_input`` fused candidates in the learned passage order
   (engine.search.order; off without a fitted model: the fused order is kept), those of
   documents about other devices than the question names after the rest;
6. rerank: the cross-encoder over those candidates (engine.search.rerank);
7. context: top ``final_context`` after rerank, duplicates removed, neighbours added within
   ``context_token_budget`` (engine.search.context).

The trace also names what the question names (engine.lang.names) that no eligible passage
mentions at all (``Trace.unknown_names``, from the lexical index's vocabulary under the same mask).

Not done: pseudo-relevance feedback in the vector branch (tried 2026-12-03: the question's
vectors moved toward the mean of the branch's first k passages, q + a * mean, and searched again;
WLED + ZMK train, 150 questions, k / a = 3 / .5, 3 / 1, 5 / 1: vector R@1 .693 -> .673 / .620 /
.640, hybrid .687 -> .673 / .667 / .653, cross-lingual questions worst; full .740 -> .733 / .720 /
.740). A manual's neighbouring passages share its topic, not the question's point, and the
feedback pulls the question toward them.

Modes: ``lexical`` / ``vector`` stop after their branch (hits = that list), ``hybrid`` after
fusion (hits = fused window), ``full`` runs everything (hits = context).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, Literal

import numpy as np

from engine.config import Config
from engine.index.snapshot import Snapshot
from engine.lang.codes import content_question
from engine.lang.names import question_names
from engine.search.context import ContextItem, assemble_context
from engine.search.devices import about_others, mentioned, named_editions, named_products, names_of, other_product
from engine.search.eligibility import Eligibility
from engine.search.fusion import fuse_rrf
from engine.search.order import PassageOrder, QuestionVectors, snapshot_features
from engine.search.rerank import Reranker
from engine.types import Hit, Ranked, SearchResult, Stage, StageStatus, Trace

__all__ = ["MODES", "Mode", "search"]

Mode = Literal["lexical", "vector", "hybrid", "full"]
MODES: tuple[str, ...] = ("lexical", "vector", "hybrid", "full")
Pairs = list[tuple[str, float]]


def search(snap: Snapshot, question: str, mode: Mode, rule: Eligibility, config: Config, embedder: Any,
           reranker: Reranker, exclude: Collection[str] = (), order: PassageOrder | None = None) -> SearchResult:
    """``exclude``: chunk ids treated as ineligible on top of ``rule``; ``order``: the learned
    passage order (None: the fused order is kept)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    rc = config.retrieval
    if snap.generation is None or not snap.chunks:
        note = "index is empty: run `fieldqa index`"
        return SearchResult(question, (), Trace(question, 0, len(snap.chunks), (
            Stage("lexical", (), rc.lexical_depth, 0.0, note),), rule.describe()))
    mask = snap.mask(rule)
    if exclude:
        mask = mask.copy()
        mask[[snap.by_id[c] for c in exclude if c in snap.by_id]] = False
    stages: list[Stage] = []
    lex, vec, qv = _branches(snap, question, mode, mask, config, embedder, stages)
    final = lex if mode == "lexical" else vec
    if mode in ("hybrid", "full"):
        final = _fuse(snap, question, lex, vec, config, stages)
        if mode == "full":
            final = _order(snap, question, qv, final, config, order, stages)
            final = _rerank_and_context(snap, question, final, (lex, vec), mask, config, reranker, stages)
    hits = []
    for rank, (cid, score) in enumerate(final, 1):
        row = snap.by_id[cid]
        m = snap.metas[row]
        hits.append(Hit(snap.chunks[row], rank, score, m.title, m.date, m.status))
    names = question_names(question, snap.known_codes)
    unknown = snap.lexical.unknown(names, mask) if snap.lexical is not None else ()
    trace = Trace(question, int(mask.sum()), len(snap.chunks), tuple(stages), rule.describe(), unknown)
    if qv is None:
        return SearchResult(question, tuple(hits), trace)
    return SearchResult(question, tuple(hits), trace, qv.own, qv.content, qv.tuned, qv.tuned_content)


def _branches(snap: Snapshot, question: str, mode: Mode, mask: np.ndarray, config: Config, embedder: Any,
              stages: list[Stage]) -> tuple[Pairs, Pairs, QuestionVectors | None]:
    """The lexical and vector lists and the question's vectors (None when not embedded): the
    embedder's and the query encoder's and, when it names device codes of the library, those of the
    question without those devices (their codes and the title words before them:
    engine.lang.codes.content_question), embedded in the same call: the answer ranks its
    statements by it."""
    rc = config.retrieval

    def keep(pairs: Sequence[tuple[int, float]]) -> Pairs:
        # defence in depth: a row the mask excludes never leaves a branch
        out, seen = [], set()
        for row, score in pairs:
            cid = snap.chunks[row].id
            if mask[row] and cid not in seen:
                seen.add(cid)
                out.append((cid, float(score)))
        return out

    lex: Pairs = []
    vec: Pairs = []
    qv = None
    if mode in ("lexical", "hybrid", "full"):
        t = time.perf_counter()
        lex = keep(snap.lexical.search(question, rc.lexical_depth, eligible=mask))
        stages.append(_stage("lexical", lex, rc.lexical_depth, t))
    if mode in ("vector", "hybrid", "full"):
        t = time.perf_counter()
        named = mentioned(question, snap.known_codes)
        without = content_question(question, named, names_of(named, snap.device_names))
        texts = [question] if without is None else [question, without]
        both = getattr(embedder, "embed_questions", None)  # with a query encoder's vectors, one run
        if both is not None:
            own, tuned = both(texts)
        else:  # an embedder of another kind (tests): its query encoder's vectors, if it has one
            own, tuned = embedder.embed_queries(texts), getattr(embedder, "tuned_queries", lambda _t: None)(texts)
        vecs = np.asarray(own, dtype=np.float32)
        tvecs = None if tuned is None else np.asarray(tuned, dtype=np.float32)
        qvec = vecs[0]
        qv = QuestionVectors(qvec, None if tvecs is None else tvecs[0], vecs[1] if without is not None else None,
                             tvecs[1] if without is not None and tvecs is not None else None)
        t_embed = (time.perf_counter() - t) * 1000

        def nearest(v: np.ndarray) -> Pairs:
            return keep(snap.vectors.search(v, rc.vector_depth, eligible=mask, ef=rc.hnsw_ef_search,
                                            exact_below=rc.exact_search_below))

        vec = nearest(qvec)
        note = f"query embedding {t_embed:.0f} ms"
        if without is not None:
            note += ", with the question less the devices it names"
        if tuned is not None:  # the query encoder's list merged in; a passage's score stays its cosine
            other = nearest(tvecs[0])
            cos = dict(vec)
            cos.update({c: float(snap.vectors.matrix[snap.by_id[c]] @ qvec) for c, _ in other if c not in cos})
            merged = fuse_rrf([[c for c, _ in vec], [c for c, _ in other]], c=rc.rrf_c)
            vec = [(c, cos[c]) for c, _ in merged][:rc.vector_depth]
            note += f"; merged with the query encoder's list (rrf c={rc.rrf_c})"
        stages.append(_stage("vector", vec, rc.vector_depth, t, note))
    return lex, vec, qv


def lexical_weight(snap: Snapshot, question: str, knee: float) -> float:
    """The lexical ranking's weight in the fusion: ``min(1, sight / knee)``, where ``sight``
    (engine.index.lexical) is the IDF-weighted share of the question's terms the index holds. A
    question in another language than the manuals shares only its identifiers with them (sight
    near 0) and its lexical list is mostly noise; a question in their language (sight above the
    knee) keeps the full weight. ``knee`` 0: plain RRF."""
    if knee <= 0 or snap.lexical is None:
        return 1.0
    return min(1.0, float(snap.lexical.sight(question)) / knee)


def _fuse(snap: Snapshot, question: str, lex: Pairs, vec: Pairs, config: Config, stages: list[Stage]) -> Pairs:
    rc = config.retrieval
    t = time.perf_counter()
    rankings = [[c for c, _ in lex], [c for c, _ in vec]]
    weights = [lexical_weight(snap, question, rc.lexical_sight_knee), 1.0]
    note = f"rrf c={rc.rrf_c}"
    if weights[0] != 1.0:
        note += f"; lexical weight {weights[0]:.2f} (what it can see of the question)"
    named = mentioned(question, snap.known_codes)
    if named:  # a third ranking: candidates from documents about the device (and edition) the question names
        editions = named_editions(question, snap.known_editions)
        order = [c for c, _ in fuse_rrf(rankings, c=rc.rrf_c, weights=weights)]
        rankings.append([c for c in order if snap.device_codes[(p := snap.chunk_of(c).path)] & named
                         and not about_others(snap.editions[p], editions)])
        weights.append(1.0)
        note += (f"; device ranking for {', '.join(sorted(named))}{_editions_note(editions)}: "
                 f"{len(rankings[-1])} candidates")
    fused = [(cid, float(s)) for cid, s in fuse_rrf(rankings, c=rc.rrf_c, weights=weights)][:rc.fused_window]
    stages.append(_stage("fused", fused, rc.fused_window, t, note))
    return fused


def _order(snap: Snapshot, question: str, qv: QuestionVectors | None, fused: Pairs, config: Config,
           order: PassageOrder | None, stages: list[Stage]) -> Pairs:
    """The first ``rerank_input`` fused candidates in the learned passage order; the rest after.
    The cosines are of the vector the model was fitted on (``QuestionVectors.for_order``): of the
    question less the devices it names, when it names some, since every passage of the device's
    manual shares the device's name (the passages about other devices go after all the same)."""
    rc = config.retrieval
    t = time.perf_counter()
    head, tail = fused[:rc.rerank_input], fused[rc.rerank_input:]
    model = order.model() if order is not None else None
    qvec = qv.for_order(model.question_vector) if model is not None and qv is not None else None
    if model is None or qvec is None or not head:
        why = (order.status if order is not None else "none given") if model is None else \
            "no candidates" if not head else "no question vector"
        stages.append(_stage("order", head, rc.rerank_input, t, f"off ({why}); fused order kept", StageStatus.OFF))
        return fused
    chunks = [snap.chunk_of(c) for c, _ in head]
    scores = model.scores(snapshot_features(snap, question, qvec, chunks, order.unit_vectors, model.rank_c))
    # a question naming a device: passages from documents about other devices only go after the rest
    # (engine.search.devices); the named device's and those about no device (what holds for every
    # device: a platform's library reference, a general safety page) keep the learned order; likewise a
    # question naming an edition ("V1.1"): passages of documents about only other editions go after; and
    # a question naming no device code but a product by the name a few titles give it ("the Octopus"):
    # passages of documents about devices whose titles do not name it go after
    named = mentioned(question, snap.known_codes)
    editions = named_editions(question, snap.known_editions)
    products = frozenset() if named else named_products(question, snap.title_names, snap.device_codes, snap.known_codes,
                                                        mentions=lambda w: _mentions(snap, w))
    elsewhere = [int(about_others(snap.device_codes[ch.path], named) or about_others(snap.editions[ch.path], editions)
                     or other_product(snap.title_names[ch.path], snap.device_codes[ch.path], products))
                 for ch in chunks]
    idx = sorted(range(len(head)), key=lambda i: (elsewhere[i], -scores[i], i))
    ordered = [(head[i][0], float(scores[i])) for i in idx]
    note = model.describe() + (f"; passages about other devices than {', '.join(sorted(named))} after"
                               if named else "")
    if editions:
        note += f"; passages about other editions than{_editions_note(editions)} after"
    if products:
        note += f"; passages about other devices than the {', '.join(sorted(products))} after"
    if qv is not None and qv.content is not None:
        note += "; cosines of the question less the devices it names"
    stages.append(_stage("order", ordered, rc.rerank_input, t, note))
    return ordered + tail


def _rerank_and_context(snap: Snapshot, question: str, ordered: Pairs, branches: tuple[Pairs, Pairs],
                        mask: np.ndarray, config: Config, reranker: Reranker, stages: list[Stage]) -> Pairs:
    """``ordered``: the fused list, its head in the order stage's order."""
    rc = config.retrieval
    t = time.perf_counter()
    learned = stages[-1].name == "order" and not stages[-1].passed_through
    reranked, note, status = reranker.rerank(
        question, [(snap.chunk_of(c), s) for c, s in ordered[:rc.rerank_input]],
        branches=([c for c, _ in branches[0]], [c for c, _ in branches[1]]), name="learned" if learned else "fused")
    stages.append(_stage("rerank", reranked, rc.rerank_input, t, note, status))
    t = time.perf_counter()
    ranked = [(snap.chunk_of(c), s) for c, s in reranked]
    ranked += [(snap.chunk_of(c), s) for c, s in ordered[rc.rerank_input:]]
    items = assemble_context(
        ranked, final=rc.final_context, token_budget=rc.context_token_budget,
        meta_of=lambda ch: snap.metas[snap.by_id[ch.id]],
        next_chunk=snap.next_in,
        section_tokens=lambda ch: sum(x.tokens for x in snap.section_of(ch)),
    )
    items = [it for it in items if mask[snap.by_id[it.chunk.id]]]
    final = [(it.chunk.id, it.score) for it in items]
    stages.append(_stage("context", final, rc.final_context, t, _context_note(items)))
    return final


def _mentions(snap: Snapshot, word: str) -> Counter[str]:
    """Per document, how many of its passages hold ``word`` (the lexical index's postings)."""
    rows = snap.lexical.rows_with(word) if snap.lexical is not None else ()
    return Counter(snap.chunks[int(r)].path for r in rows)


def _editions_note(editions: frozenset[str]) -> str:
    return "".join(f" {'rev ' if e.isalpha() else 'v'}{e}" for e in sorted(editions))


def _stage(name: str, pairs: Sequence[tuple[str, float]], window: int, t0: float, note: str = "",
           status: StageStatus = StageStatus.RAN) -> Stage:
    ms = (time.perf_counter() - t0) * 1000
    return Stage(name, tuple(Ranked(cid, i, s) for i, (cid, s) in enumerate(pairs, 1)), window, ms, note,
                 status)


def _context_note(items: Sequence[ContextItem]) -> str:
    n = sum(1 for it in items if it.role == "expansion")
    return f"+{n} expanded (neighbour/short section)" if n else ""
