"""`Library`: open an index, (re)build it incrementally, search it with a per-stage trace.

    lib = Library.open(folder, config)        # loads the current generation (or none yet)
    report = lib.build(progress=cb, cancel=ev) # scan -> chunk -> embed -> index -> switch
    result = lib.search("question")            # hits + Trace(lexical, vector, fused, rerank, context)
    answer = lib.ask("question")               # engine.answer.compose_answer(...)

Stages of ``search(mode="full")``:

1. eligibility mask (engine.eligibility), passed *into* both branches;
2. lexical: ``LexicalIndex.search(q, lexical_depth, eligible=mask)``;
3. vector: ``VectorIndex.search(embed(q), vector_depth, eligible=mask)``;
4. fused: reciprocal rank fusion, one candidate per chunk id, top ``fused_window``;
5. rerank: the cross-encoder over the top ``rerank_input`` fused candidates, its order
   blended with the fused and both branch orders by the weighted RRF learned with the model
   (its manifest's ``blend``, engine.fusion.RerankBlend; ``rerank_learned_blend``), or, for a
   model without one, with the fused order by RRF (``rerank_blend_c``); ``rerank_blend_c = -1``:
   its order alone.  Switched off (``rerank = false``, the default) the fused order is kept
   and the note says ``off``; without a model, on error or past ``rerank_timeout_ms`` it is
   kept and the note says ``degraded: ...``;
6. context: top ``final_context`` after rerank, duplicates removed, neighbours added
   within ``context_token_budget`` (engine.context).

Modes: ``lexical`` / ``vector`` stop after their branch (hits = that list), ``hybrid`` after
fusion (hits = fused window), ``full`` runs everything (hits = context).

Threading: one writer (``build``) and any number of readers.  Readers work on an immutable
snapshot of the current generation; ``build`` swaps it in after the SQLite switch.

Tests inject a stand-in embedder (``tests/hash_embedder.py``); subprocess tests run the CLI
through ``tests/fieldqa_hash.py``, which does the same. Nothing here reads the environment.
"""

from __future__ import annotations

import concurrent.futures
import errno
import hashlib
import json
import shutil
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from engine.config import Config, FilterConfig
from engine.context import ContextItem, assemble_context
from engine.eligibility import Eligibility
from engine.errors import IndexCorrupt
from engine.fusion import blend_orders, fuse_rrf
from engine.store import (
    FORMAT_VERSION, DocumentRecord, IndexMismatch, IndexStore, WriterLock, meta_to_json, rebuild_hint,
)
from engine.devices import document_codes, mentioned
from engine.types import (
    Chunk, Document, DocumentMeta, Hit, IngestIssue, IngestReport, Ranked, SearchResult, Stage, StageStatus,
    Trace,
)

__all__ = ["Library", "BuildProgress", "BuildCancelled", "Mode", "MODES", "EMBED_BATCH"]

Mode = Literal["lexical", "vector", "hybrid", "full"]
MODES: tuple[str, ...] = ("lexical", "vector", "hybrid", "full")
EMBED_BATCH = 64  # passages per embedder call during a build (cache commit + progress + cancel point)
SPACE = "cosine"


@dataclass(frozen=True, slots=True)
class BuildProgress:
    phase: Literal["scan", "chunk", "embed", "index"]
    done: int
    total: int
    eta_s: float | None = None
    note: str = ""


class BuildCancelled(Exception):
    """The build was cancelled; the previous generation is still the current one."""


@dataclass(slots=True)
class _Snapshot:
    """Everything a reader needs, for one generation. Never mutated after publication
    (except the mask cache, whose entries are pure functions of their key)."""

    generation: int | None
    chunks: tuple[Chunk, ...] = ()
    metas: tuple[DocumentMeta, ...] = ()  # per row
    by_id: Mapping[str, int] = field(default_factory=dict)
    by_path: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    doc_meta: Mapping[str, DocumentMeta] = field(default_factory=dict)
    lexical: Any = None
    vectors: Any = None
    manifest: Mapping[str, Any] = field(default_factory=dict)
    masks: dict = field(default_factory=dict)
    device_codes: Mapping[str, frozenset[str]] = field(default_factory=dict)  # doc path -> codes
    known_codes: frozenset[str] = frozenset()
    doc_sha: Mapping[str, str] = field(default_factory=dict)  # doc path -> sha256 of the indexed bytes

    @classmethod
    def of(cls, generation: int | None, chunks: Sequence[Chunk], doc_meta: Mapping[str, DocumentMeta],
           lexical: Any, vectors: Any, manifest: Mapping[str, Any],
           doc_sha: Mapping[str, str] | None = None) -> _Snapshot:
        by_id: dict[str, int] = {}
        by_path: dict[str, list[int]] = {}
        for row, c in enumerate(chunks):
            by_id.setdefault(c.id, row)
            by_path.setdefault(c.path, []).append(row)
        metas = tuple(doc_meta[c.path] for c in chunks)
        codes = {path: document_codes(m) for path, m in doc_meta.items()}
        return cls(generation, tuple(chunks), metas, by_id, {p: tuple(r) for p, r in by_path.items()},
                   dict(doc_meta), lexical, vectors, manifest, {},
                   codes, frozenset().union(*codes.values()) if codes else frozenset(), dict(doc_sha or {}))

    def mask(self, rule: Eligibility) -> np.ndarray:
        m = self.masks.get(rule)
        if m is None:
            m = self.masks[rule] = rule.mask(self.metas)
            m.setflags(write=False)
        return m


def _text_sha(chunk: Chunk) -> str:
    return hashlib.sha256(chunk.search_text.encode("utf-8")).hexdigest()


class Library:
    """One library folder and its index. See the module docstring."""

    def __init__(self, root: Path, config: Config, store: IndexStore, embedder: Any, reranker: Any):
        self.root = root
        self.config = config
        self.store = store
        self.embedder = embedder
        self._reranker = reranker  # CrossEncoder, a str (why unavailable) or None (not tried)
        self._reranker_lock = threading.Lock()
        self._answerability: Any = None  # AnswerabilityModel, a str (why none) or None (not tried)
        self._file_shas: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> sha256
        self._rerank_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._build_lock = threading.Lock()
        self._snap = _Snapshot(None)

    # ---- opening ---------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path, config: Config, index_dir: Path | None = None, *, embedder: Any = None,
             reranker: Any = None, create: bool = True, repair: bool = False) -> Library:
        """Open (or create) the index of ``root``.

        Raises ``IndexCorrupt`` / ``IndexMismatch`` (messages name the rebuild command) when
        the index cannot be used; ``repair=True`` (``fieldqa index --rebuild``) instead
        discards a corrupt database and ignores a mismatched generation, so that
        ``build(rebuild=True)`` can start over.  Raises ``engine.models.ModelError`` when no
        embedder is injected and the model folder is missing.
        """
        root = Path(root)
        index_dir = Path(index_dir) if index_dir is not None else config.index_dir_for(root)
        if embedder is None:
            from engine.models import Embedder

            embedder = Embedder(config.embedder_dir, threads=config.models.threads,
                                max_length=config.models.max_length, batch_size=config.models.batch_size)
        try:
            store = IndexStore.open(index_dir, create=create, library=root)
        except IndexMismatch:
            if not repair:
                raise
            IndexStore.destroy(index_dir)
            store = IndexStore.open(index_dir, create=True, library=root)
        except IndexCorrupt:
            if not repair or not (index_dir / "index.sqlite").exists():
                raise
            IndexStore.destroy(index_dir)
            store = IndexStore.open(index_dir, create=True, library=root)
        lib = cls(root, config, store, embedder, reranker)
        try:
            lib._snap = lib._load_snapshot()
        except IndexCorrupt:
            if not repair:
                store.close()
                raise
        return lib

    @classmethod
    def in_memory(cls, chunks: Sequence[Chunk], doc_meta: Mapping[str, DocumentMeta], lexical: Any,
                  vectors: Any, config: Config, index_dir: Path, *, embedder: Any, reranker: Any = None) -> Library:
        """A library over ready-made chunks and indexes, bypassing ingestion and the store
        (benchmarks at synthetic scale). ``index_dir`` holds an empty store; ``documents()``
        and ``document_text()`` know nothing."""
        store = IndexStore.open(index_dir)
        lib = cls(Path(index_dir), config, store, embedder, reranker)
        lib._snap = _Snapshot.of(0, chunks, doc_meta, lexical, vectors, {})
        return lib

    def close(self) -> None:
        if self._rerank_pool is not None:
            self._rerank_pool.shutdown(wait=False, cancel_futures=True)
        self.store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _expected_manifest(self) -> dict[str, Any]:
        from engine.chunking import CHUNKER_VERSION
        from engine.lexical import TOKENIZER_VERSION

        return {
            "format": FORMAT_VERSION,
            "embedder": {"model_id": self.embedder.model_id, "checksum": self.embedder.checksum,
                         "dim": int(self.embedder.dim)},
            "space": SPACE,
            "lexical": {"tokenizer": TOKENIZER_VERSION},
            "chunking": {"version": CHUNKER_VERSION, "max_tokens": self.config.chunking.max_tokens,
                         "overlap_tokens": self.config.chunking.overlap_tokens,
                         "semantic": self.config.chunking.semantic},
        }

    def _check_manifest(self, manifest: Mapping[str, Any]) -> None:
        want = self._expected_manifest()
        hint = rebuild_hint(self.root)
        problems = []
        for key, label in (("embedder", "embedder"), ("space", "vector space"),
                           ("lexical", "lexical tokenizer"), ("chunking", "chunker settings")):
            if manifest.get(key) != want[key]:
                problems.append(f"{label}: index has {json.dumps(manifest.get(key))}, "
                                f"current is {json.dumps(want[key])}")
        if problems:
            raise IndexMismatch(f"index at {self.store.dir} was built differently ("
                                + "; ".join(problems) + f"): {hint}")

    def _load_snapshot(self) -> _Snapshot:
        from engine.lexical import LexicalIndex
        from engine.vectors import VectorIndex

        gen = self.store.current()
        if gen is None:
            return _Snapshot(None)
        self._check_manifest(gen.manifest)
        hint = rebuild_hint(self.root)
        chunks = self.store.chunks()
        rows = self.store.document_rows()
        doc_meta = {p: m for p, (_sha, _fmt, _mj, m) in rows.items()}
        missing = {c.path for c in chunks} - doc_meta.keys()
        if missing:
            raise IndexCorrupt(f"index at {self.store.dir}: chunks of unknown documents "
                               f"({sorted(missing)[:3]}): {hint}")
        try:
            lexical = LexicalIndex.load(gen.dir / "lexical")
            vectors = VectorIndex.load(gen.dir / "vectors", dim=int(self.embedder.dim))
        except IndexCorrupt as e:
            raise IndexCorrupt(f"{e}: {hint}") from e
        except (OSError, ValueError, RuntimeError) as e:
            raise IndexCorrupt(f"index at {gen.dir} is unreadable ({type(e).__name__}: {e}): {hint}") from e
        if len(lexical) != len(chunks) or len(vectors) != len(chunks):
            raise IndexCorrupt(f"index at {gen.dir}: components hold {len(lexical)}/{len(vectors)} rows, "
                               f"database {len(chunks)}: {hint}")
        return _Snapshot.of(gen.number, chunks, doc_meta, lexical, vectors, gen.manifest,
                            {p: sha for p, (sha, _f, _m, _meta) in rows.items()})

    # ---- building --------------------------------------------------------------------

    def build(self, progress: Callable[[BuildProgress], None] | None = None,
              cancel: threading.Event | None = None, rebuild: bool = False) -> IngestReport:
        """Scan the library, re-chunk changed files, embed new texts, switch to a new generation.

        A document is re-chunked only when its bytes (sha256) or metadata changed, or with
        ``rebuild``. Embeddings come from the cache when (model checksum, text) is known.
        Raises ``BuildCancelled`` when ``cancel`` is set; the previous generation stays.
        """
        report = progress or (lambda p: None)

        def check() -> None:
            if cancel is not None and cancel.is_set():
                raise BuildCancelled("build cancelled; the previous index is unchanged")

        if self.store.read_only:
            raise OSError(errno.EROFS, f"the index at {self.store.dir} is on read-only media: it can be "
                                       "searched, not rebuilt there")
        # one writer: threads of this process queue; another process is refused (IndexBusy)
        with self._build_lock, WriterLock(self.store.dir):
            return self._build_locked(report, check, rebuild)

    def _build_locked(self, report: Callable[[BuildProgress], None], check: Callable[[], None],
                      rebuild: bool) -> IngestReport:
        from engine.chunking import chunk_document
        from engine.ingest import iter_library
        from engine.lexical import LexicalIndex
        from engine.vectors import VectorIndex

        fingerprint = self._fingerprint()
        if (not rebuild and self._snap.generation is not None
                and self.store.get_info("fingerprint") == fingerprint):
            # no file added, removed or touched since the last build: nothing to read
            report(BuildProgress("scan", 0, 0, note="unchanged"))
            docs_now = self.store.documents()
            return IngestReport(documents=len(docs_now), chunks=len(self._snap.chunks),
                                issues=tuple(self.store.issues()), unchanged=len(docs_now), removed=0)
        self.store.remove_stale_generations()
        old_docs = {} if rebuild else self.store.document_rows()
        old_chunks: dict[str, list[Chunk]] = {}
        if old_docs and self._snap.generation is not None:
            for c in self._snap.chunks:
                old_chunks.setdefault(c.path, []).append(c)
        # scan
        docs: list[tuple[Document, list | None]] = []
        issues: list[IngestIssue] = []
        report(BuildProgress("scan", 0, 0))
        for item in iter_library(self.root, self.config.chunking):
            check()
            if isinstance(item, IngestIssue):
                issues.append(item)
                continue
            docs.append(item)
            report(BuildProgress("scan", len(docs), 0))
        docs.sort(key=lambda d: d[0].path)
        # chunk
        chunks_by_doc: list[list[Chunk]] = []
        unchanged = 0
        t0 = time.monotonic()
        for i, (doc, blocks) in enumerate(docs):
            check()
            old = old_docs.get(doc.path)
            if old is not None and old[0] == doc.sha256 and old[2] == meta_to_json(doc.meta) \
                    and doc.path in old_chunks:
                chunks_by_doc.append(old_chunks[doc.path])
                unchanged += 1
            else:
                chunks_by_doc.append(list(chunk_document(doc, blocks, self.embedder.count_tokens,
                                                         self.config.chunking)))
            report(BuildProgress("chunk", i + 1, len(docs), _eta(t0, i + 1, len(docs))))
        removed = len(set(old_docs) - {d.path for d, _b in docs})
        if (not rebuild and self._snap.generation is not None and unchanged == len(docs)
                and removed == 0 and set(issues) == set(self.store.issues())):
            self.store.set_info("fingerprint", fingerprint)
            return IngestReport(documents=len(docs), chunks=len(self._snap.chunks), issues=tuple(issues),
                                unchanged=unchanged, removed=0)
        chunks = [c for cs in chunks_by_doc for c in cs]
        shas = [_text_sha(c) for c in chunks]
        # embed
        vectors = self._embed_all(chunks, shas, report, check)
        # index
        check()
        report(BuildProgress("index", 0, 2))
        lexical = LexicalIndex.build([c.search_text for c in chunks])
        report(BuildProgress("index", 1, 2))
        vindex = VectorIndex.build(vectors, m=self.config.retrieval.hnsw_m,
                                   ef_construction=self.config.retrieval.hnsw_ef_construction)
        check()
        number, gdir = self.store.new_generation_dir()
        try:
            lexical.save(gdir / "lexical")
            vindex.save(gdir / "vectors")
            manifest = {**self._expected_manifest(), "generation": number, "chunks": len(chunks),
                        "documents": len(docs), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
            doc_rows = [(d.path, d.meta.doc_id, d.sha256, d.format, meta_to_json(d.meta), d.meta.status,
                         len(cs), d.text, json.dumps(list(d.page_starts)))
                        for (d, _b), cs in zip(docs, chunks_by_doc)]
            check()
            self.store.commit_generation(number, gdir, manifest, doc_rows, chunks, shas, issues,
                                         info={"fingerprint": fingerprint})
        except BaseException:
            # nothing points at gdir yet: the next build would delete it; do it now
            shutil.rmtree(gdir, ignore_errors=True)
            raise
        report(BuildProgress("index", 2, 2))
        doc_meta = {d.path: d.meta for d, _b in docs}
        self._snap = _Snapshot.of(number, chunks, doc_meta, lexical, vindex, manifest,
                                  {d.path: d.sha256 for d, _b in docs})
        self.store.remove_stale_generations()
        return IngestReport(documents=len(docs), chunks=len(chunks), issues=tuple(issues),
                            unchanged=unchanged, removed=removed)

    def _fingerprint(self) -> str:
        """Hash of every candidate file's (path, size, mtime) and of the settings a build depends on.

        Equal fingerprints mean a build would find nothing to do, so it is skipped without
        parsing; any change (even a touch) falls back to the sha256 comparison per file.
        """
        from engine.ingest import scan_library

        h = hashlib.sha256(json.dumps(self._expected_manifest(), sort_keys=True).encode())
        h.update(repr(self.config.chunking).encode())
        if self.root.is_dir():
            for p in scan_library(self.root, self.config.chunking):
                try:
                    st = p.stat()
                except OSError:
                    continue
                h.update(f"{p.relative_to(self.root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\0"
                         f"{st.st_ctime_ns}\0{st.st_ino}\n".encode("utf-8", "surrogateescape"))
            side = self.root / "fieldqa.toml"
            if side.is_file():
                h.update(side.read_bytes())
        return h.hexdigest()

    def _embed_all(self, chunks: Sequence[Chunk], shas: Sequence[str],
                   report: Callable[[BuildProgress], None], check: Callable[[], None]) -> np.ndarray:
        dim = int(self.embedder.dim)
        checksum = self.embedder.checksum
        out = np.zeros((len(chunks), dim), np.float32)
        cached = self.store.cached_embeddings(checksum, shas)
        todo: dict[str, str] = {}  # sha -> text, first occurrence
        for c, sha in zip(chunks, shas):
            if sha not in cached and sha not in todo:
                todo[sha] = c.search_text
        total = len(todo)
        report(BuildProgress("embed", 0, total, note=f"{len(cached)} cached"))
        items = sorted(todo.items(), key=lambda kv: len(kv[1]))  # similar lengths batch well
        t0 = time.monotonic()
        done = 0
        for i in range(0, len(items), EMBED_BATCH):
            check()
            part = items[i:i + EMBED_BATCH]
            vecs = np.asarray(self.embedder.embed_passages([t for _s, t in part]), dtype=np.float32)
            if vecs.shape != (len(part), dim):
                raise ValueError(f"embedder returned shape {vecs.shape}, expected ({len(part)}, {dim})")
            self.store.put_embeddings(checksum, [(s, v) for (s, _t), v in zip(part, vecs)])
            cached.update({s: v for (s, _t), v in zip(part, vecs)})
            done += len(part)
            report(BuildProgress("embed", done, total, _eta(t0, done, total)))
        for row, sha in enumerate(shas):
            out[row] = cached[sha]
        return out

    # ---- searching -------------------------------------------------------------------

    def eligibility(self, filters: FilterConfig | None = None) -> Eligibility:
        return Eligibility.from_filters(filters if filters is not None else self.config.filters)

    def search(self, question: str, *, mode: Mode = "full", filters: FilterConfig | None = None,
               exclude: Collection[str] = ()) -> SearchResult:
        """``exclude``: chunk ids treated as ineligible on top of the filters (evaluation builds
        "not in these documents" cases by removing a question's gold passages)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        snap = self._snap
        rc = self.config.retrieval
        rule = self.eligibility(filters)
        stages: list[Stage] = []
        if snap.generation is None or not snap.chunks:
            note = "index is empty: run `fieldqa index`"
            return SearchResult(question, (), Trace(question, 0, len(snap.chunks), (
                Stage("lexical", (), rc.lexical_depth, 0.0, note),), rule.describe()))
        mask = snap.mask(rule)
        if exclude:
            mask = mask.copy()
            mask[[snap.by_id[c] for c in exclude if c in snap.by_id]] = False
        eligible = int(mask.sum())

        def keep(pairs: Sequence[tuple[int, float]]) -> list[tuple[str, float]]:
            # defence in depth: a row the mask excludes never leaves a branch
            out, seen = [], set()
            for row, score in pairs:
                cid = snap.chunks[row].id
                if mask[row] and cid not in seen:
                    seen.add(cid)
                    out.append((cid, float(score)))
            return out

        lex: list[tuple[str, float]] = []
        vec: list[tuple[str, float]] = []
        if mode in ("lexical", "hybrid", "full"):
            t = time.perf_counter()
            lex = keep(snap.lexical.search(question, rc.lexical_depth, eligible=mask))
            stages.append(_stage("lexical", lex, rc.lexical_depth, t))
        if mode in ("vector", "hybrid", "full"):
            t = time.perf_counter()
            qvec = np.asarray(self.embedder.embed_queries([question]), dtype=np.float32)[0]
            t_embed = (time.perf_counter() - t) * 1000
            vec = keep(snap.vectors.search(qvec, rc.vector_depth, eligible=mask, ef=rc.hnsw_ef_search,
                                           exact_below=rc.exact_search_below))
            stages.append(_stage("vector", vec, rc.vector_depth, t, f"query embedding {t_embed:.0f} ms"))
        final: list[tuple[str, float]]
        if mode == "lexical":
            final = lex
        elif mode == "vector":
            final = vec
        else:

            t = time.perf_counter()
            rankings = [[c for c, _ in lex], [c for c, _ in vec]]
            note = f"rrf c={rc.rrf_c}"
            named = mentioned(question, snap.known_codes)
            if named:  # a third ranking: candidates from documents about the device the question names
                order = [c for c, _ in fuse_rrf(rankings, c=rc.rrf_c)]
                rankings.append([c for c in order if snap.device_codes[snap.chunks[snap.by_id[c]].path] & named])
                note += f"; device ranking for {', '.join(sorted(named))}: {len(rankings[-1])} candidates"
            fused = [(cid, float(s)) for cid, s in fuse_rrf(rankings, c=rc.rrf_c)][:rc.fused_window]
            stages.append(_stage("fused", fused, rc.fused_window, t, note))
            final = fused
            if mode == "full":
                t = time.perf_counter()
                reranked, note, status = self._rerank(question, [(snap.chunks[snap.by_id[c]], s)
                                                         for c, s in fused[:rc.rerank_input]],
                                              branches=([c for c, _ in lex], [c for c, _ in vec]))
                stages.append(_stage("rerank", reranked, rc.rerank_input, t, note, status))
                t = time.perf_counter()
                ranked = [(snap.chunks[snap.by_id[c]], s) for c, s in reranked]
                ranked += [(snap.chunks[snap.by_id[c]], s) for c, s in fused[rc.rerank_input:]]
                items = assemble_context(
                    ranked, final=rc.final_context, token_budget=rc.context_token_budget,
                    meta_of=lambda ch: snap.metas[snap.by_id[ch.id]],
                    next_chunk=lambda ch: self._next_in(snap, ch),
                    section_tokens=lambda ch: sum(x.tokens for x in self._section_in(snap, ch)),
                )
                items = [it for it in items if mask[snap.by_id[it.chunk.id]]]
                final = [(it.chunk.id, it.score) for it in items]
                stages.append(_stage("context", final, rc.final_context, t, _context_note(items)))
        hits = []
        for rank, (cid, score) in enumerate(final, 1):
            row = snap.by_id[cid]
            m = snap.metas[row]
            hits.append(Hit(snap.chunks[row], rank, score, m.title, m.date, m.status))
        trace = Trace(question, eligible, len(snap.chunks), tuple(stages), rule.describe())
        return SearchResult(question, tuple(hits), trace)

    def _rerank(self, question: str, cands: Sequence[tuple[Chunk, float]],
                branches: tuple[Sequence[str], Sequence[str]] = ((), ()),
                ) -> tuple[list[tuple[str, float]], str, StageStatus]:
        """``cands`` in fused order; ``branches``: the lexical and vector id lists (for a
        model that carries a learned blend, engine.fusion.RerankBlend)."""
        kept = [(c.id, s) for c, s in cands]
        off, degraded = StageStatus.OFF, StageStatus.DEGRADED
        if not cands:
            return kept, "", StageStatus.RAN
        if not self.config.retrieval.rerank:
            return kept, "off (retrieval.rerank = false); fused order kept", off
        model = self._get_reranker()
        if isinstance(model, str):
            return kept, f"degraded: {model}; fused order kept", degraded
        timeout = self.config.retrieval.rerank_timeout_ms / 1000.0
        if self._rerank_pool is None:
            self._rerank_pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rerank")
        fut = self._rerank_pool.submit(model.score, question, [c.search_text for c, _ in cands])
        try:
            scores = np.asarray(fut.result(timeout=timeout), dtype=np.float64)
        except concurrent.futures.TimeoutError:
            return kept, (f"degraded: reranker exceeded {self.config.retrieval.rerank_timeout_ms} ms; "
                          "fused order kept"), degraded
        except Exception as e:  # a failing model must not take search down: visible, not silent
            return kept, f"degraded: reranker failed ({type(e).__name__}: {e}); fused order kept", degraded
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
        c = self.config.retrieval.rerank_blend_c
        blend = getattr(model, "blend", None) if self.config.retrieval.rerank_learned_blend else None
        note = f"cross-encoder {model.model_id}"
        if c < 0:
            blended = order
        elif blend is not None:
            ids = [ch.id for ch, _ in cands]
            at = {cid: i for i, cid in enumerate(ids)}
            blended = [at[cid] for cid in blend.order(ids, [ids[i] for i in order], *branches)]
            note += f", blended with the fused and branch orders ({blend.describe()})"
        else:
            blended = blend_orders(range(len(cands)), order, c)  # the candidates come in fused order
            note += f", blended with the fused order (RRF c={c})"
        return [(cands[i][0].id, float(scores[i])) for i in blended], note, StageStatus.RAN

    def _get_reranker(self) -> Any:
        with self._reranker_lock:
            if self._reranker is None:
                d = self.config.reranker_dir
                if d is None:
                    self._reranker = "no reranker configured (models.reranker = '')"
                elif not (d / "model.onnx").is_file():
                    self._reranker = f"no reranker model at {d}"
                else:
                    from engine.models import CrossEncoder, ModelError

                    try:
                        self._reranker = CrossEncoder(d, threads=self.config.models.threads,
                                                      max_length=self.config.models.rerank_max_length)
                    except ModelError as e:
                        self._reranker = f"reranker unavailable ({e})"
            return self._reranker

    @property
    def reranker_status(self) -> str:
        if not self.config.retrieval.rerank:
            return "off: retrieval.rerank = false"
        r = self._get_reranker()
        return f"degraded: {r}" if isinstance(r, str) else f"ready: {r.model_id}"

    def ask(self, question: str, filters: FilterConfig | None = None, exclude: Collection[str] = ()):
        from engine.answer import compose_answer

        result = self.search(question, mode="full", filters=filters, exclude=exclude)
        return self._flag_changed(compose_answer(question, result, self, self.config, self.eligibility(filters)))

    def answer(self, result: SearchResult, filters: FilterConfig | None = None):
        """The cited answer continuing from a ``search(mode="full")`` result (searched with the
        same ``filters``): a UI that already shows the hits does not search twice."""
        from engine.answer import compose_answer

        return self._flag_changed(compose_answer(result.question, result, self, self.config,
                                                 self.eligibility(filters)))

    def _flag_changed(self, answer: Any) -> Any:
        """Mark the citations whose source file no longer matches what was indexed, and say so:
        the quoted text may no longer be what the manual says."""
        changed = {c.path for c in (*answer.citations, *answer.to_consult) if self.source_changed(c.path)}
        if not changed:
            return answer
        mark = lambda cs: tuple(replace(c, changed=c.path in changed) for c in cs)  # noqa: E731
        note = (f"changed since indexing: {', '.join(sorted(changed))}; run `fieldqa index {self.root}` "
                "before relying on these quotes")
        return replace(answer, citations=mark(answer.citations), to_consult=mark(answer.to_consult),
                       notes=answer.notes + (note,))

    def source_changed(self, path: str) -> bool:
        """Does the file at ``path`` (relative to the library) differ from the indexed bytes?
        Files are hashed once per (size, mtime); a vanished file counts as changed."""
        recorded = self._snap.doc_sha.get(path)
        if recorded is None:
            return False
        try:
            st = (self.root / path).stat()
        except OSError:
            return True
        key = (path, st.st_size, st.st_mtime_ns)
        sha = self._file_shas.get(key)
        if sha is None:
            try:
                sha = hashlib.sha256((self.root / path).read_bytes()).hexdigest()
            except OSError:
                return True
            self._file_shas[key] = sha
        return sha != recorded

    def answerability_model(self) -> Any:
        """The learned answerability model (engine.answerability) fitted for this embedder, or
        None (no model configured or found, or fitted with another embedder: the hand rule
        applies, and ``answerability_status`` says why)."""
        with self._reranker_lock:
            if self._answerability is None:
                self._answerability = self._load_answerability()
            return None if isinstance(self._answerability, str) else self._answerability

    @property
    def answerability_status(self) -> str:
        model = self.answerability_model()
        return f"learned: {model.source}" if model is not None else f"hand rule: {self._answerability}"

    def _load_answerability(self) -> Any:
        from engine.answerability import load_model

        path = self.config.answerability_path
        if path is None:
            return "answer.answerability = ''"
        if not path.is_file():
            return f"no answerability model at {path}"
        try:
            model = load_model(path)
        except (OSError, ValueError) as e:
            return f"answerability model unreadable ({e})"
        if model.embedder_checksum != self.embedder.checksum:
            return f"{path} was fitted with another embedder"
        return model

    def reranker_checksum(self) -> str | None:
        model = self._get_reranker()
        return None if isinstance(model, str) else model.checksum

    def lexical_sight(self, question: str) -> float:
        """engine.lexical.LexicalIndex.sight for this library (0.0 before the first build)."""
        lexical = self._snap.lexical
        return lexical.sight(question) if lexical is not None else 0.0

    def cross_scores(self, question: str, chunks: Sequence[Chunk]) -> np.ndarray | None:
        """The cross-encoder's logits for (question, chunk) pairs, whether or not the rerank
        stage is on; None when no cross-encoder is available (its absence is the status)."""
        model = self._get_reranker()
        if isinstance(model, str) or not chunks:
            return None
        return np.asarray(model.score(question, [c.search_text for c in chunks]), dtype=np.float64)

    # ---- accessors -------------------------------------------------------------------

    @property
    def generation(self) -> int | None:
        return self._snap.generation

    def __len__(self) -> int:
        return len(self._snap.chunks)

    def all_chunks(self) -> tuple[Chunk, ...]:
        return self._snap.chunks

    def documents(self) -> list[DocumentRecord]:
        return self.store.documents()

    def issues(self) -> list[IngestIssue]:
        return self.store.issues()

    def chunk(self, chunk_id: str) -> Chunk:
        snap = self._snap
        try:
            return snap.chunks[snap.by_id[chunk_id]]
        except KeyError:
            raise KeyError(f"no chunk {chunk_id!r} in the index") from None

    def chunks_of(self, path: str) -> list[Chunk]:
        snap = self._snap
        return [snap.chunks[r] for r in snap.by_path.get(path, ())]

    @staticmethod
    def _next_in(snap: _Snapshot, chunk: Chunk) -> Chunk | None:
        rows = snap.by_path.get(chunk.path, ())
        row = snap.by_id.get(chunk.id)
        if row is None or row not in rows:
            return None
        i = rows.index(row)
        return snap.chunks[rows[i + 1]] if i + 1 < len(rows) else None

    @staticmethod
    def _section_in(snap: _Snapshot, chunk: Chunk) -> list[Chunk]:
        return [snap.chunks[r] for r in snap.by_path.get(chunk.path, ())
                if snap.chunks[r].section_id == chunk.section_id]

    def neighbours(self, chunk_id: str) -> tuple[Chunk | None, Chunk | None]:
        snap = self._snap
        c = self.chunk(chunk_id)
        rows = snap.by_path[c.path]
        i = rows.index(snap.by_id[chunk_id])
        prev = snap.chunks[rows[i - 1]] if i > 0 else None
        nxt = snap.chunks[rows[i + 1]] if i + 1 < len(rows) else None
        return prev, nxt

    def section(self, chunk_id: str) -> list[Chunk]:
        return self._section_in(self._snap, self.chunk(chunk_id))

    def document_text(self, path: str) -> str:
        text = self.store.document_text(path)
        if text is None:
            raise KeyError(f"no document {path!r} in the index")
        return text

    def meta_of(self, item: str | Chunk) -> DocumentMeta:
        path = item.path if isinstance(item, Chunk) else item
        try:
            return self._snap.doc_meta[path]
        except KeyError:
            raise KeyError(f"no document {path!r} in the index") from None


def _stage(name: str, pairs: Sequence[tuple[str, float]], window: int, t0: float, note: str = "",
           status: StageStatus = StageStatus.RAN) -> Stage:
    ms = (time.perf_counter() - t0) * 1000
    return Stage(name, tuple(Ranked(cid, i, s) for i, (cid, s) in enumerate(pairs, 1)), window, ms, note,
                 status)


def _context_note(items: Sequence[ContextItem]) -> str:
    n = sum(1 for it in items if it.role == "expansion")
    return f"+{n} expanded (neighbour/short section)" if n else ""


def _eta(t0: float, done: int, total: int) -> float | None:
    if done <= 0 or total <= 0:
        return None
    elapsed = time.monotonic() - t0
    return elapsed / done * (total - done)

