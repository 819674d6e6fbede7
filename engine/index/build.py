"""Building a generation: scan -> chunk -> embed -> index -> switch.

A document is re-chunked only when its bytes (sha256) or metadata changed, or on a rebuild.
Embeddings come from the store's cache when (model checksum, text) is known, and are committed
in batches, so a cancelled or killed build keeps what it paid for. The new generation's files
are written beside the current one and the switch is one SQLite transaction (engine.index.store);
until it commits, readers and a killed build see the previous generation.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np

from engine.config import Config
from engine.index.rows import meta_to_json, text_sha, unit_sha
from engine.index.snapshot import Snapshot
from engine.index.store import IndexStore
from engine.lang.units import UNITS_VERSION
from engine.types import Chunk, Document, IngestIssue, IngestReport

__all__ = ["BuildCancelled", "BuildProgress", "EMBED_BATCH", "Indexer", "UnitVectors", "embed_units", "text_sha",
           "unit_cache_key"]

T = TypeVar("T")
EMBED_BATCH = 64  # passages per embedder call during a build (cache commit + progress + cancel point)


@dataclass(frozen=True, slots=True)
class BuildProgress:
    phase: Literal["scan", "chunk", "embed", "index", "units"]  # units: after the switch, already searchable
    done: int
    total: int
    eta_s: float | None = None
    note: str = ""


class BuildCancelled(Exception):
    """The build was cancelled; the previous generation is still the current one."""


Report = Callable[[BuildProgress], None]
Check = Callable[[], None]


@dataclass(slots=True)
class Indexer:
    """One build of ``root`` into ``store``, from the ``current`` snapshot."""

    root: Path
    config: Config
    store: IndexStore
    embedder: Any
    current: Snapshot
    manifest: Mapping[str, Any]  # what the index records about models, tokenizer and chunker
    units: UnitVectors | None = None  # pooled: unit vectors come with the embed phase
    pooled: set[str] = field(default_factory=set)  # shas of the chunk texts whose units this run pooled

    def run(self, report: Report, check: Check, rebuild: bool) -> tuple[IngestReport, Snapshot | None]:
        """The build's report, and the new snapshot (None when nothing changed)."""
        fingerprint = self.fingerprint()
        if not rebuild and self.current.generation is not None and self.store.get_info("fingerprint") == fingerprint:
            # no file added, removed or touched since the last build: nothing to read
            report(BuildProgress("scan", 0, 0, note="unchanged"))
            docs_now = self.store.documents()
            return IngestReport(documents=len(docs_now), chunks=len(self.current.chunks),
                                issues=tuple(self.store.issues()), unchanged=len(docs_now), removed=0), None
        self.store.remove_stale_generations()
        old_docs = {} if rebuild else self.store.document_rows()
        docs, issues = self._scan(report, check)
        chunks_by_doc, unchanged = self._chunk(docs, old_docs, report, check)
        removed = len(set(old_docs) - {d.path for d, _b in docs})
        if (not rebuild and self.current.generation is not None and unchanged == len(docs)
                and removed == 0 and set(issues) == set(self.store.issues())):
            self.store.set_info("fingerprint", fingerprint)
            return IngestReport(documents=len(docs), chunks=len(self.current.chunks), issues=tuple(issues),
                                unchanged=unchanged, removed=0), None
        snap = self._write(docs, chunks_by_doc, issues, fingerprint, report, check)
        self.store.remove_stale_generations()
        return IngestReport(documents=len(docs), chunks=len(snap.chunks), issues=tuple(issues),
                            unchanged=unchanged, removed=removed), snap

    def _scan(self, report: Report, check: Check) -> tuple[list[tuple[Document, list]], list[IngestIssue]]:
        from engine.ingest import iter_library

        docs: list[tuple[Document, list]] = []
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
        return docs, issues

    def _chunk(self, docs: Sequence[tuple[Document, list]], old_docs: Mapping[str, tuple], report: Report,
               check: Check) -> tuple[list[list[Chunk]], int]:
        """Chunks per document (an unchanged document keeps its chunks) and how many were unchanged."""
        from engine.ingest.chunking import chunk_document

        old_chunks: dict[str, list[Chunk]] = {}
        if old_docs and self.current.generation is not None:
            for c in self.current.chunks:
                old_chunks.setdefault(c.path, []).append(c)
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
            report(BuildProgress("chunk", i + 1, len(docs), eta(t0, i + 1, len(docs))))
        return chunks_by_doc, unchanged

    def _write(self, docs: Sequence[tuple[Document, list]], chunks_by_doc: Sequence[list[Chunk]],
               issues: Sequence[IngestIssue], fingerprint: str, report: Report, check: Check) -> Snapshot:
        """Embed, build both indexes, write the generation and switch to it."""
        from engine.index.lexical import LexicalIndex
        from engine.index.vectors import VectorIndex

        chunks = [c for cs in chunks_by_doc for c in cs]
        shas = [text_sha(c) for c in chunks]
        vectors = self.embed_all(chunks, shas, report, check)
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
            manifest = {**self.manifest, "generation": number, "chunks": len(chunks),
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
        return Snapshot.of(number, chunks, {d.path: d.meta for d, _b in docs}, lexical, vindex, manifest,
                           {d.path: d.sha256 for d, _b in docs})

    def fingerprint(self) -> str:
        """Hash of every candidate file's (path, size, mtime) and of the settings a build depends on.

        Equal fingerprints mean a build would find nothing to do, so it is skipped without
        parsing; any change (even a touch) falls back to the sha256 comparison per file.
        """
        from engine.ingest import scan_library

        h = hashlib.sha256(json.dumps(self.manifest, sort_keys=True).encode())
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

    def embed_all(self, chunks: Sequence[Chunk], shas: Sequence[str], report: Report, check: Check) -> np.ndarray:
        texts = dict(zip(shas, (c.search_text for c in chunks)))  # sha -> text, first occurrence kept
        units = None
        if self.units is not None and self.units.pooled:
            first = dict(zip(reversed(shas), reversed(chunks)))  # sha -> its first chunk
            spans = self.units.spans
            units = (self.units.key, lambda sha: spans(first[sha]))  # read for the texts embedded only
        embed_missing(self.store, self.embedder, self.embedder.checksum, texts, "embed", report, check, units,
                      self.pooled)
        vecs = self.store.cached_embeddings(self.embedder.checksum, texts)
        out = np.zeros((len(chunks), int(self.embedder.dim)), np.float32)
        for row, sha in enumerate(shas):
            out[row] = vecs[sha]
        return out


@dataclass(frozen=True, slots=True)
class UnitVectors:
    """How the answer units' vectors are made and kept: ``spans(chunk)`` gives each unit's key
    text and its character span in ``chunk.search_text`` (engine.answer.units.unit_spans);
    ``pooled``: from the chunk's own forward pass (late chunking, during the embed phase), else
    one pass per unit after the switch."""

    spans: Callable[[Chunk], Sequence[tuple[str, int, int]]]
    pooled: bool
    checksum: str

    @property
    def key(self) -> str:
        return unit_cache_key(self.checksum, self.pooled)


def unit_cache_key(checksum: str, pooled: bool) -> str:
    """The embedding cache's model key for answer units (kept apart from the chunks' vectors, and
    pooled vectors apart from those of a pass of their own)."""
    return f"{checksum}:pooled:units" if pooled else f"{checksum}:units"  # the store keeps "*:units"


def embed_missing(store: IndexStore, embedder: Any, model_key: str, texts: Mapping[str, str], phase: str,
                  report: Report, check: Check,
                  units: tuple[str, Callable[[str], Sequence[tuple[str, int, int]]]] | None = None,
                  pooled: set[str] | None = None) -> int:
    """Embed the ``texts`` (sha -> text) the cache does not hold, in batches (shortest first:
    similar lengths batch well), each batch committed to the cache as it comes. With ``units``
    (cache key, sha -> the units' key texts and spans), each unit's vector is pooled from the same
    forward pass and cached under that key (a unit seen in several passages keeps its first
    vector), and the text's sha added to ``pooled``. Returns how many texts were embedded."""
    dim = int(embedder.dim)
    held = store.cached_shas(model_key, texts)
    todo = sorted(((sha, t) for sha, t in texts.items() if sha not in held), key=lambda kv: len(kv[1]))
    total = len(todo)
    report(BuildProgress(phase, 0, total, note=f"{len(held)} cached"))
    pooled_seen: set[str] = set()
    for part in in_batches(todo, phase, report, check):
        if units is None:
            vecs = np.asarray(embedder.embed_passages([t for _s, t in part]), dtype=np.float32)
        else:
            key, spans = units
            vecs, rows = embed_pooled(embedder, [t for _s, t in part], [spans(s) for s, _t in part], pooled_seen)
            store.put_embeddings(key, rows)
            if pooled is not None:
                pooled.update(s for s, _t in part)
        if vecs.shape != (len(part), dim):
            raise ValueError(f"embedder returned shape {vecs.shape}, expected ({len(part)}, {dim})")
        store.put_embeddings(model_key, [(s, v) for (s, _t), v in zip(part, vecs)])
    return total


def in_batches(items: Sequence[T], phase: str, report: Report, check: Check) -> Iterator[Sequence[T]]:
    """``items`` in batches of ``EMBED_BATCH``: a cancel point before each, progress after each."""
    t0 = time.monotonic()
    for i in range(0, len(items), EMBED_BATCH):
        check()
        part = items[i:i + EMBED_BATCH]
        yield part
        report(BuildProgress(phase, i + len(part), len(items), eta(t0, i + len(part), len(items))))


def embed_pooled(embedder: Any, texts: Sequence[str], spans: Sequence[Sequence[tuple[str, int, int]]],
                 seen: set[str]) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """One forward pass over ``texts``: their vectors, and (unit sha, vector) for every unit span
    the model's window covers whose sha is not in ``seen`` (updated)."""
    vecs, pooled = embedder.embed_passages_pooled(texts, [[(a, b) for _t, a, b in sp] for sp in spans])
    rows = []
    for sp, got in zip(spans, pooled):
        for (t, _a, _b), v in zip(sp, got):
            sha = unit_sha(t)
            if v is not None and sha not in seen:
                seen.add(sha)
                rows.append((sha, v))
    return np.asarray(vecs, dtype=np.float32), rows


UNITS_DONE = "units_generation"  # info key: the generation whose answer units are all embedded


def embed_units(store: IndexStore, embedder: Any, chunks: Sequence[Chunk], units: UnitVectors,
                report: Report, check: Check, pooled: Collection[str] = ()) -> int:
    """After a switch: the vectors of every answer unit the cache does not hold yet, computed now,
    not while a technician waits for an answer; the cache keeps only the current ones. Pooled
    units come from their chunk's forward pass (the embed phase already stored those of the
    chunks it embedded, ``pooled``: their texts' shas; this pass covers chunks embedded before,
    under another unit setting); a unit beyond the model's window, or every unit when not
    pooled, gets a pass of its own.
    Returns how many units were embedded (0 when this generation's units are already done). A
    cancel stops it; answers then embed what is missing, and the next build finishes it."""
    key = units.key
    # units cut another way (engine.lang.units.UNITS_VERSION) are other texts: embed those missing
    done_for = f"{store.current_number()}:{key}:{UNITS_VERSION}"
    if store.get_info(UNITS_DONE) == done_for:
        return 0
    spans = {c.id: units.spans(c) for c in chunks}
    texts = {unit_sha(t): t for sp in spans.values() for t, _a, _b in sp}
    try:
        embedded = 0
        if units.pooled:
            held = store.cached_shas(key, texts)
            todo = list({c.search_text: c for c in chunks if text_sha(c) not in pooled
                         and any(unit_sha(t) not in held for t, _a, _b in spans[c.id])}.values())
            report(BuildProgress("units", 0, len(todo), note=f"{len(texts) - len(held)} units to pool"))
            seen = set(held)
            for part in in_batches(todo, "units", report, check):
                _vecs, rows = embed_pooled(embedder, [c.search_text for c in part], [spans[c.id] for c in part], seen)
                store.put_embeddings(key, rows)
                embedded += len(rows)
        embedded += embed_missing(store, embedder, key, texts, "units", report, check)
    except BuildCancelled:
        return 0
    store.prune_embeddings(key, keep=texts.keys())
    store.drop_unit_vectors_except(key)
    store.set_info(UNITS_DONE, done_for)
    return embedded


def eta(t0: float, done: int, total: int) -> float | None:
    if done <= 0 or total <= 0:
        return None
    elapsed = time.monotonic() - t0
    return elapsed / done * (total - done)
