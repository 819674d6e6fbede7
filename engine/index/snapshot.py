"""One generation of the index as readers see it: chunks, their metadata and both indexes.

A ``Snapshot`` is published whole and never changed afterwards (the eligibility masks it caches
are pure functions of their rule), so any number of searches can read one while a build
prepares the next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.search.devices import device_names, document_codes, document_editions, document_names
from engine.search.eligibility import Eligibility
from engine.types import Chunk, DocumentMeta

__all__ = ["Snapshot"]


@dataclass(slots=True)
class Snapshot:
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
    device_names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # code -> its titles' words
    editions: Mapping[str, frozenset[str]] = field(default_factory=dict)  # doc path -> its title's edition marks
    known_editions: frozenset[str] = frozenset()
    title_names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # doc path -> document_names

    @classmethod
    def of(cls, generation: int | None, chunks: Sequence[Chunk], doc_meta: Mapping[str, DocumentMeta],
           lexical: Any, vectors: Any, manifest: Mapping[str, Any],
           doc_sha: Mapping[str, str] | None = None) -> Snapshot:
        by_id: dict[str, int] = {}
        by_path: dict[str, list[int]] = {}
        for row, c in enumerate(chunks):
            by_id.setdefault(c.id, row)
            by_path.setdefault(c.path, []).append(row)
        metas = tuple(doc_meta[c.path] for c in chunks)
        codes = {path: document_codes(m) for path, m in doc_meta.items()}
        editions = {path: document_editions(m) for path, m in doc_meta.items()}
        names = {path: document_names(m) for path, m in doc_meta.items()}
        return cls(generation, tuple(chunks), metas, by_id, {p: tuple(r) for p, r in by_path.items()},
                   dict(doc_meta), lexical, vectors, manifest, {},
                   codes, frozenset().union(*codes.values()) if codes else frozenset(), dict(doc_sha or {}),
                   device_names(doc_meta), editions, frozenset().union(*editions.values()) if editions else frozenset(),
                   names)

    def mask(self, rule: Eligibility) -> np.ndarray:
        m = self.masks.get(rule)
        if m is None:
            m = self.masks[rule] = rule.mask(self.metas)
            m.setflags(write=False)
        return m

    def chunk_of(self, chunk_id: str) -> Chunk:
        return self.chunks[self.by_id[chunk_id]]

    def next_in(self, chunk: Chunk) -> Chunk | None:
        """The chunk after ``chunk`` in its document (None at the end)."""
        rows = self.by_path.get(chunk.path, ())
        row = self.by_id.get(chunk.id)
        if row is None or row not in rows:
            return None
        i = rows.index(row)
        return self.chunks[rows[i + 1]] if i + 1 < len(rows) else None

    def section_of(self, chunk: Chunk) -> list[Chunk]:
        """Every chunk of ``chunk``'s section, in document order."""
        return [self.chunks[r] for r in self.by_path.get(chunk.path, ())
                if self.chunks[r].section_id == chunk.section_id]

