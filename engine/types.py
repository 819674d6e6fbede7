"""Value objects that cross module and thread boundaries.

Every type here is a frozen, slotted dataclass: safe to hand from a worker
thread to the UI, cheap to compare, impossible to mutate by accident.
Higher score means better everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from datetime import date as Date
from typing import Any, Literal

Status = Literal["active", "superseded"]
ChunkKind = Literal["prose", "table", "code", "list"]
BlockKind = Literal["heading", "paragraph", "list_item", "table_row", "code", "quote"]
Format = Literal["markdown", "html", "pdf", "text", "rst"]


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """What a manual says about itself (front matter, HTML meta, PDF info, sidecar)."""

    doc_id: str  # stable across versions of one manual
    title: str
    version: str = "1"
    date: Date | None = None
    models: tuple[str, ...] = ()  # device models it applies to; () = all
    status: Status = "active"
    visibility: tuple[str, ...] = ()  # teams allowed to see it; () = everyone
    language: str = ""  # BCP-47-ish tag ("en", "fr", "zh-hans"); "" = unknown
    # access or lifecycle fields ("visibility", "status", "date") whose value could not be read:
    # such a document fails closed (engine.search.eligibility excludes it for everyone until fixed)
    invalid: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Document:
    """One source file of the library, as read."""

    path: str  # POSIX path relative to the library root
    sha256: str  # of the file's bytes: the content version
    format: Format
    meta: DocumentMeta
    text: str  # the text that chunk spans index into (extracted text for PDF)
    page_starts: tuple[int, ...] = ()  # PDF: char offset where each page starts


@dataclass(frozen=True, slots=True)
class Block:
    """A structural unit of a document: never split unless it alone exceeds the budget."""

    kind: BlockKind
    char_start: int  # span in Document.text, end exclusive
    char_end: int
    start_line: int  # 1-based, inclusive
    end_line: int
    heading_path: tuple[str, ...]  # headings above this block, outermost first
    level: int = 0  # heading level (1-6) for headings; list depth for list items
    page: int | None = None  # PDF page (1-based)
    context: str = ""  # text that belongs with the block but is elsewhere (table header, caption)
    group: int = -1  # blocks with the same group id belong together (one list, one table)


def location_of(path: str, start_line: int, page: int | None, end_page: int | None = None) -> str:
    """Where a passage is, as citations show it: ``path:line``; a PDF's ``path:pN``, or ``path:pN-M``
    when the passage runs on over pages N to M."""
    if page is None:
        return f"{path}:{start_line}"
    if end_page is not None and end_page > page:
        return f"{path}:p{page}-{end_page}"
    return f"{path}:p{page}"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable passage: whole structural units packed under a token budget.

    ``text`` is exactly ``document.text[char_start:char_end]``: citations rely on it.
    ``context`` (heading path, table header and units, caption) is indexed and
    embedded with the text but is not part of the cited span.
    """

    id: str  # stable: hash of (doc_id, content sha256, location)
    doc_id: str
    version: str
    path: str
    start_line: int
    end_line: int
    heading_path: tuple[str, ...]
    char_start: int
    char_end: int
    kind: ChunkKind
    section_id: str  # id of the enclosing section, for parent expansion
    language: str
    text: str
    context: str = ""
    tokens: int = 0
    page: int | None = None  # PDF: the page the passage starts on (1-based)
    ordinal: int = 0  # position of the chunk inside its document
    # it starts inside a fenced code block (a piece of a block too long for one chunk): its first
    # lines are code, not Markdown (a config file's "#   comment" line is not a heading)
    in_code: bool = False
    end_page: int | None = None  # PDF: the page it ends on (a passage can run over a page break)

    @property
    def location(self) -> str:
        """`path:line` (or `path:pN`, `path:pN-M` for PDF pages) as shown in citations."""
        return location_of(self.path, self.start_line, self.page, self.end_page)

    @property
    def search_text(self) -> str:
        """What the lexical and vector branches see."""
        return f"{self.context}\n{self.text}" if self.context else self.text


@dataclass(frozen=True, slots=True)
class IngestIssue:
    """A file that was skipped (or partly read), and why."""

    path: str
    reason: str
    severity: Literal["skipped", "warning"] = "skipped"


@dataclass(frozen=True, slots=True)
class IngestReport:
    documents: int
    chunks: int
    issues: tuple[IngestIssue, ...] = ()
    unchanged: int = 0
    removed: int = 0


@dataclass(frozen=True, slots=True)
class Ranked:
    """One id at one stage: its rank (from 1) and the stage's score for it."""

    chunk_id: str
    rank: int
    score: float


class StageStatus(str, Enum):
    """How a stage ran: its own work, switched off by the config, or degraded (no model, an
    error, a timeout). Off and degraded stages keep their input order."""

    RAN = "ran"
    OFF = "off"
    DEGRADED = "degraded"


@dataclass(frozen=True, slots=True)
class Stage:
    """What survived one stage of the pipeline, in order."""

    name: str  # "lexical", "vector", "fused", "order", "rerank", "context"
    ranked: tuple[Ranked, ...]
    window: int  # how many this stage was allowed to keep
    ms: float
    note: str = ""  # free text for people, e.g. "reranker unavailable (...); fused order kept"
    status: StageStatus = StageStatus.RAN

    @property
    def passed_through(self) -> bool:
        """The stage kept its input order: degraded (no model, error, timeout) or switched off."""
        return self.status is not StageStatus.RAN

    def rank_of(self, chunk_id: str) -> int | None:
        for r in self.ranked:
            if r.chunk_id == chunk_id:
                return r.rank
        return None


@dataclass(frozen=True, slots=True)
class Trace:
    """Per query: which ids survived each stage, at which rank, and how long it took."""

    question: str
    eligible: int  # chunks that passed the eligibility filter
    total: int  # chunks in the index
    stages: tuple[Stage, ...]
    filters: tuple[str, ...] = ()  # human-readable eligibility rules in force
    # names the question gives (engine.lang.names) that no eligible passage mentions at all
    unknown_names: tuple[str, ...] = ()

    def stage(self, name: str) -> Stage | None:
        for s in self.stages:
            if s.name == name:
                return s
        return None


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: Chunk
    rank: int
    score: float
    title: str = ""
    date: Date | None = None
    status: Status = "active"


@dataclass(frozen=True, slots=True)
class SearchResult:
    question: str
    hits: tuple[Hit, ...]
    trace: Trace
    # the question's embedding as the vector branch computed it (None: not embedded), so the answer
    # built from this result does not embed the question again
    query_vector: Any = field(default=None, compare=False, repr=False)
    # the question less the devices it names, embedded in the same call (None: it names none,
    # or was not embedded): what ranks an answer's statements (engine.answer.scoring)
    content_vector: Any = field(default=None, compare=False, repr=False)
    # the query encoder's vectors of the same two (None: no query encoder, or not embedded): what
    # the learned passage order reads when it was fitted on them (engine.search.order)
    tuned_vector: Any = field(default=None, compare=False, repr=False)
    tuned_content_vector: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Citation:
    """[n] in an answer → one passage of one version of one document."""

    n: int
    chunk_id: str
    doc_id: str
    title: str
    version: str
    date: Date | None
    status: Status
    heading_path: tuple[str, ...]
    path: str
    start_line: int
    end_line: int
    page: int | None = None
    changed: bool = False  # the source file changed (or vanished) since it was indexed
    end_page: int | None = None

    @property
    def location(self) -> str:
        return location_of(self.path, self.start_line, self.page, self.end_page)


@dataclass(frozen=True, slots=True)
class Claim:
    """A sentence, list item, table row or short code block taken verbatim from a cited passage."""

    text: str
    citation: int  # Citation.n
    char_start: int  # span of the claim in the source document text
    char_end: int
    is_condition: bool = False  # a warning or restriction attached to a claim
    flagged: str = ""  # e.g. "reads as an instruction to the system; shown as quoted evidence"
    safety: bool = False  # a safety statement (warning, danger, caution...): marked, shown first
    header: str = ""  # a table row's header row, verbatim, so its cells can be shown with their columns
    code: bool = False  # a code block (commands, config lines) that a claim before it announces: shown as lines
    # other passages that say the same (another edition of the manual, another manual: the same
    # words and numbers) or a part of it, their Citation.n: the claim is shown once, citing each
    also: tuple[int, ...] = ()

    @property
    def cites(self) -> tuple[int, ...]:
        """The passages the claim cites: its own (``citation``), then those saying the same."""
        return (self.citation, *self.also)


@dataclass(frozen=True, slots=True)
class ConflictSide:
    citation: int
    doc_id: str
    version: str
    date: Date | None
    status: Status
    models: tuple[str, ...]
    value: str  # the differing value as written, e.g. "750 h"


@dataclass(frozen=True, slots=True)
class Conflict:
    subject: str  # what the sides disagree on, e.g. "oil change interval"
    sides: tuple[ConflictSide, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    conflicts: tuple[Conflict, ...] = ()
    abstained: bool = False
    to_consult: tuple[Citation, ...] = ()  # when abstaining: closest passages, not an answer
    trace: Trace | None = None
    notes: tuple[str, ...] = field(default=())  # e.g. degraded-mode notices
    # learned probability that the evidence answers the question (engine.answer.answerability); None
    # when the hand rule decided (no model fitted for this embedder)
    answerability: float | None = None
