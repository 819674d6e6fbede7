"""PDF -> blocks with pypdf, parsed in a separate process under time and memory limits.

Why pypdf: it is maintained, pure Python (no native code to build on a field laptop,
no GPL/AGPL terms), and its ``extract_text(visitor_text=...)`` reports each text
run's font size and position, which is what headings and table rows are read from.

Why a subprocess: a malformed, hostile or simply huge PDF (a decompression bomb, a
cyclic object graph) must not take the indexer down. ``python -m engine.ingest.pdf
FILE`` runs with ``RLIMIT_AS`` = ``chunking.pdf_memory_mb`` and is killed after
``chunking.pdf_timeout_s``; it prints JSON (never pickle) on stdout. A timeout, a
crash or an out-of-memory becomes an ingestion issue of that one file.

``Document.text`` is the extracted text: one line per text line of the page (table
rows as ``cell | cell``), pages separated by a blank line, ``page_starts`` giving
each page's first offset. A page break is not a break in the text where the text goes on over it:
a sentence a page leaves open (``unfinished``) and the next page's first line goes on with
(``runs_on``) is one paragraph, one line apart; rows at the top of a page that continue the table
that ended the page before keep its header (``_table_runs``), and a line of labels alone at a
page's foot heads the table the next page opens with. A passage then cites every page it
is on (``Chunk.end_page``). Line numbers of a PDF chunk are lines of that text. A page set in two
columns reads left column then right column (``reading_order``: the gutter found from the text
runs' x positions), not as a two-cell table of half-lines. Running headers and footers (a line at
the top or bottom of most pages that says the same thing, page numbers aside) are page furniture,
not text: kept where they first appear, left out of every later page (``page_furniture``), so a
paragraph running across a page break is not cut by "Service manual — page 12".

Headings: a PDF that carries an outline (bookmarks: the author's own table of contents, which
word processors and LaTeX write from the heading styles) has its headings said there, with their
levels and pages; each entry is found among its page's lines (``outline_heads``) and those lines
are the headings; a line set in the type of one level's entries that the outline leaves out is a
heading at that level too (``unlisted_heads``), and front matter the outline puts a level above the
numbered chapters is their sibling (``front_matter_levels``). Font size is the fallback, for a PDF
without one or whose entries are mostly not on their pages (and bold type at the body's size, where
the body is seldom bold: ``bold_marks_headings``); a diagram's labels set large fool it.

A table of contents (titles, dot leaders, page numbers in order; or entries that are links to
their sections, in order: ``without_contents``) is no text: it repeats every section's title and
would answer for them; nor is a back-of-book index, whose entries are found on the pages they name
(``without_index``). A word hyphenated over two
lines of a paragraph ("Verlänge-" / "rungskabel") is one word again (``dehyphenate``), so it is
found and quoted whole.

Words set one by one: a page a word processor or a typesetting program wrote places many words
with an operator of their own and no space character between them ("The", "can", "be" at their
x), and pypdf's text runs them together ("Thecanbe"). Each run's width is measured with its font's
own glyph widths (``_font_widths``: pypdf's ``Font``, as its layout mode reads them) and a gap of
``WORD_GAP`` em or more between two runs of a line is a space; a run whose font gives no widths
keeps the estimate (``_advance``), and no space is guessed from it. A typesetter that sets a table's
row as one text operator, its cells apart by moves of the pen (pdfTeX, Acrobat Distiller), has the row
cut into runs at those moves before the page is read (engine.ingest.pdf_gaps), so its cells are cells.
A table drawn with rules whose cells wrap onto several lines, written cell after cell (a troubleshooting
table's remedies, a pin table's descriptions), has each row's lines put back into one row of cells by
the rules drawn between its rows (engine.ingest.pdf_grid), before its rows are read as any other.
A header whose cells wrap onto two or three lines, written cell after cell, is put back into one line
of cells over its table's first row (``stacked_headers``), so the rows have their labels.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import os
import re
import statistics
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.ingest.blocks import BlockBuilder, Parsed
from engine.ingest.contents import contents_entries, entry, places_in_order, runs
from engine.ingest.pdf_gaps import default_width, matrix_product, split_wide_moves
from engine.ingest.pdf_grid import joined_bold, line_pieces, page_rules, ruled_rows
from engine.lang.codes import edition_marks
from engine.lang.outline import Outline
from engine.lang.text import wide
from engine.lang.words import terms

_ROOT = Path(__file__).resolve().parents[2]
_OUT_OF_MEMORY = ("MemoryError", "failed to map segment", "Cannot allocate memory", "out of memory")


@dataclass(frozen=True, slots=True)
class PdfFailure:
    reason: str


# --- parent side ---------------------------------------------------------------

def parse_pdf(path: Path, *, timeout_s: float, memory_mb: int) -> Parsed | PdfFailure:
    """Run the extractor in a child process and build blocks from its lines."""
    env = dict(os.environ, PYTHONPATH=str(_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONSTARTUP", None)
    limit = int(memory_mb) * 1024 * 1024

    def limit_memory() -> None:  # runs in the child between fork and exec
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        proc = subprocess.run(
            [sys.executable, "-m", "engine.ingest.pdf", str(Path(path).resolve())],  # child runs elsewhere
            capture_output=True, timeout=timeout_s, env=env, preexec_fn=limit_memory, cwd=str(_ROOT),
        )
    except subprocess.TimeoutExpired:
        return PdfFailure(f"PDF parsing took longer than {timeout_s:g} s (chunking.pdf_timeout_s); skipped")
    except OSError as e:
        return PdfFailure(f"cannot start the PDF parser: {e}")
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        if any(m in err for m in _OUT_OF_MEMORY) or proc.returncode in (-9, 137):
            return PdfFailure(f"PDF parser ran out of memory (limit {memory_mb} MB, chunking.pdf_memory_mb): "
                              "decompression bomb or very large page?")
        last = [ln for ln in err.strip().splitlines() if ln.strip()][-1:] or [f"exit status {proc.returncode}"]
        return PdfFailure(f"PDF parser crashed: {last[0][:200]}")
    try:
        data = json.loads(proc.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return PdfFailure("PDF parser returned unreadable output")
    if "error" in data:
        return PdfFailure(data["error"])
    return build_blocks(data)


_NO_TEXT = "no extractable text: scanned? OCR is not supported"


def build_blocks(data: dict) -> Parsed | PdfFailure:
    """Lines per page (from the child) -> extracted text, page starts and blocks."""
    pages: list[list[dict]] = data["pages"]
    if not pages:
        return PdfFailure("PDF has no pages")
    sizes = Counter()
    for lines in pages:
        for ln in lines:
            sizes[round(ln["s"], 1)] += len(ln["t"])
    if not sizes:
        return PdfFailure(_NO_TEXT)
    body = sizes.most_common(1)[0][0]
    kept = [stacked_headers(wrapped_cells(dehyphenate(without_contents(
                [ln for k, ln in enumerate(lines) if k not in furniture]))))
            for lines, furniture in zip(pages, page_furniture(pages))]
    kept = without_index(kept)
    outline = front_matter_levels(data.get("outline") or [])
    marked = outline_heads(kept, outline)
    if marked is not None:
        unlisted_heads(kept, marked, body, len(outline))
    bold = bold_marks_headings(kept, body)
    if marked is not None and bold:
        bold_subheads(kept, marked, body)
    heads: list[set[int]] = ([set(m) for m in marked] if marked is not None
                             else [heading_lines(lines, body, bold) for lines in kept])
    for p, (lines, ks) in enumerate(zip(kept, heads)):
        for group in heading_groups(lines, ks, marked[p] if marked is not None else None):
            if reads_as_sentence(" ".join(lines[k]["t"] for k in group)):
                ks.difference_update(group)  # a statement set large (or bookmarked): a paragraph
                if marked is not None:
                    for k in group:
                        del marked[p][k]
    head_sizes = sorted({round(lines[k]["s"], 1) for lines, ks in zip(kept, heads) for k in ks}, reverse=True)
    writer = _PageWriter(body, heading_levels(head_sizes))
    for pno, (lines, ks) in enumerate(zip(kept, heads), start=1):
        writer.page(pno, lines, ks, marked[pno - 1] if marked is not None else None)
    writer.finish()
    text = "".join(writer.parts)
    if not text.strip():
        return PdfFailure(_NO_TEXT)
    title = document_title(data.get("info", {}).get("title") or "", kept[0] if kept else [], body)
    meta = {"title": title} if title else {}
    return Parsed(text=text, blocks=writer.b.blocks, meta=meta, first_heading=writer.b.first_heading,
                  page_starts=tuple(writer.page_starts))


COVER_SIZE = 1.3  # a cover's title is set this many times the body size or larger
COVER_PAGE = 2.0  # a first page with type this many times the body size is a cover: its title overrules
COVER_SHARE = 0.55  # ... each of its lines too, and at 0.55 of the largest type on the first page or more
TITLE_MAX = 160  # characters of a title read off the cover


def document_title(info: str, first_page: list[dict], body: float) -> str:
    """The PDF's title: its metadata title, unless a cover (a first page set ``COVER_PAGE`` times
    the body size) says another, or the first page names another edition than it does (word
    processors copy a template's title into every file made from it: a CB1 manual titled
    "BIGTREETECH OCTOPUS V1.0", a "TMC2209-V1.2" manual titled "BIGTREETECH TMC2209-V1.1":
    engine.lang.codes.edition_marks); the cover's title when there is no metadata title or the
    cover overrules it: the first page's largest type, its lines in reading order ("Eddy series" /
    "User Manual"; a line with no letter, a cover's "2.1" set in its largest type, is a version or a
    number, no title); else "" (then the first heading, then the file name)."""
    words = terms(info)
    page = terms(" ".join(ln["t"] for ln in first_page))
    first_page = [ln for ln in first_page if any(ch.isalpha() for ch in ln["t"])]
    largest = max((ln["s"] for ln in first_page), default=0.0)
    editions, shown = edition_marks(info), edition_marks(" ".join(ln["t"] for ln in first_page))
    stale = bool(editions and shown and not editions & shown)  # the first page names another edition
    said = sum(w in page for w in words) >= 0.8 * len(words)
    if words and not stale and (said or largest < COVER_PAGE * body):
        return " ".join(info.split())
    if largest < COVER_SIZE * body:
        return ""
    cover = " ".join(" ".join(ln["t"].split()) for ln in first_page
                     if ln["s"] >= max(COVER_SHARE * largest, COVER_SIZE * body))
    return cover[:TITLE_MAX].rsplit(" ", 1)[0] if len(cover) > TITLE_MAX else cover


def without_contents(lines: list[dict]) -> list[dict]:
    """A page's lines less its table of contents (``engine.ingest.contents``): the lines that are a
    title, a dot leader and a page number, their numbers in page order; and a contents list whose
    entries are links into the file (``_linked_runs``), with or without leaders and numbers."""
    drop = _linked_runs(lines)
    drop.update(contents_entries([ln["t"] for ln in lines]))
    return [ln for k, ln in enumerate(lines) if k not in drop] if drop else lines


INDEX_MIN = 10  # entries (title, leader, page number) on a page that make it a candidate index page
INDEX_FOUND = 0.5  # the share of them found on the pages they name that makes it an index
INDEX_PEAK = 3.0  # ... at an offset finding this many times the median offset's count (a page-specific match)
INDEX_OFFSETS = range(-10, 31)  # printed page numbers less the file's page numbers tried


def without_index(pages: list[list[dict]]) -> list[list[dict]]:
    """The pages less their back-of-book index: a page of ``INDEX_MIN`` entries or more (title, leader,
    page numbers; a contents list in page order is gone already) half of which or more are found on
    the pages they name, most of their title's words there, at the one offset between printed and
    file page numbers that finds most (``INDEX_OFFSETS``: a cover and front matter go unnumbered), and
    only there (``INDEX_PEAK``). Read as passages an index outranks the pages it names for their own
    terms ("Absolute Maximum Ratings ........ 49": a datasheet's five pages of them). A parts or
    specification list set with leaders names no pages, so no offset finds its lines more than another,
    and it stays."""
    entries = [[(k, terms(e[0]), e[1]) for k, ln in enumerate(lines) if (e := entry(ln["t"])) is not None]
               for lines in pages]
    candidates = [p for p, es in enumerate(entries) if len(es) >= INDEX_MIN]
    if not candidates:
        return pages
    words = [terms(" ".join(ln["t"] for ln in lines)) for lines in pages]

    def found(p: int, title: set[str], n: int, off: int) -> bool:
        q = n - 1 + off
        return bool(title) and 0 <= q < len(pages) and q != p and len(title & words[q]) >= 0.6 * len(title)

    hits = {off: sum(found(p, t, n, off) for p in candidates for _k, t, n in entries[p]) for off in INDEX_OFFSETS}
    best = max(INDEX_OFFSETS, key=lambda off: (hits[off], -abs(off)))
    if hits[best] < INDEX_PEAK * max(statistics.median(hits.values()), 1.0):
        return pages
    out = list(pages)
    for p in candidates:
        if sum(found(p, t, n, best) for _k, t, n in entries[p]) >= INDEX_FOUND * len(entries[p]):
            drop = {k for k, _t, _n in entries[p]}
            out[p] = [ln for k, ln in enumerate(pages[p]) if k not in drop]
    return out


def _linked_runs(lines: list[dict]) -> set[int]:
    """The lines of runs of consecutive linked lines (``_mark_linked``) that point to ``CONTENTS_MIN``
    places or more, each place once and in the file's order (``CONTENTS_IN_ORDER`` of them; an entry
    wrapped over two lines is one): a contents list whose entries link to their sections, with or
    without dot leaders and page numbers (OpenGD77's five pages of bullets, a product sheet's). A
    line or two linked in a paragraph ("see section 1.1") stays, and so do a schematic's net labels,
    linked to and fro between the few sheets they run on."""
    out: set[int] = set()
    for run in runs([bool(ln.get("l")) for ln in lines]):
        if places_in_order([tuple(lines[k]["l"]) for k in run]):
            out.update(run)
    return out


HEADING_MAX_WORDS = 15  # a "heading" longer than this is a statement set in large type
SENTENCE_MIN_WORDS = 6  # a "heading" this long that ends with a full stop is a sentence


def reads_as_sentence(text: str) -> bool:
    """A heading candidate that is a statement: longer than ``HEADING_MAX_WORDS`` words, or
    ``SENTENCE_MIN_WORDS`` words or more ending with a full stop (a dot leader's dots are not one).
    An author who set a warning in the heading style, or bookmarked it, still wrote a sentence:
    OpenGD77's guide has "The firmware is also NOT compatible with the new 2022 version of the
    Baofeng DM-1801, …" as its outline's one top entry, above every chapter of the guide, and the
    SKR Pico manual sets "Please refer to BTT SKR Pico V1.0-PIN.pdf for more details." in its
    headings' type. Read as headings, they head the passages below them; as statements, they say
    what they say. Words are counted by spaces, two wide characters a word."""
    text = " ".join(text.split())
    words = len(text.split()) + sum(wide(ch) for ch in text) // 2
    if words > HEADING_MAX_WORDS:
        return True
    return words >= SENTENCE_MIN_WORDS and text.endswith((".", "。")) and not text.endswith("..")


def heading_groups(lines: list[dict], heads: set[int], marked: dict[int, tuple[int, int]] | None
                   ) -> list[list[int]]:
    """A page's heading lines grouped into titles: one outline entry's lines (``marked``), else
    the lines of one size that follow each other a wrapped title's spacing apart."""
    groups: list[list[int]] = []
    for k in sorted(heads):
        prev = groups[-1][-1] if groups else None
        if prev == k - 1 and (marked[prev][1] == marked[k][1] if marked is not None
                              else title_goes_on(lines[prev], lines[k])):
            groups[-1].append(k)
        else:
            groups.append([k])
    return groups


def title_goes_on(above: dict, ln: dict) -> bool:
    """Line ``ln`` goes on with the title on the line ``above`` it: the same size, the next line
    down (``TITLE_SPACING`` of the size apart at most, as a title wrapped in print is)."""
    return round(above["s"], 1) == round(ln["s"], 1) and 0 < above["y"] - ln["y"] <= TITLE_SPACING * ln["s"]


def cells_end_wide(text: str, more: str) -> bool:
    """Whether wrapped text joins its cell with no space: a wide character on both sides."""
    return bool(text) and bool(more) and wide(text[-1]) and wide(more[0])


WRAP_SPACING = 2.0  # a cell's wrapped line: baselines this many times the type size apart at most (tables set loose)


def wrapped_cells(lines: list[dict]) -> list[dict]:
    """A page's lines with a table cell's wrapped text back in its cell: a line of one piece that
    starts on a column of the line right above (not its first), a line's spacing under it, in the
    same type, goes on with that column's cell ("Dimensions | TMC5160T Plus: 64 x 56 x 32.55mm" /
    "TMC5160T Plus(W/o case): 58 x 50 x 28mm"), so the row is one row and the table one table."""
    out: list[dict] = []
    for ln in lines:
        row = out[-1] if out else None
        if row is not None and len(row["c"]) >= 2 and not ln["c"] and ln.get("x"):
            tol = _column_tolerance(row)
            col = next((j for j, x in enumerate(row["x"]) if j > 0 and abs(ln["x"][0] - x) <= tol), None)
            if (col is not None and abs(ln["s"] - row["s"]) <= 0.05 * max(row["s"], 1.0)
                    and 0 < row["y"] - ln["y"] <= WRAP_SPACING * max(row["s"], 1.0)):
                more = ln["t"].strip()
                gap = "" if cells_end_wide(row["c"][col], more) else " "
                cells = list(row["c"])
                cells[col] = f"{cells[col]}{gap}{more}"
                ends = list(row["e"])
                ends[col] = max(ends[col], ln["e"][-1] if ln.get("e") else ends[col])
                out[-1] = {**row, "t": f"{row['t']}{gap}{more}", "c": cells, "e": ends, "y": ln["y"]}
                continue
        out.append(ln)
    return out


HEADER_LINES = 3  # a table header's cells wrap onto this many lines at most
HEADER_LEADING = 1.4  # ... set this many type sizes apart at most, the lowest within 2.5 of the first row


def stacked_headers(lines: list[dict]) -> list[dict]:
    """A page's lines with a table header whose cells wrap onto two lines or more, written cell
    after cell ("Level Entry delay (seconds)", "Max" / "latency", "Average current /" / "mA", ...
    over rows of five cells), as one line of cells over the table's first row: each piece of the
    lines right above the rows in the row's column it starts on (a piece over two columns cut at
    the space nearest the second's start), a column's pieces top first. Read line by line, such a
    header was prose and its table's rows had no labels ("5 | 4 | 1360 | 22 | 93")."""
    out = list(lines)
    k = 1
    while k + 1 < len(out):
        row, nxt = out[k], out[k + 1]
        if len(row["c"]) >= 3 and len(nxt["c"]) == len(row["c"]) and all(
                abs(a - b) <= _column_tolerance(row) for a, b in zip(row["x"], nxt["x"])):
            labels = _labels(row, [nxt]) and k + 2 < len(out) and len(out[k + 2]["c"]) == len(row["c"])
            got = _stacked_header(out, k + 1, labels=True) if labels else _stacked_header(out, k)
            if got is not None:
                first, head = got
                out[first:k + 1 if labels else k] = [head]
                k = first + 1
        k += 1
    return out


def _stacked_header(lines: list[dict], k: int, labels: bool = False) -> tuple[int, dict] | None:
    """(index of its first line, the header as one line) for the rows that start at ``k``, or None
    when the lines above them are no header of two lines or more (``stacked_headers``).
    ``labels``: the line right above the rows has a cell in every column, labels over their values
    (``_labels``): the header's last line."""
    row = lines[k]
    size, tol, starts = max(row["s"], 1.0), _column_tolerance(row), row["x"]
    taken: list[int] = []
    heights: list[float] = []
    j = k - 1
    while j >= 0:
        ln = lines[j]
        ys = sorted({*heights, ln["y"]}, reverse=True)
        if ((len(ln["c"]) >= len(row["c"]) and not (labels and j == k - 1)) or not ln.get("x") or ln["y"] <= row["y"]
                or abs(ln["s"] - row["s"]) > 0.15 * size or ln["x"][0] < starts[0] - tol
                or len(ys) > HEADER_LINES or ys[-1] - row["y"] > 2.5 * size
                or any(a - b > HEADER_LEADING * size for a, b in zip(ys, ys[1:]))):
            break
        taken.append(j)
        heights = ys
        j -= 1
    if len(heights) < 2:
        return None  # one line: the table reading's own header rule
    if j >= 0 and 0 < lines[j]["y"] - heights[0] <= HEADER_LEADING * size:
        return None  # set on with the text above it: a paragraph's lines, or rows, no header standing apart
    cols: list[list[tuple[float, float, str, float]]] = [[] for _ in starts]  # (-y, x, text, end)
    for j in taken:
        ln = lines[j]
        for text, x, e in line_pieces(ln):
            inner = sum(1 for c in starts if x + tol < c < e - tol)
            pieces = _cut_on_columns(text, x, e, ln["s"], starts, tol)
            if inner > 1 or len(pieces) != inner + 1:
                return None  # a line across the table (a paragraph, no header), or one not to be cut
            ends = [at for _t, at in pieces[1:]] + [e]
            for (t, a), b in zip(pieces, ends):
                col = next((i for i, c in enumerate(starts) if abs(a - c) <= tol), None)
                if col is None or not t or _value_like(t):
                    return None  # a piece off the columns, or a value: no header of theirs
                cols[col].append((-ln["y"], a, t, b))
    if sum(1 for c in cols if c) < 2:
        return None
    covered = {y: {i for i, c in enumerate(cols) for p in c if p[0] == -y} for y in heights}
    if any(len(covered[y]) >= len(covered[heights[-1]]) for y in heights[:-1]):
        return None  # each line across as many columns as the last: rows of their own, not one header
    kept = [i for i, c in enumerate(cols) if c]
    cells = [" ".join(t for *_, t, _e in sorted(cols[i])) for i in kept]
    head = {"t": " ".join(cells), "s": row["s"], "y": min(lines[j]["y"] for j in taken),
            "b": joined_bold([lines[j] for j in taken]),
            "c": cells if len(cells) >= 2 else [], "x": [starts[i] for i in kept],
            "e": [max(e for *_, e in cols[i]) for i in kept]}
    return min(taken), head


def _value_like(text: str) -> bool:
    """Whether a cell reads as a value, not a label: half its letters and digits or more are digits
    ("7", "0x03", "100nF/16V"), as a table's rows hold and its header's labels do not."""
    alnum = [ch for ch in text if ch.isalnum()]
    return bool(alnum) and 2 * sum(ch.isdigit() for ch in alnum) >= len(alnum)


_BROKEN = re.compile(r"(?<=[^\W\d_])[-\u00ad\u2010]$")  # a word broken at the line's end: "Verlänge-"
_FIRST_WORD = re.compile(r"[^\W\d_]+[^\s]*")


def dehyphenate(lines: list[dict]) -> list[dict]:
    """A word hyphenated over two lines of one paragraph ("Verlänge-" / "rungskabel", "config-" /
    "uration", as justified text and LaTeX set it) is one word again: the next line's first word
    joins this line, the hyphen dropped. Only where both are prose lines (no cells) of one size,
    the next a line below (within twice the type size) and starting in lower case: "Soll-" /
    "Temperatur" keeps its hyphen, a noun's compound in German. A line left empty by the move is
    dropped."""
    out = [dict(ln) for ln in lines]
    k = 0
    while k + 1 < len(out):
        a, b = out[k], out[k + 1]
        if (not a["c"] and not b["c"] and _BROKEN.search(a["t"]) and b["t"][:1].islower()
                and round(a["s"], 1) == round(b["s"], 1) and 0 < a["y"] - b["y"] <= 2 * max(a["s"], 1.0)):
            m = _FIRST_WORD.match(b["t"])
            if m:
                a["t"] = a["t"][:-1] + m.group()
                rest = b["t"][m.end():].strip()
                if rest:
                    b["t"] = rest
                else:
                    del out[k + 1]
                    continue
        k += 1
    return out


OUTLINE_MAX = 5000  # outline entries read at most (a hostile file's outline can be huge)
OUTLINE_FOUND = 0.5  # the outline is used when at least this share of its entries is found on its pages


def _key(text: str) -> str:
    """Text compared as a heading: letters and digits only, case folded ("4.3MCUPOWERJUMPER" and
    "4.3 MCU Power Jumper" are one title)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def outline_heads(pages: list[list[dict]], outline: list[list]) -> list[dict[int, tuple[int, int]]] | None:
    """Per page, {line index: (outline level, entry number)} of the lines that are the outline's
    entries, or None when the outline is missing or mostly not found (fewer than ``OUTLINE_FOUND`` of its entries
    on their pages, three at least). An entry is the first line of its page, not yet taken, that
    reads as its title, or as its start (a title wrapped over up to three lines: the lines that
    finish it are the heading's too). A line that only starts with an entry is not it: producers
    cut long entries short, and an entry that long is a paragraph styled as a heading (Word
    exports "Note: Do not alter the wiring with the power on…" to the outline), whose sentence
    stays a statement."""
    found: list[dict[int, tuple[int, int]]] = [{} for _ in pages]
    keys: dict[int, list[str]] = {}  # page -> its lines' keys, made when an entry points there
    hits = 0
    for entry, (title, level, page) in enumerate(outline):
        if not 0 <= page < len(pages):
            continue
        want = _key(title)
        if not want:
            continue
        if page not in keys:
            keys[page] = [_key(ln["t"]) for ln in pages[page]]
        line_keys, taken = keys[page], found[page]
        for k, have in enumerate(line_keys):
            if k in taken or not have:
                continue
            span = [k]
            while want.startswith(have) and have != want and len(span) < 3 and k + len(span) < len(line_keys):
                have += line_keys[k + len(span)]
                span.append(k + len(span))
            if have == want:
                taken.update({j: (int(level), entry) for j in span})
                hits += 1
                break
    if not outline or hits < max(3, OUTLINE_FOUND * len(outline)):
        return None
    return found


_CHAPTER = re.compile(r"\s*\d{1,2}\.?(?![\d.])\s*[^\W\d_]")  # "1 Introduction", "2.Wiring", not "2.1 Power"


def front_matter_levels(outline: list[list]) -> list[list]:
    """The outline with its front matter at its chapters' level: where the entries numbered as
    chapters ("1 Introduction", "2 Wiring", two at least) share one level and no entry above that
    level sits between them, the entries above it before the first chapter ("Document change
    history") are the chapters' siblings, not their parent. Word bookmarks an unnumbered heading
    style one level up from the numbered one, and read as written, every section of the manual had
    "Document change history" at the head of its heading path. A part between chapters ("Part II")
    keeps the outline as it is."""
    chapters = [i for i, (title, _level, _page) in enumerate(outline) if _CHAPTER.match(str(title))]
    levels = {int(outline[i][1]) for i in chapters}
    if len(chapters) < 2 or len(levels) != 1:
        return outline
    level, first, last = levels.pop(), chapters[0], chapters[-1]
    if any(int(e[1]) < level for e in outline[first:last + 1]):
        return outline
    return [[t, level, p] if i < first and int(lv) < level else [t, lv, p]
            for i, (t, lv, p) in enumerate(outline)]


UNLISTED_MIN = 2  # outline entries of one type that make that type a heading's at their level


def unlisted_heads(pages: list[list[dict]], marked: list[dict[int, tuple[int, int]]], body: float,
                   first_entry: int) -> None:
    """Add to the outline's headings (``marked``, in place) the lines set in the type of one level's
    entries that the outline leaves out: larger than the body, in the size and weight of
    ``UNLISTED_MIN`` or more entries that all sit at one level, read as headings by their size
    (``heading_lines``) and not as a sentence. Word leaves a heading out of the bookmarks now and then
    ("2.3 BL Touch wiring", set as 2.2 and 2.4 are, between them), and read as the outline says its
    section ran on as part of the one before. Only after the outline's first entry (a cover's
    date set in the sections' type is no heading). A title wrapped over lines is one heading;
    ``first_entry`` numbers the added ones after the outline's own entries."""
    seen: dict[tuple[float, bool], dict[int, int]] = {}  # type -> {entry: level}
    for lines, found in zip(pages, marked):
        for k, (level, entry) in found.items():
            seen.setdefault(_type(lines[k]), {})[entry] = level
    level_of = {t: next(iter(set(e.values()))) for t, e in seen.items()
                if len(e) >= UNLISTED_MIN and len(set(e.values())) == 1 and t[0] >= body * 1.15}
    entry, started = first_entry, False
    for lines, found in zip(pages, marked):
        candidates = heading_lines(lines, body)
        k = 0 if started else min(found, default=len(lines))  # none before the outline's first: a cover
        started = started or bool(found)
        while k < len(lines):
            level = level_of.get(_type(lines[k]))
            if k in found or k not in candidates or level is None:
                k += 1
                continue
            group = [k]
            while (group[-1] + 1 < len(lines) and group[-1] + 1 in candidates and group[-1] + 1 not in found
                   and title_goes_on(lines[group[-1]], lines[group[-1] + 1])):
                group.append(group[-1] + 1)
            if not reads_as_sentence(" ".join(lines[j]["t"] for j in group)):
                found.update({j: (level, entry) for j in group})
                entry += 1
            k = group[-1] + 1


def _type(ln: dict) -> tuple[float, bool]:
    """A line's type as headings are told apart by it: its size and whether it is bold."""
    return round(ln["s"], 1), ln.get("b", 0.0) >= HEADER_BOLD


def bold_subheads(pages: list[list[dict]], marked: list[dict[int, tuple[int, int]]], body: float) -> None:
    """Add to the outline's headings (``marked``, in place) the bold lines at the body's size below
    them that read as headings (``heading_lines``), one level under the outline heading above each:
    an outline often stops at a chapter's sections ("Options") while the manual heads each setting
    in it in bold ("Batt Cal", "Eco Level"); read as one section, a warning at its head travelled
    with every answer from any of its settings. A bold title wrapped onto the next line is one
    heading; the last lines of a bold statement are none. Only where a paragraph follows it, in
    plain type and starting where it starts (not a table's header over its rows, nor a drawing's
    labels), and not a line ending in a colon ("Notes:"): it announces what follows, in the section
    it is in."""
    level, entry = 0, -1
    for lines, found in zip(pages, marked):
        candidates = heading_lines(lines, body, True)

        def bold_line(k: int) -> bool:
            ln = lines[k]
            return (k in candidates and k not in found and ln["s"] < body * 1.15 and ln.get("b", 0.0) >= HEADER_BOLD
                    and not reads_as_sentence(ln["t"]))

        k = 0
        while k < len(lines):
            if k in found:
                level = found[k][0]
            above = lines[k - 1] if k else None
            if not (level and bold_line(k)) or (above is not None and above.get("b", 0.0) >= HEADER_BOLD
                                                and title_goes_on(above, lines[k])):
                k += 1  # not a heading, or the end of a bold statement the line above starts
                continue
            group = [k]
            while group[-1] + 1 < len(lines) and bold_line(group[-1] + 1) and title_goes_on(lines[group[-1]],
                                                                                         lines[group[-1] + 1]):
                group.append(group[-1] + 1)
            last, after = lines[group[-1]], group[-1] + 1
            nxt = lines[after] if after < len(lines) else None
            if (nxt is not None and not last["t"].rstrip().endswith((":", "：")) and not nxt["c"]
                    and nxt.get("b", 0.0) < HEADER_BOLD and nxt.get("x") and lines[k].get("x")
                    and abs(nxt["x"][0] - lines[k]["x"][0]) <= max(nxt["s"], 1.0)
                    and 0 < last["y"] - nxt["y"] <= 2.5 * max(nxt["s"], 1.0)):
                found.update({j: (min(level + 1, 6), entry) for j in group})
                entry -= 1  # an entry number no outline entry has: the group's lines are one title
            k = after


SAME_LEVEL = 0.95  # heading sizes within 5 % of a level's largest are that level (21.96 and 21.48 pt)


def heading_levels(sizes: list[float]) -> dict[float, int]:
    """Heading font sizes (largest first) -> levels 1..6: a size below ``SAME_LEVEL`` of the
    largest size of the level above starts the next level, so the few tenths of a point a
    document's headings of one rank differ by do not nest one under the other."""
    out: dict[float, int] = {}
    level, top = 0, 0.0
    for size in sizes:
        if not level or size < top * SAME_LEVEL:
            level, top = level + 1, size
        out[size] = min(6, level)
    return out


class _PageWriter:
    """Pages, one after the other, into one text (pages apart by a blank line, one line per PDF
    line, table rows as ``cell | cell``) and its blocks: headings by font size (a heading that
    numbers on from an earlier one, "V." after "IV.", takes that one's level: engine.lang.outline),
    table rows with their header row, paragraphs cut where the vertical gap between lines grows."""

    def __init__(self, body: float, level_of: dict[float, int]):
        self.body, self.level_of = body, level_of
        self.outline = Outline()
        self.parts: list[str] = []
        self.size = 0
        self.page_starts: list[int] = []
        self.b = BlockBuilder()
        self.line_no = 0
        # what the last page left open for the next: a paragraph whose sentence runs on (its
        # (start, end, line) entries, its page, its last line), a table whose rows may go on (its
        # group, its header row's text, its columns: ``_columns``)
        self.para: tuple[list[tuple[int, int, int]], int, dict] | None = None
        self.table: tuple[int, str, dict] | None = None
        # a line of labels that ended the page, held: the header of a table the next page begins?
        # ((start, end, line) of its text, its page, the line)
        self.head: tuple[tuple[int, int, int], int, dict] | None = None

    def finish(self) -> None:
        """Close a paragraph the last page left open."""
        if self.para is not None:
            entries, pno, _last = self.para
            self._paragraph(entries, pno)
            self.para = None

    def _paragraph(self, entries: Sequence[tuple[int, int, int]], pno: int) -> None:
        """A paragraph block over its lines' (start, end, line) entries."""
        self.b.add("paragraph", entries[0][0], entries[-1][1], entries[0][2], entries[-1][2], page=pno)

    def _append(self, piece: str) -> None:
        self.parts.append(piece)
        self.size += len(piece)

    def _rewrite_last(self, piece: str) -> str:
        """The last piece written (a page's last line, nothing after it yet) written as ``piece``."""
        self.size += len(piece) - len(self.parts[-1])
        self.parts[-1] = piece
        return piece

    def page(self, pno: int, lines: list[dict], heads: set[int],
             levels: dict[int, tuple[int, int]] | None = None) -> None:
        """One page's lines; ``heads``: the indices of its heading lines (``heading_lines``);
        ``levels``: their (level, outline entry) when the PDF's outline gives them (``outline_heads``)."""
        b = self.b
        placed: dict[int, list[str]] = {}  # rows with empty cells: their cells in the table's columns
        held = self.head
        self.head = None
        if held is not None and lines and _heads_columns(held[2], lines[0], apart=False):
            rows = _table_runs(lines, _columns([lines[0]]), placed)  # the page opens with the held header's rows
            table_group, header = b.new_group(), self._rewrite_last(" | ".join(held[2]["c"]))
            (start, _end, line), hpno, _ln = held
            b.add("table_row", start, start + len(header), line, line, page=hpno, group=table_group)
        else:
            if held is not None:  # no table under it: the paragraph it is
                self._paragraph([held[0]], held[1])
            rows = _table_runs(lines, self.table[2] if self.table is not None else None, placed)
            table_group, header = self.table[:2] if self.table is not None and rows.get(0) == "row" else (-1, "")
        if header and " | ".join(lines[0]["c"]) == header:
            rows[0] = "header"  # the header repeated on the new page
        para: list[tuple[int, int, int]] = []  # (start, end, line) of the open paragraph
        para_page = pno
        if self.para is not None and lines and 0 not in rows and 0 not in heads and runs_on(self.para[2], lines[0]):
            para, para_page, _last = self.para  # the sentence goes on over the page break
        else:
            self.finish()
        self.para = self.table = None
        if pno > 1:
            self._append("\n" if para else "\n\n")
            self.line_no += 0 if para else 1
        self.page_starts.append(self.size)
        prev_y: float | None = None
        gap = _typical_gap(lines)

        def flush() -> None:
            if para:
                self._paragraph(para, para_page)
                para.clear()

        def wrapped(k: int) -> bool:
            """Line ``k`` goes on with a heading on the line right above it (``title_goes_on``)."""
            if k - 1 not in heads:
                return False
            if levels is not None:  # the outline said which lines one entry's title takes
                return levels[k - 1][1] == levels[k][1] and bool(b.blocks) and b.blocks[-1].kind == "heading"
            return bool(b.blocks) and b.blocks[-1].kind == "heading" and title_goes_on(lines[k - 1], lines[k])

        for k, ln in enumerate(lines):
            cells = (_header_cells(ln, lines[k + 1]) if rows.get(k) == "header" and k + 1 in rows
                     else placed.get(k, ln["c"]))
            while cells and not cells[-1]:  # no empty cell at the end
                cells = cells[:-1]
            body_text = " | ".join(cells) if k in rows else ln["t"].strip()
            if k > 0:
                self._append("\n")
            self.line_no += 1
            start, line_no = self.size, self.line_no
            self._append(body_text)
            if not body_text:
                flush()
                prev_y = None
                continue
            if k in rows:
                flush()
                if rows[k] == "header":
                    table_group, header = b.new_group(), body_text
                    b.add("table_row", start, self.size, line_no, line_no, page=pno, group=table_group)
                else:
                    if k - 1 not in rows and not (k == 0 and table_group >= 0):  # a table with no header row
                        table_group, header = b.new_group(), ""
                    b.add("table_row", start, self.size, line_no, line_no, page=pno, context=header,
                          group=table_group)
            elif k in heads:
                flush()
                if wrapped(k):  # the title goes on over this line
                    b.continue_heading(body_text, self.size, line_no)
                else:
                    level = (levels[k][0] if levels is not None
                             else self.outline.level(body_text, self.level_of[round(ln["s"], 1)]))
                    b.heading(level, body_text, start, self.size, line_no, line_no, page=pno)
            else:
                if prev_y is not None and gap and abs(prev_y - ln["y"]) > 1.6 * gap:
                    flush()
                para.append((start, self.size, line_no))
            prev_y = ln["y"]
        last = len(lines) - 1
        if (len(para) == 1 and para[-1][2] == self.line_no and len(lines[last]["c"]) >= 2  # a line alone
                and not _has_digit(lines[last])):
            self.head = (para.pop(), pno, lines[last])  # labels at the page's foot: the next page may tell
        if para and para[-1][2] == self.line_no and unfinished(lines[last]["t"]):
            self.para = (list(para), para_page, lines[last])  # kept open: the next page may go on with it
        else:
            flush()
        if rows.get(last) == "row":
            first = last
            while first - 1 in rows and rows[first] == "row":
                first -= 1
            self.table = (table_group, header, _columns(lines[first:last + 1]))


FURNITURE_BAND = 3  # baselines at the top and at the bottom of a page where running headers and footers sit


def page_furniture(pages: list[list[dict]]) -> list[set[int]]:
    """Per page, the indices of the lines that repeat a running header or footer.

    A line is furniture when it sits on one of the ``FURNITURE_BAND`` highest or lowest baselines of
    its page (a footer of three lines, two of them side by side, is all in the band), is not part
    of a table, and says the same thing (digits masked: page numbers, "3 / 40")
    in that band on at least half of the pages (three at least: two pages cannot tell). Its first
    appearance stays (a title on page 1 is still the title); the repeats are returned. A line whose
    digits change from page to page is a page counter ("Page 1 of 27", "2 / 19"): every appearance
    goes, the first too."""
    if len(pages) < 3:
        return [set() for _ in pages]
    bands: list[dict[int, str]] = []
    counts: Counter[str] = Counter()
    said: dict[str, set[str]] = {}  # key -> the texts it stood for
    for lines in pages:
        heights = sorted({ln["y"] for ln in lines})
        edge = {*heights[:FURNITURE_BAND], *heights[-FURNITURE_BAND:]}
        table = _table_runs(lines)
        band = {k: _furniture_key(ln["t"]) for k, ln in enumerate(lines) if ln["y"] in edge and k not in table}
        bands.append({k: v for k, v in band.items() if v})
        counts.update(set(bands[-1].values()))
        for k, v in bands[-1].items():
            said.setdefault(v, set()).add(lines[k]["t"].strip())
    running = {v for v, c in counts.items() if c >= max(3, math.ceil(len(pages) / 2))}
    seen = {v for v in running if len(said[v]) > 1}  # counters: no first appearance to keep
    out: list[set[int]] = []
    for band in bands:
        drop = set()
        for k, v in sorted(band.items()):
            if v in running:
                (drop.add(k) if v in seen else seen.add(v))
        out.append(drop)
    return out


def _furniture_key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.strip().casefold()))


TITLE_SPACING = 1.5  # a title wrapped over two lines: baselines this many times the font size apart at most
PROSE_RUN = 3  # consecutive lines of one size, a line apart: a paragraph, however large its type
PROSE_SPACING = 2.5  # "a line apart": baselines this many times the font size apart at most (double spacing)
_SENTENCE_END = ("。", "；", "，", ";", ",")


BODY_BOLD_MAX = 0.2  # the share of the body size's text set bold below which a bold line stands out


def bold_marks_headings(pages: list[list[dict]], body: float) -> bool:
    """Whether a bold line at the body's size can be a heading: the body text is seldom bold
    (under ``BODY_BOLD_MAX`` of its characters). A manual a word processor exported without
    bookmarks often sets its headings bold at the body's size ("Hardware Overview", "Power
    Supply" in the GE3222M energy monitor's), and type size alone finds none of them."""
    chars = bold = 0.0
    for lines in pages:
        for ln in lines:
            if round(ln["s"], 1) == body:
                chars += len(ln["t"])
                bold += len(ln["t"]) * ln.get("b", 0.0)
    return chars > 0 and bold / chars < BODY_BOLD_MAX


def heading_lines(lines: list[dict], body: float, bold: bool = False) -> set[int]:
    """The indices of a page's heading lines: set larger than the body text, or in bold at its
    size when ``bold`` (``_is_heading_line``), not in a run of ``PROSE_RUN`` or more such lines of
    one size a line apart (a paragraph set large or bold, as a cover page's or an introduction's
    is; a title wrapped over two lines stays a title), and not ending a clause ("…主板。", "…损失；")."""
    big = [_is_heading_line(ln, body, bold) for ln in lines]
    out: set[int] = set()
    k = 0
    while k < len(lines):
        j = k
        while (big[k] and j + 1 < len(lines) and big[j + 1] and round(lines[j + 1]["s"], 1) == round(lines[k]["s"], 1)
               and 0 < lines[j]["y"] - lines[j + 1]["y"] <= PROSE_SPACING * lines[k]["s"]):
            j += 1
        if big[k] and j - k + 1 < PROSE_RUN:
            out.update(range(k, j + 1))
        k = j + 1
    return {k for k in out if not lines[k]["t"].rstrip().endswith(_SENTENCE_END)}


BOLD_HEADING_MAX_WORDS = 8  # a bold line at the body's size longer than this is emphasis, not a heading


def _is_heading_line(ln: dict, body: float, bold: bool = False) -> bool:
    t = ln["t"].strip()
    if not (0 < len(t) <= 120 and not ln["c"] and re.search(r"[^\W\d_]", t)):
        return False
    if ln["s"] >= body * 1.15:
        return True
    # bold at the body's size is weaker evidence: a short line that is no sentence, aside or command
    return (bold and ln["s"] >= body * SAME_LEVEL and ln.get("b", 0.0) >= HEADER_BOLD
            and len(t.split()) <= BOLD_HEADING_MAX_WORDS and not t.startswith("(")
            and not t.rstrip(")").endswith((".", "!", "。", "！")) and not reads_as_command(t))


def reads_as_command(text: str) -> bool:
    """A line set in bold as a command to type, not a heading: it opens with a lower-case Latin
    letter ("make menuconfig", "ls /dev/serial/by-id/"), holds an assignment or a home path
    ("FLASH_DEVICE=...", "cd ~/klipper/"), or has no word of letters at all
    ("Klipper_rp2040_4550357128922FC8-if00")."""
    first = next((ch for ch in text if ch.isalpha()), "")
    return ((first.islower() and first.isascii()) or "=" in text or "~" in text
            or not any(re.fullmatch(r"\W*[^\W\d_]{2,}\W*", w) for w in text.split()))


def _typical_gap(lines: list[dict]) -> float:
    gaps = sorted(abs(a["y"] - b["y"]) for a, b in zip(lines, lines[1:]) if a["y"] != b["y"])
    return gaps[len(gaps) // 2] if gaps else 0.0


def _table_runs(lines: list[dict], carried: dict | None = None,
                placed: dict[int, list[str]] | None = None) -> dict[int, str]:
    """Line index -> "header"/"row" for runs of >= 2 lines with the same number (>= 2) of cells; the
    line right above a run is its header when its cells start on the run's columns, however many of
    its cells ran together (a bold header set tighter than the rows: ``_header_cells``); else the
    run's first line when it reads as labels over values (``_labels``); else the run has none.

    A row with an empty cell has a cell fewer (nothing is drawn there): lines of fewer cells go on
    with a run when each of their cells sits in a column of its full lines, one under the other (a
    line apart at most), the first on the first column; ``placed`` receives their cells in those
    columns, "" where empty.

    ``carried``: the columns of a table that ended the page before (``_columns``). Lines at the top
    of this page whose cells sit in them, the first on its first column, are more of its rows (one
    alone included): the table goes on over the page break under the header it had."""
    out: dict[int, str] = {}
    placed = {} if placed is None else placed
    k = 0
    if carried is not None:
        while k < len(lines) and (cells := _in_columns(lines[k], carried)) is not None:
            out[k] = "row"
            if cells != lines[k]["c"]:
                placed[k] = cells
            k += 1
    while k < len(lines):
        n = len(lines[k]["c"])
        m = k
        while n >= 2 and m + 1 < len(lines) and len(lines[m + 1]["c"]) == n:
            m += 1
        if n >= 2:
            m = _with_empty_cells(lines, k, m, placed)
        if n >= 2 and m > k:
            if k > 0 and k - 1 not in out and _heads_columns(lines[k - 1], lines[k]):
                out[k - 1] = "header"
            elif _labels(lines[k], lines[k + 1:m + 1]):
                out[k] = "header"
            out.update({j: "row" for j in range(k, m + 1) if j not in out})
        k = m + 1
    return out


def _with_empty_cells(lines: list[dict], k: int, m: int, placed: dict[int, list[str]]) -> int:
    """The end of the run that starts at ``k`` (``m`` with equal counts only) when lines of fewer
    cells, or more, go on with it (``_table_runs``); their cells in the columns go to ``placed``.
    One pass: each next line must sit in the columns so far, or the lines so far in its own."""
    run = [lines[k]]
    cols = _columns(run)
    while (k + len(run) < len(lines) and len((nxt := lines[k + len(run)])["c"]) >= 2
           and abs(nxt["x"][0] - lines[k]["x"][0]) <= _column_tolerance(lines[k])
           and 0 < run[-1]["y"] - nxt["y"] <= 2.5 * max(run[-1]["s"], 1.0)):
        if len(nxt["c"]) > len(cols["c"]):  # more columns than so far: the lines so far must sit in them
            wider = _columns([*run, nxt])
            if any(_in_columns(ln, wider) is None for ln in run):
                break
            cols = wider
        elif _in_columns(nxt, cols) is None:
            break
        elif len(nxt["c"]) == len(cols["c"]):  # a full line: the columns as wide as it
            cols = {**cols, "x": [min(a, b) for a, b in zip(cols["x"], nxt["x"])],
                    "e": [max(a, b) for a, b in zip(cols["e"], nxt["e"])], "s": max(cols["s"], nxt["s"])}
        run.append(nxt)
    j = k + len(run) - 1
    if j <= m:
        return m
    cells = [_in_columns(ln, cols) for ln in run]
    if any(c is None for c in cells):
        return m
    placed.update({k + i: c for i, c in enumerate(cells) if c is not None and c != run[i]["c"]})
    return j


def _columns(run: list[dict]) -> dict:
    """A table's columns as a line of empty cells: where its lines of the most cells start and end."""
    most = max(len(r["c"]) for r in run)
    full = [ln for ln in run if len(ln["c"]) == most]
    return {"c": [""] * len(full[0]["c"]), "x": [min(col) for col in zip(*(ln["x"] for ln in full))],
            "e": [max(col) for col in zip(*(ln["e"] for ln in full))], "s": max(ln["s"] for ln in full)}


def _in_columns(ln: dict, cols: dict) -> list[str] | None:
    """``ln``'s cells in the table's columns ``cols`` ("" where it has none), or None when it is no
    row of it: fewer than two cells, or more than the columns, the first not on the first column,
    or a cell whose middle is in no column to the right of the last one's."""
    tol = _column_tolerance(cols)
    if not 2 <= len(ln["c"]) <= len(cols["c"]) or abs(ln["x"][0] - cols["x"][0]) > tol:
        return None
    out = [""] * len(cols["c"])
    j = 0
    for text, x, e in zip(ln["c"], ln["x"], ln["e"]):
        mid = (x + e) / 2
        while j < len(out) and not cols["x"][j] - tol <= mid <= cols["e"][j] + tol:
            j += 1
        if j == len(out):
            return None
        out[j] = text
        j += 1
    return out


HEADER_BOLD = 0.8  # share of a line's characters set in a bold face that makes it a bold line


def _labels(first: dict, rows: list[dict]) -> bool:
    """Whether a table's first line is its header row, not its first row: set in bold over rows
    none of which is ("Parameter | Value"); or, in three columns or more, no digit in its cells
    while the rows below hold some ("Fastener | Size | Torque (Nm)" over "Casing bolts | M12 | 55").
    Else two columns are read as name and value ("Input Voltage | 8V-60V", "Model | BTT Eddy", its
    names in bold or not): a row taken for a header would be lost as a statement and give every
    other row its words as labels."""
    if first.get("b", 0.0) >= HEADER_BOLD and all(r.get("b", 0.0) < HEADER_BOLD for r in rows):
        return True
    return len(first["c"]) >= 3 and not _has_digit(first) and any(_has_digit(r) for r in rows)


def _has_digit(ln: dict) -> bool:
    """Whether a line's cells hold a digit (values do; a header's labels mostly do not)."""
    return any(ch.isdigit() for c in ln["c"] for ch in c)


_RUNS_ON = re.compile(r"[^\W_]$|[,\-\u2010\u2013/(]$")  # a line ending in a word, a comma, a dash, "/", "("


def unfinished(text: str) -> bool:
    """Whether a paragraph's last line on a page leaves its sentence open (no stop, colon or
    semicolon at its end: a word, a comma, a dash)."""
    return bool(_RUNS_ON.search(text.rstrip()))


def runs_on(last: dict, first: dict) -> bool:
    """Whether a page's first line ``first`` goes on with the sentence the last page's line ``last``
    left open (``unfinished``): type of the same size, and a word in lower case, or, where a side is
    wide (Chinese, Japanese: scripts with no case), a letter or a digit that starts no numbered item
    ("此命令基于" / "300x300mm 的打印机", "复制到 SD" / "卡中")."""
    a, b = last["t"].rstrip(), first["t"].lstrip()
    if not a or not b or abs(last["s"] - first["s"]) > 0.05 * max(last["s"], 1.0):
        return False
    if b[0].islower():
        return True
    return ((wide(a[-1]) or wide(b[0])) and unicodedata.category(b[0])[0] in "LN"
            and not _NUMBERED.match(b))


_NUMBERED = re.compile(r"\(?\d{1,3}[.)、．）]")  # "1.", "2)", "3、", "(4)"


def _column_tolerance(row: dict) -> float:
    """How far a cell may start from a column of ``row`` and still be in it: 0.6 of its type size."""
    return 0.6 * max(row["s"], 1.0)


def _heads_columns(head: dict, row: dict, apart: bool = True) -> bool:
    """Whether ``head`` reads as the header of the table whose first row is ``row``: the line right
    above it (within two and a half lines), of fewer cells, each starting on one of the row's
    columns, the first on the first. ``apart=False``: ``head`` ended the page before (no distance to
    measure), and it may have as many cells as the row."""
    tol = _column_tolerance(row)
    if apart and not (len(head["c"]) < len(row["c"]) and 0 < head["y"] - row["y"] <= 2.5 * max(row["s"], 1.0)):
        return False
    if not 2 <= len(head["c"]) <= len(row["c"]):
        return False
    return (abs(head["x"][0] - row["x"][0]) <= tol
            and all(any(abs(x - c) <= tol for c in row["x"]) for x in head["x"]))


def _header_cells(head: dict, row: dict) -> list[str]:
    """``head``'s cells cut on ``row``'s columns: a cell that runs over a column start is split at
    the space whose estimated position (``_advance``) is nearest to it. ``head["c"]`` as it is when
    the cut does not give one cell a column."""
    tol = _column_tolerance(row)
    out: list[str] = []
    for text, x, e in zip(head["c"], head["x"], head["e"]):
        out += [piece for piece, _at in _cut_on_columns(text, x, e, head["s"], row["x"], tol)]
    return out if len(out) == len(row["c"]) and all(out) else list(head["c"])


def _cut_on_columns(text: str, x: float, e: float, size: float, starts: Sequence[float],
                    tol: float) -> list[tuple[str, float]]:
    """``text``, set from ``x`` to ``e``, cut at each column start of ``starts`` inside it, at the
    space whose estimated position (``_advance``) is nearest to it: (piece, where it starts: ``x``,
    then the column start it was cut at). Fewer pieces than columns inside it when a piece has no
    space left to cut at (its rest stays whole)."""
    out: list[tuple[str, float]] = []
    at = start = x
    for c in [c for c in starts if x + tol < c < e - tol]:
        spaces = [i for i, ch in enumerate(text) if ch == " "]
        if not spaces:
            break
        cut = min(spaces, key=lambda i: abs(at + _advance(text[:i + 1], size) - c))
        out.append((text[:cut].strip(), start))
        text, at, start = text[cut + 1:], at + _advance(text[:cut + 1], size), c
    out.append((text.strip(), start))
    return out


# --- child side ----------------------------------------------------------------

def extract(path: str) -> dict:
    """Lines of every page in reading order (``_lines``, ``reading_order``)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            return {"error": "encrypted PDF (a password is needed): skipped"}
        info = reader.metadata
        title = str(info.title) if info and info.title else ""
        pages = []
        # id(font dict) -> (the dict, kept alive; its widths; whether it is a bold face)
        widths: dict[int, tuple[object, Widths | None, bool]] = {}
        where = _destinations(reader)
        for page in reader.pages:
            runs: list[Run] = []  # text, x, y, size, the font's widths, bold

            def visit(text: str, cm: list[float], tm: list[float], font: object, fs: float) -> None:
                if not text:
                    return
                m = matrix_product(tm, cm) if cm else list(tm)
                scale = math.hypot(m[0], m[1]) or 1.0
                if id(font) not in widths:
                    widths[id(font)] = (font, _font_widths(font), _bold(font))
                _font, em, bold = widths[id(font)]
                runs.append((text, m[4], m[5], float(fs or 0) * scale, em, bold))

            split_wide_moves(page)  # a table row set as one TJ array: its cells as runs at their x
            page.extract_text(visitor_text=visit)
            rules = page_rules(page)  # a drawn table's rules: its cells apart, its wrapped cells in their rows
            lines = ruled_rows(_lines(runs, rules[1]), rules)
            pages.append(_mark_linked(lines, _internal_links(page, where)))
        outline = _outline(reader)
    except MemoryError:
        raise  # the parent reports it with the configured limit
    except PdfReadError as e:
        return {"error": f"malformed or truncated PDF: {_short(e)}"}
    except Exception as e:  # pypdf raises many kinds on hostile input; the file is skipped, not the run
        return {"error": f"unreadable PDF ({type(e).__name__}: {_short(e)})"}
    return {"info": {"title": title}, "pages": pages, "outline": outline}


LINKS_MAX = 5000  # annotations read per page at most (a hostile file's can be many)
LINKED = 0.5  # the share of a line's width under a link into the same file that makes it a linked line
Rect = tuple[float, float, float, float]


def _destinations(reader: object) -> Callable[[object], tuple[int, float] | None]:
    """Where an annotation's link goes in the same file: (page index, minus its top), in reading
    order; None for a link elsewhere (a web address, another file) or one that cannot be read."""
    try:
        page_of = {p.indirect_reference.idnum: i for i, p in enumerate(reader.pages)  # type: ignore[attr-defined]
                   if p.indirect_reference is not None}
    except Exception:  # noqa: BLE001 - pages the reader cannot list: no link by page is followed
        page_of = {}

    @functools.cache
    def named() -> dict:  # the file's named destinations, read at the first link that names one
        try:
            return reader.named_destinations  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - an unreadable name tree: no named link is followed
            return {}

    def where(annot: object) -> tuple[int, float] | None:
        try:
            d = annot.get("/Dest")  # type: ignore[attr-defined]
            if d is None:
                action = annot.get("/A")  # type: ignore[attr-defined]
                action = action.get_object() if action is not None else None
                if action is None or action.get("/S") != "/GoTo":
                    return None
                d = action.get("/D")
            d = d.get_object() if hasattr(d, "get_object") else d
            if isinstance(d, str):  # a named destination
                dest = named().get(str(d))
                if dest is None:
                    return None
                return reader.get_destination_page_number(dest), -float(dest.top or 0)  # type: ignore[attr-defined]
            top = d[3] if len(d) > 3 and d[1] == "/XYZ" else None
            page = page_of.get(d[0].idnum) if hasattr(d[0], "idnum") else None
            return None if page is None else (page, -float(top or 0))
        except Exception:  # noqa: BLE001 - pypdf raises many kinds on hostile input: that link only
            return None

    return where


def _internal_links(page: object, where: Callable[[object], tuple[int, float] | None]
                    ) -> list[tuple[Rect, tuple[int, float]]]:
    """A page's links to places in the same file, rectangle and destination: what a contents list's
    entries and an index's page numbers are. A malformed annotation is passed over."""
    links = []
    try:
        annots = list(page.get("/Annots") or [])[:LINKS_MAX]  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a malformed annotation array costs this rule, never the page
        return []
    for ref in annots:
        try:
            a = ref.get_object()
            if a.get("/Subtype") != "/Link" or (dest := where(a)) is None:
                continue
            x0, y0, x1, y1 = (float(v) for v in a["/Rect"])
        except Exception:  # noqa: BLE001 - pypdf raises many kinds on hostile input
            continue
        links.append(((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)), dest))
    return links


def _mark_linked(lines: list[dict], links: list[tuple[Rect, tuple[int, float]]]) -> list[dict]:
    """Gives each line whose width lies ``LINKED`` or more under one link into the file, its baseline
    inside the link's height (a descender's worth below allowed), that link's destination (``"l"``)."""
    for ln in lines if links else ():
        if not ln.get("x"):
            continue
        x0, x1 = min(ln["x"]), max(ln["e"])
        for (a, b, c, d), dest in links:
            if b - 0.3 * ln["s"] <= ln["y"] <= d and min(x1, c) - max(x0, a) >= LINKED * max(x1 - x0, 1.0):
                ln["l"] = list(dest)
                break
    return lines


def _outline(reader: object) -> list[list]:
    """The outline's entries in order: [title, level (1 = top), page index]; [] when there is none
    or it cannot be read (a malformed outline costs the headings' source, never the file)."""
    out: list[list] = []

    def walk(items: list, level: int) -> None:
        for item in items:
            if len(out) >= OUTLINE_MAX:
                return
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - an entry pointing nowhere readable: that entry only
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            if title and page is not None and page >= 0:
                out.append([title, min(level, 6), page])

    try:
        walk(list(reader.outline), 1)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - pypdf raises many kinds on a hostile outline
        return []
    return out


def _lines(runs: Sequence[Run], walls: Sequence[tuple[float, float, float]] = ()) -> list[dict]:
    """Text runs -> lines: text, size, baseline y, cells (when the line has column gaps, or a
    vertical rule of the page, ``walls``: (x, y0, y1), stands between two runs) and each segment's x
    extent (``x`` starts, ``e`` ends, measured or estimated), in the order pypdf gave them. A run is
    (text, x, y, size) or (text, x, y, size, its font's widths or None)."""
    lines: list[dict] = []
    cur: list[Run] = []
    walls = sorted(walls)
    wall_x = [w[0] for w in walls]

    def close() -> None:
        if not cur:
            return
        pieces: list[str] = []
        sized = [r for r in cur if r[0].strip()]
        size = max((r[3] for r in sized), default=0.0)
        y = sized[0][2] if sized else 0.0
        cells: list[str] = []
        starts: list[float] = []
        ends: list[float] = []
        prev: tuple[Run, float, bool] | None = None  # the last run with text, where it ends, measured or not
        blank = False  # a run of spaces since the last run with text: a space inside a cell too
        for r in cur:
            if not r[0].strip():
                pieces.append(r[0])
                blank = True
                continue
            start_new = prev is None or r[1] - prev[1] > 1.2 * max(r[3], 1.0) or _walled(wall_x, walls, prev[1], r)
            piece = (" " if prev is not None and _spaced(prev, r, _last_char(pieces)) else "") + r[0]
            pieces.append(piece)
            if start_new:
                cells.append(r[0].lstrip())  # its trailing space parts it from the next run
                starts.append(r[1])
                ends.append(r[1])
            else:
                spaced = blank and not piece[:1].isspace() and not cells[-1][-1:].isspace()
                joined = cells[-1] + (" " if spaced else "") + piece
                cells[-1] = joined.strip() if r[0].startswith(" ") else joined
            blank = False
            width = _measured(r, r[0])
            prev = (r, r[1] + (width if width is not None else _advance(r[0], r[3])), width is not None)
            ends[-1] = max(ends[-1], prev[1])
        text = "".join(pieces)
        if len(cells) >= 2 and _is_bullet(cells[0]):  # a bullet set apart from its item: no cell of a table
            text = "• " + text.strip()[len(cells[0]):].strip()
            cells, starts, ends = cells[1:], starts[1:], ends[1:]
        chars = sum(len(r[0].strip()) for r in sized)
        bold = sum(len(r[0].strip()) for r in sized if len(r) > 5 and r[5])
        lines.append({"t": text.strip(), "s": round(size, 2), "y": round(y, 2), "b": round(bold / max(chars, 1), 2),
                      "c": [" ".join(c.split()) for c in cells] if len(cells) >= 2 else [],
                      "x": [round(v, 1) for v in starts], "e": [round(v, 1) for v in ends]})
        cur.clear()

    broken = False  # a line break since the last text: a line ends there unless the next run goes on it
    spaces: list[Run] = []  # blank runs after a break, kept if the line goes on
    for r in runs:
        parts = r[0].split("\n")
        for j, part in enumerate(parts):
            if j > 0:
                if parts[j - 1]:  # a break inside a run's own text: its next part has no position
                    close()
                broken = True
            if not part:
                continue
            if broken and not part.strip():
                spaces.append((part, r[1], r[2], r[3]))
                continue
            if broken:
                if not _goes_on(cur, r):
                    close()
                    spaces.clear()
                cur.extend(spaces)
                spaces.clear()
                broken = False
            cur.append((part, *r[1:]))
    close()
    return reading_order([ln for ln in lines if ln["t"]])


def _walled(wall_x: list[float], walls: Sequence[tuple[float, float, float]], end: float, run: Run) -> bool:
    """Whether a vertical rule (``walls``, sorted by x) stands between a run's start and the end of
    the run before it, at its height."""
    i = bisect.bisect_left(wall_x, end - 1.0)
    while i < len(walls) and walls[i][0] <= run[1] + 1.0:
        if walls[i][1] <= run[2] <= walls[i][2]:
            return True
        i += 1
    return False


_BULLETS = frozenset("•●▪■◆◦○□➢➤►▶✓✔-–*·")


def _is_bullet(cell: str) -> bool:
    """A cell that is a list's bullet: one such mark, or an icon font's glyph (private use area)."""
    return len(cell) == 1 and (cell in _BULLETS or unicodedata.category(cell) == "Co")


def _goes_on(cur: list[Run], run: Run) -> bool:
    """Whether ``run`` continues the open line across a break pypdf reported: it sits on the line's
    baseline (within half the font size) to the right of its last run. pypdf reports a break at
    every text-positioning operator that moves to a "next line" (``TD``, ``T*``), and a page set
    by a design program places each fragment of a line that way ("P" + "rint surface", "N" +
    "ozzle"); the fragments carry their own spaces."""
    sized = [r for r in cur if r[0].strip()]
    if not sized or not run[0].strip():
        return False
    last = sized[-1]
    return abs(run[2] - last[2]) <= 0.5 * max(run[3], last[3], 1.0) and run[1] > last[1]


# A glyph's advance is not reported by the visitor: half the font size per character is the
# estimate (Latin text averages 0.45-0.55 em), a whole one for a wide character (Chinese, Japanese,
# Korean, full-width forms: 1 em), used only to tell where a text run ends.
_EM_SHARE = 0.5


def _advance(text: str, size: float) -> float:
    """The estimated width of ``text`` set at ``size``."""
    return size * sum(1.0 if wide(ch) else _EM_SHARE for ch in text)


# A run's text -> its width in em by its font's glyph widths; None when a character has none
Widths = Callable[[str], "float | None"]
Run = tuple  # (text, x, y, size), (text, x, y, size, Widths | None) or (…, Widths | None, bold)
_BOLD_FACE = re.compile(r"bold|black|heavy|demi", re.IGNORECASE)  # "Arial-BoldMT", "Helvetica-Bold", "Arial,Bold"


def _bold(font: object) -> bool:
    """Whether a pypdf font resource is a bold face, by its name (/BaseFont), as PDF readers tell."""
    try:
        name = font.get("/BaseFont", "")  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not a font dictionary: no weight to tell
        return False
    return bool(_BOLD_FACE.search(str(name)))


WORD_GAP = 0.15  # em: a space between two runs of a line. Measured on real manuals set word by word
# (a 28-page board manual, 1,422 run pairs): runs of one word sit within 0.05 em of each other,
# words a space apart 0.25-0.35 em (justified lines more); kerning stays under 0.1 em


def _font_widths(font: object) -> Widths | None:
    """The glyph widths of a pypdf font resource, as a function of decoded text; None when pypdf
    cannot read them (a Type 3 font's glyphs are in their own units, left out)."""
    try:
        from pypdf.generic._font import Font  # pypdf's own reading of /Widths, /W and the 14 core fonts
    except ImportError:  # an older pypdf: estimates only
        return None
    try:
        f = Font.from_font_resource(font)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a font pypdf cannot read: estimates
        return None
    if f.sub_type == "Type3":
        return None
    glyphs = dict(f.character_widths)
    default = default_width(font) if f.sub_type == "Type0" else None
    code_of: dict[str, str] = {}  # decoded character -> the code its width is kept under
    for code, ch in (f.character_map or {}).items():
        if isinstance(ch, str) and len(ch) == 1 and isinstance(code, str):
            code_of.setdefault(ch, code)
    if isinstance(f.encoding, dict):
        for code, ch in f.encoding.items():
            if isinstance(ch, str) and len(ch) == 1 and isinstance(code, int):
                code_of.setdefault(ch, chr(code))

    def em(text: str) -> float | None:
        total = 0.0
        for ch in text:
            if ch.isspace() and ch not in code_of:  # pypdf's own space between two placements: no glyph
                continue
            w = glyphs.get(code_of.get(ch, ch))
            if not isinstance(w, (int, float)):
                if default is None or ch not in code_of:
                    return None
                w = default  # a glyph of the font that its /W array leaves to the default width
            total += w
        return total / 1000.0

    return em


def _measured(run: Run, text: str) -> float | None:
    """The width of ``text`` set in ``run``'s font and size, by the font's glyph widths (None when
    it has none for every character)."""
    em = run[4](text) if len(run) > 4 and run[4] is not None else None
    return None if em is None else em * run[3]


def _last_char(pieces: list[str]) -> str:
    """The last character of the line's text so far ("" when there is none)."""
    return next((p[-1] for p in reversed(pieces) if p), "")


def _spaced(prev: tuple[Run, float, bool], run: Run, last: str) -> bool:
    """Whether a space goes between the line's text so far (ending with ``last``, and with
    ``prev``'s run, which ends at ``prev[1]``) and ``run``: neither side has one, the end was
    measured, and ``run`` starts ``WORD_GAP`` em or more after it. Not between wide characters (Chinese,
    Japanese, full-width forms): those lines use no spaces, and their gaps are justification; nor
    after an opening bracket or quote, nor before a closing one or a stop ("(NO FUNCTION)", "“Off”",
    set in another font whose glyphs sit a little apart)."""
    first = run[0][:1]
    if not last or last.isspace() or first.isspace() or not prev[2]:
        return False
    if wide(last) or wide(first):
        return False
    if unicodedata.category(last) in ("Ps", "Pi") or unicodedata.category(first) in ("Pe", "Pf") or first in _STOPS:
        return False
    return run[1] - prev[1] >= WORD_GAP * max(run[3], prev[0][3], 1.0)


_STOPS = frozenset(".,;:!?")


# Two prose columns: at least this many lines split at the same gutter, each side this long.
_COLUMN_MIN_LINES = 3
_COLUMN_MIN_CHARS = 20
_BELOW = 1.5  # a line this many type sizes under a column region's last line is not in it


def reading_order(lines: list[dict]) -> list[dict]:
    """A page laid out in two columns, read left column then right column.

    pypdf joins text at the same height into one line, so a page whose generator wrote its two
    columns line by line comes out as "left line | right line" (a false two-cell table). A gutter
    is an x position where at least ``_COLUMN_MIN_LINES`` lines split into exactly two prose
    segments (``_COLUMN_MIN_CHARS`` or more on each side, unlike a table's short cells). Each
    run of consecutive lines that stay on one side of it, or split at it, is a column region:
    its left segments come first, then its right ones, each as a line of its own. A line
    crossing the gutter (a title, a full-width note) ends the region and stays where it is; so
    does a short line on the left under the whole region after its right column's last lines (a
    note under both columns that does not reach the gutter).
    Pages written column after column, or with no gutter, come back unchanged."""
    gutter = _gutter(lines)
    if gutter is None:
        return lines
    out: list[dict] = []
    left: list[dict] = []
    right: list[dict] = []

    def flush() -> None:
        out.extend(left)
        out.extend(right)
        left.clear()
        right.clear()

    after_right = False  # the line before was the right column's alone (the left one had ended)
    for ln in lines:
        side, k = _side(ln, gutter)
        if side == "left" and after_right and ln["y"] < min(x["y"] for x in left + right) - _BELOW * (ln["s"] or 1.0):
            flush()  # a left-side line under the whole region, after its right column: what follows it
        after_right = side == "right"
        if side == "split":
            left.append(_piece(ln, 0, k))
            right.append(_piece(ln, k, len(ln["x"])))
        elif side == "left":
            left.append(ln)
        elif side == "right":
            right.append(ln)
        else:
            flush()
            out.append(ln)
    flush()
    return out


def _gutter(lines: list[dict]) -> float | None:
    """The x where prose lines split into two columns, or None."""
    splits = [ln["x"][1] for ln in lines if len(ln["x"]) == 2 and len(ln["c"]) == 2
              and all(len(c) >= _COLUMN_MIN_CHARS and " " in c.strip() for c in ln["c"])]
    if len(splits) < _COLUMN_MIN_LINES:
        return None
    splits.sort()
    gutter = splits[len(splits) // 2]
    tol = max(ln["s"] for ln in lines) or 1.0
    return gutter if sum(abs(x - gutter) <= tol for x in splits) >= _COLUMN_MIN_LINES else None


def _side(ln: dict, gutter: float) -> tuple[str, int]:
    """("split", index of the segment starting at the gutter) when the line has segments on both
    sides, else ("left" | "right" | "across", 0)."""
    tol = ln["s"] or 1.0
    xs, es = ln["x"], ln["e"]
    if not xs:
        return "across", 0
    k = next((i for i, x in enumerate(xs) if i > 0 and abs(x - gutter) <= tol), 0)
    if k and xs[0] < gutter - tol:
        return ("split", k) if max(es[:k]) < gutter else ("across", 0)
    if xs[0] >= gutter - tol:
        return "right", 0
    return ("left" if max(es) < gutter else "across"), 0


def _piece(ln: dict, a: int, b: int) -> dict:
    """Segments ``a:b`` of a line as a line of their own."""
    cells = ln["c"][a:b]
    return {"t": " ".join(cells), "s": ln["s"], "y": ln["y"], "c": cells if len(cells) >= 2 else [],
            "x": ln["x"][a:b], "e": ln["e"][a:b]}


def _short(e: BaseException) -> str:
    return " ".join(str(e).split())[:160]


def main(argv: list[str]) -> int:
    sys.setrecursionlimit(5000)
    out = extract(argv[0])
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
