"""What answering needs from a library: the ``AnswerSource`` protocol.

``engine.pipeline.Library`` is one; tests drive the answer modules with a small fake. The
optional methods (``cross_scores``, ``answerability_model``, ``reranker_checksum``,
``lexical_sight``) may be missing: answering then uses the hand rule and no cross-encoder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from engine.types import Chunk, DocumentMeta


@runtime_checkable
class AnswerSource(Protocol):
    embedder: Any  # embed_queries / embed_passages / checksum

    def meta_of(self, item: str | Chunk) -> DocumentMeta: ...

    def chunk(self, chunk_id: str) -> Chunk: ...

    def neighbours(self, chunk_id: str) -> tuple[Chunk | None, Chunk | None]: ...

    def documents(self) -> Sequence[Any]: ...  # records with .path and .meta

    def chunks_of(self, path: str) -> Sequence[Chunk]: ...

    def unit_vectors(self, texts: Sequence[str]) -> Mapping[str, Any]: ...  # stored at index time (may be empty)
