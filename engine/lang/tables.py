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
  header has and the row splits into that many.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LIST_ROW = re.compile(r"[ \t]*\*[ \t]+-(?:[ \t]+|$)")  # a list-table row's first line: "* - 3"
_LIST_CELL = re.compile(r"[ \t]*-(?:[ \t]+|$)")  # its next cells: "  - Pylontech TX"
_GAP = re.compile(r"[ \t]{2,}")


def table_cells(row: str, columns: int = 0) -> list[str]:
    """The cells of a table row (module docstring), each its words one space apart; ``columns``: the header's count,
    which a simple table's row must split into. A row read no way is one cell."""
    lines = [line for line in row.splitlines() if line.strip()] or [row]
    if _LIST_ROW.match(lines[0]):
        return _list_row(lines)
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
