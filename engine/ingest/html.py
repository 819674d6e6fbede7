"""HTML -> blocks with the standard library's ``html.parser`` (tolerant, entity-decoding,
and ``getpos()`` gives the source line of every tag).

``Document.text`` is the extracted text, one block per line (``<pre>`` keeps its
lines); each block records the lines of the ``.html`` file it came from, so a chunk's
``start_line``/``end_line`` point into the original file. The page reads as a browser shows it:

- a list item after its bullet ("• ") or its number ("3. ", ``<ol start>`` counted), so two items
  are two statements, not one sentence run together ("Peak current per motor: 120 Amps" and "Max
  continuous current depends on cooling.");
- a ``<pre>`` of code (a ``<code>`` or a highlighter's spans inside, or a class that says so, its
  own or its wrapper's: Sphinx's ``div.highlight``) fenced as Markdown writes code, so its lines are
  code entries and a statement ending with a colon brings it; a bare ``<pre>`` of text stays text;
- a heading inside a ``<section>`` or ``<article>`` heads that section only;
- what a reader never sees as the page's text is dropped: ``script``, ``style``, ``nav``,
  ``header``, ``footer``, ``noscript``, ``template``, ``svg`` and ``head`` (except ``<title>``);
  any element that says it is navigation, a search box, the site's banner or its footer (ARIA
  ``role``: a documentation theme's sidebar, breadcrumbs and "next / previous" bar) or is hidden
  (``hidden``, ``aria-hidden="true"``, ``display: none``), unless that would take the whole page
  or its rest (``parse_html``); icon-font glyphs (Unicode's private use area: a link icon, a menu
  button) and the permalink mark a heading ends with ("¶");
- a page that marks its main content (``<main>``, ``role="main"``) is read there only: what a
  documentation theme sets beside it in elements no mark names (furo's ``<aside>`` sidebar and "on this
  page" list, a theme switch, a "Skip to content" link) is its frame, not its text; unless the main
  content holds under half the page's letters (``MAIN_SHARE``: an element closed early), when the whole
  page is read;
- a page whose text is links to other pages (a generated index, a contents page) is not read at all,
  and the library's report says so (``links_page``); a table of contents inside a page (paragraphs of
  title, dot leader and page number, as a word processor exports them; or a list of links to the page's
  own sections further down, as a FAQ lists its questions) is no text (``engine.ingest.contents.contents_runs``,
  ``_linked_contents``).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from engine.ingest.blocks import BlockBuilder, Parsed
from engine.ingest.contents import contents_runs, places_in_order, runs
from engine.types import BlockKind

SKIP = {"script", "style", "nav", "header", "footer", "noscript", "template", "svg", "head", "iframe", "object"}
SECTIONS = {"section", "article"}  # HTML5: a heading inside one heads that section only
SKIP_ROLES = {"navigation", "search", "banner", "contentinfo"}  # ARIA landmarks that are not the page's text
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_ICONS = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")  # private use: icon fonts
_PERMALINK = re.compile(r"\s*[¶§]\s*$")
_CODE_CLASS = re.compile(r"highlight|code|lang|source|literal|console|shell|prettyprint", re.IGNORECASE)
HEADINGS = {f"h{n}": n for n in range(1, 7)}
LEAVES: dict[str, BlockKind] = {"p": "paragraph", "li": "list_item", "pre": "code", "dt": "paragraph",
                                "dd": "paragraph", "figcaption": "paragraph", "blockquote": "quote"}
BOUNDARIES = {"div", "section", "article", "main", "body", "aside", "form", "table", "ul", "ol", "dl",
              "figure", "address", "details", "summary", "hr", "br", "fieldset", "center"}
VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}
MAIN_SHARE = 0.5  # of the page's letters outside headings, inside its main content: enough to read only that
IN_PAGE_LINK = 0.9  # of a block's letters inside links to anchors of the page: the block is only that link
LINK_TEXT_MAX = 80  # letters: a longer link is no entry of a list of links (an <a> left open, a card)
LINKS_PAGE_SHARE = 0.8  # of a page's letters outside headings, inside links: a page of links (``links_page``)
LINKS_PAGE_MIN = 5  # links
META_KEYS = {"doc_id", "title", "version", "date", "models", "status", "visibility", "language"}


class _Extractor(HTMLParser):
    def __init__(self, unseen: bool = True, drop: frozenset[int] = frozenset(), main_only: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.unseen = unseen  # drop what says it is navigation or hidden (``_unseen``)
        self.hid = 0  # characters of text dropped that way
        self.hiding = False  # the open skipped element was dropped that way
        self.main_only = main_only  # read only the text inside elements that say they are the main content
        self.mains = 0  # such elements seen (<main>, role="main")
        self.main_tag = ""  # the open one's tag
        self.main_depth = 0  # its tag's open elements, itself included (0: none open)
        self.drop = drop  # blocks left out, by their number in emitting order (a table of contents)
        self.emits: list[str] = []  # each block emitted: a paragraph's or list item's text, else ""
        self.links: list[int] = []  # per open <a href>: the letters it holds so far
        self.link_targets: list[str | None] = []  # per open <a href>: the anchor it points to in the page
        self.anchors: dict[str, int] = {}  # each id (or <a name>) in the page: the blocks emitted before it
        self.targets: list[str | None] = []  # per block emitted: the anchor it links to, when it is only that link
        self.seen = (0, 0)  # letters, and letters inside links to anchors, when the last block was emitted
        self.in_page_letters = 0  # letters inside links to anchors of the page
        self.target: str | None = None  # the first anchor the open block links to
        self.letters = 0  # letters of the page's text outside headings
        self.link_letters = 0  # of those, inside links that close holding LINK_TEXT_MAX letters at most
        self.link_count = 0  # those links
        self.out: list[str] = []  # extracted text pieces
        self.size = 0  # chars in out
        self.b = BlockBuilder()
        self.meta: dict[str, str] = {}
        self.title: list[str] = []
        self.skip: list[str] = []  # open skipped elements
        self.in_title = False
        # the open leaf: kind, heading level, pieces, first line, last line
        self.kind: str | None = None
        self.level = 0
        self.buf: list[str] = []
        self.first_line = 0
        self.last_line = 0
        self.lists: list[int] = []  # group id per open <ul>/<ol>
        self.numbers: list[int | None] = []  # per open list: the next <ol> item's number (None: <ul>)
        self.marker = ""  # the open list item's bullet or number
        self.sections: list[int] = []  # per open <section>/<article>: the headings open when it began
        self.div_classes: list[str] = []  # the open <div>s' classes (a highlighter's wrapper names itself there)
        self.pre_code = False  # the open <pre> holds code (``_CODE_CLASS``, or <code> / highlighter spans inside)
        self.quote_group = -1
        # tables
        self.table_group = -1
        self.caption = ""
        self.header = ""
        self.row: list[str] | None = None
        self.row_line = 0
        self.row_is_head = False
        self.cell: list[str] | None = None
        self.in_caption = False
        self.in_thead = False

    # -- helpers --------------------------------------------------------------
    def _line(self) -> int:
        return self.getpos()[0]

    def _emit(self, kind: str, body: str, first: int, last: int, *, level: int = 0, context: str = "",
              group: int = -1) -> None:
        letters, linked = self.letters - self.seen[0], self.in_page_letters - self.seen[1]
        target, self.target, self.seen = self.target, None, (self.letters, self.in_page_letters)
        if not body:
            return
        leaf = kind in ("paragraph", "list_item")
        self.targets.append(target if leaf and letters and linked >= IN_PAGE_LINK * letters else None)
        self.emits.append(body if leaf else "")
        if len(self.emits) - 1 in self.drop:
            return
        if self.out:
            self.out.append("\n")
            self.size += 1
        start = self.size
        self.out.append(body)
        self.size += len(body)
        if kind == "heading":
            self.b.heading(level, body, start, self.size, first, last)
        else:
            self.b.add(kind, start, self.size, first, last, level=level, context=context, group=group)  # type: ignore[arg-type]

    def _flush(self) -> None:
        if self.kind is None and not self.buf:
            return
        raw = "".join(self.buf)
        kind = self.kind or "paragraph"
        body = raw.strip("\n").rstrip() if kind == "code" else _PERMALINK.sub("", " ".join(raw.split()))
        if kind == "code" and self.pre_code and body:  # code: fenced, as Markdown writes it, so its lines read as code
            body = f"```\n{body}\n```"
        self.pre_code = False
        group = -1
        level = self.level
        if kind == "list_item":
            group = self.lists[-1] if self.lists else -1
            level = len(self.lists)
            body = f"{self.marker}{body}" if body else body
        elif kind == "quote" or (kind == "paragraph" and self.quote_group >= 0):
            group = self.quote_group
            kind = "quote" if self.quote_group >= 0 else kind
        self._emit(kind, body, self.first_line or self._line(), max(self.last_line, self.first_line),
                   level=level, group=group)
        self.kind, self.level, self.buf, self.first_line, self.last_line = None, 0, [], 0, 0

    def _open(self, kind: str, level: int = 0) -> None:
        self._flush()
        self.kind, self.level, self.first_line, self.last_line = kind, level, self._line(), self._line()
        if kind == "list_item":
            number = self.numbers[-1] if self.numbers else None
            self.marker = "• " if number is None else f"{number}. "
            if number is not None:
                self.numbers[-1] = number + 1

    # -- parser callbacks -----------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "meta":
            name = a.get("name", "").lower()
            if name in META_KEYS and "content" in a:
                self.meta[name] = a["content"]
            return
        if tag == "html" and a.get("lang"):
            self.meta.setdefault("language", a["lang"])
        if tag == "title":
            self.in_title = True
            return
        if self.skip:
            if tag in SKIP or tag in self.skip:  # nested: the skipped element ends at its own end tag
                self.skip.append(tag)
            return
        if tag in SKIP or (self.unseen and _unseen(a)):
            self._flush()
            if tag not in VOID:
                self.skip.append(tag)
                self.hiding = tag not in SKIP
            return
        if self.main_depth:
            self.main_depth += tag == self.main_tag and tag not in VOID
        elif (tag == "main" or a.get("role", "").strip().lower() == "main") and tag not in VOID:
            self.mains += 1
            self.main_tag, self.main_depth = tag, 1
        ident = a.get("id") or (a.get("name") if tag == "a" else "")
        if ident:
            self.anchors.setdefault(ident, len(self.emits))
        if tag == "a" and "href" in a:
            self.links.append(0)
            self.link_targets.append(a["href"][1:] if a["href"].startswith("#") and len(a["href"]) > 1 else None)
        elif tag == "div":
            self.div_classes.append(a.get("class", ""))
        elif tag in SECTIONS:
            self._flush()
            self.sections.append(self.b.depth)
        if tag in HEADINGS:
            self._open("heading", HEADINGS[tag])
        elif tag in ("ul", "ol"):
            self._flush()
            self.lists.append(self.lists[-1] if self.lists else self.b.new_group())
            self.numbers.append(_start(a) if tag == "ol" else None)
        elif tag == "blockquote":
            self._flush()
            if self.quote_group < 0:
                self.quote_group = self.b.new_group()
        elif tag in LEAVES and self.row is None:
            if tag == "p" and self.kind == "list_item":  # <li><p>…</p></li>: one item
                return
            self._open(LEAVES[tag])
            if tag == "pre":
                wrapper = self.div_classes[-1] if self.div_classes else ""
                self.pre_code = bool(_CODE_CLASS.search(f"{a.get('class', '')} {wrapper}"))
        elif tag in ("code", "span") and self.kind == "code":
            self.pre_code = True
        elif tag == "table":
            self._flush()
            self.table_group = self.b.new_group()
            self.caption = self.b.take_caption("".join(self.out), self.table_group)
            self.header = ""
        elif tag == "caption":
            self.in_caption, self.cell = True, []
        elif tag == "thead":
            self.in_thead = True
        elif tag == "tr":
            self._flush()
            self._end_row()
            self.row, self.row_line, self.row_is_head = [], self._line(), self.in_thead
        elif tag in ("td", "th"):
            if self.row is None:
                self._flush()
                self.row, self.row_line, self.row_is_head = [], self._line(), self.in_thead
            self._end_cell()
            self.cell = []
            if tag == "td":
                self.row_is_head = self.in_thead
            elif not self.row:
                self.row_is_head = True
        elif tag in BOUNDARIES and self.row is None:
            self._flush()
        elif tag == "br" and self.kind == "code":
            self.buf.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if self.skip:
            if tag in self.skip:
                while self.skip and self.skip.pop() != tag:
                    pass
            return
        if self.main_depth and tag == self.main_tag:
            self.main_depth -= 1
        if tag in HEADINGS and self.kind == "heading" or tag in LEAVES and self.kind == LEAVES[tag]:
            if tag == "p" and self.kind == "list_item":
                return
            self.last_line = max(self.last_line, self._line())
            self._flush()
        elif tag in ("ul", "ol"):
            self._flush()
            if self.lists:
                self.lists.pop()
                self.numbers.pop()
        elif tag == "blockquote":
            self._flush()
            self.quote_group = -1
        elif tag == "caption":
            self.caption = " ".join("".join(self.cell or []).split())
            self.in_caption, self.cell = False, None
        elif tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag == "thead":
            self._end_row()
            self.in_thead = False
        elif tag == "table":
            self._end_row()
            self.table_group, self.caption, self.header = -1, "", ""
        elif tag in BOUNDARIES and self.row is None:
            self._flush()
        if tag == "a" and self.links:
            held = self.links.pop()
            self.link_targets.pop()
            if held <= LINK_TEXT_MAX:  # a link as a list of them holds; not an <a> around the page
                self.link_letters += held
                self.link_count += 1
        elif tag == "div" and self.div_classes:
            self.div_classes.pop()
        elif tag in SECTIONS and self.sections:  # a section's headings govern nothing after it
            self._flush()
            self.b.close_headings(self.sections.pop())

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            if self.hiding:
                self.hid += len(data.strip())
            return
        if self.main_only and not self.main_depth:
            return
        data = _ICONS.sub("", data)
        if self.kind != "heading":
            letters = sum(c.isalpha() for c in data)
            self.letters += letters
            if self.links:
                self.links[-1] += letters
                if self.link_targets[-1] is not None:
                    self.in_page_letters += letters
                    self.target = self.target or self.link_targets[-1]
        if self.cell is not None:
            self.cell.append(data)
            return
        if not data.strip() and self.kind is None:
            return
        if self.kind is None:
            self.kind, self.first_line = "paragraph", self._line() + _leading_newlines(data)
        self.buf.append(data)
        self.last_line = self._line() + data.rstrip().count("\n")

    # -- tables ---------------------------------------------------------------
    def _end_cell(self) -> None:
        if self.cell is not None and self.row is not None and not self.in_caption:
            self.row.append(" ".join("".join(self.cell).split()))
        if not self.in_caption:
            self.cell = None

    def _end_row(self) -> None:
        self._end_cell()
        if self.row is None:
            return
        cells, first = self.row, self.row_line
        self.row = None
        if not any(cells):
            return
        body = " | ".join(cells)
        last = max(first, self._line())
        group = self.table_group if self.table_group >= 0 else self.b.new_group()
        if self.row_is_head and not self.header:
            self.header = body
            self._emit("table_row", body, first, last, context=self.caption, group=group)
        else:
            context = "\n".join(x for x in (self.caption, self.header) if x)
            self._emit("table_row", body, first, last, context=context, group=group)


def _unseen(attrs: dict[str, str]) -> bool:
    """Whether an element says it is no part of the page's text: navigation, search, banner or
    footer by its ARIA role, or hidden."""
    return (attrs.get("role", "").strip().lower() in SKIP_ROLES or "hidden" in attrs
            or attrs.get("aria-hidden", "").strip().lower() == "true"
            or bool(_HIDDEN_STYLE.search(attrs.get("style", ""))))


def _start(attrs: dict[str, str]) -> int:
    """An ``<ol>``'s first number (``start``, default 1)."""
    try:
        return int(attrs.get("start", "1").strip())
    except ValueError:
        return 1


def _leading_newlines(data: str) -> int:
    return len(data) - len(data.lstrip("\n")) if data.strip() else 0


def parse_html(source: str) -> Parsed | str:
    """The page as a reader sees it, or why it is not read. A page read to nothing but navigation
    and hidden text (saved while a dialog covered it: ``<div id="app" aria-hidden="true">``), or
    whose navigation or hidden element never closes (the rest of the page would go with it), is
    read again with those marks ignored: nothing is lost to them. A page that marks its main content is
    read there only, when that holds half its letters or more. A page of links (``links_page``:
    a generated index, a contents page) is not read: its words point at the pages that hold them."""
    parsed, p = _parse(source, unseen=True)
    if (not parsed.blocks and p.hid) or (p.skip and p.hiding):
        parsed, p = _parse(source, unseen=False)
    if p.mains:
        main, m = _parse(source, unseen=p.unseen, main_only=True)
        if m.letters >= MAIN_SHARE * p.letters:
            parsed, p = main, m
    if links_page(p.letters, p.link_letters, p.link_count):
        return (f"a page of links (an index or contents page): {p.link_letters / p.letters:.0%} of its text "
                f"is {p.link_count} links to other pages")
    contents = frozenset(contents_runs(p.emits)) | frozenset(_linked_contents(p.targets, p.anchors))
    return _parse(source, unseen=p.unseen, drop=contents, main_only=p.main_only)[0] if contents else parsed


def _linked_contents(targets: list[str | None], anchors: dict[str, int]) -> list[int]:
    """The paragraphs and list items that are a contents list of the page itself: runs of consecutive
    blocks that are each only a link to an anchor further down, three places or more, each once and
    in the page's order (``engine.ingest.contents.places_in_order``; a FAQ's list of its questions,
    Sphinx's ``.. contents::``, a word processor's linked contents). Read as passages, the list would
    answer for the questions whose answers lie below it."""
    out: list[int] = []
    for run in runs([t is not None for t in targets]):
        places = [anchors.get(targets[k] or "", -1) for k in run]
        if min(places) > run[-1] and places_in_order(places):
            out += run
    return out


def links_page(letters: int, link_letters: int, links: int) -> bool:
    """Whether a page's text is links to other pages: a generated index ("genindex"), a contents page
    (Sphinx's toctree, a Word export's contents frame). Its words name what other pages hold; read as
    passages they would outrank those pages for their own terms (a short passage of many terms) and
    be cited as evidence. Measured on about 300 pages of 19 built manuals (Sphinx, MkDocs, Doxygen,
    Docusaurus, Jekyll, Hugo, a Word export): generated indexes, tag and archive pages, module lists
    and contents pages .84 to 1.0 (an API index whose entries carry their class outside the link
    .79); content pages .73 and under (a landing page beside a sidebar no mark names), three in four
    under .20."""
    return links >= LINKS_PAGE_MIN and letters > 0 and link_letters >= LINKS_PAGE_SHARE * letters


def _parse(source: str, *, unseen: bool, drop: frozenset[int] = frozenset(), main_only: bool = False
           ) -> tuple[Parsed, _Extractor]:
    """The page read once (only inside its main content, ``main_only``), less the blocks ``drop``
    numbers: its Parsed, and the reader (what it dropped as navigation or hidden, whether such an
    element was still open at the end, the letters inside links, the blocks it emitted)."""
    p = _Extractor(unseen, drop, main_only)
    p.feed(source)
    p.close()
    p._flush()
    p._end_row()
    meta: dict[str, object] = dict(p.meta)
    title = " ".join("".join(p.title).split())
    if title and "title" not in meta:
        meta["title"] = title
    lang = str(meta.get("language", ""))
    if re.fullmatch(r"[a-z]{2}-[A-Z]{2}", lang):  # "de-DE" -> "de"; "zh-Hans" kept
        meta["language"] = lang[:2]
    return Parsed(text="".join(p.out), blocks=p.b.blocks, meta=meta, first_heading=p.b.first_heading), p
