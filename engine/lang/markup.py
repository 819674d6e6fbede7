"""Markup a reader of the rendered page never sees, in the text of a Markdown file: the tags of
HTML (and of MDX's components: ``<TabItem value="cli">``, a ``<Tabs values={[…]}>`` over many
lines) and MDX's module statements (``import Tabs from "@theme/Tabs";``, an ``export const
OsTabs = (props) => (…);`` over many lines, blank ones too), and the template markup of a Jekyll
site: its Liquid tags (``{% include boards.md %}``, ``{% alert warning %}``) and kramdown's
attribute lists (``[Releases](//github.com/…){:target="_blank"}``, ``{:.pretty-list}`` over a
table) and extension tags (``{::options parse_block_html="true" /}``). The Markdown reader makes
no block of them (engine.ingest.markdown), and no answer unit is cut from them
(engine.lang.units). Docusaurus manuals (``.mdx``) carry the first two.

Emoji shortcodes (``:warning:``, pymdownx.emoji in MkDocs; GitHub's too) read as the emoji a page
shows (``read_shortcodes``, the names the ``emoji`` package knows), and MkDocs Material's icons
(``:material-cpu-32-bit:``, ``:fontawesome-brands-linux:``, ``:octicons-…:``, ``:simple-…:``),
which draw no character, as nothing: in a heading and in a claim as shown, never in the text a
chunk cites; a line of them alone is no answer unit (engine.lang.units)."""

from __future__ import annotations

import re

__all__ = ["HEADING_ATTRS", "LIQUID_END_TAG", "LIQUID_TAG", "code_span_only", "heading_line_text", "hidden_inline_tag",
           "module_end", "module_lines", "opens_with_tag", "read_shortcodes", "visible_lines", "without_hidden_tags"]

# a shortcode (a name with a letter, or +1 / -1) standing apart (not "10:30:00", "a:b:c", "std::vector::",
# a reST role ":ref:`x`"), and an icon's with the space before it
_SHORTCODE = re.compile(r"(?<![\w:]):(?:[+-]1|[a-z0-9_+-]*[a-z][a-z0-9_+-]*):(?![\w:`])")
_ICON = re.compile(r"[ \t]?(?<![\w:]):(?:material|fontawesome|octicons|simple)-[a-z0-9-]+:(?![\w:`])")
_MODULE_LINE = re.compile(r"\s*(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?[\"'][^\"']+[\"'];?"
                          r"|export\s+(?:const|let|var|function)\s+\w.*|export\s+default\s+\S.*)\s*")
_TAG_START = re.compile(r"</?[A-Za-z]")
_HTML_TAG = re.compile(r"<(?:!--.*?--|/?([A-Za-z][A-Za-z0-9-]*)\b[^<>]*)>", re.S)  # a tag (its name) or a comment
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# a Liquid tag (not its output, ``{{ page.title }}``, which shows a value), a kramdown attribute
# list: a class, an id or an attribute (``{:.inline}``, ``{: #top}``, ``{:target="_blank"}``), not a
# format spec a writer shows (``{:.2f}``), or a kramdown extension's tag (``{::options
# parse_block_html="true" /}``, ``{::nomarkdown}``, ``{:/}``)
_TEMPLATE = re.compile(r"\{%-?[ \t]*\w[^%\n]*?-?%\}|\{:[ \t]*(?:[.#][A-Za-z_-]|[A-Za-z][\w-]*=)[^{}\n]*\}"
                       r"|\{::[A-Za-z]\w*(?:[ \t][^{}\n]*)?/?\}|\{:/[A-Za-z]*\}")
# a line's leading Liquid tag: its name and first argument, bare or quoted ("{% alert "note" %}"), and
# a line's closing tag ("...below. {% endalert %}")
LIQUID_TAG = re.compile(r"""[ \t]*\{%-?[ \t]*(\w+)(?:[ \t]+(["']?)(\w+)\2(?![\w-]))?[^%\n]*?-?%\}[ \t]*""")
LIQUID_END_TAG = re.compile(r"[ \t]*\{%-?[ \t]*end(\w+)[ \t]*-?%\}[ \t]*$")
# a heading's attribute list at its end, as MkDocs (attr_list), Pandoc, Hugo and kramdown read it:
# ids, classes and key=value pairs in braces, the colon optional ("## Vario {: #vario }", "## Setup
# {#setup .wide}"); braces that hold anything else ("## The {x} placeholder") are the heading's text
_ATTR = r"""(?:#[A-Za-z0-9_-][\w:-]*|\.[A-Za-z_-][\w:-]*|[A-Za-z][\w-]*=(?:"[^"]*"|'[^']*'|[^\s{}]+))"""
HEADING_ATTRS = re.compile(rf"\s*\{{:?[ \t]*(?:{_ATTR}[ \t]*)+\}}\s*$")
_COMPONENT = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*")  # MDX's TabItem, Tabs; not <Ctrl-A>, <GND>
# the elements of HTML a page may carry inside a heading's or a paragraph's text, or around it (a
# figure's caption, a table's cells, a list's items); a tag of these is markup, while an unknown one
# in upper or mixed case (``<GND>``, ``<mySerial>``) is most likely a placeholder the writer meant to show
HTML_ELEMENTS = frozenset(
    "a abbr b bdi bdo big br cite code data del dfn em font i img input ins kbd label mark meter "
    "output picture q rp rt ruby s samp small source span strike strong sub sup svg time tt u var "
    "video audio wbr div p section details summary center iframe figure figcaption table caption thead tbody "
    "tfoot tr td th col colgroup ul ol li dl dt dd h1 h2 h3 h4 h5 h6 blockquote pre hr".split())


def hidden_inline_tag(markup: str) -> bool:
    """Whether ``markup`` (one inline HTML token of a Markdown file: ``<a id="x">``, ``</a>``,
    ``<br/>``, ``<!-- note -->``) is a tag or comment the rendered page does not show: an HTML
    comment, a tag of an HTML element (any case), or an MDX component (``<TabItem>``: a
    capitalised name without '-'). ``<GND>``, ``<mySerial>`` and ``<Ctrl-A>`` are kept: a writer's
    placeholders, meant for the reader."""
    m = _HTML_TAG.fullmatch(markup.strip())
    if m is None:
        return False
    name = m.group(1)
    if name is None:  # a comment
        return True
    return name.lower() in HTML_ELEMENTS or bool(_COMPONENT.fullmatch(name))


def module_lines(text: str) -> bool:
    """Whether every line of ``text`` (a paragraph) is an ES module line: MDX's ``import … from
    "…";`` and ``export const …``, code the page runs, not text it shows."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_MODULE_LINE.fullmatch(line) for line in lines)


MODULE_SPAN_MAX = 20_000  # characters one module statement may take (a component's JSX); past it, not one
_OPEN, _CLOSE = "([{", ")]}"


def module_end(text: str, start: int) -> int | None:
    """Where the ES module statement that starts at ``start`` ends, when it runs past its first
    line: MDX's ``export const OsTabs = (props) => (`` and its JSX, down to ``);``, blank lines
    included (the statement is JavaScript, read until its brackets close). Returns the end of the
    line on which its brackets balance again, skipping strings and comments; None when the line
    at ``start`` is no module statement, or its brackets close on it (``module_lines`` knows
    those), or they do not close before a heading line, a mismatched bracket or
    ``MODULE_SPAN_MAX`` characters: text, not a statement."""
    eol = text.find("\n", start)
    first = text[start:eol if eol >= 0 else len(text)]
    if not _MODULE_LINE.fullmatch(first):
        return None
    stack: list[str] = []
    i, end = start, min(len(text), start + MODULE_SPAN_MAX)
    while i < end:
        ch = text[i]
        if ch == "\n":
            if not stack:
                return None if i <= eol else i
            if text.startswith("#", i + 1):
                return None  # a heading: the page's text again
        elif ch in "\"'`":
            close = text.find(ch, i + 1)
            newline = text.find("\n", i + 1)
            if close < 0 or (ch != "`" and 0 <= newline < close):
                return None  # an apostrophe in text, not a string
            i = close
        elif text.startswith("//", i):  # to the end of the line (its newline is read next)
            newline = text.find("\n", i)
            i = (newline if newline >= 0 else end) - 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return None
            i = close + 1
        elif ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
        elif ch in _CLOSE:
            if not stack or stack.pop() != ch:
                return None
        i += 1
    return len(text) if i >= len(text) and not stack and i > eol >= 0 else None


def opens_with_tag(text: str) -> bool:
    """Whether ``text`` (a paragraph) starts with an HTML or JSX tag."""
    return bool(_TAG_START.match(text.lstrip()))


def visible_lines(text: str, start: int, end: int) -> set[int]:
    """The lines of ``text[start:end]`` (an HTML block, a paragraph) that hold text a reader sees,
    counted from 0 at the line of ``start``: a letter or digit outside every tag. A tag runs from ``<`` (before a letter, ``/``
    or ``>``) to its ``>``, over several lines too, and a ``{…}`` inside it (an MDX property such as
    ``values={[{label: (<>…</>)}]}``) is part of it."""
    shown: set[int] = set()
    line = tag = brace = 0
    i = start
    while i < end:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif brace:
            brace += 1 if ch == "{" else -1 if ch == "}" else 0
        elif tag:
            if ch == "{":
                brace = 1
            elif ch == ">":
                tag -= 1
        elif ch == "<" and i + 1 < end and (text[i + 1].isalpha() or text[i + 1] in "/>!"):
            tag = 1
        elif ch.isalnum():
            shown.add(line)
        i += 1
    return shown


def without_hidden_tags(text: str) -> str:
    """``text`` (Markdown source) without the tags and comments the rendered page does not show
    (``hidden_inline_tag``), a ``<br>`` read as a space, nor a Jekyll site's Liquid tags and kramdown
    attribute lists; a code span keeps its tags as written."""
    def hide(m: re.Match) -> str:
        tag = m.group(0)
        return (" " if tag[:3].lower() == "<br" else "") if hidden_inline_tag(tag) else tag

    def shown(part: str) -> str:
        return _HTML_TAG.sub(hide, _TEMPLATE.sub("", part))

    out, at = [], 0
    for code in _CODE_SPAN.finditer(text):
        out += [shown(text[at:code.start()]), code.group(0)]
        at = code.end()
    return "".join(out) + shown(text[at:])


def read_shortcodes(text: str) -> str:
    """``text`` with its emoji shortcodes read as their emoji (``:warning:`` "⚠️", ``:+1:`` "👍"; a
    name the ``emoji`` package does not know stays as written) and MkDocs Material's icon shortcodes
    left out (``# Berry :material-cpu-32-bit:`` reads "# Berry")."""
    if ":" not in text:
        return text
    text = _ICON.sub("", text)
    if not _SHORTCODE.search(text):
        return text
    import emoji  # its table of names loads with the first shortcode (~30 ms), not when the app starts

    return _SHORTCODE.sub(lambda m: emoji.emojize(m.group(0), language="alias"), text)


def code_span_only(text: str) -> bool:
    """Is ``text`` one inline code span and nothing else ("`BED_MESH_PROFILE REMOVE=default`"):
    a command a manual sets as a paragraph of its own, where others fence it."""
    return _CODE_SPAN.fullmatch(text.strip()) is not None


def heading_line_text(line: str) -> str:
    """A Markdown heading line's text as a reader sees it: its ``#`` marks, attribute list
    (``## 2. Robot {#robot}``), hidden tags (``### Status <a id="status" />``) and icons left out,
    its emoji shortcodes read; its code spans as written."""
    text = HEADING_ATTRS.sub("", line.strip().lstrip("#").strip())
    return " ".join(read_shortcodes(without_hidden_tags(text)).split())
