"""Exactly what the TUI needs from the engine, as a Protocol.

The real engine (`engine.pipeline.Library`) is reached through `LibraryPort`, a thin
adapter; tests drive the same UI with a fake that satisfies `EnginePort`.
Every method here may be slow and is only ever called from a worker thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from engine.config import Config, FilterConfig
from engine.types import Answer, Chunk, DocumentMeta, IngestIssue, IngestReport, SearchResult


class BuildProgressLike(Protocol):
    """One progress event of `build` (the engine's `BuildProgress`)."""

    phase: str
    done: int
    total: int
    eta_s: float | None


class DiagnosisLike(Protocol):
    """Where an expected passage was lost (the engine's `Diagnosis`)."""

    verdict: str
    detail: str


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One document of the library as the Library screen shows it."""

    path: str
    meta: DocumentMeta
    chunks: int
    issues: tuple[IngestIssue, ...] = ()


@runtime_checkable
class EnginePort(Protocol):
    def build(
        self, progress: Callable[[Any], None], cancel: threading.Event
    ) -> IngestReport: ...

    def search(
        self, question: str, mode: str = "hybrid", filters: FilterConfig | None = None
    ) -> SearchResult: ...

    def ask(self, question: str, filters: FilterConfig | None = None) -> Answer: ...

    def answer(self, result: SearchResult, filters: FilterConfig | None = None) -> Answer:
        """The answer continuing from a ``search(mode="full")`` result: no second search."""
        ...

    def documents(self) -> Sequence[DocumentRow]: ...

    def issues(self) -> Sequence[IngestIssue]: ...

    def chunk(self, chunk_id: str) -> Chunk | None: ...

    def neighbours(self, chunk_id: str) -> tuple[Chunk | None, Chunk | None]: ...

    def section(self, chunk_id: str) -> Sequence[Chunk]: ...

    def chunks_of(self, path: str) -> Sequence[Chunk]: ...

    def document_text(self, path: str) -> str: ...

    def diagnose(
        self, question: str, expect: str, filters: FilterConfig | None = None
    ) -> DiagnosisLike: ...

    def close(self) -> None: ...


EngineOpener = Callable[[], EnginePort]


class LibraryPort:
    """`EnginePort` over the real `engine.pipeline.Library`."""

    def __init__(self, library: Any) -> None:
        self.library = library

    def build(self, progress: Callable[[Any], None], cancel: threading.Event) -> IngestReport:
        return self.library.build(progress=progress, cancel=cancel)

    def search(
        self, question: str, mode: str = "hybrid", filters: FilterConfig | None = None
    ) -> SearchResult:
        return self.library.search(question, mode=mode, filters=filters)

    def ask(self, question: str, filters: FilterConfig | None = None) -> Answer:
        return self.library.ask(question, filters=filters)

    def answer(self, result: SearchResult, filters: FilterConfig | None = None) -> Answer:
        return self.library.answer(result, filters=filters)

    def documents(self) -> Sequence[DocumentRow]:
        return [DocumentRow(r.path, r.meta, r.chunks, tuple(r.issues)) for r in self.library.documents()]

    def issues(self) -> Sequence[IngestIssue]:
        return list(self.library.issues())

    def chunk(self, chunk_id: str) -> Chunk | None:
        try:
            return self.library.chunk(chunk_id)
        except KeyError:
            return None

    def neighbours(self, chunk_id: str) -> tuple[Chunk | None, Chunk | None]:
        prev, nxt = self.library.neighbours(chunk_id)
        return prev, nxt

    def section(self, chunk_id: str) -> Sequence[Chunk]:
        return list(self.library.section(chunk_id))

    def chunks_of(self, path: str) -> Sequence[Chunk]:
        return self.library.chunks_of(path)

    def document_text(self, path: str) -> str:
        return self.library.document_text(path)

    def diagnose(
        self, question: str, expect: str, filters: FilterConfig | None = None
    ) -> DiagnosisLike:
        from engine.search.diagnose import diagnose

        return diagnose(self.library, question, expect, filters=filters)

    def close(self) -> None:
        self.library.close()


def library_opener(folder: Path, config: Config, index_dir: Path | None) -> EngineOpener:
    """A callable (run in a worker) that opens the real library."""

    def open_library() -> EnginePort:
        from engine.pipeline import Library

        return LibraryPort(Library.open(folder, config, index_dir=index_dir))

    return open_library
