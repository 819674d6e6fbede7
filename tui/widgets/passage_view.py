"""A document with one passage highlighted in place, scrolled to it.

The document is split in three literal blocks (before, passage, after) at line
boundaries, so the passage wraps like the rest and can be scrolled into view.
A Markdown manual is shown with its structure styled (:func:`markdown_styled`):
headings bold, list markers and emphasis marked, code, fences and table rules set
apart. The styling never removes or adds a character, so the text stays exactly
the document's (claim spans and find matches index into it) and nothing in it is
ever interpreted as terminal or Rich markup.
"""

from __future__ import annotations

import re
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


_HEADING = re.compile(r"^(#{1,6})([ \t].*)$", re.M)
_RULE = re.compile(r"^[ \t]*(?:```|~~~).*$|^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$", re.M)
_LIST = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])(?=[ \t])", re.M)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`[^`\n]+`")
_PIPE = re.compile(r"(?<=\S)[ \t]*\|[ \t]*(?=\S)|^[ \t]*\||\|[ \t]*$", re.M)


def markdown_styled(text: str) -> Content:
    """``text`` literally, with its Markdown structure styled in place (same characters)."""
    content = literal(text)
    for m in _RULE.finditer(text):
        content = content.stylize("dim", m.start(), m.end())
    for m in _HEADING.finditer(text):
        content = content.stylize("dim", m.start(1), m.end(1)).stylize("bold $accent", m.start(2), m.end(2))
    for m in _LIST.finditer(text):
        content = content.stylize("bold $accent", m.start(), m.end())
    for m in _STRONG.finditer(text):
        content = content.stylize("bold", m.start(2), m.end(2))
    for m in _CODE.finditer(text):
        content = content.stylize("$text-accent on $boost", m.start(), m.end())
    for m in _PIPE.finditer(text):
        content = content.stylize("dim", m.start(), m.end())
    return content


def passage_content(text: str, start: int, end: int, marks: Sequence[tuple[int, int]]) -> Content:
    """text[start:end], Markdown structure styled, with the claim spans (document offsets) emphasised."""
    content = markdown_styled(text[start:end])
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
        self.query_one("#before", LiteralStatic).update(markdown_styled(before))
        self.query_one("#before").display = bool(before)
        self.query_one("#passage", LiteralStatic).update(passage_content(text, a, b, marks))
        self.query_one("#after", LiteralStatic).update(markdown_styled(after))
        self.query_one("#after").display = bool(after)
        self.call_after_refresh(self.scroll_to_passage)

    def scroll_to_passage(self) -> None:
        self.scroll_to_widget(self.query_one("#passage"), animate=False, top=True)

    @property
    def passage_text(self) -> str:
        visual = self.query_one("#passage", LiteralStatic).visual
        return visual.plain if isinstance(visual, Content) else str(visual)
