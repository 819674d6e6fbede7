"""Evidence units: the sentences, list items and table rows a passage is made of.

A :class:`Unit` is a span of the *document* text (``char_start``/``char_end``),
found inside one chunk's span, so a claim built from it is verbatim by
construction: ``document.text[unit.char_start:unit.char_end] == unit.text``.
What a unit *is* (a condition, an instruction aimed at the system) is read by
:mod:`engine.lang.cues`; the codes it names by :mod:`engine.lang.codes`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.ingest.formats import format_of
from engine.lang.cues import is_safety_label
from engine.lang.containers import (
    ADMONITION_KINDS, SAFETY_ADMONITIONS, closes_fence, fenced_admonition, tab_label,
)
from engine.lang.markup import (
    LIQUID_END_TAG, LIQUID_TAG, heading_line_text, module_lines, opens_with_tag, read_shortcodes, visible_lines,
    without_hidden_tags,
)
from engine.lang.records import record_roles
from engine.lang.rst import ADORNMENT, line_roles, title_text
from engine.lang.tables import context_headers, html_row_roles, html_rows_in_line
from engine.lang.text import sentence_spans, strip_span
from engine.types import Chunk

UnitKind = Literal["sentence", "list_item", "table_row", "code"]
# Bump when split_units cuts a text differently: the index keeps each unit's vector under its text,
# and the next build embeds the units of the new cut that it lacks (engine.index.build.embed_units).
# 2: a wrapped list item is one unit with its continuation lines
# 3: the lines of a fenced code block are entries (an option with its description), not skipped
# 4: markup a reader never sees is no unit: HTML / JSX tag lines, MDX module lines (engine.lang.markup)
# 5: nor is an image that links to its full size ([![alt](small.webp)](large.webp))
# 6: reStructuredText's titles, markup and literal blocks known by their lines (engine.lang.rst); an
#    indented admonition's text is the lines indented under its opening line, by any amount
# 7: an .rst chunk cut from a literal block starts in code (Chunk.in_code); a topic's title is no unit
# 8: list markers with a no-break space, "1.Word" and "1、"; an item wrapped over unindented lines of a
#    text without blank lines goes on where its sentence has not ended and the next line starts in lower case
# 9: a line that is one of the chunk's headings (PDF, HTML, plain text: not marked up) is no claim
# 10: ... and so are the lines of a heading wrapped over up to three lines
# 11: a line of pictures and hidden HTML tags only is no claim ([<img src="shot.png">](shot.png))
# 12: a Markdown table's rows need no pipe at either end (GitHub tables: "on | bool | On/Off state")
# 13: an HTML or PDF table's rows (cells joined by " | ") are rows, not one sentence; a table's header
#     row is no claim (each row carries it)
# 14: a rendered table with a header row keeps its rows as rows when a cell holds several sentences
#     (a headerless one, a page laid out in a table, is still read as prose)
# 15: a Markdown paragraph that is one bold line with no sentence end ("**Betaflight 4.0**") is a
#     label for the units below it (their heading), not a claim
# 16: a reST admonition with text on its opening line (".. warning:: Never run it dry.") opens it:
#     the text is its first statement (or, a short line with no sentence end, its label); a simple
#     table's rules are no rows, and a table chunk cut from its body reads rows; a unit of reST roles
#     only (":doc:`esp32`" in a "See Also" list) is no claim
# 17: a code comment of words ("# Example configuration entry") is one entry with the code line below
#     it at its level
# 18: a reST field list's line (":param port: ...", ":status 404: ...") is an item; a domain's
#     directive (".. http:get:: /api/files") heads its text, no claim
# 19: nor is a version's note with no text (".. versionchanged:: 2.0.0"; engine.lang.rst.VERSION_DIRECTIVES)
# 20: a reST table's header rows (a simple or grid table's lines above its "===" rule, a list-table's
#     :header-rows:) are no claims, each row carrying them (engine.lang.rst.table_header_cells); a grid
#     row wrapped over several lines is one row
# 21: a Jekyll site's Liquid tags and kramdown attribute lists are no text ("{% include x.md %}",
#     "{:.inline}"); a Liquid block tag naming an admonition ("{% alert warning %}" ... "{% endalert %}")
#     is one
# 22: ... and so is one with a quoted kind ({% alert "note" %}), holding the text on its tags' lines
# 23: a sentence ends after the emphasis marks that close it ("first.** Then")
# 24: a reST chunk cut from a literal block ends the block at a sentence or directive set out less than
#     its lines after a blank line (the text the block was in goes on)
# 25: PDF and plain text: a printed line the writer ended (the next, not in lower case, would have
#     fitted on it) ends its statement or item; "-word" and "•word" open an item
# 26: ... and the one sentence splitter reads "10." opening a line as the number of the item after it
# 27: a line of emoji shortcodes or icons only (":warning: :warning:") says nothing (engine.lang.markup.read_shortcodes)
# 28: a content tab's opening line (MkDocs' === "ESP32", Liquid's {% tab install humble %}) is its body's
#     heading, no unit; a unit's heading reads as the chunk's does (no attribute list, hidden tag or icon)
# 29: a fence naming an admonition (MyST's ```{warning}) opens one, its lines text, not code
# 30: a Docusaurus tab's line (<TabItem value="win">) resets the heading: the chunk's path holds its label
# 31: a pipe in the heading path (an HTML <title> "Setup | Acme Docs") heads no table (engine.lang.tables.table_context)
# 32: a Liquid block tag's style naming a kind (GitBook's {% hint style="danger" %}) is the admonition's kind
# 33: a one-word sentence ("**Warning!** It is not advisable ...") is one with the sentence after it
UNITS_VERSION = "33"


@dataclass(frozen=True, slots=True)
class Unit:
    """One claimable piece of a chunk, as a span of the document text."""

    chunk_id: str
    kind: UnitKind
    char_start: int  # in the document text, end exclusive
    char_end: int
    text: str
    order: float  # position inside the chunk (document order; a code block: its lead-in's + 0.5)
    line: int  # 1-based line of the unit's start in the document
    heading: str = ""  # the nearest heading line above the unit inside the chunk ('' = none)
    admonition: str = ""  # the kind of the admonition block holding it ("warning", "note"; '' = none)


# --- splitting -------------------------------------------------------------------

# a list marker: a bullet, a number or a letter with its point and a space (a no-break space too, as
# PDF and HTML text has it), a number's point right before a capital ("1.Preheat", as PDF text runs
# them together), or a number with the ideographic comma ("1、", as Chinese and Japanese lists number)
_LIST_MARK = re.compile(r"[ \t]*(?:(?:[-*+•·]|\d{1,3}[.)]|[a-zA-Z#][.)])[ \t\u00a0]+|\d{1,3}[.)](?=[A-Z])"
                        r"|\d{1,3}、[ \t\u00a0]*)")
# a printed page's bullet set against its word ("-Sega_Dumper.bin is ...", "•Check the cable"): a list
# item in PDF and plain text, where a line is a printed line (Markdown needs the space)
_PRINTED_MARK = re.compile(r"[ \t]*[-•–](?=[^\W\d])")
_SENTENCE_ENDS = ".!?:;。！？：；"
# a printed line ends where the writer broke it, not where the page wrapped it, when the next line's
# first word would have fitted on it: its length and that word's within this share of the measure,
# the longest line of the paragraph (of the chunk, for a list item's lines; characters stand for
# widths: a full line of capitals is wider)
FITS = 0.85
MEASURE_MIN = 40  # a shorter longest line is no page's measure (a few short lines say nothing of the width)
_TABLE_ROW = re.compile(r"[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
FENCE = re.compile(r"[ \t]*(```|~~~)")  # a code fence line (the chunker reads it too)
_QUOTE_MARK = re.compile(r"[ \t]*(?:>[ \t]*)+")
# a bold line standing as a heading: "**Betaflight 3.3RC2**" (not "**Never do X!**")
_BOLD_LABEL = re.compile(r"[ \t]*(\*\*|__)(?=\S)((?:(?!\1).){1,80}?)(?<=\S)\1[ \t]*$")
LABEL_WORDS_MAX = 12
# a Markdown image says nothing a claim can cite, nor does one that links to its full size:
# [![Client Proxy](/img/proxy_sm.webp)](/img/proxy.webp)
_IMAGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")  # a Markdown link's "](target)"
# a reST role (":doc:`esp32`", ":ghedit:`Edit`", ":ref:`the pins <pins>`"): a cross-reference; a
# unit made of such references only (a "See Also" list's items) points elsewhere and says nothing
_ROLE = re.compile(r"(?<![\w`]):[A-Za-z][\w.+-]*(?::[A-Za-z][\w.+-]*)?:`[^`\n]*`")
CODE_LINES_MAX = 15  # as long as a procedure read out (engine.answer.task.MAX_STEPS); longer: a file to open
_CODE_OPENING = re.compile(r"(?:[ \t]*\n)*[ \t]*(```|~~~)[^\n]*\n")  # blank lines, then a fence
# admonition markup: its opening line names the kind and is not a claim; the lines it governs are
# read as usual and carry the kind. Docusaurus ":::warning ... :::", GitHub "> [!WARNING]" then
# quoted lines, MkDocs "!!! warning" / reST ".. warning::" then indented lines.
_FENCED_ADMONITION = re.compile(r"[ \t]*:{3,}[ \t]*\{?([A-Za-z]*)")  # MyST: ":::{warning}"
_LIQUID_STYLE = re.compile(r"""\bstyle=(["'])(\w+)\1""")  # a Liquid tag's style: GitBook's hint kinds
_ALERT = re.compile(r"[ \t]*(?:>[ \t]*)+\[!([A-Za-z]+)\][ \t]*$")
_INDENTED_ADMONITION = re.compile(  # the opening line alone: "!!! WARNING: hot !!!" is a statement
    r'[ \t]*(?:(?:!!!|\?\?\?\+?)[ \t]+([A-Za-z]+)(?:[ \t]+"[^"]*")?|\.\.[ \t]+([A-Za-z]+)::)[ \t]*$')
# reST's admonitions whose content may start on the opening line (".. note:: Flash it first."): the
# text after "::" is the first paragraph of the body, indented under it or not (docutils)
_RST_ADMONITION_TEXT = re.compile(
    r"[ \t]*\.\.[ \t]+(attention|caution|danger|error|hint|important|note|tip|warning|seealso)::[ \t]+(?=\S)",
    re.IGNORECASE)


def split_units(chunk: Chunk) -> tuple[Unit, ...]:
    """Split a chunk's text into claimable units, in document order.

    Lines are read one by one: a table row (not the ``|---|`` rule, nor the header row, which each
    row carries: ``header_rows``; in HTML, PDF and plain text a line of cells joined by " | ") or a
    list item is one unit (its list marker left out of the span; a wrapped item's continuation
    lines, up to a blank line, are part of it: indented ones always, unindented ones where blank
    lines part the blocks, as in Markdown, and in a text without them, a line in lower case under
    an item whose sentence has not ended); other lines are gathered into paragraphs (a blank line,
    a heading, a list item or a row ends one) and a paragraph is cut into sentences (markup a
    reader never sees left out: the lines of HTML or JSX tags of a paragraph that opens with a tag,
    MDX's import lines; engine.lang.markup). In PDF and plain text, where a line is a printed
    line, a line the writer ended (the next, not opening in lower case, would have begun on it:
    ``_broken``) ends its statement or item, and only such a line does (a wrapped item goes on
    before a capital), and a bullet set against its word ("-flash.bat is ...") opens an item. Code
    fences are not claims; the lines between them are entries (kind "code"): a line and the lines
    below it indented further, or commented further (a config file's option and its "#   what it
    does", a description's lines together), with a comment of words just above it at its level
    ("# Enable logging" over "logger:"), up to a blank line (the chunk's token budget bounds it). A
    chunk that starts inside a fenced block (``Chunk.in_code``) starts in code. Headings are not
    claims: a Markdown heading, a Markdown paragraph that is one bold phrase with no sentence end
    (``_bold_label``: the units below carry it as their heading), or a line that is one of the
    chunk's headings (``heading_path``: PDF, HTML and plain text mark none up), nor a line of one
    Liquid tag (a Jekyll site's template: ``{% include x.md %}``; one naming an admonition kind,
    ``{% alert warning %}``, opens that admonition up to its end tag). An admonition's
    opening line is not a claim either (in reST, text after its ``::`` is its first statement, or a
    short line of its own its title); the units it governs carry its kind (``admonition``). So
    does a safety label, a line that is only a signal word ("⚠ WARNING", engine.lang.cues): the
    paragraph, list or rows below it, up to the next blank line, are a "warning" block (in a text
    without blank lines, where each line is a paragraph, as HTML and PDF text is: the next line). In reStructuredText (``.rst``) the lines say
    what they are (engine.lang.rst.line_roles): titles and markup no reader sees are no claims, a
    literal block's lines are code entries, the rows of a simple, grid or list-table are table
    rows, and a table's header rows no claims (each row carries them: engine.answer.conflicts.table_header).
    A static site's front matter records (engine.lang.records) are read the same way: each entry
    a table row, its key's line a title; so are an HTML table's rows in Markdown
    (engine.lang.tables.html_row_roles): each ``<tr>`` a row, its header row and tag lines no claim.
    """
    text = chunk.text
    out: list[tuple[UnitKind, int, int, str, str]] = []
    para: list[tuple[int, int]] = []  # (start, end) of consecutive prose lines
    heading = ""
    outer_heading: str | None = None  # the heading an admonition's title stands in for while it is open
    kind, ends_by = "", ""  # the open admonition, and what closes it: ":::", "quote", "indent", "blank"
    said = False  # a unit since the open admonition began (a label's block ends at a blank line after one)
    blank_layout = bool(re.search(r"\n[ \t]*\n", text))  # paragraphs apart by blank lines
    labelled: list[tuple[int, int]] = []  # lines a label governs, in a text without blank lines
    pending = False  # a label was read there; the next line is its statement
    item: int | None = None  # the list item the next prose line continues (a wrapped item), if any

    def kind_at(start: int) -> str:
        return "warning" if any(a <= start < b for a, b in labelled) else kind

    def kind_changed(start: int) -> bool:  # a continuation line under another admonition kind
        return out[item][4] != kind_at(start)

    def flush() -> None:
        nonlocal item
        item = None
        if para:
            runs = _printed_breaks(text, para) if printed else [para]
            for run in (r for p in runs for r in _shown(text, p)):
                for s, e in _sentences(text, run[0][0], run[-1][1]):
                    out.append(("sentence", s, e, heading, kind_at(s)))
            para.clear()

    entry: list = []  # the open code entry: [start, end, level]

    def close_entry() -> None:
        if entry:
            s, e = strip_span(text, entry[0], entry[1])
            if e > s and _says_something(text[s:e], code=True):
                out.append(("code", s, e, heading, kind_at(s)))
            entry.clear()

    def code_line(start: int, end: int) -> None:
        line = text[start:end]
        if not line.strip():
            close_entry()
            return
        level = _code_level(line)
        if entry and (level > entry[2] or (level == entry[2] and _NOTE.match(line))
                      or (level == entry[2] and _WORDED_COMMENT.fullmatch(text, entry[0], entry[1])
                          and not _COMMENT.match(line))):
            entry[1] = end
            return
        close_entry()
        entry.extend([start, end, level])

    pos = 0
    raws = text.splitlines(keepends=True)
    # reStructuredText: titles, literal blocks and markup are known by their lines
    lines = [r.rstrip("\r\n") for r in raws]
    fmt = format_of(chunk.path)
    roles = (line_roles(lines, chunk.in_code, chunk.kind == "table") if is_rst(chunk)
             else (record_roles(lines, chunk.heading_path) or html_row_roles(lines, chunk.context))
             if fmt == "markdown" and not chunk.in_code else None)
    in_fence = chunk.in_code and roles is None
    # in a text whose headings are not marked up (PDF, HTML, plain text), the lines that read as one of
    # the chunk's headings are that heading, not statements
    titled = _heading_lines(raws, chunk.heading_path) if roles is None else {}
    headed = bool(context_headers(chunk.context))  # its table's header travels in its context
    piped = (pipe_table_lines(lines, chunk.kind == "table" and headed) if fmt == "markdown"
             else rendered_table_lines(lines, headed) if fmt in ("html", "pdf", "text") else set())
    headers = header_rows(lines, piped, chunk.context)
    # PDF and plain text: a line is a printed line; the longest one is the page's measure
    # (of the lines of words: a URL on its own line is no measure)
    printed = (max((len(x.strip()) for x in lines if " " in x.strip()), default=1)
               if fmt in ("pdf", "text") else 0)
    opened_at = 0  # the indentation of the open admonition's opening line
    for k, raw in enumerate(raws):
        line_start, line_end = pos, pos + len(raw.rstrip("\r\n"))
        pos += len(raw)
        line = text[line_start:line_end]
        if roles is not None and roles[k] == "caption":
            if _line_label(lines, k, line.strip()):  # "Web server version 2" under a picture: no claim
                flush()
                continue
        elif roles is not None and roles[k]:
            if roles[k] == "code":
                flush()
                code_line(line_start, line_end)
                continue
            flush()
            close_entry()
            if roles[k] == "row":
                for s, e in html_rows_in_line(text, line_start, line_end, chunk.context):  # one a <tr>
                    out.append(("table_row", s, e, heading, kind_at(s)))
            elif roles[k] == "row+" and out and out[-1][0] == "table_row":  # the row goes on
                out[-1] = out[-1][:2] + (strip_span(text, line_start, line_end)[1],) + out[-1][3:]
            elif roles[k] == "title" and not ADORNMENT.match(line):
                heading, outer_heading = title_text(line), None
            continue
        if roles is not None:
            close_entry()
        fenced = fenced_admonition(line) if roles is None and not in_fence else None
        if fenced is not None and not kind:  # MyST's ```{warning} (or a theme's ```warning): an admonition
            flush()
            close_entry()
            kind, ends_by, said = fenced[1], f"fence:{fenced[0]}", False
            continue
        if kind and ends_by.startswith("fence:") and not in_fence and closes_fence(line, ends_by[6:]):
            flush()
            close_entry()
            kind = ends_by = ""
            continue
        if FENCE.match(line):
            flush()
            close_entry()
            in_fence = not in_fence
            continue
        if in_fence:
            code_line(line_start, line_end)
            continue
        if kind and ((ends_by == "quote" and not _QUOTE_MARK.match(line))
                     or (ends_by == "indent" and line.strip() and _indent(line) <= opened_at)
                     or (ends_by == "blank" and ((said and not line.strip()) or _HEADING.match(line)))):
            flush()
            kind = ends_by = ""
            if outer_heading is not None:
                heading, outer_heading = outer_heading, None
        liquid = LIQUID_TAG.match(line) if roles is None else None
        if liquid:  # a template's tag shows nothing; a block tag naming an admonition opens one
            name, argument = liquid.group(1).lower(), (liquid.group(3) or "").lower()
            style = _LIQUID_STYLE.search(liquid.group(0))  # GitBook's {% hint style="danger" %}
            if style and style.group(2).lower() in ADMONITION_KINDS:
                argument = style.group(2).lower()
            opens = not kind and (name in ADMONITION_KINDS or argument in ADMONITION_KINDS)
            rest = liquid.end() < len(line)  # "{% alert "warning" %}Some information ...": its first line
            if not rest or opens:
                flush()
                close_entry()
            label = tab_label(line) if name == "tab" else None  # a Liquid tab: its label heads its body
            if label is not None:
                heading = label
            if not rest and kind and ends_by == name:
                kind = ends_by = ""
            elif opens:
                kind, ends_by, said = argument if argument in ADMONITION_KINDS else name, f"end{name}", False
            if not rest:
                continue
            if opens:
                line_start += len(liquid.group(0))
                line = text[line_start:line_end]
        closing = LIQUID_END_TAG.search(line) if kind and ends_by.startswith("end") else None
        if closing and ends_by == f"end{closing.group(1).lower()}":  # "... the table below.{% endalert %}"
            para.append((line_start, line_start + closing.start()))
            flush()
            close_entry()
            kind = ends_by = ""
            continue
        opening = _FENCED_ADMONITION.match(line) or _ALERT.match(line) or _INDENTED_ADMONITION.match(line)
        if opening:
            flush()
            said = False
            if opening.re is _FENCED_ADMONITION and not opening.group(1):
                kind = ends_by = ""  # ":::" closes
            else:
                kind = next(g for g in opening.groups() if g).lower()
                ends_by = {_FENCED_ADMONITION: ":::", _ALERT: "quote"}.get(opening.re, "indent")
                opened_at = _indent(line)
            continue
        opening = _RST_ADMONITION_TEXT.match(line) if roles is not None else None
        if opening:
            flush()
            close_entry()
            kind, ends_by, opened_at = opening.group(1).lower(), "indent", _indent(line)
            said = False
            label = _line_label(lines, k, line[opening.end():].rstrip())
            if label:  # the admonition's title: its statements' heading while it lasts
                outer_heading, heading = heading, label
            else:
                para.append((line_start + opening.end(), line_end))
            continue
        if not _HEADING.match(line) and is_safety_label(_QUOTE_MARK.sub("", line, count=1)):
            flush()
            if blank_layout:
                kind, ends_by, said = "warning", "blank", False
            else:
                pending = True
            continue
        said = said or bool(line.strip())
        if pending and line.strip():
            labelled.append((line_start, line_end + 1))
            pending = False
        tab = tab_label(line) if roles is None else None  # a content tab: its label heads its body
        if not line.strip() or _HEADING.match(line) or tab is not None:
            flush()
            if tab is not None and "<TabItem" in line:
                heading = ""  # its label may be its <Tabs>' (engine.lang.containers): the chunk's path has it
            elif line.strip():
                heading = tab if tab is not None else heading_line_text(line)
            continue
        if k in titled:
            flush()
            heading = titled[k]
            continue
        if _TABLE_ROW.match(line) or k in piped:
            flush()
            if not _TABLE_RULE.match(line) and k not in headers:
                s, e = strip_span(text, line_start, line_end)
                if e > s:
                    out.append(("table_row", s, e, heading, kind_at(s)))
            continue
        if roles is not None and _FIELD.match(line):  # ":param port: ...", ":status 404: ...": an item each
            flush()
            s, e = strip_span(text, line_start, line_end)
            out.append(("list_item", s, e, heading, kind_at(s)))
            item = len(out) - 1
            continue
        m = _LIST_MARK.match(line) or (_PRINTED_MARK.match(line) if printed else None)
        if m:
            flush()
            s, e = strip_span(text, line_start + m.end(), line_end)
            if e > s and _says_something(text[s:e]):
                out.append(("list_item", s, e, heading, kind_at(s)))
                item = len(out) - 1
            continue
        # the item goes on (wrapped): an indented line; where a line is a printed line (PDF, plain text,
        # lines as long as a page's: ``MEASURE_MIN``), a line the writer did not end the line above with
        # (``_broken``: a lower-case line, or one whose first word would not have fitted there) while the
        # item's sentence has not ended or blank lines part blocks; elsewhere any prose line where blank
        # lines part blocks (Markdown), or one in lower case under an item whose sentence has not ended
        ended = item is None or text[out[item][2] - 1] in _SENTENCE_ENDS
        if item is not None and not kind_changed(line_start) and (
                line[:1] in " \t"
                or (((blank_layout or not ended) and not _broken(lines[k - 1], line, printed))
                    if printed >= MEASURE_MIN else blank_layout or (not ended and line.lstrip()[:1].islower()))):
            kind_of, s, _e, head, adm = out[item]
            out[item] = (kind_of, s, strip_span(text, line_start, line_end)[1], head, adm)
            continue
        item = None  # a prose line of its own: the item above has ended
        label = _bold_label(lines, k) if fmt == "markdown" and not para else ""
        if label:
            heading = label
            continue
        q = _QUOTE_MARK.match(line)
        start = line_start + (q.end() if q else 0)
        para.append((start, line_end))
    flush()
    close_entry()
    return _units(chunk, out)


def _bold_label(lines: Sequence[str], k: int) -> str:
    """The text of line ``k`` when it is a Markdown paragraph of its own made of one bold phrase with
    no sentence end, as writers set a heading they did not mark up ("**Betaflight 4.0**" over that
    release's list): a label for the units below it, else ''. A bold sentence
    ("**Never hold an armed craft!**") is a claim, and so is a lead-in ("**Wire it as follows:**")."""
    m = _BOLD_LABEL.match(lines[k])
    return _line_label(lines, k, m.group(2)) if m else ""  # the pattern's lookarounds trim the text


def _line_label(lines: Sequence[str], k: int, text: str) -> str:
    """``text`` (line ``k``'s, markup left out) when that line reads as a label: a paragraph of its own
    (a blank line or a list below it), no sentence end, at most LABEL_WORDS_MAX words; else ''."""
    if not text or (k + 1 < len(lines) and lines[k + 1].strip() and not _LIST_MARK.match(lines[k + 1])):
        return ""
    return "" if text[-1] in _SENTENCE_ENDS or len(text.split()) > LABEL_WORDS_MAX else text


def _heading_lines(raws: Sequence[str], heading_path: Sequence[str], most: int = 3) -> dict[int, str]:
    """Line index -> heading, for the lines that read as one of ``heading_path``: a line by itself,
    or a title wrapped in print over up to ``most`` consecutive lines ("Communication between
    motherboard" / "and PC")."""
    titles = {" ".join(h.split()) for h in heading_path}
    out: dict[int, str] = {}
    for k in range(len(raws)):
        got = " ".join(raws[k].split())
        for j in range(k, min(len(raws), k + most)):
            if j > k:
                got = f"{got} {' '.join(raws[j].split())}"
            if not got or not any(t == got or t.startswith(got + " ") for t in titles):
                break
            if got in titles:
                out.update((i, got) for i in range(k, j + 1))
                break
    return out


_NOTE = re.compile(r"[ \t]*(#+|//|;+|--)([ \t]{2,})\S")  # a comment's text set in: a description's line
# a reST field list's line (Sphinx's ":param port: The port to use", ":status 404: Not found"): a
# field name, then its text on the line
_FIELD = re.compile(r"[ \t]*:(?![ \t])[^:`\n]+(?<![ \t]):[ \t]+\S")
_COMMENT = re.compile(r"[ \t]*(?:#|//|;|--)")
# a comment line of words ("# Example configuration entry", "# Use absolute coordinates"), not a
# commented-out option ("#step_pin:"): it heads the code line below it at its level, one entry with it
_WORDED_COMMENT = re.compile(r"[ \t]*(?:#|//|;|--) [^\W\d_][^\n:=]*[^\n:=\s]")


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.lstrip(" \t").expandtabs(4))


def _code_level(line: str) -> int:
    """How far in a code line starts: its indentation, and for a note (a comment whose text is
    set in: "#   what the option does") the mark and the spaces after it too, so it sits below
    "#option: 5", a commented-out option at the option's own level."""
    body = line.lstrip(" \t")
    level = len(line.expandtabs(4)) - len(body.expandtabs(4))
    note = _NOTE.match(body)
    return level + (len(note.group(1)) + len(note.group(2)) if note else 0)


def _units(chunk: Chunk, spans: list[tuple[UnitKind, int, int, str, str]]) -> tuple[Unit, ...]:
    """Units from (kind, start, end, heading, admonition) spans of ``chunk.text``, in order."""
    text, base = chunk.text, chunk.char_start
    return tuple(Unit(chunk_id=chunk.id, kind=kind, char_start=base + s, char_end=base + e, text=text[s:e],
                      order=i, line=chunk.start_line + text.count("\n", 0, s), heading=head, admonition=adm)
                 for i, (kind, s, e, head, adm) in enumerate(spans))


def _shown(text: str, lines: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """A paragraph's (start, end) lines as the rendered page shows them (engine.lang.markup): none
    for MDX's module lines, the runs of lines with text outside its tags for one that opens with a
    tag, else the paragraph whole."""
    start, end = lines[0][0], lines[-1][1]
    if module_lines(text[start:end]):
        return []
    if not opens_with_tag(text[start:end]):
        return [lines]
    shown = visible_lines(text, start, end)
    runs: list[list[tuple[int, int]]] = [[]]
    for a, b in lines:
        if text.count("\n", start, a) in shown:
            runs[-1].append((a, b))
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


def _printed_breaks(text: str, lines: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """A paragraph of printed lines (PDF, plain text) cut where a line ends short of the
    paragraph's measure and the next, opening with no lower-case letter, would have begun on it (its
    first word fits, ``FITS``): "Bootloader is : WeACT HID Bootloader" over "For starting board in update
    mode ..." are two statements, where "... the latest release in the" over "MD Dumper Github
    page" is one wrapped line."""
    width = max(b - a for a, b in lines)
    runs = [[lines[0]]]
    for (a, b), (c, d) in zip(lines, lines[1:]):
        if _broken(text[a:b], text[c:d], width):
            runs.append([])
        runs[-1].append((c, d))
    return runs


def _broken(before: str, after: str, width: int) -> bool:
    """Did the writer end the printed line ``before`` (the next, ``after``, opens with no lower-case
    letter, and its first word would have fitted on it: ``FITS`` of ``width``)?"""
    before, words = before.strip(), after.split()
    return (bool(words) and not words[0][:1].islower() and before[-1:] not in ",-–("
            and len(before) + 1 + len(words[0]) <= FITS * width)


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The paragraph's sentences (engine.lang.text), without the quote markers of continued
    lines; a span with no letter or digit is not a claim."""
    out = []
    for a, b in sentence_spans(text, start, end):
        while a < b and text[a] in "> \t":
            a += 1
        if b > a and _says_something(text[a:b]):
            out.append((a, b))
    return out


def pipe_table_lines(lines: Sequence[str], in_table: bool = False) -> set[int]:
    """Indices of the lines of ``lines`` that are rows (or the header and rule) of a GitHub pipe
    table, whose rows need no pipe at either end (``on | bool | On/Off state``): a rule with a pipe
    under a line with a pipe opens one, and it goes on over the lines with a pipe up to a blank
    line. ``in_table``: the lines start inside a table (a chunk cut from one: its header is in
    the chunk's context), so the pipe lines before the first blank line are rows too."""
    rows: set[int] = set()
    inside = in_table
    for k, line in enumerate(lines):
        if not line.strip():
            inside = False
        elif "|" in line and _TABLE_RULE.match(line) and k > 0 and "|" in lines[k - 1]:
            rows.update((k - 1, k))
            inside = True
        elif inside and "|" in line:
            rows.add(k)
        else:
            inside = False
    return rows


def rendered_table_lines(lines: Sequence[str], headed: bool = False) -> set[int]:
    """Indices of the lines of a text whose tables the reader rendered itself (HTML and PDF, one
    row a line, cells joined by " | "; a plain text's own pipe tables read the same): each such
    line is a row, unless a cell of it holds more than one sentence and the table has no header
    (a page laid out in a table, as word processors save them: its cells are prose, read sentence
    by sentence). ``headed``: the chunk's table has a header row (its context names it), so its
    rows are rows however long their cells ("Amber blink | Hotspot mode. Connect with a phone.").
    Without a header, a list item is no row either: "2. Type dmesg | grep can to test it" pipes
    a command in its step."""
    return {k for k, line in enumerate(lines)
            if " | " in line and (headed or (not _item_text(line) and all(
                len(sentence_spans(cell)) <= 1 for cell in line.split(" | "))))}


def _item_text(line: str) -> bool:
    """Does ``line`` open with a list marker and go on with words (not straight into a cell: "1. | ...")?"""
    m = _LIST_MARK.match(line)
    return bool(m) and not line[m.end():].startswith("|")


def header_rows(lines: Sequence[str], rows: set[int], context: str) -> set[int]:
    """Indices of the table rows among ``rows`` (and pipe lines) that are a table's header, not a
    statement: the line above a ``|---|`` rule, or a row the chunk's context names as the header
    of its table (HTML, PDF: the rows below it carry it). Each row is embedded and shown with its
    header (engine.answer.units, engine.render), so the header says nothing of its own."""
    named = context_headers(context)
    out: set[int] = set()
    for k, line in enumerate(lines):
        if "|" not in line or _TABLE_RULE.match(line):
            continue
        if k + 1 < len(lines) and "|" in lines[k + 1] and _TABLE_RULE.match(lines[k + 1]):
            out.add(k)
        elif k in rows and " ".join(line.split()) in named:
            out.add(k)
    return out


def _says_something(text: str, code: bool = False) -> bool:
    """A letter or digit outside image markup; in prose also outside the tags a rendered page
    hides, link targets and reST roles (``[<img src="shot-1.png" width=250>](shot-1.png)`` and
    ``:doc:`esp32``` say nothing, nor emoji shortcodes and icons: ``:warning: :warning:``), while a code
    line shows its tags as written (``<Ctrl-A><Ctrl-P>``)."""
    if code:
        return any(ch.isalnum() for ch in _IMAGE.sub("", text))
    shown = read_shortcodes(_LINK_TARGET.sub("", without_hidden_tags(_IMAGE.sub("", text))))
    return any(ch.isalnum() for ch in _ROLE.sub("", shown))


def is_rst(chunk: Chunk) -> bool:
    """Whether the chunk is reStructuredText, whose lines say what they are (engine.lang.rst)."""
    return format_of(chunk.path) == "rst"


def _literal_after(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the reStructuredText literal block or code directive after the line at
    ``pos`` (the one ending "…::", or the lead-in before a ``code-block``; blank lines and the
    directive's markup between them), else None."""
    lines = text[pos:].split("\n")
    roles = line_roles(lines)
    k = 1
    while k < len(lines) and (not lines[k].strip() or roles[k] == "hidden"):
        k += 1
    if k == len(lines) or roles[k] != "code":
        return None
    last = k
    while last + 1 < len(lines) and roles[last + 1] == "code":
        last += 1
    start = pos + sum(len(x) + 1 for x in lines[:k])
    return strip_span(text, start, start + sum(len(x) + 1 for x in lines[k:last + 1]) - 1)


def code_after(chunk: Chunk, unit: Unit) -> Unit | None:
    """The fenced code block (reStructuredText: the literal block) that follows ``unit`` (blank
    lines apart at most), as a unit of kind "code" (its lines, without the fences), when it has
    ``CODE_LINES_MAX`` lines or fewer: what a sentence ending "…the following command:" introduces. ``chunk`` is the unit's own, or the
    next chunk of its section, where the chunker cut right after the unit: that chunk either
    repeats the unit's end (the chunks overlap) or starts after it."""
    text, base = chunk.text, chunk.char_start
    pos = 0  # a chunk that starts after the unit: its block opens it
    if unit.char_end >= base:
        nl = text.find("\n", unit.char_end - base)
        if nl < 0:
            return None
        pos = nl + 1
    if is_rst(chunk):  # a literal block is known by the "::" line before it, so from the unit's line on
        span = _literal_after(text, text.rfind("\n", 0, pos - 1) + 1) if pos else None
        if span is None:
            return None
        s, e = span
    else:
        m = _CODE_OPENING.match(text, pos)
        if not m:
            return None
        close = re.compile(r"^[ \t]*" + re.escape(m.group(1)), re.MULTILINE).search(text, m.end())
        end = close.start() if close else len(text)
        s, e = strip_span(text, m.end(), end)
    if e <= s or text.count("\n", s, e) + 1 > CODE_LINES_MAX:
        return None
    order = unit.order + 0.5 if unit.chunk_id == chunk.id else -0.5  # after the unit, or first in the next chunk
    return Unit(chunk_id=chunk.id, kind="code", char_start=base + s, char_end=base + e, text=text[s:e],
                order=order, line=chunk.start_line + text.count("\n", 0, s), heading=unit.heading,
                admonition=unit.admonition)
