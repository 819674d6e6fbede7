"""Blocks -> chunks: structure first, token budget second.

Rules, in order:
  1. A heading (any level) starts a new section; no chunk crosses a section boundary.
     A section holding only headings merges into the next one, so the first chunk of a
     section starts on its heading line (the evaluation hit rule relies on it). In a text
     that does not mark its headings up (PDF, HTML, plain text: headings read from type size
     or tags), headings over nothing that the next heading does not go under (a section whose
     content is a picture, "Dimensions", then "Pin description"; not the document's title
     alone) are a chunk of their own: they are not the next section's, nor read as its
     statements. Markdown and reST keep the merge: their headings are never statements, and
     stacked headings there are the author's (signatures sharing one description, an
     introducing "Settings").
  2. Units: a whole list, table or block quote (a ``group``) when it fits the budget,
     else each of its blocks; any other block alone. Headings attach to the next unit.
  3. Whole consecutive units are packed while the chunk stays within
     ``max_tokens`` (counted with the caller's ``count_tokens``).
     When a section needs several chunks, each chunk after the first starts with the previous
     chunk's last whole units worth up to ``section_overlap_tokens`` (never its first unit,
     never a heading alone), so a step or row near a cut is read with its neighbours.
  4. Only a unit that alone exceeds the budget is split: prose at sentence ends (``.!?`` and
     ``。！？``), code at line ends, then at spaces, then between characters, with
     ``overlap_tokens`` of overlap between consecutive pieces; every piece keeps its heading path.

Every chunk's ``text`` is exactly ``doc.text[char_start:char_end]``. ``context`` is the
heading path under the document's title (``read_path``), joined with " > ", plus a table's
caption and header row on the next line.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass
from typing import Callable, Sequence

from engine.config import ChunkingConfig
from engine.lang.containers import tab_label
from engine.lang.language import detect_language
from engine.lang.rst import ADORNMENT, title_text
from engine.lang.text import approx_token_count, headings_under, sentence_spans, word_spans
from engine.lang.units import FENCE
from engine.types import Block, Chunk, ChunkKind, Document

CountTokens = Callable[[str], int]

# Recorded in each index manifest: bump it when the rules above change what chunks come out,
# so an index built by older rules asks to be rebuilt instead of mixing two chunkings.
CHUNKER_VERSION = "54"  # 3: code cut between lines; CJK chapter lines in Markdown are headings
# 4: long paragraphs cut by the one sentence splitter (engine.lang.text): no cut before a lower-case
#    word or a digit (2 of 10,579 chunks of the shared dev corpora start elsewhere)
# 5: a PDF page in two columns reads left column then right (engine.ingest.pdf.reading_order);
#    the bundled PDF and the Markdown/HTML/text corpora give the same chunks
# 6: a chunk that starts inside a fenced code block says so (Chunk.in_code)
# 7: HTML / JSX tag lines and MDX module lines are no blocks (engine.lang.markup); .mdx is Markdown
# 8: a Markdown paragraph of pictures only is no block, a heading's HTML tags are not its text
# 9: an MDX module statement over several paragraphs (``export const Tabs = (props) => (…);``) is no block
# 10: a PDF table's header set tighter than its rows (cells run together) is its header, cut on the
#     rows' columns (engine.ingest.pdf._header_cells), not a paragraph above a table headed by its first row
# 11: PDF runs measured by their fonts' glyph widths: words placed one by one are read with their
#     spaces, and a line's cells cut on measured gaps (engine.ingest.pdf._font_widths, WORD_GAP)
# 12: HTML list items after their bullet or number; navigation, search, banner and footer landmarks
#     (ARIA roles), hidden elements, icon-font glyphs and a heading's permalink mark are no text
# 13: a PDF's headings from its outline (bookmarks) when it has one whose entries are on their pages
# 14: an HTML <pre> of code is fenced in the text (its lines are code entries)
# 15: a word hyphenated over two PDF lines of a paragraph is one word again (engine.ingest.pdf.dehyphenate)
# 16: an HTML heading inside a <section> or <article> heads that section only
# 17: a PDF page's table of contents (titles, dot leaders, page numbers in order) is no text
# 18: an HTML page that would lose all its text, or its rest, to navigation or hidden marks is read without them
# 19: a PDF sentence cut by a page break is one paragraph again, a table's rows at the top of the next page
#     keep its header (engine.ingest.pdf.runs_on, _table_runs); a chunk knows the page it ends on (end_page)
# 20: a PDF table's rows with empty cells stay in it, their cells in its columns; its first line heads it only
#     as labels over values (three columns or more); a page counter goes from every page; cells keep the
#     spaces pypdf gave as runs of their own
# 21: a PDF table's first line set in bold over rows that are not is its header (two columns too)
# 22: in PDF, HTML and plain text, headings over nothing that the next heading does not go under are a chunk
#     of their own, not read as the next section's statements (Markdown and reST unchanged)
# 23: a PDF's title is its metadata's unless a cover says another; with none, its cover's largest type
# 24: a PDF table cell's wrapped line goes back in its cell; a bullet set apart from its item is no cell;
#     a cell keeps the space its first run ends with
# 25: a PDF line of labels alone at a page's foot heads the table the next page opens with
# 26: a PDF "heading" that reads as a sentence (an outline entry or large type) is a statement; contents
#     pages with a few stale page numbers are contents
# 27: a PDF without an outline whose body text is seldom bold has its short bold lines at the body's size as
#     headings
# 28: contents lists (PDF, HTML, text) and a PDF's back-of-book index are no text; an HTML page is read in its
#     marked main content, a page of links is skipped, a Sphinx page's source copy is skipped where it is read
# 29: a PDF text operator's wide moves (a table row set as one TJ array) part runs at their x
#     (engine.ingest.pdf_gaps): the row's cells are cells
# 30: ... moves from 1 em too where a line's moves are not alike (columns; a justified line's are)
# 31: a PDF table drawn with rules reads a row at a time, its cells' wrapped lines in their cells
#     (engine.ingest.pdf_grid); a vertical rule between two runs parts them into cells
# 32: cells a producer places one by one along a line (Tm, Td), 1.25 em or more apart, are runs at their
#     own x (engine.ingest.pdf_gaps); a table header wrapped onto 2-3 lines is one header row
#     (engine.ingest.pdf.stacked_headers)
# 33: bold headings at the body's size under a PDF outline's deepest entry head sections (pdf.bold_subheads)
# 34: ... not the last lines of a bold statement (a question wrapped in a FAQ)
# 35: a reST simple table's "---  ---" rules between its rows are no rows (engine.lang.rst.SIMPLE_RULE)
# 36: any reST domain's directive (".. http:get:: /api/files", ".. js:function::") is an API entry, a
#     title ("GET /api/files") over its text (engine.lang.rst.is_object_directive)
# 37: a reST simple or grid table's header, the rows' context, is its cells joined by " | " (a column's
#     lines joined), as a list-table's is (engine.lang.tables)
# 38: a Markdown paragraph of a Jekyll site's template markup only ("{% include boards.md %}") is no block
# 39: the one sentence splitter that cuts long paragraphs ends a sentence after the emphasis marks that
#     close it ("first.** Then")
# 40: a PDF cover's line with no letter ("2.1" set in its largest type) is no title
# 41: a bold line at a PDF's body size that reads as a command ("make menuconfig", "cd ~/klipper/") heads
#     no section (engine.ingest.pdf.reads_as_command)
# 42: the sentence splitter cuts before a line that opens with an item's number ("...USB port.\n10. The
#     adaptor ..."), never right after it (a PDF list's "10." is no sentence)
# 43: a static site's front matter records are blocks (engine.ingest.markdown.front_matter_records); a
#     section ends where the heading path changes with no heading
# 44: an HTML table's rows in a Markdown file are table rows with their header (engine.lang.tables)
# 45: a document's title is its first heading only where that heads the page (a top-level one, or none
#     after it of its level or above), else its file name (engine.ingest.blocks.Parsed.title_heading)
# 46: the context reads the heading path under the document's title where its first heading is not
#     the title (read_path): a static site's page titled in its front matter, a page with no heading
# 47: a Markdown heading reads its emoji shortcodes as their emoji and MkDocs Material's icons as nothing
#     (engine.lang.markup.read_shortcodes)
# 48: MkDocs' indented containers (admonitions, content tabs: engine.lang.containers) read with their bodies set
#     back, so an indented body is its paragraphs, lists and headings, not code; a tab's label heads its body
# 49: ... and a fenced admonition (MyST's ```{warning}) is its paragraphs and lists, not code
# 50: a Docusaurus tab (<TabItem value="win">) heads its body with its label (its <Tabs>' for the value)
# 51: a heading's attribute list may give an id that starts with a digit ("## 4. Receiver {: #4-receiver }")
# 52: the context's first line is the heading path even when that is empty (a table's header then on the second)
# 53: the containers of 48-50 read the same in a file with Windows line ends
# 54: a one-word sentence ("**Warning!**", "Important!") is no sentence of its own: a long paragraph is not cut after it

UNMARKED_HEADINGS = frozenset({"pdf", "html", "text"})  # formats whose text does not mark headings up

_KIND: dict[str, ChunkKind] = {"table_row": "table", "code": "code", "list_item": "list",
                               "paragraph": "prose", "quote": "prose", "heading": "prose"}


@dataclass(slots=True)
class _Unit:
    blocks: list[Block]
    tokens: int

    @property
    def start(self) -> int:
        return self.blocks[0].char_start

    @property
    def end(self) -> int:
        return self.blocks[-1].char_end


def chunk_id(doc_id: str, sha256: str, char_start: int, char_end: int) -> str:
    key = f"{doc_id}\x00{sha256}\x00{char_start}\x00{char_end}".encode()
    return hashlib.sha256(key).hexdigest()[:16]


def tokenizer_counter(tokenizer) -> CountTokens:
    """A ``count_tokens`` from a ``tokenizers.Tokenizer`` (special tokens not counted).

    A truncating tokenizer would make an over-long unit look as if it fitted, so one
    with truncation or padding on is copied and switched off (the original is shared).
    """
    tok = tokenizer
    if tok.truncation is not None or tok.padding is not None:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_str(tokenizer.to_str())
        tok.no_truncation()
        tok.no_padding()

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return count


def approx_counter() -> CountTokens:
    """Tokenizer-free estimate for tests and for the CLI before the model is built."""
    return approx_token_count


def read_path(title: str, heading_path: tuple[str, ...]) -> tuple[str, ...]:
    """The heading path as both branches read it (a chunk's context): under its document's title,
    so that a static site's pages, titled in their front matter and each with a "Kconfig" or
    "Overview" section, are told apart ("Bluetooth Configuration > Kconfig"); as it is where its
    first heading already is the title (a Markdown page's ``# Title``). The chunk's own
    ``heading_path``, what a source shows after the title, stays as the document has it."""
    title = " ".join(title.split())
    if not title or len(headings_under(title, heading_path)) < len(heading_path):
        return heading_path
    return (title, *heading_path)


def chunk_document(doc: Document, blocks: Sequence[Block], count_tokens: CountTokens,
                   config: ChunkingConfig) -> list[Chunk]:
    return _Chunker(doc, count_tokens, config).run(blocks)


class _Chunker:
    def __init__(self, doc: Document, count: CountTokens, config: ChunkingConfig) -> None:
        self.doc = doc
        self.text = doc.text
        self.count = count
        self.budget = max(1, int(config.max_tokens))
        self.overlap = max(0, min(int(config.overlap_tokens), self.budget // 2))
        self.section_overlap = max(0, min(int(config.section_overlap_tokens), self.budget // 2))
        self.chunks: list[Chunk] = []
        self.section_id = ""
        self._lines_kept: dict[tuple[int, int], bool] = {}

    # -- structure --------------------------------------------------------------
    def run(self, blocks: Sequence[Block]) -> list[Chunk]:
        sections: list[list[Block]] = []
        pending: list[Block] = []  # a section of headings only, waiting for content
        unmarked = self.doc.format in UNMARKED_HEADINGS
        for sec in _sections(blocks):
            if (unmarked and pending and pending != [blocks[0]]  # the title alone stays with what follows
                    and sec[0].kind == "heading" and sec[0].level <= pending[-1].level):
                sections.append(pending)  # headings over nothing (a figure's section): not the next one's
                pending = []
            if all(b.kind == "heading" for b in sec):
                pending += sec
                continue
            sections.append(pending + sec)
            pending = []
        if pending:
            sections.append(pending)
        for sec in sections:
            self.section_id = chunk_id(self.doc.meta.doc_id, self.doc.sha256, sec[0].char_start, -1)
            self._pack(self._units(sec))
        return self.chunks

    def _tokens(self, start: int, end: int) -> int:
        return self.count(self.text[start:end])

    def _units(self, sec: list[Block]) -> list[_Unit]:
        units: list[_Unit] = []
        heads: list[Block] = []
        i = 0
        while i < len(sec):
            b = sec[i]
            if b.kind == "heading":
                heads.append(b)
                i += 1
                continue
            j = i + 1
            if b.group >= 0:
                while j < len(sec) and sec[j].group == b.group and sec[j].kind != "heading":
                    j += 1
            members = sec[i:j]
            whole = heads + members
            tokens = self._tokens(whole[0].char_start, whole[-1].char_end)
            if tokens <= self.budget or len(members) == 1:
                units.append(_Unit(whole, tokens))
            else:
                for k, m in enumerate(members):
                    blk = heads + [m] if k == 0 else [m]
                    units.append(_Unit(blk, self._tokens(blk[0].char_start, blk[-1].char_end)))
            heads = []
            i = j
        if heads:
            units.append(_Unit(heads, self._tokens(heads[0].char_start, heads[-1].char_end)))
        return units

    # -- packing ----------------------------------------------------------------
    def _pack(self, units: list[_Unit]) -> None:
        cur: list[_Unit] = []
        total = 0
        carried = 0  # how many units at the head of ``cur`` the previous chunk holds too
        stack = list(reversed(units))  # next unit on top
        while stack:
            u = stack.pop()
            if cur and (u.tokens > self.budget or total + u.tokens > self.budget):
                emitted, left = self._close(cur, carried)
                cur, total, carried = [], 0, 0
                if left:  # the exact count did not fit: those units come first again
                    stack.append(u)
                    stack.extend(reversed(left))
                    continue
                if u.tokens <= self.budget:  # the next chunk of the section starts with the last units
                    cur = self._carried(emitted, self.budget - u.tokens)
                    total, carried = sum(c.tokens for c in cur), len(cur)
            if u.tokens > self.budget:
                self._split(u)  # nothing is carried into or out of a split unit
                continue
            cur.append(u)
            total += u.tokens
        while cur:
            _, cur = self._close(cur, carried)
            carried = 0

    def _carried(self, emitted: list[_Unit], room: int) -> list[_Unit]:
        """The last whole units of a chunk just emitted, worth at most ``section_overlap`` tokens
        (and ``room``), that open the section's next chunk too: never the whole chunk, never a
        heading alone."""
        limit = min(self.section_overlap, room)
        out: list[_Unit] = []
        used = 0
        for u in reversed(emitted[1:]):
            if used + u.tokens > limit or all(b.kind == "heading" for b in u.blocks):
                break
            out.insert(0, u)
            used += u.tokens
        return out

    def _close(self, cur: list[_Unit], carried: int = 0) -> tuple[list[_Unit], list[_Unit]]:
        """Emit the longest head of ``cur`` within the exact budget; return (the units emitted,
        the units left over). The head holds at least one unit past the ``carried`` ones (those
        the previous chunk holds too); when none fits with them, they are dropped instead."""
        n = len(cur)
        while True:
            start, end = cur[0].start, cur[n - 1].end
            tokens = cur[0].tokens if n == 1 else self._tokens(start, end)  # a unit's count is exact
            if tokens <= self.budget or n == 1:
                break
            if n - 1 <= carried:
                return self._close(cur[carried:])
            n -= 1
        blocks = [b for u in cur[:n] for b in u.blocks]
        self._emit(start, end, blocks, tokens, blocks[0].start_line, blocks[-1].end_line)
        return cur[:n], cur[n:]

    # -- splitting one oversized unit --------------------------------------------
    def _segments(self, u: _Unit) -> list[tuple[int, int, int, bool]]:
        """(start, end, tokens, is_heading) pieces no larger than the budget."""
        segs: list[tuple[int, int, int, bool]] = []
        for b in u.blocks:
            if b.kind == "heading":
                segs.append((b.char_start, b.char_end, self._tokens(b.char_start, b.char_end), True))
                continue
            # code is cut between lines, prose between sentences
            pieces = _line_spans(self.text, b.char_start, b.char_end) if b.kind == "code" \
                else sentence_spans(self.text, b.char_start, b.char_end)
            for s, e in pieces:
                t = self._tokens(s, e)
                if t <= self.budget:
                    segs.append((s, e, t, False))
                    continue
                for ws, we in _pack_spans(word_spans(self.text, s, e), self._tokens, self.budget):
                    wt = self._tokens(ws, we)
                    if wt <= self.budget:
                        segs.append((ws, we, wt, False))
                    else:
                        segs.extend((a, z, self._tokens(a, z), False) for a, z in self._cut(ws, we, wt))
        return segs

    def _cut(self, start: int, end: int, tokens: int) -> list[tuple[int, int]]:
        """Cut a run without spaces (a URL, a CJK line without punctuation) between characters."""
        out: list[tuple[int, int]] = []
        step = max(1, int((end - start) * self.budget * 0.8 / max(tokens, 1)))
        s = start
        while s < end:
            e = min(end, s + step)
            while e - s > 1 and self._tokens(s, e) > self.budget:
                e = s + (e - s) // 2
            out.append((s, e))
            s = e
        return out

    def _split(self, u: _Unit) -> None:
        segs = self._segments(u)
        i = 0
        while i < len(segs):
            j, total = i, 0
            while j < len(segs) and (j == i or total + segs[j][2] <= self.budget):
                total += segs[j][2]
                j += 1
            start, end = segs[i][0], segs[j - 1][1]
            tokens = self._tokens(start, end)
            while tokens > self.budget and j - i > 1:
                j -= 1
                end = segs[j - 1][1]
                tokens = self._tokens(start, end)
            self._emit(start, end, u.blocks, tokens, self._line(u.blocks, start, False),
                       self._line(u.blocks, end, True))
            if j >= len(segs):
                break
            back, k = 0, j  # overlap: step back over whole sentences worth <= overlap tokens
            while k - 1 > i and not segs[k - 1][3] and back + segs[k - 1][2] <= self.overlap:
                k -= 1
                back += segs[k][2]
            i = k

    def _line(self, blocks: list[Block], offset: int, is_end: bool) -> int:
        """Source line of ``offset`` inside one of ``blocks``."""
        for b in blocks:
            if b.char_start <= offset <= b.char_end if is_end else b.char_start <= offset < b.char_end:
                if self._keeps_lines(b):
                    return b.start_line + self.text.count("\n", b.char_start, max(b.char_start, offset - is_end))
                return b.end_line if is_end else b.start_line
        return blocks[-1].end_line if is_end else blocks[0].start_line

    def _keeps_lines(self, b: Block) -> bool:
        """Does the block's text hold its source lines (so offsets map to lines by counting)?
        Counted once per block: a long block is cut into many chunks."""
        key = (b.char_start, b.char_end)
        kept = self._lines_kept.get(key)
        if kept is None:
            kept = self._lines_kept[key] = self.text.count("\n", b.char_start, b.char_end) == b.end_line - b.start_line
        return kept

    # -- output -----------------------------------------------------------------
    def _emit(self, start: int, end: int, blocks: list[Block], tokens: int, start_line: int,
              end_line: int) -> None:
        doc = self.doc
        inside = [b for b in blocks if b.char_end > start and b.char_start < end] or blocks
        content = [b for b in inside if b.kind != "heading"]
        if content:
            path = content[0].heading_path
        else:
            last = inside[-1]
            path = last.heading_path + (_heading_title(self.text[last.char_start:last.char_end]),)
        weights: dict[ChunkKind, int] = {}
        for b in content:
            k = _KIND[b.kind]
            weights[k] = weights.get(k, 0) + min(end, b.char_end) - max(start, b.char_start)
        kind: ChunkKind = max(weights, key=lambda k: weights[k]) if weights else "prose"
        extra: list[str] = []
        for b in content:
            if b.kind == "table_row" and b.context and b.context not in extra:
                extra.append(b.context)
        read = read_path(doc.meta.title, path)
        context = "\n".join([" > ".join(read)] + extra) if read or extra else ""
        text = self.text[start:end]
        page = bisect.bisect_right(doc.page_starts, start) if doc.page_starts else None
        end_page = bisect.bisect_right(doc.page_starts, max(start, end - 1)) if doc.page_starts else None
        self.chunks.append(Chunk(
            id=chunk_id(doc.meta.doc_id, doc.sha256, start, end),
            doc_id=doc.meta.doc_id,
            version=doc.meta.version,
            path=doc.path,
            start_line=start_line,
            end_line=max(start_line, end_line),
            heading_path=path,
            char_start=start,
            char_end=end,
            kind=kind,
            section_id=self.section_id,
            language=doc.meta.language or detect_language(text),
            text=text,
            context=context.rstrip("\n"),  # the heading path first, even when empty (engine.lang.tables.table_context)
            tokens=tokens,
            page=page,
            end_page=end_page,
            ordinal=len(self.chunks),
            in_code=bool(content) and content[0].kind == "code" and (
                content[0].char_start < start and bool(FENCE.match(self.text, content[0].char_start))  # fenced
                # reStructuredText: a literal block whose "::" lead-in is not in the chunk
                or doc.format == "rst" and content[0].char_start <= start),
        ))


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The non-blank lines of ``text[start:end]`` as spans (a code block cut between lines)."""
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl
        if text[pos:stop].strip():
            out.append((pos, stop))
        pos = stop + 1
    return out


def _sections(blocks: Sequence[Block]) -> list[list[Block]]:
    """The blocks cut at each heading, and where the heading path changes with no heading (the
    headings a parser closed: a front matter's records, engine.ingest.markdown, before the body)."""
    out: list[list[Block]] = []
    cur: list[Block] = []
    for b in blocks:
        if cur and (b.kind == "heading" or (cur[-1].kind != "heading" and b.heading_path != cur[-1].heading_path)):
            out.append(cur)
            cur = []
        cur.append(b)
    if cur:
        out.append(cur)
    return out


def _pack_spans(spans: list[tuple[int, int]], count: Callable[[int, int], int], budget: int) -> list[tuple[int, int]]:
    """Greedy runs of consecutive spans whose joined text stays within ``budget``."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        j = i + 1
        total = count(*spans[i])
        while j < len(spans):
            t = count(*spans[j])
            if total + t > budget:
                break
            total += t
            j += 1
        out.append((spans[i][0], spans[j - 1][1]))
        i = j
    return out


def _heading_title(raw: str) -> str:
    """A heading block's title: its first line that is not a reStructuredText adornment."""
    first = next((x for x in raw.strip().splitlines() if not ADORNMENT.match(x)), "")
    tab = tab_label(first)  # MkDocs' content tab (engine.lang.containers): its label
    return tab if tab is not None else title_text(first.lstrip("#").strip().rstrip("#").strip())
