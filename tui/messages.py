"""Small messages that carry worker results back to the UI thread.

Query results carry the sequence number of the question they answer, so a late
result for an older question is recognised and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from textual.message import Message

from engine.types import Answer, Chunk, IngestIssue, IngestReport, SearchResult
from tui.engine_port import DiagnosisLike, DocumentRow, EnginePort


@dataclass
class EngineReady(Message):
    engine: EnginePort
    documents: Sequence[DocumentRow]
    issues: Sequence[IngestIssue]


@dataclass
class BuildProgressed(Message):
    """Only the latest progress matters: a newer one replaces a pending older one."""

    phase: str
    done: int
    total: int
    eta_s: float | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BuildProgressed)


@dataclass
class BuildFinished(Message):
    report: IngestReport
    documents: Sequence[DocumentRow]
    issues: Sequence[IngestIssue]


@dataclass
class SearchReady(Message):
    """Preliminary hits for question number `seq`."""

    seq: int
    result: SearchResult


@dataclass
class AnswerReady(Message):
    """The reranked, cited answer for question number `seq`."""

    seq: int
    answer: Answer


@dataclass
class PassageLoaded(Message):
    chunk: Chunk
    text: str  # the whole document text the chunk's span indexes into
    section: Sequence[Chunk]
    document: Sequence[Chunk] = ()  # every chunk of the document, in order (for widening)


@dataclass
class TraceRowsReady(Message):
    chunks: dict[str, Chunk]


@dataclass
class DiagnosisReady(Message):
    expect: str
    diagnosis: DiagnosisLike


@dataclass
class FiltersChanged(Message):
    """Posted by the Library screen; the app applies them to later queries."""

    filters: Any
