"""Numbered sources of an answer (or preliminary hits): title, version, date, place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.render import headings_under
from engine.types import Answer, Citation, Hit
from tui.widgets.literal import visible


@dataclass(frozen=True, slots=True)
class Source:
    """One row: what [n] points to, and the claim spans to highlight there."""

    n: int
    chunk_id: str
    title: str
    location: str
    marks: tuple[tuple[int, int], ...] = ()


def citation_prompt(c: Citation) -> Content:
    date = c.date.isoformat() if c.date else "undated"
    heading = " › ".join(headings_under(c.title, c.heading_path))
    second = f"{heading} · {c.location}" if heading else c.location
    return Content.assemble(
        (f"[{c.n}] ", "bold"),
        (visible(c.title), "bold"),
        f"  v{visible(c.version)} · {date} · ",
        (c.status, "bold" if c.status == "active" else "italic"),
        ("  ⚠ changed since indexing: re-index" if c.changed else "", "bold reverse"),
        f"\n    {visible(second)}",
    )


def hit_prompt(h: Hit) -> Content:
    chunk = h.chunk
    date = h.date.isoformat() if h.date else "undated"
    heading = " › ".join(headings_under(h.title or chunk.doc_id, chunk.heading_path))
    second = f"{heading} · {chunk.location}" if heading else chunk.location
    return Content.assemble(
        (f"[{h.rank}] ", "bold"),
        (visible(h.title or chunk.doc_id), "bold"),
        f"  v{visible(chunk.version)} · {date} · {h.status} · score {h.score:.3f}",
        f"\n    {visible(second)}",
    )


class SourcesList(OptionList):
    """Select (enter) a row to open the passage viewer."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.sources: list[Source] = []

    def _fill(self, sources: Sequence[Source], prompts: Sequence[Content]) -> None:
        self.sources = list(sources)
        self.clear_options()
        self.add_options([Option(p, id=f"source-{i}") for i, p in enumerate(prompts)])
        if self.sources:
            self.highlighted = 0

    def show_answer(self, answer: Answer) -> None:
        cited = answer.to_consult if answer.abstained else answer.citations
        sources = []
        for c in cited:
            marks = tuple((cl.char_start, cl.char_end) for cl in answer.claims if cl.citation == c.n)
            sources.append(Source(c.n, c.chunk_id, c.title, c.location, marks))
        self._fill(sources, [citation_prompt(c) for c in cited])

    def show_hits(self, hits: Sequence[Hit]) -> None:
        sources = [Source(h.rank, h.chunk.id, h.title, h.chunk.location) for h in hits]
        self._fill(sources, [hit_prompt(h) for h in hits])

    def clear(self) -> None:
        self._fill((), ())

    def source(self, n: int) -> Source | None:
        for s in self.sources:
            if s.n == n:
                return s
        return None

    @property
    def current(self) -> Source | None:
        i = self.highlighted
        return self.sources[i] if i is not None and 0 <= i < len(self.sources) else None
