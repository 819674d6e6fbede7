"""A table row's cells, whichever way its format writes the row.

- a pipe row: Markdown's (``| M16 | 38 |``, or GitHub's with no pipe at either end), a row the
  HTML and PDF readers render (cells joined by " | "), a reStructuredText grid table's row, whose
  cells may wrap over several lines (``| bit 0 | Binary |`` over ``|       | sensor |``: joined
  column by column). A pipe after a backslash is a pipe inside a cell (GitHub's tables). A row
  closed by a pipe that holds fewer cells than the header leaves the last columns empty, as GitHub
  renders it (``TMC2130 | SPI | yes |`` under three columns and a "Notes" one); a row with no
  closing pipe and fewer cells (a PDF row whose cells merged) is not read against the header;
- a reStructuredText ``list-table`` row: ``* - 3`` then ``- Pylontech TX`` under it, a cell a dash;
- a simple table's row (reStructuredText: ``GPIO0    If HIGH on boot    Weak Pull Up``), its
  cells apart by two spaces or more, read as cells only when the caller knows how many the
  header has and the row splits into that many;
- an HTML table's row in a Markdown file (``<tr>`` / ``<td>Weight</td>`` / ``<td>3270 g</td>``, one
  cell a line or all on one): each ``<td>`` or ``<th>`` a cell, its tags not its text
  (``html_table_rows`` finds the rows of an HTML block, ``html_row_roles`` a chunk's row lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

from engine.lang.text import line_starts, strip_span

_LIST_ROW = re.compile(r"[ \t]*\*[ \t]+-(?:[ \t]+|$)")  # a list-table row's first line: "* - 3"
_LIST_CELL = re.compile(r"[ \t]*-(?:[ \t]+|$)")  # its next cells: "  - Pylontech TX"
_GAP = re.compile(r"[ \t]{2,}")


def table_cells(row: str, columns: int = 0) -> list[str]:
    """The cells of a table row (module docstring), each its words one space apart; ``columns``: the header's count,
    which a simple table's row must split into. A row read no way is one cell."""
    lines = [line for line in row.splitlines() if line.strip()] or [row]
    if _LIST_ROW.match(lines[0]):
        return _list_row(lines)
    if is_html_row(row):
        return [" ".join(_TAG.sub(" ", m.group(1)).split()) for m in _HTML_CELL.finditer(row)]
    if "|" in row:
        cells = _pipe_row(lines)
        if 1 < len(cells) < columns and lines[-1].rstrip().endswith("|") and not lines[-1].rstrip().endswith("\\|"):
            cells += [""] * (columns - len(cells))
        return cells
    if columns > 1:
        cells = _gap_row(lines)
        if len(cells) == columns:
            return cells
    return [row.strip()]


_CELL_PIPE = re.compile(r"(?<!\\)\|")  # a cell boundary: a pipe not escaped (GitHub reads "a \| b" as one cell)


def _pipe_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [" ".join(c.replace("\\|", "|").split()) for c in _CELL_PIPE.split(line)]


def _pipe_row(lines: Sequence[str]) -> list[str]:
    rows = [_pipe_cells(line) for line in lines]
    if len({len(r) for r in rows}) != 1:  # lines that do not line up: read as one line
        return _pipe_cells(" ".join(line.strip() for line in lines))
    return [" ".join(part for part in column if part) for column in zip(*rows)]


def _list_row(lines: Sequence[str]) -> list[str]:
    cells: list[list[str]] = []
    for k, line in enumerate(lines):
        mark = _LIST_ROW.match(line) if k == 0 else _LIST_CELL.match(line)
        if mark:
            cells.append([" ".join(line[mark.end():].split())])
        else:  # a cell's wrapped line
            cells[-1].append(" ".join(line.split()))
    return [" ".join(p for p in cell if p) for cell in cells]


def _gap_row(lines: Sequence[str]) -> list[str]:
    first = lines[0].expandtabs(8)
    starts = [0] + [m.end() for m in _GAP.finditer(first.strip())]
    cells = [" ".join(c.split()) for c in _GAP.split(first.strip())]
    offset = len(first) - len(first.lstrip())
    for line in lines[1:]:  # a wrapped cell's line goes under the column it starts in
        line = line.expandtabs(8)
        at = len(line) - len(line.lstrip()) - offset
        column = max((k for k, s in enumerate(starts) if s <= at), default=0)
        cells[column] = f"{cells[column]} {line.strip()}".strip()
    return cells


def simple_columns(border: str) -> list[tuple[int, int]]:
    """A simple table's columns, from its border ("=====  ====="): each run of ``=``'s span; the
    last column runs to the line's end."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", border.expandtabs(8))]
    return [(a, spans[k + 1][0] if k + 1 < len(spans) else 10 ** 6) for k, (a, _z) in enumerate(spans)]


def columns_cells(lines: Sequence[str], columns: Sequence[tuple[int, int]]) -> list[str]:
    """The cells of lines cut at a simple table's columns (``simple_columns``), a column's lines joined."""
    out = [[] for _ in columns]
    for line in lines:
        line = line.expandtabs(8)
        for k, (a, z) in enumerate(columns):
            part = " ".join(line[a:z].split())
            if part:
                out[k].append(part)
    return [" ".join(parts) for parts in out]


# an HTML cell and what it holds, up to its end tag, the next cell or the row's end (both may be left out)
_HTML_CELL = re.compile(r"<t[dh]\b[^>]*>(.*?)(?=</t[dh]\s*>|<t[dh]\b|</tr\s*>|$)", re.I | re.S)
_TAG = re.compile(r"<[^<>]*>")
_HTML_ROW = re.compile(r"\s*<t[rdh]\b", re.I)  # a row of HTML: it opens with its tag
_ROW_OPEN = re.compile(r"<tr\b", re.I)
# a line that opens a row: its "<tr>" first, or after the tags that open the table ("<table><thead><tr>"),
# not a sentence that names the tag ("Wrap each row in `<tr>`")
_ROW_LINE = re.compile(r"\s*(?:<(?:table|thead|tbody|tfoot)\b[^<>]*>\s*)*<tr\b", re.I)
_ROW_END = re.compile(r"</tr\s*>|</t(?:able|head|body|foot)\s*>", re.I)


@dataclass(frozen=True, slots=True)
class HtmlRow:
    """One ``<tr>`` of an HTML table: its span in the text, its cells' text, a header row or not."""

    start: int
    end: int
    cells: tuple[str, ...]
    header: bool


class _Rows(HTMLParser):
    """The rows of the outermost tables of an HTML fragment, as offsets into it."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.text = text
        self.starts = line_starts(text)
        self.rows: list[HtmlRow] = []
        self.depth = 0  # tables open
        self.row: list | None = None  # [start, cells, all th, in thead]
        self.in_cell = False
        self.thead = False

    def at(self) -> int:
        line, col = self.getpos()
        return self.starts[line - 1] + col

    def close_row(self, end: int) -> None:
        if self.row is not None and self.row[1]:
            self.rows.append(HtmlRow(self.row[0], end, tuple(" ".join(c.split()) for c in self.row[1]),
                                     self.row[2] or self.row[3]))
        self.row, self.in_cell = None, False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.depth += 1
        elif self.depth != 1:
            return
        elif tag == "thead":
            self.thead = True
        elif tag == "tr":
            self.close_row(self.at())
            self.row = [self.at(), [], True, self.thead]
        elif tag in ("td", "th") and self.row is not None:
            self.in_cell = True
            self.row[1].append("")
            self.row[2] = self.row[2] and tag == "th"

    def handle_endtag(self, tag):
        if tag == "table":
            if self.depth == 1:
                self.close_row(self.at())
            self.depth = max(0, self.depth - 1)
        elif self.depth != 1:
            return
        elif tag == "tr":
            at = self.at()
            self.close_row(self.text.find(">", at) + 1 or len(self.text))
        elif tag in ("thead", "tbody", "tfoot"):
            self.close_row(self.at())
            self.thead = self.thead and tag != "thead"
        elif tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data):
        if self.depth >= 1 and self.row is not None and self.row[1] and self.in_cell:
            self.row[1][-1] += f" {data}"


def table_context(context: str) -> list[str]:
    """The lines of a chunk's context that its tables' rows carry (headers, captions): all but the
    first, the heading path under the document's title, which the chunker writes first and which
    may hold a pipe of its own (an HTML page's <title>Setup | Acme Docs</title>)."""
    return context.splitlines()[1:]


def context_headers(context: str) -> set[str]:
    """The header rows a chunk's context carries for its tables' rows (``table_context``'s lines with
    a pipe), each its words one space apart."""
    return {" ".join(line.split()) for line in table_context(context) if "|" in line}


def is_html_row(row: str) -> bool:
    """Is ``row`` an HTML table's row (it opens with ``<tr>``, ``<td>`` or ``<th>``)?"""
    return bool(_HTML_ROW.match(row))


def html_table_rows(fragment: str) -> list[HtmlRow]:
    """The rows of the HTML tables in ``fragment`` (an HTML block of a Markdown file), offsets into
    it; a table inside a cell stays that cell's text."""
    if "<t" not in fragment.lower():
        return []
    parser = _Rows(fragment)
    parser.feed(fragment)
    parser.close()
    parser.close_row(len(fragment))
    return parser.rows


def html_rows_in_line(text: str, start: int, end: int, context: str) -> list[tuple[int, int]]:
    """The spans of the rows on the line ``text[start:end]``: the line itself, or where a table is
    written on one line (GitBook saves them so: ``<table><thead><tr><th>…</tr>…<tr><td>…``), each
    ``<tr>`` up to the next, less the header row the context names and the table's closing tags."""
    opens = [m.start() for m in _ROW_OPEN.finditer(text, start, end)]
    if len(opens) < 2:
        return [strip_span(text, start, end)] if end > start else []
    named = context_headers(context)
    out = []
    for a, z in zip(opens, opens[1:] + [end]):
        a, z = strip_span(text, a, z)
        cells = table_cells(text[a:z])
        if cells and any(cells) and " | ".join(cells) not in named:
            out.append((a, z))
    return out


def html_row_roles(lines: Sequence[str], context: str) -> list[str] | None:
    """Roles (as engine.lang.rst.line_roles names them) of a Markdown chunk's lines that hold an
    HTML table's rows: "row" for a row's first line, "row+" for its further lines, "header" for
    the lines of the row the chunk's context names as the table's header (its cells joined by
    " | ", as the reader carries it), "hidden" for a line of the table's tags only, "" for the
    rest (Markdown); None when no line opens a row."""
    if not any(_ROW_LINE.match(line) for line in lines):
        return None
    named = context_headers(context)
    roles = [""] * len(lines)
    k = 0
    in_table = False
    while k < len(lines):
        if _ROW_LINE.match(lines[k]):
            j = k
            while j + 1 < len(lines) and not _ROW_END.search(lines[j]) and not _ROW_LINE.match(lines[j + 1]):
                j += 1
            cells = table_cells("\n".join(lines[k:j + 1]))
            head = " | ".join(cells) in named
            roles[k:j + 1] = ["header" if head else "row"] + ["header" if head else "row+"] * (j - k)
            in_table = True
            k = j + 1
            continue
        if in_table or re.search(r"</?t(?:able|head|body|foot)\b", lines[k], re.I):
            if not _TAG.sub("", lines[k]).strip():
                roles[k] = "hidden"
        k += 1
    return roles
