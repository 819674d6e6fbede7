"""Markdown -> blocks, through markdown-it-py's CommonMark token stream (+ GFM tables).

``Document.text`` is the file text itself; every block span is a run of whole source
lines (``token.map``), so a chunk's lines are the file's lines (but for the rows of an HTML table
written on one line, each of which is its own block). YAML front matter (``---`` on the first
line) is read by a SafeLoader with limits (aliases, depth, size) and is metadata, not part of any
block, except the records a static site's layout prints from it (``front_matter_records``);
front matter that cannot be read raises ``FrontMatterError``, and the file is skipped rather
than indexed without the access rules it may hold. The rows of an HTML table in the page are
table rows with their header, as a pipe table's are (``_Walk.html``).

Markup that a reader of the rendered page never sees is no block: the lines of an HTML block
that hold tags only (``<TabItem value="cli">``, ``</div>``, a component's properties over many
lines), and MDX's module statements (``import Tabs from "@theme/Tabs";``, ``export const …``,
one over many lines and blank ones too: ``export const OsTabs = (props) => (<Tabs …>…</Tabs>);``),
which Docusaurus manuals carry (``.mdx``). The lines of text between such tags stay, each run of
them a block of its own.

MkDocs' indented containers (``!!! warning``, ``??? info "Title"``, content tabs ``=== "ESP32"``)
are read with their bodies set back to the opening line's indent, and fenced admonitions (MyST's
``` ```{warning} ```) as Docusaurus' ``:::warning`` (engine.lang.containers), so that their text is
paragraphs, lists and headings, not code. A content tab's label (MkDocs', Liquid's ``{% tab install
humble %}``, Docusaurus' ``<TabItem value="win">``) is a heading over its body, one level under the
heading the tabs sit in, and the body's own headings nest under it (Tasmota's "Configuration
procedure > ESP32 > Step 1.").

A page with no level-1 heading (a static-site page whose generator prints the front matter's
``title`` above the text: 50 of ZMK's 50 pages, 46 of WLED's 50, 34 of Meshtastic's 44) has heading
paths without its title: a section reads "Configuration", not "Battery > Configuration". Rooting
every heading path in that title (no block, no line; a page with its own ``#`` keeps it) was
measured and not shipped (2026-12-05; train splits, full R@1 / R@5, cited, first claim,
abstention answerable / no-answer, before -> after): ZMK .693 / .867, .813, .693, .040 / .48 ->
.707 / .867, .773, .680, .093 / .48; WLED .787 / .920, .880, .787, .080 / .56 -> .773 / .920,
.853, .760, .080 / .52; Meshtastic .816 / .974, .882, .724, .053 / .609 -> .842 / .974, .882,
.737, .079 / .652 (every branch there gains: hybrid .632 -> .671, vector .671 -> .711, lexical .434 ->
.474). Retrieval gains on two of three sets; the answers lose (cited and first claim down on
ZMK and WLED, answerable questions abstaining more on ZMK and Meshtastic), judged by an
answerability model and a passage order fitted on rows of the old paths (Meshtastic's among them).
A fair test refits both on the new paths, with the cross-fitted query encoders
(models/passage_order/fit.py), before the answers are compared. What shipped instead (2026-12-07):
the branches read the title above the path (engine.ingest.chunking.read_path: the chunk's context),
while the heading paths, and with them the answer units' texts and vectors, stay as the page has
them. Train splits, default config, before -> after (same measures as above): ZMK .693 / .867, .813,
.693, .040 / .48 -> .707 / .867, .787, .680, .067 / .44; WLED .787 / .920, .880, .787, .080 / .56 ->
.773 / .920, .867, .773, .067 / .52; Meshtastic .816 / .974, .882, .724, .053 / .609 -> .855 / .974,
.882, .750, .066 / .652; Brier lower on all three; hybrid up on six manual sets' train splits.
Nor the title over the answer units' headings alone (2026-12-07: a unit of a "Kconfig" section read as
"Bluetooth Configuration > Kconfig", what a page with its own ``#`` gives; train splits, the same measures,
before -> after): ZMK .707 / .867, .787, .680, .067 / .44 -> .707 / .867, .773, .680, .093 / .48; WLED
.773 / .920, .867, .773, .067 / .52 -> .773 / .920, .853, .760, .080 / .52: the units' vectors move, the
models judging them were fitted on the old ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from engine.ingest.blocks import BlockBuilder, Parsed
from engine.ingest.metadata import KEYS
from engine.ingest.text import cjk_heading_level
from engine.lang.containers import Tab, dedent_bodies
from engine.lang.markup import (
    HEADING_ATTRS, hidden_inline_tag, module_end, module_lines, opens_with_tag, read_shortcodes, visible_lines,
    without_hidden_tags,
)
from engine.lang.tables import html_table_rows
from engine.lang.text import line_starts, strip_span

_FRONT_END = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.M)
_MD = MarkdownIt("commonmark").enable("table")


class FrontMatter(NamedTuple):
    values: dict[str, Any]
    body_start: int  # offset where the body starts
    warnings: list[str]
    node: yaml.Node | None = None  # the YAML as composed (its marks give the records' lines)
    start: int = 0  # offset of the YAML's first line


def split_front_matter(text: str) -> FrontMatter:
    """The front matter's values, where the body starts, warnings and the composed YAML. No front
    matter: ({}, 0, [])."""
    first = text.split("\n", 1)[0].rstrip("\r")
    if first.rstrip() != "---":
        return FrontMatter({}, 0, [])
    body_from, m = _front_bounds(text)
    if not m:
        return FrontMatter({}, 0, ["front matter: no closing '---'; read as Markdown"])
    raw = text[body_from:m.start()]
    end = text.find("\n", m.end())
    end = len(text) if end == -1 else end + 1
    if len(raw) > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(f"front matter longer than {MAX_FRONT_MATTER_CHARS} characters")
    loader = _LimitedLoader(raw)  # a SafeLoader with limits
    try:
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except FrontMatterError:
        raise
    except yaml.YAMLError as e:
        raise FrontMatterError(f"front matter is not valid YAML ({_one_line(e)})") from None
    except RecursionError:
        raise FrontMatterError("front matter nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as e:  # e.g. date: 2026-02-30
        raise FrontMatterError(f"front matter has an impossible value ({_one_line(e)})") from None
    finally:
        loader.dispose()
    if data is None:
        return FrontMatter({}, end, [])
    if not isinstance(data, dict):
        return FrontMatter({}, end, [f"front matter is a {type(data).__name__}, not a mapping; ignored"])
    return FrontMatter({str(k): v for k, v in data.items()}, end, [], node, body_from)


def _front_bounds(text: str) -> tuple[int, re.Match | None]:
    """Where the front matter's YAML starts (the line after the opening ``---``) and the match of
    its closing line (None: it is not closed)."""
    start = len(text.split("\n", 1)[0]) + 1
    return start, _FRONT_END.search(text, start)


def front_matter_records(text: str, front: FrontMatter, b: BlockBuilder, starts: list[int]) -> None:
    """The records a static site's layout prints from the front matter, as blocks: a list of
    entries under a key that is not the page's metadata (Marlin's G-code pages keep their
    ``parameters:``, ``notes:`` and ``examples:`` there: ``- tag: S`` / ``description: Timeout
    period…``), each entry a list item under a heading of the key's line ("parameters"). Only a
    list of mappings that hold text or of statements (three words or more on average) is read:
    ``codes: [ M600 ]``, ``category: [ features ]`` or ``hide: [navigation]`` are labels, and a
    single value (``description: …``, ``sidebar_position: 3``) is metadata. The records are under
    the page's ``title`` ("Filament Change > parameters"), as the site prints them; their headings
    close where the front matter ends: the body's first lines are under no heading of them."""
    root, title = front.node, front.values.get("title")
    if not isinstance(root, yaml.MappingNode):
        return
    line0 = text.count("\n", 0, front.start)  # 0-based line of the front matter's first line
    first_heading = b.first_heading
    b.root(title if isinstance(title, str) else "")
    for key, value in root.value:
        if not (isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.SequenceNode)
                and str(key.value) not in KEYS and _holds_statements(value)):
            continue
        a = starts[line0 + key.start_mark.line]
        head_end = starts[line0 + key.start_mark.line + 1] - 1
        b.heading(2, str(key.value), a, head_end, line0 + key.start_mark.line + 1,
                  line0 + key.start_mark.line + 1)
        group = b.new_group()
        for item in value.value:
            s, e = _node_span(text, starts, line0, item)
            if e > s:
                b.add("list_item", s, e, text.count("\n", 0, s) + 1, text.count("\n", 0, e - 1) + 1, level=1,
                      group=group)
    b.close_headings(0)
    b.first_heading = first_heading


def _holds_statements(seq: yaml.SequenceNode) -> bool:
    """A list whose entries hold text a reader reads: mappings with a value of three words or more,
    or statements averaging three words or more (not labels: ``[ M600, M603 ]``)."""
    items = seq.value
    if not items or seq.flow_style:
        return False
    if all(isinstance(i, yaml.MappingNode) for i in items):
        return any(len(str(v.value).split()) >= 3 for i in items for v in _scalars(i))
    if all(isinstance(i, yaml.ScalarNode) for i in items):
        return sum(len(str(i.value).split()) for i in items) >= 3 * len(items)
    return False


def _scalars(node: yaml.Node):
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.SequenceNode):
        for n in node.value:
            yield from _scalars(n)
    elif isinstance(node, yaml.MappingNode):
        for _k, v in node.value:
            yield from _scalars(v)


def _node_span(text: str, starts: list[int], line0: int, node: yaml.Node) -> tuple[int, int]:
    """The entry's whole lines, its ``- `` included, trimmed."""
    a = starts[line0 + node.start_mark.line]
    at = starts[line0 + node.end_mark.line]
    last = line0 + node.end_mark.line - (1 if not text[at:at + node.end_mark.column].strip(" -") else 0)
    z = starts[last + 1] - 1 if last + 1 < len(starts) else len(text)
    return strip_span(text, a, z)


MAX_FRONT_MATTER_CHARS = 64_000
MAX_ALIASES = 50
MAX_DEPTH = 20


class FrontMatterError(ValueError):
    """Front matter that cannot be read safely: the file is skipped (its access rules are unknown)."""


class _LimitedLoader(yaml.SafeLoader):
    """SafeLoader that refuses alias bombs and deep nesting before building anything."""

    def __init__(self, stream):
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise FrontMatterError(f"front matter uses more than {MAX_ALIASES} YAML aliases")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise FrontMatterError(f"front matter nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _untagged(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    """A value under a local tag of the site's own (``requires: !PIDTEMPBED``, which Jekyll's YAML
    reads), read as the plain value it tags: a string, a list or a mapping. Tags naming Python
    objects stay refused (no constructor for them)."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_LimitedLoader.add_multi_constructor("!", _untagged)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:160]



def _inline_text(tok: Token) -> str:
    """A heading's text as the rendered page shows it: without its HTML tags (``### Status <a
    id="status" />`` is "Status"; engine.lang.markup.hidden_inline_tag), its Liquid tags and its
    attribute list (``## Vario {: #vario }`` is "Vario"), a break a space, its emoji shortcodes as
    their emoji and MkDocs Material's icons as nothing (engine.lang.markup.read_shortcodes)."""
    parts: list[str] = []
    for child in tok.children or ():
        if child.type == "html_inline":
            parts.append(without_hidden_tags(child.content))
        elif child.type == "text":
            parts.append(read_shortcodes(without_hidden_tags(child.content)))
        elif child.type == "code_inline":
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join(HEADING_ATTRS.sub("", "".join(parts)).split())


def _shows_text(inline: Token) -> bool:
    """Whether a paragraph shows a reader any text. One of pictures and HTML tags only
    (``[<img src="shot-1.png" width=250>](shot-1.png)``, a row of logos) shows none, unless a
    picture's alt text says what it shows (``![Wiring of the fan header](fan.png)``) or a tag is a
    writer's placeholder (``<GND>``: engine.lang.markup.hidden_inline_tag); nor one of a Jekyll site's
    template markup only (``{% include boards.md %}``). A paragraph with no
    picture or tag (punctuation alone: an admonition's closing ``:::``) is left to the rules that
    know that markup."""
    pictures = False
    for child in inline.children or ():
        shown = without_hidden_tags(child.content) if child.type == "text" else child.content
        if child.type in ("text", "code_inline", "image") and any(ch.isalnum() for ch in shown):
            return True
        if child.type == "text" and shown != child.content:  # a Liquid tag, an attribute list
            pictures = True
        if child.type == "html_inline" and not hidden_inline_tag(child.content):
            return True
        pictures = pictures or child.type in ("image", "html_inline")
    return not pictures  # punctuation alone (an admonition's closing ':::') is markup other readers know


def parse_markdown(text: str) -> Parsed:
    front = split_front_matter(text)
    meta, body_start, warnings = front.values, front.body_start, front.warnings
    body, tabs = dedent_bodies(text[body_start:])  # MkDocs' indented containers (engine.lang.containers)
    tokens = _MD.parse(body)
    walk = _Walk(text, line0=text.count("\n", 0, body_start), tabs=tabs)  # line0: the front matter's lines
    if meta:
        front_matter_records(text, front, walk.b, walk.starts)
    walk.run(tokens)
    if len(tokens) and _nesting_overflow(tokens):
        warnings.append("lists or quotes nested deeper than the parser follows; the deepest levels are plain text")
    return Parsed(text=text, blocks=walk.b.blocks, meta=meta, first_heading=walk.b.first_heading, warnings=warnings)


class _Walk:
    """One pass over markdown-it's tokens, turning them into blocks: the state that pass needs
    (the open lists and quotes, the table being read, the level of the title)."""

    def __init__(self, text: str, line0: int, tabs: Sequence[Tab] = ()):
        self.text, self.line0 = text, line0
        self.tabs = list(tabs)  # content tabs still to open, in order (lines relative to line0)
        self.open_tabs: list[tuple[int, int, int]] = []  # (first line past its body, depth, level shift) before it
        self.starts = line_starts(text)
        self.b = BlockBuilder()
        self.containers: list[tuple[str, int]] = []  # ("list"|"item"|"quote", group)
        self.list_depth = 0
        self.table_group = -1
        self.header = self.caption = ""
        self.in_thead = False
        self.title_level = 0  # level of the first '#' heading (0: none yet)
        self.module_stop = -1  # end of the MDX module statement being skipped (engine.lang.markup.module_end)
        self.shift = 0  # what a heading's level gains inside content tabs (nested under the tab's label)

    def span(self, m: list[int], keep_indent: bool = False) -> tuple[int, int, int, int]:
        """(start, end, first line, last line) of the token's lines, whitespace trimmed (a code
        block keeps its first line's indent)."""
        text, starts = self.text, self.starts
        a, z = m[0] + self.line0, m[1] + self.line0  # 0-based, end exclusive
        start = starts[a]
        end = starts[z] - 1 if z < len(starts) else len(text)
        if keep_indent:
            s, e = start, strip_span(text, start, end)[1]
            while s < e and text[s] in "\r\n":
                s += 1
        else:
            s, e = strip_span(text, start, end)
        return s, e, text.count("\n", 0, s) + 1, text.count("\n", 0, max(s, e - 1)) + 1

    def group(self) -> int:
        return self.containers[-1][1] if self.containers else -1

    def run(self, tokens: list[Token]) -> None:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.map and (self.tabs or self.open_tabs):
                self.tabs_at(tok.map[0], _inline_text(tokens[i + 1]) if tok.type == "heading_open" else "")
            if tok.type == "heading_open" and tok.map:
                s, e, sl, el = self.span(tok.map)
                self.b.heading(int(tok.tag[1]) + self.shift, _inline_text(tokens[i + 1]), s, e, sl, el)
                self.title_level = self.title_level or int(tok.tag[1])
                i += 3
                continue
            if tok.type == "paragraph_open" and tok.map and i + 1 < len(tokens) and not _shows_text(tokens[i + 1]):
                i += 3  # a paragraph of pictures only: nothing a reader reads, no block
                continue
            self.token(tok)
            i += 1

    def tabs_at(self, line: int, heading: str) -> None:
        """Close the content tabs whose body ended before ``line`` and open those whose opening line
        comes before it: a tab's label is a heading one level under the heading the tab sits in, and
        the headings of its body nest under it ("Configuration procedure > ESP32 > Step 1."); not
        where the body opens with a heading that says it (``<TabItem value="android">`` then
        ``### Android``)."""
        self.close_tabs(line)
        while self.tabs and self.tabs[0].line < line:
            tab = self.tabs.pop(0)
            self.close_tabs(tab.line)  # the tab before it, a sibling, ended there
            self.open_tabs.append((tab.end, self.b.depth, self.shift))
            if self.tabs and self.tabs[0].line < line or heading.casefold() != tab.label.casefold():
                level = self.b.level + 1
                self.b.heading(level, tab.label, *self.span([tab.line, tab.line + 1]))
                self.shift = level

    def close_tabs(self, line: int) -> None:
        """Close the open content tabs whose body ends at or before ``line``: their headings too."""
        while self.open_tabs and self.open_tabs[-1][0] <= line:
            _end, depth, self.shift = self.open_tabs.pop()
            self.b.close_headings(depth)

    def token(self, tok: Token) -> None:
        t = tok.type
        if t in _CONTAINER_TOKENS:
            self.container(t)
        elif tok.map and self.starts[tok.map[0] + self.line0] < self.module_stop:
            return  # inside an MDX module statement: its JSX and its closing ');' are no text
        elif t == "paragraph_open" and tok.map:
            self.paragraph(*self.span(tok.map))
        elif t in ("fence", "code_block") and tok.map:
            self.b.add("code", *self.span(tok.map, keep_indent=True), group=self.group())
        elif t == "html_block" and tok.map:
            self.html(*self.span(tok.map))
        elif t in ("table_open", "thead_open", "thead_close") or (t == "tr_open" and tok.map):
            self.table(tok)

    def container(self, t: str) -> None:
        if t in ("bullet_list_open", "ordered_list_open"):
            group = self.containers[-1][1] if self.list_depth else self.b.new_group()
            self.list_depth += 1
            self.containers.append(("list", group))
        elif t in ("bullet_list_close", "ordered_list_close"):
            self.list_depth -= 1
            self.containers.pop()
        elif t == "list_item_open":
            self.containers.append(("item", self.containers[-1][1]))
        elif t == "blockquote_open":
            self.containers.append(("quote", self.group() if self.containers else self.b.new_group()))
        else:  # list_item_close, blockquote_close
            self.containers.pop()

    def html(self, s: int, e: int, sl: int, el: int) -> None:
        """The runs of an HTML block's lines that show text (``visible_lines``), each a paragraph,
        and the rows of its tables (engine.lang.tables.html_table_rows), each a table row that
        carries its table's header row ("Feature | TurtleBot 4 Lite | TurtleBot 4"), as a pipe
        table's rows do: a spec sheet written in HTML inside a Markdown page."""
        shown = visible_lines(self.text, s, e)
        rows = html_table_rows(self.text[s:e])
        opening: dict[int, list] = {}  # line -> the rows that open on it
        covered: set[int] = set()  # lines inside a row
        for r in rows:
            a, z = strip_span(self.text, s + r.start, s + r.end)
            if a >= z:
                continue
            first, last = self.text.count("\n", 0, a) + 1, self.text.count("\n", 0, z - 1) + 1
            opening.setdefault(first, []).append((r, a, z, first, last))
            covered.update(range(first, last + 1))
        group = self.b.new_group() if opening else -1
        header = ""
        run: list[int] = []  # 1-based line numbers of the run being read

        def flush() -> None:
            if run:
                a = max(s, self.starts[run[0] - 1])
                z = min(e, self.starts[run[-1]] - 1 if run[-1] < len(self.starts) else len(self.text))
                a, z = strip_span(self.text, a, z)
                if a < z:
                    self.b.add("paragraph", a, z, run[0], run[-1], group=self.group())
                run.clear()

        for n in range(sl, el + 2):
            if n in covered:
                flush()
                for r, a, z, first, last in opening.get(n, []):
                    if r.header and not header:
                        header = " | ".join(r.cells)
                        self.b.add("table_row", a, z, first, last, group=group)
                    else:
                        self.b.add("table_row", a, z, first, last, context=header, group=group)
            elif n - sl in shown:
                run.append(n)
            else:
                flush()
        flush()

    def paragraph(self, s: int, e: int, sl: int, el: int) -> None:
        end = module_end(self.text, s) if not self.containers else None
        if end is not None:  # an MDX module statement over several paragraphs
            self.module_stop = end
            return
        if module_lines(self.text[s:e]):
            return  # MDX's import / export lines: code the page runs, not text it shows
        if opens_with_tag(self.text[s:e]) and not self.containers:
            self.html(s, e, sl, el)  # a tag over several lines opens it (CommonMark: not an HTML block)
            return
        level = cjk_heading_level(self.text[s:e]) if not self.containers and sl == el else 0
        if level:  # "제1장 개요" / "1.1절 점검" / "第二节 …" standing alone: a heading, under
            # the document's title when a '#' heading came first
            self.b.heading(min(6, level + (1 if self.title_level == 1 else 0)) + self.shift, self.text[s:e].strip(),
                           s, e, sl, el)
        elif self.containers and self.containers[-1][0] == "item":
            self.b.add("list_item", s, e, sl, el, level=self.list_depth, group=self.group())
        elif self.containers:
            kind = "quote" if self.containers[-1][0] == "quote" else "paragraph"
            self.b.add(kind, s, e, sl, el, group=self.group())
        else:
            self.b.add("paragraph", s, e, sl, el)

    def table(self, tok: Token) -> None:
        """A row keeps its table's caption and header row as context (units and columns)."""
        t = tok.type
        if t == "table_open":
            self.table_group = self.b.new_group()
            self.caption = self.b.take_caption(self.text, self.table_group)
            self.header = ""
        elif t in ("thead_open", "thead_close"):
            self.in_thead = t == "thead_open"
        else:
            s, e, sl, el = self.span(tok.map)
            if self.in_thead:
                self.header = self.text[s:e]
                context = self.caption
            else:
                context = "\n".join(x for x in (self.caption, self.header) if x)
            self.b.add("table_row", s, e, sl, el, context=context, group=self.table_group)


_CONTAINER_TOKENS = frozenset({"bullet_list_open", "ordered_list_open", "bullet_list_close", "ordered_list_close",
                               "list_item_open", "list_item_close", "blockquote_open", "blockquote_close"})


def _nesting_overflow(tokens: list[Token]) -> bool:
    return max(t.level for t in tokens) >= _MD.options.get("maxNesting", 20) - 1
