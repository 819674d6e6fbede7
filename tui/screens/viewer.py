"""The passage viewer: a cited passage highlighted inside its document."""

from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from engine.types import Chunk
from tui.messages import PassageLoaded
from tui.screens.base import FieldQAScreen
from tui.widgets.literal import literal
from tui.widgets.passage_view import PassageView


class ViewerScreen(FieldQAScreen):
    SCOPE = "passage"
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("n", "step(1)", "Next chunk", id="next_chunk"),
        Binding("p", "step(-1)", "Previous chunk", id="prev_chunk"),
        Binding("u", "parent_section", "Parent section", id="parent_section"),
        Binding("c", "copy_location", "Copy path:line", id="copy_location"),
    ]

    def __init__(self, chunk_id: str, marks: Sequence[tuple[int, int]] = (), label: str = "") -> None:
        super().__init__()
        self.chunk_id = chunk_id
        self.marks = tuple(marks)
        self.title_text = label
        self.chunk: Chunk | None = None
        self.doc_text = ""
        self.section_chunks: tuple[Chunk, ...] = ()
        self.showing_section = False

    def compose(self) -> ComposeResult:
        yield Static(literal(self.title_text or "Passage"), id="viewer-title", markup=False)
        yield Static("", id="breadcrumb", markup=False)
        yield PassageView(id="document")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#breadcrumb", Static).update("Loading passage…")
        self.fq.load_passage(self, self.chunk_id, 0)

    def on_passage_loaded(self, message: PassageLoaded) -> None:
        chunk = message.chunk
        if self.chunk is not None and chunk.id != self.chunk_id:
            self.marks = ()  # moved away from the cited chunk: its claim marks no longer apply
        self.chunk, self.chunk_id, self.doc_text = chunk, chunk.id, message.text
        self.section_chunks = tuple(message.section)
        self.showing_section = False
        crumb = " › ".join(chunk.heading_path) or "(no heading)"
        multi = chunk.page is None and chunk.end_line > chunk.start_line
        where = f"{chunk.location}–{chunk.end_line}" if multi else chunk.location
        self.query_one("#breadcrumb", Static).update(
            literal(f"{crumb}   ·   {where}   ·   v{chunk.version}   ·   chunk {chunk.ordinal + 1}")
        )
        self.redraw()

    def redraw(self) -> None:
        chunk = self.chunk
        if chunk is None:
            return
        start, end = chunk.char_start, chunk.char_end
        if self.showing_section and self.section_chunks:
            start = min(c.char_start for c in self.section_chunks)
            end = max(c.char_end for c in self.section_chunks)
        self.query_one(PassageView).show(self.doc_text, start, end, self.marks)

    def action_step(self, direction: int) -> None:
        if self.chunk is not None:
            self.fq.load_passage(self, self.chunk_id, direction)

    def action_parent_section(self) -> None:
        if self.chunk is None:
            return
        self.showing_section = not self.showing_section
        self.redraw()
        self.notify("Whole section" if self.showing_section else "Cited passage only", markup=False)

    def action_copy_location(self) -> None:
        if self.chunk is None:
            return
        self.app.copy_to_clipboard(self.chunk.location)
        self.notify(f"Copied {self.chunk.location}", markup=False)
