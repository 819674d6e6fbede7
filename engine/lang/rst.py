"""reStructuredText's line grammar: what a line is by its shape and indentation, for the reader
(engine.ingest.rst) and for the units of a passage (engine.lang.units), which sees a chunk's
text only.

In reStructuredText structure is set by lines: a title is underlined (and optionally overlined)
by one punctuation character repeated; ``..`` opens explicit markup (a comment, a hyperlink
target, a substitution, a directive with its options and indented content); a paragraph
ending in ``::`` introduces an indented literal block. What a reader of the rendered page never
sees (comments, targets, images, a table of contents, directive options) is ``hidden``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from engine.lang.tables import columns_cells, simple_columns, table_cells

ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")  # one punctuation character, 3 times or more
EXPLICIT = re.compile(r"^\.\.(?:\s|$)")
DIRECTIVE = re.compile(r"^\.\.\s+([A-Za-z0-9][\w:+.-]*)\s?::(?=\s|$)")
# a hyperlink target, a substitution, an anonymous target: no text
NO_TEXT = re.compile(r"^\.\.\s+(?:_|\|[^|]+\|\s|__(?:\s|$))")
FOOTNOTE = re.compile(r"^\.\.\s+\[[^\]]+\]\s")
OPTION = re.compile(r"^:[\w][\w \-.]*:(?:\s|$)")
SIMPLE_BORDER = re.compile(r"^=+(?:[ \t]+=+)+\s*$")  # a simple table's border: "=====  ====="
# inside a simple table, a line of "-" under each column: a column-span underline (docutils), set by
# writers between the rows as a rule; no text
SIMPLE_RULE = re.compile(r"^-+(?:[ \t]+-+)*\s*$")
GRID_BORDER = re.compile(r"^\+(?:[-=:]+\+)+\s*$")  # a grid table's border: "+-----+-----+" ("=" under its header)
_RULES = re.compile(f"{SIMPLE_BORDER.pattern}|{SIMPLE_RULE.pattern}|{GRID_BORDER.pattern}")

CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "parsed-literal", "math"})
TABLE_DIRECTIVES = frozenset({"list-table", "csv-table"})
SILENT_DIRECTIVES = frozenset({
    "toctree", "include", "literalinclude", "contents", "index", "raw", "highlight", "image", "meta", "sectnum",
    "target-notes", "default-role", "role", "tabularcolumns", "autosummary", "currentmodule", "module", "program",
    "productionlist"})

# directives that describe one object of an API or a program (Sphinx's domains: "py:function",
# "c:macro", "std:option" ...): the argument is its signature, shown as the entry's title
OBJECT_DIRECTIVES = frozenset({
    "function", "method", "class", "classmethod", "staticmethod", "attribute", "data", "exception", "decorator",
    "decoratormethod", "property", "describe", "object", "option", "envvar", "macro", "member", "type", "var",
    "struct", "enum", "enumerator", "confval"})

# directives whose argument titles their content (a custom admonition, a topic, a sidebar) or is
# an informal heading (a rubric): read as a title, not a statement
TITLED_DIRECTIVES = frozenset({"admonition", "topic", "sidebar", "rubric"})

# directives whose argument is a build condition or a style, not text (their content is text);
# "class" is not one: in Sphinx it is py:class (docutils' own is "rst-class" there)
FRAME_DIRECTIVES = frozenset({"only", "ifconfig", "container", "rst-class", "tabs", "tab-set"})

# Sphinx's notes of a version: the argument is the version, the content (or text after it) what changed
VERSION_DIRECTIVES = frozenset({"versionadded", "versionchanged", "deprecated", "versionremoved"})

LineRole = Literal["", "title", "hidden", "code", "row", "row+", "header", "caption"]


def directive_name(line: str) -> str | None:
    """The directive a stripped line opens (``.. code-block:: ini`` -> "code-block"; a domain's
    prefix dropped: ``.. py:function::`` -> "function"), else None."""
    m = DIRECTIVE.match(line)
    return m.group(1).lower().rsplit(":", 1)[-1] if m else None


def is_object_directive(line: str) -> bool:
    """Whether a stripped line opens a directive describing one object of an API or a program: one
    of OBJECT_DIRECTIVES, or any directive of a domain (``.. py:method::``, ``.. http:get::``,
    ``.. js:function::``: sphinxcontrib-httpdomain's endpoints and the like)."""
    m = DIRECTIVE.match(line)
    return m is not None and (":" in m.group(1) or directive_name(line) in OBJECT_DIRECTIVES)


def title_text(line: str) -> str:
    """A title line's text; an API entry's directive line gives its signature
    (``.. method:: Pin.init(mode)`` -> "Pin.init(mode)"), an HTTP endpoint's its method too
    (``.. http:get:: /api/files`` -> "GET /api/files")."""
    s = line.strip()
    m = DIRECTIVE.match(s)
    if m is None:
        return s
    domain, _, name = m.group(1).lower().rpartition(":")
    return f"{name.upper()} {s[m.end():].strip()}" if domain == "http" else s[m.end():].strip()


def directive_parts(lines: Sequence[str], i: int, end: int) -> tuple[int, int, dict[str, str]]:
    """The layout of the directive at line ``i``, its block ending before ``end``: the line after
    its argument (which may run on), the line after its options (``:linenos:``), and the options
    by lower-case name. Its content follows, after a blank line."""
    j = i + 1
    while j < end and lines[j].strip() and not OPTION.match(lines[j].strip()):
        j += 1
    argument_end, options = j, {}
    while j < end and lines[j].strip() and OPTION.match(lines[j].strip()):
        key, _, value = lines[j].strip()[1:].partition(":")
        options[key.strip().lower()] = value.strip()
        j += 1
    return argument_end, j, options


def is_silent(name: str) -> bool:
    """A directive whose output is no text for a reader (a table of contents, an image, an index)."""
    return name in SILENT_DIRECTIVES or name.startswith("auto")


# a line set out less than a literal block's, after a blank line, that reads as a sentence or opens a
# directive: the text the block was in goes on ("    If you are using Windows ... different."), not
# the block's own less indented line ("  qux: 3")
_BELOW_A_LITERAL = re.compile(r"[ \t]*(?:\.\. |[A-Z][^\W\d_]*(?:[ \t]+[^\s=;{}]+){3,}[.!?:]?[ \t]*$)")


def _indent(line: str) -> int:
    line = line.expandtabs(8)
    return len(line) - len(line.lstrip())


def line_roles(lines: Sequence[str], in_literal: bool = False, in_table: bool = False) -> list[LineRole]:
    """Each line's role in a run of reStructuredText lines (a whole file or one chunk's text):
    "title" (a section title or its adornment, an API entry's signature, a topic's title),
    "hidden" (explicit markup no reader sees, a directive's options, a lone ``::``, a simple
    or grid table's borders and rules), "code" (a literal block, a code directive's content), "row"
    (a line of a simple table, the first line of a ``list-table`` or grid table row), "row+" (a row's
    further lines: a ``list-table`` row's, a grid row's, a simple table's wrapped cells), "header" (a
    table's header rows: a simple or grid table's lines above its ``===`` rule, a ``list-table``'s
    ``:header-rows:``; each row is read with them: ``table_header_cells``), "caption" (a
    figure's caption of one line), or "" (text: read as paragraphs, list items, admonitions).
    ``in_literal``: the lines start inside a literal block (a chunk cut from it: ``Chunk.in_code``),
    which runs on while they are indented, up to a sentence or directive set out less than its
    lines after a blank line (the text it was in goes on); ``in_table``: they may start inside a
    simple table (a table chunk cut from its body), which runs on to its next border."""
    n = len(lines)
    roles: list[LineRole] = [""] * n
    blank = [not x.strip() for x in lines]
    ind = [_indent(x) for x in lines]

    def under(i: int, than: int) -> int:  # end of the lines from i on, blank or deeper than `than`
        j = i
        while j < n and (blank[j] or ind[j] > than):
            j += 1
        while j > i and blank[j - 1]:
            j -= 1
        return j

    i = 0
    opening = next((k for k in range(n) if not blank[k]), n)  # a chunk's first line starts at its text
    floor = 0  # the least indentation of the literal's lines after its first: the block's own, at most
    while in_literal and i < n and (blank[i] or ind[i] > 0 or i == opening):
        if not blank[i] and i != opening:
            if floor and ind[i] < floor and blank[i - 1] and _BELOW_A_LITERAL.match(lines[i]):
                break  # the text of the directive or item the block was in goes on
            floor = min(floor or ind[i], ind[i])
        roles[i] = "code"
        i += 1
    if in_table and not in_literal and opening < n and _cut_from_a_simple_table(lines, opening):
        i = _simple_table(lines, blank, roles, opening, cut=True)
    while i < n:
        s = lines[i].strip()
        if blank[i]:
            i += 1
            continue
        if SIMPLE_BORDER.match(s):
            i = _simple_table(lines, blank, roles, i)
            continue
        if GRID_BORDER.match(s):
            i = _grid_table(lines, roles, i)
            continue
        if ADORNMENT.match(lines[i]) and not ind[i]:
            roles[i] = "title"
            if i and not blank[i - 1] and roles[i - 1] == "" and not ind[i - 1] \
                    and (i == 1 or blank[i - 2] or roles[i - 2] == "title"):
                roles[i - 1] = "title"  # the title it underlines
            i += 1
            continue
        if EXPLICIT.match(s):
            end = max(under(i + 1, ind[i]), i + 1)
            name = directive_name(s)
            if FOOTNOTE.match(s):
                i += 1
                continue
            if name is None or NO_TEXT.match(s) or is_silent(name):
                roles[i:end] = ["hidden"] * (end - i)
                i = end
                continue
            argument_end, j, options = directive_parts(lines, i, end)
            argument = s[DIRECTIVE.match(s).end():].split()  # on the directive's own line
            if (is_object_directive(s) or name in TITLED_DIRECTIVES) and argument:
                roles[i:argument_end] = ["title"] * (argument_end - i)  # a signature (on several lines: forms)
            roles[argument_end:j] = ["hidden"] * (j - argument_end)  # the options
            if name in CODE_DIRECTIVES:
                roles[i] = "hidden"
                roles[j:end] = ["code"] * (end - j)
                i = end
                continue
            if name in TABLE_DIRECTIVES:  # its caption is the rows' context, not a statement
                roles[i] = "hidden"
                heads = int(options["header-rows"]) if options.get("header-rows", "").isdigit() else 0
                for k in range(j, end):
                    if not blank[k]:
                        starts = name != "list-table" or lines[k].lstrip().startswith("*")
                        heads -= starts
                        roles[k] = "header" if heads >= 0 else "row" if starts else "row+"
                i = end
                continue
            if name == "figure" or name in FRAME_DIRECTIVES or (  # a figure's image is nothing to read;
                    name in VERSION_DIRECTIVES and len(argument) <= 1):
                roles[i] = "hidden"  # its caption is; nor is a version alone (".. versionchanged:: 2.0.0")
            if name == "figure":
                caption = next((k for k in range(j, end) if not blank[k]), end)
                if caption < end and (caption + 1 >= end or blank[caption + 1]):
                    roles[caption] = "caption"  # a one-line caption: a label or a statement (engine.lang.units)
            i = j
            continue
        if s.endswith("::"):
            if s == "::":
                roles[i] = "hidden"
            k = i + 1
            while k < n and blank[k]:
                k += 1
            if k < n and ind[k] > ind[i]:
                end = under(k, ind[i])
                roles[k:end] = ["code"] * (end - k)
                i = end
                continue
        i += 1
    return roles


def _cut_from_a_simple_table(lines: Sequence[str], first: int) -> bool:
    """Whether a table chunk's lines, whose first text is line ``first``, start inside a simple
    table's body: a row, not a border, a title, a grid table, a ``list-table``'s rows or markup,
    and no blank line before the table's next border (or the chunk's end), as rows run."""
    head = lines[first].strip()
    if SIMPLE_BORDER.match(head) or head.startswith(("+-", "+=", "|")) or re.match(r"[*+-]\s", head) \
            or EXPLICIT.match(head) or (first + 1 < len(lines) and ADORNMENT.match(lines[first + 1])):
        return False
    for line in lines[first + 1:]:
        if SIMPLE_BORDER.match(line.strip()):
            return True
        if not line.strip():
            return False
    return True


def _grid_table(lines: Sequence[str], roles: list[LineRole], i: int) -> int:
    """Marks the grid table whose top border is line ``i`` (borders hidden; the lines above a
    ``+===+`` border its header; each row's first line "row", its wrapped lines "row+"); returns
    the line after it."""
    end = i
    while end < len(lines) and lines[end].strip()[:1] in ("+", "|"):
        end += 1
    heads = next((k for k in range(i + 1, end) if GRID_BORDER.match(lines[k].strip()) and "=" in lines[k]), i)
    for k in range(i, end):
        if GRID_BORDER.match(lines[k].strip()):
            roles[k] = "hidden"
        elif k < heads:
            roles[k] = "header"
        else:
            roles[k] = "row+" if roles[k - 1] in ("row", "row+") else "row"
    return max(end, i + 1)


def table_header_cells(text: str, offset: int, in_literal: bool = False,
                       in_table: bool = False) -> list[str] | None:
    """The header cells of the reStructuredText table whose row starts at ``offset`` of ``text``
    (a chunk's text: ``line_roles``' arguments), read back over its rows to the header its table
    marks; [] when the table starts in ``text`` with none, None when it starts before ``text``
    (a chunk cut from a table's body: the chunker carries the header in its context)."""
    lines = text.splitlines()
    roles = line_roles(lines, in_literal, in_table)
    k = text.count("\n", 0, offset)
    while k >= 0 and (roles[k] in ("row", "row+") or (roles[k] == "hidden" and _RULES.match(lines[k].strip()))):
        k -= 1  # back over the table's rows and rules
    if k < 0:
        return None
    if roles[k] != "header":
        return []
    first = k
    while first > 0 and roles[first - 1] == "header":
        first -= 1
    head = lines[first:k + 1]
    if first > 0 and SIMPLE_BORDER.match(lines[first - 1].strip()):
        return columns_cells(head, simple_columns(lines[first - 1]))
    if head[0].lstrip().startswith("*"):  # list-table rows: with several, each column's cells joined
        rows, starts = [], [n for n, line in enumerate(head) if line.lstrip().startswith("*")]
        for a, z in zip(starts, starts[1:] + [len(head)]):
            rows.append(table_cells("\n".join(head[a:z])))
        if len({len(r) for r in rows}) != 1:
            return rows[-1]
        return [" ".join(c for c in column if c) for column in zip(*rows)]
    return table_cells("\n".join(head))


def _simple_table(lines: Sequence[str], blank: list[bool], roles: list[LineRole], i: int, cut: bool = False) -> int:
    """Marks the simple table whose top border is line ``i`` (borders and column rules hidden, the
    lines between them rows: a header, then the body; a line whose first column is blank goes on
    with the row above it, "row+"); returns the line after it. ``cut``: line ``i`` is in the table's
    body, its top border above the text, and the next border ends it."""
    borders = [] if cut else [i]
    most, least = (1, 1) if cut else (3, 2)  # borders: the next one (cut), else top, header rule, bottom
    k = i if cut else i + 1
    while k < len(lines) and len(borders) < most:
        if SIMPLE_BORDER.match(lines[k].strip()):
            borders.append(k)
            if k + 1 >= len(lines) or blank[k + 1]:
                break
        k += 1
    if len(borders) < least:  # no closing border within the text (a chunk may cut a table): rows anyway
        borders.append(k)
    elif not cut and len(borders) == 2 and k >= len(lines) and not blank[borders[1] + 1]:
        borders.append(len(lines))  # the second border is the header's rule: the text ends in the body
    end = min(borders[-1] + 1, len(lines))
    first_column = min((_indent(lines[m]) for m in range(i, end) if not blank[m]), default=0)
    row = False  # a row is open (the line above belongs to one)
    header = borders[1] if not cut and len(borders) == 3 else i  # the lines above the header rule
    for m in range(i, end):
        if m in borders or SIMPLE_RULE.match(lines[m].strip()):
            roles[m], row = "hidden", False
        elif blank[m]:
            roles[m] = ""
        elif m < header:
            roles[m] = "header"
        else:
            roles[m] = "row+" if row and _indent(lines[m]) > first_column else "row"
            row = True
    return borders[-1] + 1
