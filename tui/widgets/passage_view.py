"""A document with one passage highlighted in place, scrolled to it.

The document is split in three literal blocks (before, passage, after) at line
boundaries, so the passage wraps like the rest and can be scrolled into view.
"""

from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content

from tui.widgets.literal import LiteralStatic, literal


def passage_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to whole lines."""
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def passage_content(text: str, start: int, end: int, marks: Sequence[tuple[int, int]]) -> Content:
    """text[start:end], with the claim spans (document offsets) emphasised."""
    content = literal(text[start:end])
    for a, b in marks:
        a, b = max(a, start) - start, min(b, end) - start
        if a < b:
            content = content.stylize("bold underline", a, b)
    return content


class PassageView(VerticalScroll):
    DEFAULT_CSS = """
    PassageView #before, PassageView #after { color: $text-muted; }
    PassageView #passage { background: $boost; border-left: thick $accent; padding-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield LiteralStatic(id="before")
        yield LiteralStatic(id="passage")
        yield LiteralStatic(id="after")

    def show(self, text: str, start: int, end: int, marks: Sequence[tuple[int, int]] = ()) -> None:
        a, b = passage_bounds(text, start, end)
        before = text[:a].removesuffix("\n")
        after = text[b:].removeprefix("\n")
        self.query_one("#before", LiteralStatic).set_text(before)
        self.query_one("#before").display = bool(before)
        self.query_one("#passage", LiteralStatic).update(passage_content(text, a, b, marks))
        self.query_one("#after", LiteralStatic).set_text(after)
        self.query_one("#after").display = bool(after)
        self.call_after_refresh(self.scroll_to_passage)

    def scroll_to_passage(self) -> None:
        self.scroll_to_widget(self.query_one("#passage"), animate=False, top=True)

    @property
    def passage_text(self) -> str:
        visual = self.query_one("#passage", LiteralStatic).visual
        return visual.plain if isinstance(visual, Content) else str(visual)
