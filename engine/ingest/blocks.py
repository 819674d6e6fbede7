"""What every format parser produces, and the helper that keeps heading paths and groups."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from engine.types import Block, BlockKind

# a paragraph right above a table that names it: "Table 3 — ...", "Tableau 2 :", "표 1", "表 2"
CAPTION = re.compile(r"^\s*(?:\*\*|_)?(?:Table|Tableau|Tabelle|Tabla|Tabella|Tab\.|Tabel|表|표)\s*[\dA-Z一二三四五六七八九十]", re.I)


@dataclass(slots=True)
class Parsed:
    """A document as one format parser read it: text, blocks and its own metadata."""

    text: str
    blocks: list[Block]
    meta: dict[str, Any] = field(default_factory=dict)  # explicit values from the file itself
    first_heading: str = ""
    page_starts: tuple[int, ...] = ()
    warnings: list[str] = field(default_factory=list)

    @property
    def title_heading(self) -> str:
        """The first heading when it titles the document: a top-level one ("# Pump manual", a text's
        underlined first line), or one no later heading is of its level or above. A page whose first
        heading is one of its sections ("## Wi-Fi", then "## MQTT": a static site's page titled by
        its file name) has none."""
        levels = [b.level for b in self.blocks if b.kind == "heading"]
        if not levels:
            return ""
        first, later = levels[0], levels[1:]
        return self.first_heading if first == 1 or all(level > first for level in later) else ""


class BlockBuilder:
    """Appends blocks in document order, tracking the heading path and group ids."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._headings: list[tuple[int, str]] = []
        self._groups = 0
        self.first_heading = ""

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self._headings)

    @property
    def depth(self) -> int:
        """How many headings are open (the heading path's length)."""
        return len(self._headings)

    @property
    def level(self) -> int:
        """The level of the innermost open heading (0: none)."""
        return self._headings[-1][0] if self._headings else 0

    def root(self, title: str) -> None:
        """Head the blocks from here with ``title``, a heading no line of the text holds (the title
        a static site prints from the front matter), until ``close_headings``."""
        if " ".join(title.split()):
            self._headings = [(1, " ".join(title.split()))]

    def close_headings(self, depth: int) -> None:
        """Headings opened past ``depth`` end here (an HTML ``<section>`` they were inside closed)."""
        del self._headings[depth:]

    def new_group(self) -> int:
        self._groups += 1
        return self._groups - 1

    def heading(self, level: int, title: str, start: int, end: int, start_line: int, end_line: int,
                page: int | None = None) -> None:
        title = " ".join(title.split())
        while self._headings and self._headings[-1][0] >= level:
            self._headings.pop()
        self.blocks.append(Block("heading", start, end, start_line, end_line, self.path, level=level, page=page))
        self._headings.append((level, title or "(untitled)"))
        if not self.first_heading and title:
            self.first_heading = title

    def continue_heading(self, more: str, end: int, end_line: int) -> None:
        """The last block, a heading, goes on over another line (a title wrapped in print)."""
        last = self.blocks[-1]
        self.blocks[-1] = dataclasses.replace(last, char_end=end, end_line=end_line)
        level, title = self._headings[-1]
        self._headings[-1] = (level, " ".join(f"{title} {more}".split()))
        if self.first_heading == title:
            self.first_heading = self._headings[-1][1]

    def add(self, kind: BlockKind, start: int, end: int, start_line: int, end_line: int, *, level: int = 0,
            page: int | None = None, context: str = "", group: int = -1) -> None:
        if end <= start:
            return
        self.blocks.append(Block(kind, start, end, start_line, max(start_line, end_line), self.path,
                                 level=level, page=page, context=context, group=group))

    def take_caption(self, text: str, group: int) -> str:
        """If the last block is a caption paragraph, move it into ``group`` and return its text."""
        if not self.blocks:
            return ""
        last = self.blocks[-1]
        caption = text[last.char_start:last.char_end]
        if last.kind != "paragraph" or last.group != -1 or len(caption) > 300 or not CAPTION.match(caption):
            return ""
        self.blocks[-1] = dataclasses.replace(last, group=group)
        return " ".join(caption.split())
