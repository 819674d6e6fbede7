"""`Library`: the front door. Open an index, (re)build it, search it, answer from it.

    lib = Library.open(folder, config)        # loads the current generation (or none yet)
    report = lib.build(progress=cb, cancel=ev) # engine.index.build: scan -> chunk -> embed -> index -> switch
    result = lib.search("question")            # engine.search.stages: hits + Trace(lexical … context)
    answer = lib.answer(result)                # engine.answer: cited claims, conflicts, abstention
    answer = lib.ask("question")               # search + answer

The work lives in modules named for it: ``engine.index.build`` (builds), ``engine.search.stages`` (the
stages), ``engine.search.rerank`` (the cross-encoder stage), ``engine.index.snapshot`` (what a reader sees),
``engine.index.store`` (the on-disk index), ``engine.answer`` (answers, over the ``AnswerSource`` this
class provides).

Threading: one writer (``build``; another process is refused by the index folder's lock) and
any number of readers. Readers work on an immutable snapshot of the current generation;
``build`` swaps it in after the SQLite switch.

Tests inject a stand-in embedder (``tests/hash_embedder.py``); subprocess tests run the CLI
through ``tests/fieldqa_hash.py``, which does the same. Nothing here reads the environment.
"""

from __future__ import annotations

import errno
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import Config, FilterConfig
from engine.errors import IndexCorrupt
from engine.index.build import EMBED_BATCH, BuildCancelled, BuildProgress, Indexer, UnitVectors, embed_units
from engine.index.integrity import WriterLock
from engine.index.rows import unit_sha
from engine.index.snapshot import Snapshot
from engine.index.store import FORMAT_VERSION, DocumentRecord, IndexMismatch, IndexStore, rebuild_hint
from engine.search.eligibility import Eligibility
from engine.search.order import PassageOrder
from engine.search.rerank import Reranker
from engine.search.stages import MODES, Mode
from engine.search.stages import search as run_search
from engine.types import Chunk, DocumentMeta, IngestIssue, IngestReport, SearchResult

__all__ = ["Library", "BuildProgress", "BuildCancelled", "Mode", "MODES", "EMBED_BATCH"]

SPACE = "cosine"
SWITCH_RETRIES = 5  # reads of the current generation while another process switches it
RECENT_CHUNK_UNITS = 1024  # chunks whose unit vectors are kept in memory (~10 units x 1.5 KB each)


class Library:
    """One library folder and its index. See the module docstring."""

    def __init__(self, root: Path, config: Config, store: IndexStore, embedder: Any, reranker: Any):
        self.root = root
        self.config = config
        self.store = store
        self.embedder = embedder
        self.reranker = Reranker(config, reranker)
        self.order = PassageOrder(config.passage_order_path, str(getattr(embedder, "checksum", "")),
                                  self._chunk_unit_vectors,
                                  query_encoder_checksum=str(getattr(embedder, "query_checksum", "")))
        self._chunk_units: OrderedDict[str, np.ndarray] = OrderedDict()  # chunk id -> its unit vectors
        self._chunk_units_lock = threading.Lock()
        self._answerability: Any = None  # AnswerabilityModel, a str (why none) or None (not tried)
        self._answerability_lock = threading.Lock()
        self._file_shas: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> sha256
        self._build_lock = threading.Lock()
        self._snap = Snapshot(None)

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
                                max_length=config.models.max_length, batch_size=config.models.batch_size,
                                query_model_dir=config.query_encoder_dir)
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
        lib._snap = Snapshot.of(0, chunks, doc_meta, lexical, vectors, {})
        return lib

    def close(self) -> None:
        self.reranker.close()
        self.store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _expected_manifest(self) -> dict[str, Any]:
        from engine.ingest.chunking import CHUNKER_VERSION
        from engine.lang.words import TOKENIZER_VERSION

        return {
            "format": FORMAT_VERSION,
            "embedder": {"model_id": self.embedder.model_id, "checksum": self.embedder.checksum,
                         "dim": int(self.embedder.dim)},
            "space": SPACE,
            "lexical": {"tokenizer": TOKENIZER_VERSION},
            "chunking": {"version": CHUNKER_VERSION, "max_tokens": self.config.chunking.max_tokens,
                         "overlap_tokens": self.config.chunking.overlap_tokens,
                         "section_overlap_tokens": self.config.chunking.section_overlap_tokens},
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

    def _load_snapshot(self) -> Snapshot:
        """The current generation, read in one transaction; when another process switched
        generations meanwhile (the files read were just replaced), read again rather than call
        the index corrupt."""
        attempt = 0
        while True:
            with self.store.reading():
                tried = self.store.current_number()
                try:
                    return self._read_snapshot()
                except IndexCorrupt as e:
                    error = e
            attempt += 1
            if attempt >= SWITCH_RETRIES or self.store.current_number() == tried:
                raise error  # the generation did not change under us: it is really damaged
            time.sleep(0.02 * attempt)

    def _read_snapshot(self) -> Snapshot:
        from engine.index.lexical import LexicalIndex
        from engine.index.vectors import VectorIndex

        gen = self.store.current()
        if gen is None:
            return Snapshot(None)
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
        return Snapshot.of(gen.number, chunks, doc_meta, lexical, vectors, gen.manifest,
                            {p: sha for p, (sha, _f, _m, _meta) in rows.items()})

    # ---- building --------------------------------------------------------------------

    def build(self, progress: Callable[[BuildProgress], None] | None = None,
              cancel: threading.Event | None = None, rebuild: bool = False) -> IngestReport:
        """Scan the library, re-chunk changed files, embed new texts, switch to a new generation
        (engine.index.build). Raises ``BuildCancelled`` when ``cancel`` is set; the previous
        generation stays."""
        report = progress or (lambda p: None)

        def check() -> None:
            if cancel is not None and cancel.is_set():
                raise BuildCancelled("build cancelled; the previous index is unchanged")

        if self.store.read_only:
            raise OSError(errno.EROFS, f"the index at {self.store.dir} is on read-only media: it can be "
                                       "searched, not rebuilt there")
        # one writer: threads of this process queue; another process is refused (IndexBusy)
        with self._build_lock, WriterLock(self.store.dir):
            units = self._unit_vectors()
            indexer = Indexer(self.root, self.config, self.store, self.embedder, self._snap,
                              self._expected_manifest(), units)
            result, snap = indexer.run(report, check, rebuild)
            if snap is not None:
                self._snap = snap
            if self._snap.chunks:  # answer units: embedded now, not while someone waits for an answer
                embed_units(self.store, self.embedder, self._snap.chunks, units, report, check, indexer.pooled)
            return result

    def _unit_vectors(self) -> UnitVectors:
        from engine.answer.units import unit_spans  # the answer package loads on first use

        pooled = self.config.chunking.pooled_unit_vectors and bool(getattr(self.embedder, "pools_spans", False))
        return UnitVectors(unit_spans, pooled, self.embedder.checksum)

    # ---- searching -------------------------------------------------------------------

    def eligibility(self, filters: FilterConfig | None = None) -> Eligibility:
        return Eligibility.from_filters(filters if filters is not None else self.config.filters)

    def search(self, question: str, *, mode: Mode = "full", filters: FilterConfig | None = None,
               exclude: Collection[str] = ()) -> SearchResult:
        """The stages of engine.search.stages over the current snapshot. ``exclude``: chunk ids treated
        as ineligible on top of the filters (evaluation builds "not in these documents" cases by
        removing a question's gold passages)."""
        return run_search(self._snap, question, mode, self.eligibility(filters), self.config, self.embedder,
                          self.reranker, exclude, self.order)

    @property
    def reranker_status(self) -> str:
        return self.reranker.status

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
        """The learned answerability model (engine.answer.answerability) fitted for this embedder, or
        None (no model configured or found, or fitted with another embedder: the hand rule
        applies, and ``answerability_status`` says why)."""
        with self._answerability_lock:
            if self._answerability is None:
                self._answerability = self._load_answerability()
            return None if isinstance(self._answerability, str) else self._answerability

    @property
    def answerability_status(self) -> str:
        model = self.answerability_model()
        return f"learned: {model.source}" if model is not None else f"hand rule: {self._answerability}"

    def _load_answerability(self) -> Any:
        from engine.answer.answerability import load_model

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
        return self.reranker.checksum()

    @property
    def unit_vector_key(self) -> str:
        """Names the answer-unit vectors this library reads (model, and pooled or not)."""
        return self._unit_vectors().key

    def unit_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Answer-unit vectors stored by the last build (text -> vector; missing ones absent)."""
        shas = {unit_sha(t): t for t in texts}
        got = self.store.cached_embeddings(self.unit_vector_key, list(shas))
        return {shas[sha]: vec for sha, vec in got.items()}

    def order_features(self, result: SearchResult, depth: int, rank_c: float,
                       question_vector: str = "embedder") -> np.ndarray:
        """The learned passage order's features (engine.search.order) of ``result``'s first ``depth``
        hits, as the order stage computes them with the cosines of ``question_vector``'s vector
        (its fit reads them from a hybrid search)."""
        from engine.search.order import QuestionVectors, snapshot_features

        if result.query_vector is None:
            raise ValueError("order_features needs a result whose question was embedded (mode hybrid or full)")
        qvec = QuestionVectors(result.query_vector, result.tuned_vector, result.content_vector,
                               result.tuned_content_vector).for_order(question_vector)
        if qvec is None:
            raise ValueError(f"no {question_vector.replace('_', ' ')} vector: models.query_encoder is off")
        chunks = [h.chunk for h in result.hits[:depth]]
        return snapshot_features(self._snap, result.question, qvec, chunks, self._chunk_unit_vectors, rank_c)

    def _chunk_unit_vectors(self, chunk: Chunk) -> np.ndarray:
        """The stored vectors of a chunk's answer units (for the learned passage order); empty
        until the build has stored them. Remembered per chunk id (the id names the content) once
        complete."""
        with self._chunk_units_lock:
            got = self._chunk_units.get(chunk.id)
            if got is not None:
                self._chunk_units.move_to_end(chunk.id)
                return got
        from engine.answer.units import unit_texts

        texts = unit_texts(chunk)
        found = self.unit_vectors(texts)
        vecs = np.stack([found[t] for t in texts if t in found]) if found else np.zeros((0, 1), np.float32)
        if texts and len(found) == len(set(texts)):
            with self._chunk_units_lock:
                self._chunk_units[chunk.id] = vecs
                while len(self._chunk_units) > RECENT_CHUNK_UNITS:
                    self._chunk_units.popitem(last=False)
        return vecs

    def lexical_sight(self, question: str) -> float:
        """engine.index.lexical.LexicalIndex.sight for this library (0.0 before the first build)."""
        lexical = self._snap.lexical
        return lexical.sight(question) if lexical is not None else 0.0

    def cross_scores(self, question: str, chunks: Sequence[Chunk]) -> np.ndarray | None:
        """The cross-encoder's logits for (question, chunk) pairs, whether or not the rerank
        stage is on; None when no cross-encoder is available (its absence is the status)."""
        return self.reranker.scores(question, chunks)

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

    def neighbours(self, chunk_id: str) -> tuple[Chunk | None, Chunk | None]:
        snap = self._snap
        c = self.chunk(chunk_id)
        rows = snap.by_path[c.path]
        i = rows.index(snap.by_id[chunk_id])
        prev = snap.chunks[rows[i - 1]] if i > 0 else None
        nxt = snap.chunks[rows[i + 1]] if i + 1 < len(rows) else None
        return prev, nxt

    def section(self, chunk_id: str) -> list[Chunk]:
        return self._snap.section_of(self.chunk(chunk_id))

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
