"""reStructuredText -> blocks: section titles by their adornment, paragraphs, list items,
literal and code blocks, admonitions, tables. Sphinx's directives and roles are read as text,
never run.

``Document.text`` is the file text itself; every block is a run of source lines, so a chunk's
lines are the file's lines. An admonition's first block starts at its ``.. warning::`` line, so
the word that marks it stays in the claim.

Why not docutils: its document tree gives no character offsets (and line numbers only for some
nodes), which citations need; and without Sphinx it rejects the directives and roles most
``.rst`` manuals use (``code-block``, ``ref``, ``doc``, ``versionadded`` …). In
reStructuredText the structure a chunker needs is defined by lines (indentation, adornment,
explicit markup ``..``), so this reader follows the specification's line rules:

- a title is one line under (and optionally over) a line of one punctuation character repeated;
  levels come in the order the styles first appear (over-and-under is a style of its own);
- a paragraph ending in ``::`` (or a ``::`` line) introduces a literal block: the indented lines
  after it are a ``code`` block; so is the content of ``code-block``, ``code``, ``sourcecode``,
  ``parsed-literal`` and ``math``, and a paragraph of ``>>>`` lines (a doctest);
- ``..`` starts explicit markup: a comment, a hyperlink target or a substitution is no text, nor
  is an image (a figure's caption is); ``toctree``, ``include``, ``contents``, ``index``, ``raw``
  and ``highlight`` show nothing; any other directive's options (``:linenos:``) are skipped and
  its argument and content are read as text (admonitions, ``only``, tabs, directives this reader
  does not know);
- bullet and enumerated list items, each with the lines indented under it (a nested list's
  items are list items of the same list, one level deeper);
- grid tables (``+---+``), simple tables (``===  ===``) and ``list-table``: one ``table_row``
  per row, with the header row as its context;
- a field list before the first title (``:orphan:``, ``:tocdepth: 2``) is page metadata, no text.
"""

from __future__ import annotations

import bisect
import re

from engine.ingest.blocks import BlockBuilder, Parsed
from engine.lang.rst import (
    ADORNMENT, CODE_DIRECTIVES, DIRECTIVE, EXPLICIT, FOOTNOTE, FRAME_DIRECTIVES, GRID_BORDER, NO_TEXT,
    SIMPLE_BORDER, SIMPLE_RULE, TABLE_DIRECTIVES, directive_name, directive_parts, is_object_directive, is_silent,
    title_text,
)
from engine.lang.tables import columns_cells, simple_columns, table_cells
from engine.lang.text import line_starts, strip_span
from engine.types import BlockKind

_BULLET = re.compile(r"^[-*+•‣⁃]\s+(?=\S)")
_ENUMERATED = re.compile(r"^\(?(?:\d{1,3}|#|[a-zA-Z]|[ivxlcdm]{1,6}|[IVXLCDM]{1,6})[.)]\s+(?=\S)")
_FIELD = re.compile(r"^:[\w-]+:(?:\s+\S.*)?$")


MAX_NESTING = 24  # lists and quotes inside one another; deeper ones are read as plain text


def parse_rst(text: str) -> Parsed:
    reader = _Reader(text)
    reader.body(0, len(reader.lines), 0)
    warnings = ["lists or quotes nested deeper than the reader follows; the deepest levels are plain text"] \
        if reader.too_deep else []
    return Parsed(text=text, blocks=reader.b.blocks, first_heading=reader.b.first_heading, warnings=warnings)


class _Reader:
    """One pass over the lines. ``body`` reads a range of lines at one indentation, and again,
    deeper, for the content of a list item, a directive or a block quote."""

    def __init__(self, text: str):
        self.text = text
        self.starts = line_starts(text)
        ends = [s - 1 for s in self.starts[1:]] + [len(text)]
        self.lines = [text[a:z].rstrip("\r").expandtabs(8) for a, z in zip(self.starts, ends)]
        self.b = BlockBuilder()
        self.styles: dict[tuple[str, bool], int] = {}  # title adornment -> level, in order of appearance
        self.opener: int | None = None  # a directive line the next block starts at (".. warning::")
        self.title_level = 0  # the level of the last section title
        self.entries = 0  # API entries (".. method::") being read inside one another
        self.nesting = 0  # bodies being read inside one another
        self.too_deep = False

    # -- lines ----------------------------------------------------------------------
    def indent(self, i: int) -> int:
        return len(self.lines[i]) - len(self.lines[i].lstrip())

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def deeper(self, i: int, stop: int, than: int) -> int:
        """The end (exclusive) of the lines from ``i`` on that are blank or indented more than
        ``than``, trailing blank lines left out."""
        j = i
        while j < stop and (self.blank(j) or self.indent(j) > than):
            j += 1
        while j > i and self.blank(j - 1):
            j -= 1
        return j

    def line_end(self, i: int) -> int:
        """The offset after line ``i``'s last visible character (in the file's own text)."""
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
        return self.starts[i] + len(self.text[self.starts[i]:end].rstrip())

    def first_text(self, i: int, stop: int) -> int:
        while i < stop and self.blank(i):
            i += 1
        return i

    def add(self, kind: BlockKind, first: int, last: int, *, context: str = "", group: int = -1,
            level: int = 0) -> None:
        """A block over lines ``first``..``last`` (0-based, inclusive), whitespace trimmed; it
        starts at a pending directive line instead when there is one."""
        a = self.starts[first]
        if self.opener is not None and kind != "code":
            a, self.opener = min(a, self.opener), None
        z = self.line_end(last)
        while a < z and self.text[a].isspace():
            a += 1
        if a < z:
            self.b.add(kind, a, z, bisect.bisect_right(self.starts, a), last + 1, context=context, group=group,
                       level=level)

    # -- the body ---------------------------------------------------------------------
    def body(self, i: int, stop: int, base: int, group: int = -1, depth: int = 0) -> None:
        """Lines ``i``..``stop`` at indentation ``base``; ``depth`` > 0 inside a list item (its
        paragraphs are list items), ``group`` the list or table they belong to."""
        if self.nesting >= MAX_NESTING:
            self.too_deep = True
            first, last = self.first_text(i, stop), stop - 1
            while last > first and self.blank(last):
                last -= 1
            if first < stop:
                self.add("list_item" if depth else "paragraph", first, last, group=group, level=depth)
            return
        self.nesting += 1
        try:
            self._body(i, stop, base, group, depth)
        finally:
            self.nesting -= 1

    def _body(self, i: int, stop: int, base: int, group: int, depth: int) -> None:
        list_group: int | None = None  # the list being read at this level
        while i < stop:
            if self.blank(i):
                i += 1
                continue
            if self.indent(i) > base:  # a block quote or a definition's body: its own body, deeper
                end = self.deeper(i, stop, base)
                self.body(i, end, self.indent(i), group, depth)
                i, list_group = end, None
                continue
            line = self.lines[i].strip()
            marker = _BULLET.match(line) or _ENUMERATED.match(line)
            if marker and self.is_item(i, stop, base, bool(_BULLET.match(line))):
                if list_group is None:
                    list_group = group if depth and group != -1 else self.b.new_group()
                i = self.list_item(i, stop, base, marker.end(), list_group, depth + 1)
                continue
            list_group = None
            i = (self.title(i, stop, base) or self.explicit(i, stop, base, line, group, depth)
                 or self.table(i, stop, base, line) or self.paragraph(i, stop, base, group, depth))

    def is_item(self, i: int, stop: int, base: int, bullet: bool) -> bool:
        """An enumerator needs its next line blank, indented or another item ("A. Smith wrote"
        running on is a sentence); a bullet is an item anyway."""
        if bullet or i + 1 >= stop or self.blank(i + 1) or self.indent(i + 1) > base:
            return True
        nxt = self.lines[i + 1].strip()
        return bool(_ENUMERATED.match(nxt) or _BULLET.match(nxt))

    def title(self, i: int, stop: int, base: int) -> int:
        """A section title at line ``i``: the line after it, else 0 (a transition line: skipped)."""
        if base:
            return 0
        over = ADORNMENT.match(self.lines[i])
        if over:
            if i + 2 < stop and not self.blank(i + 1):
                under = ADORNMENT.match(self.lines[i + 2])
                if under and under.group(1) == over.group(1):
                    self.heading((over.group(1), True), i + 1, i, i + 2)
                    return i + 3
            return i + 1 if i + 1 >= stop or self.blank(i + 1) else 0
        if i + 1 >= stop or self.indent(i) or not (i == 0 or self.blank(i - 1) or self._heading_ends(i)):
            return 0
        under = ADORNMENT.match(self.lines[i + 1])
        if under and len(self.lines[i + 1].strip()) >= min(len(self.lines[i].strip()), 4):
            self.heading((under.group(1), False), i, i, i + 1)
            return i + 2
        return 0

    def _heading_ends(self, i: int) -> bool:
        last = self.b.blocks[-1] if self.b.blocks else None
        return last is not None and last.kind == "heading" and last.end_line == i

    def heading(self, style: tuple[str, bool], title_line: int, first: int, last: int) -> None:
        level = self.styles.setdefault(style, min(6, len(self.styles) + 1))
        self.title_level = level
        self.opener = None
        self.b.heading(level, self.lines[title_line].strip(), self.starts[first], self.line_end(last), first + 1,
                       last + 1)

    def list_item(self, i: int, stop: int, base: int, marker: int, group: int, depth: int) -> int:
        """One item: its first paragraph (marker included) a list item, the lines under it read as
        its body (a nested list: items one level deeper). Returns the line after it."""
        end = self.deeper(i + 1, stop, base)
        last = i
        while last + 1 < end and not self.blank(last + 1):
            nxt = self.lines[last + 1].strip()
            if self.indent(last + 1) > base and (_BULLET.match(nxt) or _ENUMERATED.match(nxt)):
                break  # a nested list without a blank line before it
            last += 1
        self.add("list_item", i, last, group=group, level=depth)
        if last + 1 < end:
            first = self.first_text(last + 1, end)
            if first < end:
                self.body(first, end, min(self.indent(first), base + marker), group, depth)
        return max(end, i + 1)

    def explicit(self, i: int, stop: int, base: int, line: str, group: int, depth: int) -> int:
        """Explicit markup (``..``): the line after it, else 0 (not explicit markup)."""
        if not EXPLICIT.match(line):
            return 0
        end = max(self.deeper(i + 1, stop, base), i + 1)
        if FOOTNOTE.match(line):
            self.paragraph(i, end, base, group, depth)
            return end
        m = DIRECTIVE.match(line)
        if m is None or NO_TEXT.match(line):  # a comment, a target, a substitution
            return end
        name = directive_name(line)
        argument = line[m.end():].strip()
        has_argument = bool(argument) and name not in FRAME_DIRECTIVES
        argument_end, after, options = directive_parts(self.lines, i, end)
        content = self.first_text(after, end)
        if is_silent(name):
            return end
        if name in CODE_DIRECTIVES:
            if content < end:
                self.add("code", content, end - 1, group=group)
            return end
        if name in TABLE_DIRECTIVES:
            if content < end:
                self.directive_table(name, content, end, options, argument)
            return end
        if name == "figure":  # the image is nothing to read; its caption and legend are
            if content < end:
                self.body(content, end, self.indent(content), group, depth)
            return end
        if is_object_directive(line) and has_argument:  # an API entry: its signature is a title one
            # level below the section's (or the entry's it is inside), its content the entry's text
            level = min(6, self.title_level + 1 + self.entries)
            title = " / ".join(title_text(self.lines[k]) for k in range(i, argument_end))
            start = strip_span(self.text, self.starts[i], self.line_end(i))[0]
            self.b.heading(level, title, start, self.line_end(argument_end - 1), i + 1, argument_end)
            self.entries += 1
            try:
                if content < end:
                    self.body(content, end, self.indent(content), group, depth)
            finally:
                self.entries -= 1
            return end
        # an admonition, a topic, a tab, "only", or a directive this reader does not know: its text,
        # the first block from the directive's line on
        if has_argument:
            self.add("list_item" if depth else "paragraph", i, argument_end - 1, group=group, level=depth)
        elif name not in FRAME_DIRECTIVES:
            self.opener = self.starts[i]
        if content < end:
            self.body(content, end, self.indent(content), group, depth)
        self.opener = None
        return end

    def directive_table(self, name: str, first: int, end: int, options: dict[str, str], caption: str) -> None:
        """``list-table`` (a bullet list of rows, each a bullet list of cells) and ``csv-table``
        (a line per row): one table row each, its caption and header rows as context."""
        group = self.b.new_group()
        rows_option = options.get("header-rows", "0")
        header_rows = int(rows_option) if rows_option.isdigit() else 0
        header = options.get("header", "")
        rows: list[tuple[int, int]] = []
        i = first
        while i < end:
            if self.blank(i):
                i += 1
                continue
            if name == "list-table":
                row_end = self.deeper(i + 1, end, self.indent(i))
            else:
                row_end = i + 1
            rows.append((i, row_end - 1))
            i = row_end
        for k, (a, z) in enumerate(rows):
            if k < header_rows:
                cells = [re.sub(r"^[*-]\s+(?:-\s+)?", "", self.lines[n].strip()) for n in range(a, z + 1)]
                header = (header + "\n" + " | ".join(c for c in cells if c)).strip()
                continue
            self.add("table_row", a, z, context="\n".join(x for x in (caption, header) if x), group=group)

    def table(self, i: int, stop: int, base: int, line: str) -> int:
        """A grid or simple table at line ``i``: the line after it, else 0."""
        if GRID_BORDER.match(line):
            return self.grid_table(i, stop, base)
        if SIMPLE_BORDER.match(line):
            return self.simple_table(i, stop, base)
        return 0

    def grid_table(self, i: int, stop: int, base: int) -> int:
        end = i
        while end < stop and not self.blank(end) and self.lines[end].strip()[:1] in ("+", "|"):
            end += 1
        group = self.b.new_group()
        borders = [k for k in range(i, end) if GRID_BORDER.match(self.lines[k].strip())]
        has_header = any("=" in self.lines[k] for k in borders[1:])
        header, in_header = "", has_header
        for a, z in zip(borders, borders[1:]):
            if z - a < 2:
                continue
            if in_header:  # its cells, each column's lines joined
                header = (header + "\n" + " | ".join(table_cells("\n".join(self.lines[a + 1:z])))).strip()
            else:
                self.add("table_row", a + 1, z - 1, context=header, group=group)
            if "=" in self.lines[z]:
                in_header = False
        return max(end, i + 1)

    def simple_table(self, i: int, stop: int, base: int) -> int:
        borders = [i]
        k = i + 1
        while k < stop:
            if SIMPLE_BORDER.match(self.lines[k].strip()):
                borders.append(k)
                if k + 1 >= stop or self.blank(k + 1) or len(borders) == 3:
                    break
            elif self.blank(k) and len(borders) >= 2 and (k + 1 >= stop or self.blank(k + 1)):
                break
            k += 1
        if len(borders) < 2:
            return 0  # a lone border line: not a table, read as text
        group = self.b.new_group()
        header = ""
        if len(borders) == 3:
            header = " | ".join(columns_cells(self.lines[i + 1:borders[1]], simple_columns(self.lines[i])))
            body = (borders[1] + 1, borders[2])
        else:
            body = (i + 1, borders[1])
        indent0 = len(self.lines[i]) - len(self.lines[i].lstrip())
        row: list[int] = []
        for n in range(*body):
            if self.blank(n):
                continue
            if SIMPLE_RULE.match(self.lines[n].strip()):  # a rule between the rows ends one
                if row:
                    self.add("table_row", row[0], row[-1], context=header, group=group)
                row = []
                continue
            continued = len(self.lines[n]) > indent0 and not self.lines[n][indent0:indent0 + 1].strip()
            if row and not continued:
                self.add("table_row", row[0], row[-1], context=header, group=group)
                row = []
            row.append(n)
        if row:
            self.add("table_row", row[0], row[-1], context=header, group=group)
        return borders[-1] + 1

    def paragraph(self, i: int, stop: int, base: int, group: int, depth: int) -> int:
        """Lines from ``i`` to a blank line (a definition's body indented under its term stays
        with it); a literal block after one ending in ``::``. The line after it."""
        last = i
        while last + 1 < stop and not self.blank(last + 1) and self.indent(last + 1) >= base \
                and not (self.indent(last + 1) == base and EXPLICIT.match(self.lines[last + 1].strip())):
            last += 1
        lines = [self.lines[k].strip() for k in range(i, last + 1)]
        if lines[0].startswith(">>>"):
            self.add("code", i, last, group=group)
        elif not self.b.blocks and all(_FIELD.match(x) for x in lines):
            pass  # ":orphan:", ":tocdepth: 2" above the title: page metadata
        elif lines != ["::"]:
            self.add("list_item" if depth else "paragraph", i, last, group=group, level=depth)
        nxt = last + 1
        if lines[-1].endswith("::"):
            first = self.first_text(nxt, stop)
            if first < stop and self.indent(first) > base:
                end = self.deeper(first, stop, base)
                self.add("code", first, end - 1, group=group)
                return end
        return nxt
