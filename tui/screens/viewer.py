"""The passage viewer: a cited passage highlighted inside its document.

Keys: ``[`` / ``]`` (and the digits) move between the answer's citations, ``j`` / ``k`` to the
next or previous chunk of the document, ``u`` widens step by step (the passage's section, its
parent sections, the whole document, then back to the passage), ``/`` finds text in the
document and ``n`` / ``N`` step through the matches. The title follows what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Input, Static

from engine.types import Chunk
from tui.messages import PassageLoaded
from tui.screens.base import FieldQAScreen
from tui.widgets.literal import literal
from tui.widgets.passage_view import PassageView


@dataclass(frozen=True, slots=True)
class Cited:
    """One citation of the answer the viewer was opened from."""

    n: int
    chunk_id: str
    title: str
    marks: tuple[tuple[int, int], ...] = ()


def find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Every case-insensitive occurrence of ``needle`` in ``text`` (spans, in order)."""
    if not needle:
        return []
    hay, pin = text.casefold(), needle.casefold()
    if len(hay) != len(text):  # casefolding changed lengths (ß -> ss): match case-sensitively
        hay, pin = text, needle
    out, i = [], hay.find(pin)
    while i >= 0:
        out.append((i, i + len(pin)))
        i = hay.find(pin, i + 1)
    return out


def widening(chunk: Chunk, doc_chunks: Sequence[Chunk], section: Sequence[Chunk]) -> list[tuple[str, int, int]]:
    """What ``u`` shows, step by step: (label, start, end) for the passage's section when it is
    larger than the passage, each enclosing heading's section, then the whole document."""
    steps: list[tuple[str, int, int]] = []
    seen = {(chunk.char_start, chunk.char_end)}

    def add(label: str, chunks: Sequence[Chunk]) -> None:
        if chunks:
            span = (min(c.char_start for c in chunks), max(c.char_end for c in chunks))
            if span not in seen:
                seen.add(span)
                steps.append((label, *span))

    add("whole section", section)
    path = chunk.heading_path
    for depth in range(len(path) - 1, 0, -1):
        add(f"section {path[depth - 1]}", [c for c in doc_chunks if c.heading_path[:depth] == path[:depth]])
    add("whole document", doc_chunks)
    return steps


class ViewerScreen(FieldQAScreen):
    SCOPE = "passage"
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("right_square_bracket", "cite(1)", "Next citation", id="next_citation"),
        Binding("left_square_bracket", "cite(-1)", "Previous citation", id="prev_citation"),
        *[Binding(str(n), f"cite_n({n})", f"Citation [{n}]", id=f"viewer_citation_{n}", show=False)
          for n in range(1, 10)],
        Binding("j", "step(1)", "Next chunk", id="next_chunk"),
        Binding("k", "step(-1)", "Previous chunk", id="prev_chunk"),
        Binding("u", "parent_section", "Widen", id="parent_section"),
        Binding("slash", "find", "Find", id="find"),
        Binding("n", "find_step(1)", "Next match", id="find_next", show=False),
        Binding("N", "find_step(-1)", "Previous match", id="find_prev", show=False),
        Binding("c", "copy_location", "Copy path:line", id="copy_location"),
    ]
    DEFAULT_CSS = """
    ViewerScreen #find { dock: bottom; margin-bottom: 1; display: none; }
    ViewerScreen #find.shown { display: block; }
    """

    def __init__(self, chunk_id: str, marks: Sequence[tuple[int, int]] = (), label: str = "",
                 citations: Sequence[Cited] = ()) -> None:
        super().__init__()
        self.chunk_id = chunk_id
        self.marks = tuple(marks)
        self.title_text = label
        self.citations = tuple(citations)
        self.cited = next((i for i, c in enumerate(self.citations) if c.chunk_id == chunk_id), -1)
        self.chunk: Chunk | None = None
        self.doc_text = ""
        self.steps: list[tuple[str, int, int]] = []
        self.level = 0  # 0: the passage; i: steps[i - 1]
        self.matches: list[tuple[int, int]] = []
        self.match = -1  # the match shown (-1: none)

    def compose(self) -> ComposeResult:
        yield Static(literal(self.title_text or "Passage"), id="viewer-title", markup=False)
        yield Static("", id="breadcrumb", markup=False)
        yield PassageView(id="document")
        yield Input(placeholder="Find in document (Enter: find, Esc: close)", id="find")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#breadcrumb", Static).update("Loading passage…")
        self.fq.load_passage(self, self.chunk_id, 0)

    # ---- what is shown -----------------------------------------------------------------

    def on_passage_loaded(self, message: PassageLoaded) -> None:
        chunk = message.chunk
        if self.chunk is not None and chunk.id != self.chunk_id:
            self.marks = ()  # moved away from the cited chunk: its claim marks no longer apply
            self.title_text = f"{chunk.path} · chunk {chunk.ordinal + 1}"
            self.cited = next((i for i, c in enumerate(self.citations) if c.chunk_id == chunk.id), -1)
            if self.cited >= 0:
                self._take_citation(self.citations[self.cited])
        self.chunk, self.chunk_id, self.doc_text = chunk, chunk.id, message.text
        self.steps = widening(chunk, message.document, message.section)
        self.level, self.matches, self.match = 0, [], -1
        self.redraw()

    def _take_citation(self, cited: Cited) -> None:
        self.marks, self.title_text = cited.marks, f"[{cited.n}] {cited.title}"

    def redraw(self) -> None:
        chunk = self.chunk
        if chunk is None:
            return
        crumb = " › ".join(chunk.heading_path) or "(no heading)"
        multi = chunk.page is None and chunk.end_line > chunk.start_line
        where = f"{chunk.location}–{chunk.end_line}" if multi else chunk.location
        extra = ""
        start, end, marks = chunk.char_start, chunk.char_end, self.marks
        if self.match >= 0:
            start, end = self.matches[self.match]
            marks = (self.matches[self.match],)
            line = self.doc_text.count("\n", 0, start) + 1
            extra = f"   ·   match {self.match + 1}/{len(self.matches)} at line {line}"
        elif self.level:
            label, start, end = self.steps[self.level - 1]
            extra = f"   ·   {label}"
        self.query_one("#viewer-title", Static).update(literal(self.title_text or chunk.path))
        self.query_one("#breadcrumb", Static).update(
            literal(f"{crumb}   ·   {where}   ·   v{chunk.version}   ·   chunk {chunk.ordinal + 1}{extra}"))
        self.query_one(PassageView).show(self.doc_text, start, end, marks)

    # ---- moving --------------------------------------------------------------------------

    def action_step(self, direction: int) -> None:
        if self.chunk is not None:
            self.fq.load_passage(self, self.chunk_id, direction)

    def action_cite(self, direction: int) -> None:
        if not self.citations:
            self.notify("No answer citations to step through.", severity="warning", markup=False)
            return
        i = self.cited + direction if self.cited >= 0 else (0 if direction > 0 else len(self.citations) - 1)
        if not 0 <= i < len(self.citations):
            self.notify("No next citation." if direction > 0 else "No previous citation.", markup=False)
            return
        self._open_citation(i)

    def action_cite_n(self, n: int) -> None:
        i = next((i for i, c in enumerate(self.citations) if c.n == n), -1)
        if i < 0:
            self.notify(f"No citation [{n}] in this answer.", severity="warning", markup=False)
            return
        self._open_citation(i)

    def _open_citation(self, i: int) -> None:
        self.cited = i
        self._take_citation(self.citations[i])
        self.chunk_id = self.citations[i].chunk_id
        self.chunk = None  # the next PassageLoaded is this citation's, marks included
        self.fq.load_passage(self, self.chunk_id, 0)

    def action_parent_section(self) -> None:
        if self.chunk is None:
            return
        self.match = -1
        self.level = (self.level + 1) % (len(self.steps) + 1)
        self.redraw()
        self.notify(self.steps[self.level - 1][0].capitalize() if self.level else "Cited passage only",
                    markup=False)

    # ---- find ----------------------------------------------------------------------------

    def action_find(self) -> None:
        box = self.query_one("#find", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Submitted, "#find")
    def find_submitted(self, event: Input.Submitted) -> None:
        self.matches = find_all(self.doc_text, event.value.strip())
        self._hide_find()
        if not self.matches:
            self.match = -1
            self.notify(f"Not found in this document: {event.value.strip()}", severity="warning", markup=False)
            self.redraw()
            return
        here = self.chunk.char_start if self.chunk is not None else 0
        self.match = next((i for i, (a, _b) in enumerate(self.matches) if a >= here), 0)
        self.redraw()

    def _hide_find(self) -> None:
        box = self.query_one("#find", Input)
        box.remove_class("shown")
        self.query_one(PassageView).focus()

    def action_find_step(self, direction: int) -> None:
        if not self.matches:
            self.notify("Nothing to step through: find with /.", markup=False)
            return
        self.match = (self.match + direction) % len(self.matches)
        self.redraw()

    def action_back(self) -> None:
        box = self.query_one("#find", Input)
        if box.has_class("shown"):  # Esc in the find box closes the box, not the viewer
            self._hide_find()
            return
        super().action_back()

    def action_copy_location(self) -> None:
        if self.chunk is None:
            return
        self.app.copy_to_clipboard(self.chunk.location)
        # the terminal receives it (OSC 52) but cannot say whether it took it: never claim it did
        self.notify(f"{self.chunk.location} sent to the clipboard (terminals without OSC 52 ignore it)",
                    markup=False)
