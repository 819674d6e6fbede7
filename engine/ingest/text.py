"""Plain text -> blocks: blank-line paragraphs, lists, and the headings text manuals use.

Headings recognised: numbered short lines (``1 Safety``, ``3. Maintenance``,
``2.1 Torques``), Korean ``제1장 …`` / ``제2절 …`` / ``1장 …`` / ``1.1절 …``, Chinese and Japanese
``第一章 …`` / ``第二节 …`` / ``第3節 …``,
and lines underlined with ``===`` (level 1) or ``---`` (level 2).
``Document.text`` is the file text itself, a table of contents blanked (``without_contents``).
"""

from __future__ import annotations

import re

from engine.ingest.blocks import BlockBuilder, Parsed
from engine.ingest.contents import contents_runs
from engine.lang.text import line_starts

_NUM = "0-9一二三四五六七八九十百零〇两"
_HEADINGS = (
    (re.compile(rf"^제\s*[{_NUM}]+\s*(?:장|편|부)(?:\s|$)"), 1),
    (re.compile(rf"^제\s*[{_NUM}]+\s*절(?:\s|$)"), 2),
    (re.compile(r"^\d{1,3}\s*(?:장|편)(?:\s|$)"), 1),  # 1장 개요
    (re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,4}\s*절(?:\s|$)"), 2),  # 1.1절 점검
    (re.compile(r"^\d{1,3}\s*절(?:\s|$)"), 2),  # 2절 …
    (re.compile(rf"^제\s*[{_NUM}]+\s*(?:관|조)(?:\s|$)"), 3),
    (re.compile(rf"^第\s*[{_NUM}]+\s*(?:章|篇|部分?)"), 1),
    (re.compile(rf"^第\s*[{_NUM}]+\s*(?:节|節)"), 2),
    (re.compile(rf"^第\s*[{_NUM}]+\s*(?:条|條)"), 3),
)
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+(\S.*)$")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+–]|\d{1,3}[.)]|[a-z][.)]|\(\d{1,3}\))\s+\S")


def cjk_heading_level(line: str) -> int:
    """Level of a Korean, Chinese or Japanese chapter/section line (제1장, 1.1절, 第2节, 第3章), else 0:
    these mark headings wherever they stand alone, in a text file or a Markdown paragraph."""
    s = line.strip()
    if not s or len(s) > 60:
        return 0
    for pattern, level in _HEADINGS:
        if pattern.match(s):
            return level
    return 0


def heading_level(line: str) -> int:
    """Heading level of a stand-alone line, or 0 when it reads as text."""
    s = line.strip()
    if not s or len(s) > 90:
        return 0
    level = cjk_heading_level(s)
    if level:
        return level
    m = _NUMBERED.match(s)
    if m and not re.search(r"[.:;,!?。]$", s) and re.search(r"[^\W\d_]", m.group(2)):
        if len(m.group(2).split()) <= 12:
            return min(6, m.group(1).count(".") + 1)
    return 0


def parse_text(text: str) -> Parsed:
    starts = line_starts(text)
    lines = [text[starts[i]: (starts[i + 1] - 1 if i + 1 < len(starts) else len(text))].rstrip("\r")
             for i in range(len(starts))]
    text, lines = without_contents(text, starts, lines)
    b = BlockBuilder()

    def end_of(i: int) -> int:  # char offset after the visible content of line i
        return starts[i] + len(lines[i].rstrip())

    def begin_of(i: int) -> int:
        return starts[i] + len(lines[i]) - len(lines[i].lstrip())

    def emit_lines(first: int, last: int) -> None:  # lines first..last (0-based, inclusive): text or list
        markers = [k for k in range(first, last + 1) if _LIST_ITEM.match(lines[k])]
        if len(markers) >= 2 and markers[0] == first:
            group = b.new_group()
            bounds = markers + [last + 1]
            for a, z in zip(bounds, bounds[1:]):
                b.add("list_item", begin_of(a), end_of(z - 1), a + 1, z, level=1, group=group)
        else:
            b.add("paragraph", begin_of(first), end_of(last), first + 1, last + 1)

    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j + 1 < n and lines[j + 1].strip():
            j += 1
        # paragraph = lines i..j; headings may sit at its top or be underlined inside it
        k, top = i, True  # top: at the paragraph's start or right under a heading
        while k <= j:
            if k + 1 <= j and _is_underline(lines[k + 1]) and not _is_underline(lines[k]) \
                    and len(lines[k].strip()) <= 120:
                level = 1 if lines[k + 1].strip()[0] == "=" else 2
                b.heading(level, lines[k], begin_of(k), end_of(k + 1), k + 1, k + 2)
                k, top = k + 2, True
                continue
            level = heading_level(lines[k]) if top else 0
            looks_like_list = k + 1 <= j and _LIST_ITEM.match(lines[k]) and _LIST_ITEM.match(lines[k + 1])
            if level and not looks_like_list:
                b.heading(level, lines[k], begin_of(k), end_of(k), k + 1, k + 1)
                k += 1
                continue
            m = k  # text runs to the paragraph's end or to a line that is underlined
            while m + 1 <= j and not (m + 2 <= j and _is_underline(lines[m + 2])):
                m += 1
            emit_lines(k, m)
            k, top = m + 1, False
        i = j + 1
    return Parsed(text=text, blocks=b.blocks, first_heading=b.first_heading)


def without_contents(text: str, starts: list[int], lines: list[str]) -> tuple[str, list[str]]:
    """The text and its lines (``starts``: where each begins) with its table of contents blanked
    (``engine.ingest.contents``: runs of consecutive lines of title, dot leader and page number, in
    page order, as a PDF converted to text keeps them), each character a space: every other line
    keeps its place and its offsets."""
    drop = contents_runs([line.strip() for line in lines])
    if not drop:
        return text, lines
    chars, lines = list(text), list(lines)
    for k in drop:
        chars[starts[k]:starts[k] + len(lines[k])] = " " * len(lines[k])
        lines[k] = " " * len(lines[k])
    return "".join(chars), lines


def _is_underline(line: str) -> bool:
    return bool(_UNDERLINE.match(line)) and len(line.strip()) >= 3
