"""PDF ingestion: pages, headings from font size, table rows, and the subprocess limits."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pdf_support import (LEFT_COLUMN, RIGHT_COLUMN, bomb_pdf, manual_pdf, page_break_pdf, raw_pdf,
                         running_header_pdf, two_column_pdf)

from engine.config import ChunkingConfig
from engine.ingest import read_document
from engine.ingest.chunking import approx_counter, chunk_document
from engine.ingest.pdf import (PdfFailure, _header_cells, _lines, _table_runs, build_blocks, dehyphenate,
                               document_title, front_matter_levels, wrapped_cells,
                               heading_levels, heading_lines, page_furniture, parse_pdf, reading_order, runs_on,
                               reads_as_command, reads_as_sentence, unfinished, without_contents)
from engine.lang.outline import outline_key
from engine.lang.units import split_units
from engine.types import IngestIssue


def test_pdf_pages_headings_and_table_rows(lib: Path) -> None:
    path = manual_pdf(lib / "guide.pdf", pages=2)
    got = read_document(lib, path, ChunkingConfig())
    assert not isinstance(got, IngestIssue), got
    doc, blocks = got
    assert doc.format == "pdf" and len(doc.page_starts) == 2 and doc.meta.title == "Corvid test guide"
    headings = [doc.text[b.char_start:b.char_end] for b in blocks if b.kind == "heading"]
    assert headings == ["1 Section 1", "2 Section 2"]
    rows = [b for b in blocks if b.kind == "table_row"]
    assert [doc.text[b.char_start:b.char_end] for b in rows] == [
        "Fastener | Size | Torque (Nm)", "Casing bolts | M12 | 55", "Impeller nut | M16 | 38"]
    assert rows[2].context == "Fastener | Size | Torque (Nm)" and rows[2].page == 1

    chunks = chunk_document(doc, blocks, approx_counter(), ChunkingConfig(max_tokens=40))
    assert {c.page for c in chunks} == {1, 2}
    assert all(doc.text[c.char_start:c.char_end] == c.text for c in chunks)
    second = [c for c in chunks if c.page == 2]
    assert second[0].text.startswith("2 Section 2") and second[0].heading_path == ("2 Section 2",)
    assert second[0].location == "guide.pdf:p2"
    table = [c for c in chunks if "Impeller nut | M16 | 38" in c.text]
    assert table and "Fastener | Size | Torque (Nm)" in table[0].context


def _table_line(cells: list[str], xs: list[float], y: float, size: float = 10.0) -> dict:
    ends = [x + 5.0 * len(c) for c, x in zip(cells, xs)]
    return {"t": " ".join(cells), "s": size, "y": y, "c": cells if len(cells) >= 2 else [], "x": xs, "e": ends}


def test_a_table_header_set_tighter_than_its_rows_is_its_header_cut_on_their_columns() -> None:
    cols = [60.0, 156.0, 252.0, 349.0, 445.0]
    lines = [_table_line(["Replace a filter at the final pressure drop."], [60.0], 720.0),
             # bold headings run together: "Initial drop (Pa)" ends too near "Replace at (Pa)" for a gap
             _table_line(["Filter stage", "Class", "Part number", "Initial drop (Pa) Replace at (Pa)"],
                         cols[:4], 684.4),
             _table_line(["Pre-filter panel", "G4", "CV-FP4", "40", "150"], cols, 664.6),
             _table_line(["Bag filter", "F7", "CV-FB7", "90", "250"], cols, 644.7)]
    lines[1]["e"][3] = 525.0
    assert _table_runs(lines) == {1: "header", 2: "row", 3: "row"}  # not headed by its first row
    assert _header_cells(lines[1], lines[2]) == ["Filter stage", "Class", "Part number", "Initial drop (Pa)",
                                                 "Replace at (Pa)"]
    # a line above whose cells do not start on the table's columns is no header of it
    stray = _table_line(["Note", "see 4.2"], [60.0, 300.0], 684.4)
    assert _table_runs([stray, *lines[2:]]) == {1: "row", 2: "row"}  # (a first row of values is a row)
    # nor one further up than two and a half lines
    assert _table_runs([_table_line(lines[1]["c"], cols[:4], 720.0), *lines[2:]]) == {1: "row", 2: "row"}


def test_a_tables_first_line_heads_it_when_it_reads_as_labels() -> None:
    cols = [60.0, 200.0, 340.0]
    head = _table_line(["Fastener", "Size", "Torque (Nm)"], cols, 720.0)
    rows = [_table_line(["Casing bolts", "M12", "55"], cols, 700.0),
            _table_line(["Impeller nut", "M16", "38"], cols, 680.0)]
    assert _table_runs([head, *rows]) == {0: "header", 1: "row", 2: "row"}
    assert _table_runs(rows) == {0: "row", 1: "row"}  # values: a row
    # two columns are names and values: no header, however the first reads
    specs = [_table_line(["Model", "BTT Eddy"], cols[:2], 720.0),
             _table_line(["Input voltage", "5 V"], cols[:2], 700.0)]
    assert _table_runs(specs) == {0: "row", 1: "row"}
    # unless the first is set in bold over rows that are not (names in bold are no header either)
    bold = [{**specs[0], "c": ["Parameter", "Value"], "b": 1.0}, {**specs[1], "b": 0.0}]
    assert _table_runs(bold) == {0: "header", 1: "row"}
    assert _table_runs([{**specs[0], "b": 0.4}, {**specs[1], "b": 0.6}]) == {0: "row", 1: "row"}
    # labels over labels: nothing tells a header from a row
    words = [_table_line(["Red", "Fault", "Call service"], cols, 720.0),
             _table_line(["Green", "Ready", "None"], cols, 700.0)]
    assert _table_runs(words) == {0: "row", 1: "row"}


def test_running_headers_and_page_numbers_are_not_text(lib: Path) -> None:
    path = running_header_pdf(lib / "rx7.pdf")
    got = read_document(lib, path, ChunkingConfig())
    assert not isinstance(got, IngestIssue), got
    doc, blocks = got
    assert len(doc.page_starts) >= 3
    assert doc.text.count("Corvid RX-7 service manual") == 1  # kept where it first appears
    assert "Page " not in doc.text  # a page counter goes from every page, the first too
    chunks = chunk_document(doc, blocks, approx_counter(), ChunkingConfig(max_tokens=120))
    assert all(doc.text[c.char_start:c.char_end] == c.text for c in chunks)
    assert not any("Page 3" in c.text or "service manual" in c.text for c in chunks if c.page and c.page > 1)
    assert " ".join(doc.text.split()).count("check the seal faces") == 4 * 40  # the body, whole


def test_a_sentence_and_a_table_run_on_over_page_breaks_and_cite_every_page(lib: Path) -> None:
    doc, blocks = read_document(lib, page_break_pdf(lib / "seal.pdf"), ChunkingConfig())
    said = {doc.text[b.char_start:b.char_end]: b for b in blocks}
    # the sentence cut by the first page break is one sentence of one paragraph, on page 1
    para = next(b for t, b in said.items() if "breaker Q3 and\nattach a tag" in t)
    assert para.kind == "paragraph" and para.page == 1
    # the table's row on page 3 is a row under the header it had on page 2, not a paragraph
    gland = said["Gland nuts | M10 | 25"]
    assert gland.kind == "table_row" and gland.page == 3 and gland.context == "Fastener | Size | Torque (Nm)"
    # a finished sentence at a page's foot ends its paragraph: page 4 opens a new one
    assert said["Run the pump for ten minutes and check the seal for leaks."].page == 4
    assert doc.text.count("\n\n") == 2  # pages 2|3 and 3|4 apart, 1|2 one sentence

    chunks = chunk_document(doc, blocks, approx_counter(), ChunkingConfig(max_tokens=60))
    first = next(c for c in chunks if "breaker Q3" in c.text)
    assert (first.page, first.end_page, first.location) == (1, 2, "seal.pdf:p1-2")
    units = [u.text for c in chunks for u in split_units(c)]
    assert any("lock out breaker Q3 and\nattach a tag to it" in u for u in units)
    assert "Gland nuts | M10 | 25" in units
    last = next(c for c in chunks if "check the seal for leaks" in c.text)
    assert last.location.endswith("-4") and chunks[-1].end_page == 4


def test_a_table_goes_on_at_the_top_of_the_next_page_only_on_its_own_columns() -> None:
    cols = [60.0, 200.0, 340.0]
    last = _table_line(["Impeller nut", "M16", "38"], cols, 80.0)
    top = [_table_line(["Gland nuts", "M10", "25"], cols, 760.0),
           _table_line(["Drain plug", "G1/4", "12"], cols, 740.0), _page_line("Refit the coupling guard.", y=700.0)]
    assert _table_runs(top, carried=last) == {0: "row", 1: "row"}
    assert _table_runs(top[:1], carried=last) == {0: "row"}  # one row alone is a row too
    other = [_table_line(["Part", "Size"], cols[:2], 760.0), _table_line(["Drain plug", "G1/4"], cols[:2], 740.0)]
    assert _table_runs(other, carried=last) == {0: "row", 1: "row"}  # another table, not one row
    shifted = [_table_line(["Gland nuts", "M10", "25"], [160.0, 300.0, 440.0], 760.0)]
    assert _table_runs(shifted, carried=last) == {}


def test_rows_with_an_empty_cell_stay_in_their_table_in_their_columns() -> None:
    # a pin table: the signal column centred, the description empty on some rows (nothing drawn there)
    def row(cells: list[str], xs: list[float], y: float) -> dict:
        return _table_line(cells, xs, y)

    lines = [row(["PIN", "Connector", "Signal", "Description"], [94.0, 147.0, 263.0, 412.0], 700.0),
             row(["4", "A connector_04", "EPHY-TXP", "Ethernet TX Positive"], [94.0, 147.0, 263.0, 412.0], 688.0),
             row(["5", "A connector_05", "NC"], [94.0, 147.0, 282.0], 676.0),
             row(["6", "A connector_06", "EPHY-TXN", "Ethernet TX Negative"], [94.0, 147.0, 263.0, 412.0], 664.0),
             row(["7", "GND"], [94.0, 282.0], 652.0)]  # the connector cell empty too
    placed: dict[int, list[str]] = {}
    assert _table_runs(lines, placed=placed) == {0: "header", 1: "row", 2: "row", 3: "row", 4: "row"}
    assert placed == {2: ["5", "A connector_05", "NC", ""], 4: ["7", "", "GND", ""]}
    # a line further down than a line's spacing starts apart; one whose cell sits in no column is none
    apart = row(["8", "A connector_08", "NC"], [94.0, 147.0, 282.0], 600.0)
    astray = row(["Note", "see", "page 4"], [94.0, 560.0, 600.0], 640.0)
    assert _table_runs([*lines[:4], apart]) == {0: "header", 1: "row", 2: "row", 3: "row"}
    assert _table_runs([*lines[:4], astray]) == {0: "header", 1: "row", 2: "row", 3: "row"}

    parsed = build_blocks({"pages": [lines], "info": {}})
    got = [parsed.text[b.char_start:b.char_end] for b in parsed.blocks if b.kind == "table_row"]
    assert got[2] == "5 | A connector_05 | NC" and got[4] == "7 |  | GND"  # an empty cell inside, none at the end


def test_a_bold_header_row_heads_a_two_column_table(lib: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=16)
    pdf.cell(0, 10, "Specifications", new_x="LMARGIN", new_y="NEXT")
    for k, (name, value) in enumerate([("Parameter", "Value"), ("Input voltage", "24 V"), ("Output current", "3 A")]):
        pdf.set_font("helvetica", style="B" if k == 0 else "", size=11)
        pdf.cell(60, 6, name)
        pdf.cell(60, 6, value, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(lib / "specs.pdf"))
    doc, blocks = read_document(lib, lib / "specs.pdf", ChunkingConfig())
    rows = [(doc.text[b.char_start:b.char_end], b.context) for b in blocks if b.kind == "table_row"]
    assert rows == [("Parameter | Value", ""), ("Input voltage | 24 V", "Parameter | Value"),
                    ("Output current | 3 A", "Parameter | Value")]


def test_a_header_row_at_the_foot_of_a_page_heads_the_rows_the_next_page_opens_with() -> None:
    cols = [60.0, 200.0, 340.0]
    head = _table_line(["PIN", "Connector", "Signal"], cols, 610.0)
    body = ["Connector A has two rows of pins,", "numbered from the board's edge.", "Each pin has one signal,",
            "and a pin marked NC has none.", "Pin 1 is square."]
    first = [_page_line("Pin table", size=16.0, y=760.0),
             *(_page_line(t, y=700.0 - 12 * i) for i, t in enumerate(body)), head]
    rows = [_table_line(["1", "A connector_01", "GND"], cols, 760.0),
            _table_line(["2", "A connector_02", "NC"], cols, 740.0)]
    parsed = build_blocks({"pages": [first, rows], "info": {}})
    got = [(parsed.text[b.char_start:b.char_end], b.kind, b.context, b.page) for b in parsed.blocks]
    assert got[-3:] == [("PIN | Connector | Signal", "table_row", "", 1),
                        ("1 | A connector_01 | GND", "table_row", "PIN | Connector | Signal", 2),
                        ("2 | A connector_02 | NC", "table_row", "PIN | Connector | Signal", 2)]
    assert all(parsed.text[b.char_start:b.char_end] for b in parsed.blocks)
    # a page that opens with prose: the line of labels was a line of text
    parsed = build_blocks({"pages": [first, [_page_line("Keep the cover closed.", y=760.0)]], "info": {}})
    got = [(parsed.text[b.char_start:b.char_end], b.kind) for b in parsed.blocks]
    assert ("PIN Connector Signal", "paragraph") in got and not any(k == "table_row" for _t, k in got)


def test_a_header_row_repeated_on_the_next_page_stays_the_header() -> None:
    cols = [60.0, 200.0, 340.0]
    head = ["Fastener", "Size", "Torque (Nm)"]
    pages = [[_page_line("Torque values", size=16.0, y=760.0), _table_line(head, cols, 720.0),
              _table_line(["Casing bolts", "M12", "55"], cols, 700.0),
              _table_line(["Impeller nut", "M16", "38"], cols, 680.0)],
             [_table_line(head, cols, 760.0), _table_line(["Gland nuts", "M10", "25"], cols, 740.0)]]
    parsed = build_blocks({"pages": pages, "info": {}})
    rows = [(parsed.text[b.char_start:b.char_end], b.context, b.page) for b in parsed.blocks if b.kind == "table_row"]
    assert rows[-2:] == [("Fastener | Size | Torque (Nm)", "", 2),
                         ("Gland nuts | M10 | 25", "Fastener | Size | Torque (Nm)", 2)]


def _page_line(t: str, size: float = 10.0, y: float = 700.0) -> dict:
    return {"t": t, "s": size, "y": y, "c": [], "x": [60.0], "e": [60.0 + 5.0 * len(t)]}


def test_a_page_break_joins_a_paragraph_only_inside_an_open_sentence() -> None:
    assert unfinished("then lock out breaker Q3 and") and unfinished("the rated voltage,")
    assert not unfinished("Close the cover.") and not unfinished("Tools needed:") and not unfinished("完成。")
    last = _page_line("then lock out breaker Q3 and")
    assert runs_on(last, _page_line("attach a tag to it."))
    assert not runs_on(last, _page_line("Disconnect the mains."))  # a capital: a new sentence may start
    assert not runs_on(last, _page_line("attach a tag to it.", size=8.0))  # a footnote, a caption
    assert runs_on(_page_line("请先断开电源并"), _page_line("等待五分钟。"))  # no case: wide after wide
    assert not runs_on(_page_line("请先断开电源并"), _page_line("「注意」"))
    assert runs_on(_page_line("此命令基于"), _page_line("300x300mm 的打印机设置。"))  # a digit after a wide one
    assert runs_on(_page_line("将固件复制到 SD"), _page_line("卡中，然后复位主板。"))  # a wide one after Latin
    assert not runs_on(_page_line("请按以下步骤操作"), _page_line("1. 断开电源。"))  # a numbered step


def test_page_furniture_needs_most_pages_and_spares_tables() -> None:
    def line(t, y, cells=()):
        xs = [60.0 + 100.0 * i for i in range(len(cells) or 1)]
        return {"t": t, "y": y, "s": 10, "c": list(cells), "x": xs, "e": [x + 40.0 for x in xs]}

    body = [line(t, 500) for t in ("Open the cover", "Drain the oil", "Fit the seal", "Close the cover")]
    pages = [[line("Service manual", 800), body[p], line(f"- {p + 1} -", 20)] for p in range(4)]
    assert page_furniture(pages) == [{2}, {0, 2}, {0, 2}, {0, 2}]  # the title stays where it first is
    assert page_furniture(pages[:2]) == [set(), set()]  # two pages cannot tell
    # a footer of three lines, two of them side by side on one baseline: all of it is furniture
    footer = [line("Shenzhen Creality3D", 30), line("Tel: 400-6133 882", 40), line("www.creality3d.com", 40)]
    pages = [[line("Service manual", 800), *(line(f"Step {p}.{i}: {body[p]['t']}", 700 - 40 * i) for i in range(8)),
              *footer] for p in range(4)]
    assert page_furniture(pages) == [set(), {0, 9, 10, 11}, {0, 9, 10, 11}, {0, 9, 10, 11}]
    # a table's header row repeated at the top of each page stays: the rows below need it
    table = [[line("Part Size", 800, ("Part", "Size")), line(f"Bolt{p} M{p + 8}", 780, (f"Bolt{p}", f"M{p + 8}"))]
             for p in range(4)]
    assert page_furniture(table) == [set()] * 4


@pytest.mark.parametrize("line_by_line", [True, False])
def test_two_column_page_reads_left_column_then_right(lib: Path, line_by_line: bool) -> None:
    path = two_column_pdf(lib / "pump.pdf", line_by_line=line_by_line)
    doc, blocks = read_document(lib, path, ChunkingConfig())
    assert not any(b.kind == "table_row" for b in blocks)  # not a two-cell table
    texts = [doc.text[b.char_start:b.char_end] for b in blocks]
    assert texts == ["Pump maintenance", "\n".join(LEFT_COLUMN), "\n".join(RIGHT_COLUMN),
                     "Full width note: keep this manual with the pump at all times."]
    chunks = chunk_document(doc, blocks, approx_counter(), ChunkingConfig())
    assert any("Lock out breaker Q3 and attach a tag.\nWait ten minutes" in c.text for c in chunks)


def _line(cells: list[tuple[str, float]], y: float, size: float = 10.0) -> dict:
    """A line as the PDF child reports it: cells (text, x start), ends estimated like _lines."""
    texts = [t for t, _ in cells]
    return {"t": " ".join(texts), "s": size, "y": y, "c": texts if len(texts) >= 2 else [],
            "x": [x for _, x in cells], "e": [x + 0.5 * size * len(t) for t, x in cells]}


def test_reading_order_keeps_tables_and_full_width_lines() -> None:
    table = [_line([("Fastener", 40), ("Size", 200), ("Torque (Nm)", 330)], 700),
             _line([("Casing bolts", 40), ("M12", 200), ("55", 330)], 686),
             _line([("Impeller nut", 40), ("M16", 200), ("38", 330)], 672)]
    assert reading_order(table) == table  # short cells: a table, not columns
    pairs = [_line([("Parameter", 40), ("Value", 300)], 700 - 14 * i) for i in range(4)]
    assert reading_order(pairs) == pairs  # a two-cell table of short cells too
    prose = [_line([(f"left column line {i} of the text", 40), (f"right column line {i} of the text", 300)],
                   650 - 14 * i) for i in range(3)]
    title = _line([("A title across the whole page, wider than one column of text", 40)], 700)
    note = _line([("A closing note across the whole page, wider than one column of text", 40)], 500)
    after = _line([("Second region left line of the text", 40), ("second region right line of text", 300)], 480)
    got = [ln["t"] for ln in reading_order([title, *prose, note, after])]
    assert got == [title["t"], *[f"left column line {i} of the text" for i in range(3)],
                   *[f"right column line {i} of the text" for i in range(3)], note["t"],
                   "Second region left line of the text", "second region right line of text"]


def test_a_line_set_in_fragments_reads_as_one_line(lib: Path) -> None:
    # a design program places each fragment of a line with its own next-line operator (TD), and
    # pypdf reports a line break before each; the fragments carry their own spaces
    def fragments(pieces: list[str], x: float, y: float) -> list[str]:
        out = []
        for piece in pieces:
            out.append(f"BT 11 0 0 11 0 0 Tm /F1 1 Tf {x / 11:.3f} {y / 11:.3f} TD ({piece}) Tj ET")
            x += 5.6 * len(piece)
        return out

    content = [*fragments(["Replac", "ing the ", "F", "ilament: preheat the ", "N", "ozzle first."], 72, 700),
               *fragments(["Then feed ", "it."], 72, 686),  # the next line
               *fragments(["Tip"], 40, 686)]  # on the same baseline but to the left: a line of its own
    path = lib / "guide.pdf"
    path.write_bytes(raw_pdf("\n".join(content).encode()))
    doc, _blocks = read_document(lib, path, ChunkingConfig())
    assert doc.text.splitlines() == ["Replacing the Filament: preheat the Nozzle first.", "Then feed it.", "Tip"]


# Helvetica's glyph widths (em) for the words below, from its font metrics
_HELVETICA = {"L": .556, "o": .556, "c": .5, "k": .5, "u": .556, "t": .278, "h": .556, "e": .556, "b": .556,
              "r": .333, "a": .556, "Q": .778, "3": .556, "2": .556, "M": .833, "O": .778, "T": .611, "H": .722,
              "E": .667, "R": .722, "B": .667, "A": .667, "D": .722, "W": .944, "I": .278, "N": .722, "G": .778}


def _word_by_word(words: list[str], x: float, y: float, size: float = 11.0, gap: float = 0.28) -> list[str]:
    """Each word placed by its own operator, no space character: the next word ``gap`` em after
    the end of the last (0.28 em: a space)."""
    out = []
    for w in words:
        out.append(f"BT /F1 {size:g} Tf {x:.2f} {y:.2f} Td ({w}) Tj ET")
        x += (sum(_HELVETICA[ch] for ch in w) + gap) * size
    return out


def test_words_set_one_by_one_are_read_with_spaces_and_a_wide_heading_is_not_a_table(lib: Path) -> None:
    # a word processor's page places each word at its own x with no space between them; measured
    # by the font's widths, the gap is a space (estimated at half an em a letter, capitals ran
    # past the next word, and "MOTHERBOARD WIRING" read as a two-cell table row)
    content = [*_word_by_word(["2", "MOTHERBOARD", "WIRING"], 72, 720, size=16),
               *_word_by_word(["Lock", "out", "the", "breaker", "Q3"], 72, 690),
               *_word_by_word(["Lock"], 72, 670, gap=0.0), *_word_by_word(["out"], 72 + 2.112 * 11, 670)]  # one word
    path = lib / "board.pdf"
    path.write_bytes(raw_pdf("\n".join(content).encode()))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    assert doc.text.splitlines() == ["2 MOTHERBOARD WIRING", "Lock out the breaker Q3", "Lockout"]
    assert not any(b.kind == "table_row" for b in blocks)


def test_a_space_is_read_from_measured_widths_only_and_never_between_wide_characters() -> None:
    em = lambda text: 0.5 * len(text)  # noqa: E731 - a font whose every glyph is half an em wide
    runs = [("Replac", 72.0, 700.0, 10.0, em), ("ing", 102.0, 700.0, 10.0, em),  # no gap: one word
            ("the", 117.0 + 2.5, 700.0, 10.0, em), ("filament", 134.5 + 2.8, 700.0, 10.0, em)]
    assert _lines(runs)[0]["t"] == "Replacing the filament"
    unknown = [(t, x, y, s, None) for t, x, y, s, _ in runs]  # no widths: no space is guessed
    assert _lines(unknown)[0]["t"] == "Replacingthefilament"
    wide = [("主板", 72.0, 700.0, 10.0, lambda t: float(len(t))), ("通过", 95.0, 700.0, 10.0, lambda t: float(len(t)))]
    assert _lines(wide)[0]["t"] == "主板通过"


def test_a_note_under_both_columns_that_does_not_reach_the_gutter_follows_them() -> None:
    def ln(t, x, y, e, cells=()):
        return {"t": t, "s": 10.0, "y": y, "c": list(cells), "x": x, "e": e}

    left = [f"left column line {i} of the text" for i in range(3)]
    right = [f"right column line {i} of the text" for i in range(4)]
    lines = [ln(f"{a} {b}", [40.0, 300.0], 700.0 - 14 * i, [200.0, 460.0], (a, b)) for i, (a, b) in enumerate(zip(left, right))]
    lines += [ln(right[3], [300.0], 658.0, [460.0]), ln("Keep this manual.", [40.0], 620.0, [130.0])]
    assert [x["t"] for x in reading_order(lines)] == [*left, *right, "Keep this manual."]


def test_the_outline_of_a_pdf_gives_its_headings_and_their_levels(lib: Path) -> None:
    # the outline (bookmarks) says which lines are headings: a bold heading at the body's size is
    # one, a diagram's label set large is not, and an entry a producer cut short (a paragraph styled
    # as a heading) stays a statement
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()

    def put(size: float, text: str, style: str = "", section: int | None = None, name: str = "") -> None:
        if section is not None:
            pdf.start_section(name or text, level=section)
        pdf.set_font("helvetica", style=style, size=size)
        pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)

    put(20, "Radio guide", section=0)
    put(11, "Install the battery first.")
    put(11, "Main Menu", style="B", section=1)
    put(20, "Left   Right")  # a label of a keypad drawing
    put(11, "Press the menu key to open it.")
    put(11, "Options", style="B", section=2)
    put(11, "Note: do not open the case while the radio is on, it may be damaged.", section=2,
        name="Note: do not open the case while the")
    put(11, "Set the squelch level here.")
    path = lib / "radio.pdf"
    pdf.output(str(path))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    heads = [(doc.text[b.char_start:b.char_end], b.level) for b in blocks if b.kind == "heading"]
    assert heads == [("Radio guide", 1), ("Main Menu", 2), ("Options", 3)]
    paths = {doc.text[b.char_start:b.char_end]: b.heading_path for b in blocks if b.kind == "paragraph"}

    def path_of(text: str) -> tuple[str, ...]:
        return next(p for t, p in paths.items() if text in t)

    assert path_of("Press the menu key to open it.") == ("Radio guide", "Main Menu")
    assert path_of("Set the squelch level here.") == ("Radio guide", "Main Menu", "Options")
    assert path_of("Note: do not open the case while the radio is on") == ("Radio guide", "Main Menu", "Options")


def test_bold_headings_under_the_outlines_deepest_entry_head_their_own_sections(lib: Path) -> None:
    # the outline stops at "Options"; the manual heads each setting in it in bold at the body's size.
    # Read as one section, the warning under "Auto lock" travelled with the answers about "Batt Cal"
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()

    def put(text: str, style: str = "", section: int | None = None, size: float = 11, tight: bool = False) -> None:
        if section is not None:
            pdf.start_section(text, level=section)
        pdf.set_font("helvetica", style=style, size=size)
        pdf.cell(0, 4.5 if tight else size * 0.6, text, new_x="LMARGIN", new_y="NEXT")  # mm
        if not tight:
            pdf.ln(2)

    put("Radio guide", section=0, size=20)
    put("Install the battery before you switch the radio on.")
    put("Charge it fully before the first use; a new battery takes about four hours.")
    put("Main Menu", style="B", section=1)
    put("Press the menu key to open the main menu.")
    put("The arrow keys move through its entries, and the green key opens the one shown.")
    put("Options", style="B", section=2)
    put("The options menu holds the settings of the firmware.")
    put("Auto lock", style="B")
    put("Never leave the radio unattended: the keys lock after a minute.")
    put("Batt Cal", style="B")
    put("This setting calibrates the voltage display, by half a volt at most.")
    put("Help! It shows no voltage since the update.", style="B", tight=True)
    put("Is it broken?", style="B")  # the end of a bold question: no heading
    put("Calibrate it again after each update of the firmware.")
    put("Notes:", style="B")
    put("The reading can differ from the charger's while the radio transmits.")
    path = lib / "radio.pdf"
    pdf.output(str(path))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    paths = {doc.text[b.char_start:b.char_end]: b.heading_path for b in blocks if b.kind == "paragraph"}

    def path_of(text: str) -> tuple[str, ...]:
        return next(p for t, p in paths.items() if text in t)

    options = ("Radio guide", "Main Menu", "Options")
    assert path_of("The options menu holds") == options
    assert path_of("the keys lock after a minute") == (*options, "Auto lock")
    assert path_of("calibrates the voltage display") == (*options, "Batt Cal")
    assert path_of("Calibrate it again") == (*options, "Batt Cal")
    assert path_of("The reading can differ") == (*options, "Batt Cal")  # "Notes:" announces, heads nothing


def test_a_table_of_contents_is_no_text_but_dot_leaders_before_values_are() -> None:
    def page(*texts: str) -> list[dict]:
        return [{"t": t, "s": 10.0, "y": 700.0 - 12 * i, "c": []} for i, t in enumerate(texts)]

    contents = page("Table of Contents", "1 Introduction ................ 3", "2 Wiring . . . . . . . . 7",
                    "2.1 Power wiring ……… 7", "3 Firmware ____________ 12", "4. Results ……………………. 17",
                    "5. Calculation …………………... 21", "Produced by the maker")
    assert [x["t"] for x in without_contents(contents)] == ["Table of Contents", "Produced by the maker"]
    specs = page("Nozzle temperature ........ 210", "Bed temperature ........ 60", "Fans ........ 6")
    assert without_contents(specs) == specs  # values, not page numbers in order
    two = page("1 Introduction ........ 3", "2 Wiring ........ 7", "Body text.")
    assert without_contents(two) == two
    # contents an author forgot to update: most numbers in page order, a few stale
    stale = page("Features ........ 4", "Installation ........ 5", "Dumping ........ 7", "Saves ........ 11",
                 "Extra hardware ........ 17", "Lock-On ........ 14", "Firmware upgrade ........ 18")
    assert without_contents(stale) == []
    shuffled = page("Nozzle ........ 210", "Bed ........ 60", "Fan ........ 100", "Speed ........ 40")
    assert without_contents(shuffled) == shuffled  # half in order: values, not contents
    # lines linked into the file (``"l"``: the link's page and minus its top)
    linked = page("Contents", "Wiring", "Power", "wiring", "Firmware", "Body text.")
    for ln, place in zip(linked[1:5], [[2, -700], [3, -500], [3, -500], [5, -300]]):  # "Power" wraps
        ln["l"] = place
    assert [x["t"] for x in without_contents(linked)] == ["Contents", "Body text."]
    labels = page("BAT+", "BAT-", "DSG", "CHG", "Body text.")
    for ln, place in zip(labels, [[2, 0], [3, 0], [2, 0], [3, 0]]):  # a schematic's labels, to and fro
        ln["l"] = place
    assert without_contents(labels) == labels


def test_a_back_of_book_index_is_no_text_but_a_parts_list_with_leaders_is() -> None:
    # a datasheet's index: alphabetical, so not in page order, but each entry's words are on the page
    # it names (printed numbers two behind the file's: a cover and a contents page go unnumbered)
    from engine.ingest.pdf import without_index

    def page(*texts: str) -> list[dict]:
        return [{"t": t, "s": 10.0, "y": 700.0 - 12 * i, "c": []} for i, t in enumerate(texts)]

    topics = ["Absolute maximum ratings", "Brown-out reset", "Clock sources", "Data EEPROM", "External interrupt",
              "Fuse settings", "General purpose registers", "Hardware stack", "Instruction set", "Jitter budget",
              "Keypad scanning", "Low power sleep"]
    body = [page("Cover"), page("Contents")] + [page(f"{t} are described here.", "More text.") for t in topics]
    index = page("INDEX", *[f"{t} {'.' * 30} {n}" for n, t in enumerate(topics, start=1)][::-1])  # out of order
    parts = page("Parts", *[f"{t} {'.' * 30} {n}" for n, t in
                            enumerate(["Bolt M3", "Nut M3", "Washer", "Spring", "Cable tie", "Heat sink", "Fan 40 mm",
                                       "Fuse 2 A", "Relay", "Terminal", "Spacer", "Label"], start=3)][::-1])
    got = without_index([*body, index, parts])
    assert [ln["t"] for ln in got[-2]] == ["INDEX"]
    assert got[-1] == parts and got[:-2] == body


def test_a_contents_list_linked_to_its_sections_is_no_text_with_or_without_page_numbers(lib: Path) -> None:
    # OpenGD77's guide: five pages of bulleted entries, no dot leaders, no page numbers, each entry a
    # link to its section. Links in a paragraph stay text, and so do labels linked over and over to
    # the one place they lead to (a schematic's net labels)
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.set_font("helvetica", size=18)
    pdf.cell(0, 10, "Radio guide", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=11)
    titles = ["Installation", "Transferring data to the radio", "Menus", "Options", "Squelch level"]
    links = [pdf.add_link() for _ in titles]
    for title, link in zip(titles, links):
        pdf.cell(0, 7, f"- {title}", new_x="LMARGIN", new_y="NEXT", link=link)
    pdf.ln(6)
    pdf.cell(0, 7, "Every label below opens the wiring sheet.", new_x="LMARGIN", new_y="NEXT")
    sheet = pdf.add_link()
    for label in ("CELL1+", "CELL2+", "CELL3+", "CELL4+"):
        pdf.cell(0, 7, label, new_x="LMARGIN", new_y="NEXT", link=sheet)
    for k, (title, link) in enumerate(zip(titles, links)):
        if k % 2 == 0:
            pdf.add_page()
        pdf.set_link(link, page=pdf.page, y=pdf.get_y())
        pdf.set_font("helvetica", size=16)
        pdf.cell(0, 9, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, f"The {title.lower()} steps are described here in full.", new_x="LMARGIN", new_y="NEXT")
        if k == 0:
            pdf.cell(0, 6, "Before you start, read the part on menus.", new_x="LMARGIN", new_y="NEXT", link=links[2])
    pdf.set_link(sheet, page=1, y=0)
    path = lib / "guide.pdf"
    pdf.output(str(path))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    for title in titles:
        assert f"- {title}" not in doc.text
        assert title in [doc.text[b.char_start:b.char_end] for b in blocks if b.kind == "heading"]
    for kept in ("Every label below opens the wiring sheet.", "CELL1+", "CELL4+",
                 "Before you start, read the part on menus."):
        assert kept in doc.text


def test_a_composite_fonts_glyphs_left_out_of_its_widths_take_its_default_width() -> None:
    # a subset font's /W array lists some glyphs and leaves the rest to /DW ("i" and "l" here): a word
    # holding one is measured all the same, so the gap before the next word is read as a space
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject, StreamObject

    from engine.ingest.pdf import _font_widths

    to_unicode = StreamObject()
    to_unicode.set_data(b"begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange 3 beginbfchar "
                        b"<0041> <0069> <0042> <006C> <0043> <006F> endbfchar endcmap")
    cid = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/CIDFontType2"),
                            NameObject("/BaseFont"): NameObject("/AAAAAA+Sans"), NameObject("/DW"): NumberObject(225),
                            NameObject("/W"): ArrayObject([NumberObject(0x43), ArrayObject([NumberObject(572)])])})
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type0"),
                             NameObject("/BaseFont"): NameObject("/AAAAAA+Sans"),
                             NameObject("/Encoding"): NameObject("/Identity-H"),
                             NameObject("/DescendantFonts"): ArrayObject([cid]), NameObject("/ToUnicode"): to_unicode})
    em = _font_widths(font)
    assert em is not None and em("o") == 0.572 and math.isclose(em("oil"), 0.572 + 2 * 0.225)
    assert em("x") is None  # not a glyph of this font: no width guessed


def _outlined_pdf(lib: Path, name: str, lines: list[tuple[float, str, int | None]]):
    """A PDF of (size, text, outline level or None) lines, read: (document, blocks)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for size, text, section in lines:
        if section is not None:
            pdf.start_section(text, level=section)
        pdf.set_font("helvetica", size=size)
        pdf.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    path = lib / name
    pdf.output(str(path))
    return read_document(lib, path, ChunkingConfig())


def _paragraph_paths(doc, blocks) -> dict[str, tuple[str, ...]]:
    """Each paragraph's text (its lines joined) -> its heading path."""
    return {" ".join(doc.text[b.char_start:b.char_end].split()): b.heading_path for b in blocks
            if b.kind == "paragraph"}


def test_a_sentence_set_as_a_heading_or_bookmarked_is_a_statement_not_a_heading(lib: Path) -> None:
    # an outline's top entry that is a warning sentence would head every chapter below it; a line
    # in the headings' type that ends with a full stop says something: both stay statements
    doc, blocks = _outlined_pdf(lib, "guide.pdf", [
        (20, "Radio guide", 0),
        (20, "The firmware is also not compatible with the new 2022 version of the radio or the new "
             "variant of it sold since then", 0),
        (16, "Installation", 1), (11, "Hold the two keys while you switch on.", None),
        (16, "Please refer to the wiring sheet for more details.", None),
        (11, "The cable goes in the left socket.", None), (16, "Menus", 1), (11, "Press the menu key.", None)])
    heads = [doc.text[b.char_start:b.char_end] for b in blocks if b.kind == "heading"]
    assert heads == ["Radio guide", "Installation", "Menus"]
    paths = _paragraph_paths(doc, blocks)
    assert paths["Press the menu key."] == ("Radio guide", "Menus")
    assert any(t.startswith("The firmware is also not compatible") for t in paths)
    assert any("Please refer to the wiring sheet" in t and p == ("Radio guide", "Installation")
               for t, p in paths.items())
    assert reads_as_sentence("SEGA and MEGA DRIVE are trademarks of SEGA Holdings Co.")
    assert not reads_as_sentence("Shenzhen BIGTREE technology co., LTD.")  # five words: a name
    assert not reads_as_sentence("4.3.2 Work with BIGTREETECH RPI-CAN HAT:")
    assert not reads_as_sentence("How do I reset all settings when the radio is switched on?")  # a FAQ's heading


def test_front_matter_and_headings_the_outline_leaves_out_take_the_chapters_levels(lib: Path) -> None:
    # Word bookmarks "Document change history" a level above the numbered chapters, and now and then
    # leaves a heading out ("2.2 Probe wiring", set as 2.1 and 2.3 are): read as the outline says,
    # every section had the change history at the head of its path, and 2.2 ran on inside 2.1. A
    # cover's date set in the sections' type is no heading, nor a sentence set in it
    doc, blocks = _outlined_pdf(lib, "octo.pdf", [
        (26, "Octo board guide", None), (16, "July 2021", None), (11, "Produced by the board team.", None),
        (20, "Document change history", 0), (11, "Version 1.1 added the probe wiring.", None),
        (20, "1 Introduction", 1), (11, "The board drives eight steppers.", None),
        (20, "2 Wiring", 1), (16, "2.1 Power wiring", 2), (11, "Connect the supply to the power input.", None),
        (16, "2.2 Probe wiring", None), (11, "The probe goes on the probe port.", None),
        (16, "Never wire the probe with the power on.", None),
        (16, "2.3 Fan wiring", 2), (11, "Fans go on the fan ports.", None),
        (20, "3 Firmware", 1), (11, "Update it from the card.", None)])
    heads = [(doc.text[b.char_start:b.char_end], b.level) for b in blocks if b.kind == "heading"]
    assert heads == [("Document change history", 2), ("1 Introduction", 2), ("2 Wiring", 2),
                     ("2.1 Power wiring", 3), ("2.2 Probe wiring", 3), ("2.3 Fan wiring", 3), ("3 Firmware", 2)]
    paths = _paragraph_paths(doc, blocks)
    assert paths["The board drives eight steppers."] == ("1 Introduction",)
    assert paths["The probe goes on the probe port. Never wire the probe with the power on."] == (
        "2 Wiring", "2.2 Probe wiring")
    assert paths["Connect the supply to the power input."] == ("2 Wiring", "2.1 Power wiring")
    assert paths["Update it from the card."] == ("3 Firmware",)


def test_a_part_between_chapters_keeps_the_outlines_levels() -> None:
    outline = [["Contents", 1, 0], ["Part I Setup", 1, 1], ["1 Unpacking", 2, 1], ["2 Mounting", 2, 2],
               ["Part II Use", 1, 3], ["3 Menus", 2, 3]]
    assert front_matter_levels(outline) == outline
    front = [["Change history", 1, 0], ["1 Unpacking", 2, 1], ["1.1 Box", 3, 1], ["2 Mounting", 2, 2],
             ["Appendices", 1, 3], ["A1. Tables", 2, 3]]
    assert [lv for _t, lv, _p in front_matter_levels(front)] == [2, 2, 3, 2, 1, 2]


def test_bold_lines_at_the_body_size_are_headings_when_the_body_is_not_bold(lib: Path) -> None:
    # a manual exported without bookmarks, its headings bold at the body's size: type size finds
    # none of them; a bold sentence, a long bold line or an aside is emphasis, and a document set
    # mostly in bold has no bold headings
    from fpdf import FPDF

    def manual(body_style: str) -> Path:
        pdf = FPDF()
        pdf.add_page()
        for style, text in [("B", "Power Supply"), ("", "The monitor runs on 9-12 V DC from a wall adapter."),
                            ("", "Keep the supply lead short, and route it away from the mains wiring and the CT leads."),
                            ("", "Use a regulated adapter; an unregulated one can read high with no load on it."),
                            ("B", "Keep the adapter away from water."),
                            ("B", "Read these warnings before connecting the monitor to mains"),
                            ("", "A wet adapter may fail."), ("B", "LED Indicators"),
                            ("", "The red LED shows that the supply is on, the green one that the meter reads."),
                            ("", "A blinking green LED means the meter waits for its configuration over MODBUS."),
                            ("", "If neither LED lights, check the fuse on the supply input and the adapter's output."),
                            ("", "Both LEDs off with a good supply: the board's regulator has failed; send it back."),
                            ("", "A red LED that blinks fast points to a supply below 9 V: measure it at the terminal."),
                            ("B", "(Note: two versions exist)")]:
            pdf.set_font("helvetica", style=style or body_style, size=11)
            pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        path = lib / f"monitor{body_style}.pdf"
        pdf.output(str(path))
        return path

    doc, blocks = read_document(lib, manual(""), ChunkingConfig())
    assert [doc.text[b.char_start:b.char_end] for b in blocks if b.kind == "heading"] == [
        "Power Supply", "LED Indicators"]
    led = next(b for b in blocks if "red LED" in doc.text[b.char_start:b.char_end])
    assert led.heading_path == ("LED Indicators",)
    doc, blocks = read_document(lib, manual("B"), ChunkingConfig())
    assert not [b for b in blocks if b.kind == "heading"]


def test_a_word_hyphenated_over_two_lines_is_one_word_again() -> None:
    def ln(t, y, size=10.0, cells=()):
        return {"t": t, "s": size, "y": y, "c": list(cells)}

    lines = [ln("Die Soll-Tem-", 700), ln("peratur wird kurzzei-", 688), ln("tig angezeigt. Verlänge-", 676),
             ln("rungskabel", 664), ln("Soll-", 652), ln("Temperatur bleibt.", 640), ln("Next para-", 600),
             ln("graph", 500), ln("Size-", 480), ln("a | b", 468, cells=("a", "b")), ln("Heading-", 440, 14.0),
             ln("like", 428)]
    assert [x["t"] for x in dehyphenate(lines)] == [
        "Die Soll-Temperatur", "wird kurzzeitig", "angezeigt. Verlängerungskabel", "Soll-", "Temperatur bleibt.",
        "Next para-", "graph", "Size-", "a | b", "Heading-", "like"]
    assert lines[0]["t"] == "Die Soll-Tem-"  # the page's own lines are not changed


def test_a_title_wrapped_over_two_lines_is_one_heading_and_sizes_a_tenth_apart_one_level(lib: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for size, text in [(22, "III. Communication between motherboard"), (22, "and PC"), (11, "Install the driver.")]:
        pdf.set_font("helvetica", size=size)
        pdf.cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(8)
    for size, text in [(21.5, "IV. Interfaces"), (11, "Plug the cable in."), (11, "Then switch on.")]:
        pdf.set_font("helvetica", size=size)
        pdf.cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
    path = lib / "board.pdf"
    pdf.output(str(path))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    heads = [(doc.text[b.char_start:b.char_end], b.level) for b in blocks if b.kind == "heading"]
    assert heads == [("III. Communication between motherboard\nand PC", 1), ("IV. Interfaces", 1)]
    paras = [b for b in blocks if b.kind == "paragraph"]
    assert paras[0].heading_path == ("III. Communication between motherboard and PC",)
    assert paras[-1].heading_path == ("IV. Interfaces",)  # 21.5 pt is 22 pt's level, not below it
    assert heading_levels([21.96, 21.48, 18.0, 16.2]) == {21.96: 1, 21.48: 1, 18.0: 2, 16.2: 3}


def test_large_type_in_a_run_of_lines_is_a_paragraph_not_headings() -> None:
    def line(t, y, size=14.0):
        return {"t": t, "y": y, "s": size, "c": []}

    body = 12.0
    title = [line("III. Communication between motherboard", 700, 22), line("and PC", 676, 22)]
    intro = [line(f"An introduction set in large type, line {i}", 640 - 31 * i) for i in range(4)]  # double spaced
    clause = [line("被烧毁，造成不必要的损失；", 400), line("Body text.", 380, 12)]
    assert heading_lines(title + intro + clause, body) == {0, 1}  # the wrapped title only
    assert heading_lines([line("Notes", 700), line("Keep the unit dry.", 680, 12)], body) == {0}


def test_a_bold_command_at_the_body_size_is_no_heading() -> None:
    def line(t, y, b=1.0):
        return {"t": t, "y": y, "s": 12.0, "c": [], "b": b}

    page = [line("4.2. Firmware Update", 700), line("1. Enter cd klipper, then enter", 680, 0.0),
            line("make flash FLASH_DEVICE= 2e8a:0003", 660), line("to start flashing the firmware.", 640, 0.0),
            line("cd ~/klipper/", 600), line("Klipper_rp2040_4550357128922FC8-if00", 560),
            line("SmartBeaconing™", 520), line("Wiring the CAN Bus", 480)]
    assert heading_lines(page, 12.0, bold=True) == {0, 6, 7}
    assert reads_as_command("ls /dev/serial/by-id/") and reads_as_command("FLASH_DEVICE=/dev/ttyACM0")
    assert not reads_as_command("USB/CAN Wiring") and not reads_as_command("3.2 100K NTC or PT1000 Settings")


def test_wide_characters_are_measured_as_wide_so_a_line_is_not_cut_into_cells() -> None:
    # "主板通过" at 12 pt is 48 pt wide: the next run, 48 pt on, continues the line (half-width
    # estimates put its end at 24 pt, and the gap read as a table's column)
    lines = _lines([("主板通过【", 72.0, 700.0, 12.0), ("USB】接口与", 132.0, 700.0, 12.0),
                    ("PC 通信。", 200.0, 700.0, 12.0)])
    assert [(ln["t"], ln["c"]) for ln in lines] == [("主板通过【USB】接口与PC 通信。", [])]


def test_a_heading_numbered_on_from_an_earlier_one_is_its_sibling_whatever_its_size(lib: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for size, text in [(22, "IV. Interfaces"), (11, "Plug the cable in."), (16, "12. Retraction"),
                       (11, "Set it in the slicer."), (13, "1. Speed"), (11, "Use 40 mm/s."),
                       (16, "13. Quality"), (11, "Pick the layer height."), (18, "V. Firmware"), (11, "Flash it.")]:
        pdf.set_font("helvetica", size=size)
        pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
    path = lib / "board.pdf"
    pdf.output(str(path))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    paths = {doc.text[b.char_start:b.char_end]: b.heading_path for b in blocks if b.kind == "paragraph"}
    assert paths["Use 40 mm/s."] == ("IV. Interfaces", "12. Retraction", "1. Speed")  # "1." restarts: a child
    assert paths["Pick the layer height."] == ("IV. Interfaces", "13. Quality")  # 13 after 12: its sibling
    assert paths["Flash it."] == ("V. Firmware",)  # V after IV, set smaller: still its sibling
    assert outline_key("3.1 Procedure") == (("dec", 2), 1) and outline_key("五、主板固件说明") == (("cjk", 1), 5)
    assert outline_key("第十二章 保养") == (("章", 1), 12) and outline_key("12 V battery") is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Replac", "ing ", " ", "\n", "N", "ozzle\nfirst", "主板", "1.", "\n\n", "x "]),
                          st.sampled_from([0.0, 40.0, 72.0, 90.0, 300.0]), st.sampled_from([0.0, 686.0, 700.0, 701.0]),
                          st.sampled_from([0.0, 11.0, 22.0])), max_size=30))
def test_reading_runs_into_lines_loses_no_text(runs) -> None:
    # however pypdf breaks and places the runs, every character it read is in some line, once
    lines = _lines(runs)
    got = sorted(ch for ln in lines for ch in ln["t"] if not ch.isspace())
    assert got == sorted(ch for t, *_ in runs for ch in t if not ch.isspace())
    assert all(ln["t"] == ln["t"].strip() and ln["t"] for ln in lines)


def test_pdf_timeout_and_memory_limit_become_failures(lib: Path) -> None:
    path = lib / "ok.pdf"
    path.write_bytes(raw_pdf(b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET"))
    assert parse_pdf(path, timeout_s=30, memory_mb=1024).text == "Hello"  # type: ignore[union-attr]
    slow = parse_pdf(path, timeout_s=0.01, memory_mb=1024)
    assert isinstance(slow, PdfFailure) and "longer than" in slow.reason
    bomb = lib / "bomb.pdf"  # inflates to 70 MB: under pypdf's own cap, over our limit
    bomb.write_bytes(bomb_pdf(70))
    starved = parse_pdf(bomb, timeout_s=30, memory_mb=60)
    assert isinstance(starved, PdfFailure) and "out of memory (limit 60 MB" in starved.reason


def test_pdf_in_a_library_given_by_relative_path(lib: Path, monkeypatch) -> None:
    manual_pdf(lib / "guide.pdf", pages=1)
    monkeypatch.chdir(lib.parent)  # the parser child runs in another folder
    rel = Path(lib.name)
    got = read_document(rel, rel / "guide.pdf", ChunkingConfig())
    assert not isinstance(got, IngestIssue), got


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["Service manual", "Page 1", "Page 12", "- 3 -", "Body text",
                                                    "Other body", "Chapter 2"]),
                                   st.integers(min_value=0, max_value=800)), max_size=8), max_size=10))
def test_page_furniture_drops_only_repeats_of_a_line_most_pages_share(raw_pages) -> None:
    pages = [[{"t": t, "y": y, "s": 10, "c": []} for t, y in page] for page in raw_pages]
    drops = page_furniture(pages)
    assert len(drops) == len(pages)
    key = lambda t: re.sub(r"\d+", "#", t.casefold())  # noqa: E731
    need = max(3, math.ceil(len(pages) / 2))
    kept = [(p, k, key(ln["t"])) for p, lines in enumerate(pages) for k, ln in enumerate(lines) if k not in drops[p]]
    for p, (lines, drop) in enumerate(zip(pages, drops)):
        assert drop <= set(range(len(lines)))
        for k in drop:
            text = key(lines[k]["t"])
            assert sum(any(key(o["t"]) == text for o in other) for other in pages) >= need  # most pages have it
            counter = len({o["t"] for other in pages for o in other if key(o["t"]) == text}) > 1  # "Page 1", "Page 12"
            # kept where it first appears, unless it counts pages
            assert counter or any((q, j) < (p, k) and t == text for q, j, t in kept)


def test_a_pdf_title_is_its_metadatas_when_the_cover_says_it_else_the_covers_largest_type() -> None:
    cover = [_page_line("Shenzhen Big Tree Technology Co., Ltd.", size=9.0, y=800.0),
             _page_line("BIGTREETECH", size=48.0, y=600.0), _page_line("CB1", size=48.0, y=550.0),
             _page_line("User Manual", size=28.0, y=500.0),
             _page_line("Note: firmware 1.2 and later", size=12.0, y=450.0)]
    # a template's title copied into every file made from it: the cover does not say it
    template = "BIGTREETECH                    OCTOPUS V1.0"
    assert document_title(template, cover, body=10.0) == "BIGTREETECH CB1 User Manual"
    assert document_title("", cover, body=10.0) == "BIGTREETECH CB1 User Manual"
    assert document_title("CB1  User Manual", cover, body=10.0) == "CB1 User Manual"  # the cover says it
    assert document_title("", [_page_line("Wiring", size=11.0)], body=10.0) == ""  # no cover: the first heading
    # a first page that is no cover (a chapter's heading) overrules no metadata title
    chapter = [_page_line("1 Safety", size=16.0, y=760.0), _page_line("Isolate the unit first.", size=10.0)]
    assert document_title("Corvid test guide", chapter, body=10.0) == "Corvid test guide"
    # a version number set in the cover's largest type is no title: the largest lines of words are
    versioned = [_page_line("MD DUMPER", size=19.0, y=760.0), _page_line("USB Reader-Flasher", size=22.0, y=700.0),
                 _page_line("2.1", size=40.0, y=300.0)]
    assert document_title("", versioned, body=12.0) == "MD DUMPER USB Reader-Flasher"
    assert document_title("", chapter, body=10.0) == "1 Safety"
    # the previous edition's title copied into the new edition's file: the first page names another
    # edition, though all the title's words (a cover set below twice the body's size)
    edition = [_page_line("BIGTREETECH", size=26.0, y=600.0), _page_line("TMC2209-V1.2", size=26.0, y=560.0),
               _page_line("Stepper motor drive module, page 1 of the V1.2 manual", size=14.0, y=500.0)]
    assert document_title("BIGTREETECH TMC2209-V1.1", edition, body=14.0) == "BIGTREETECH TMC2209-V1.2"
    assert document_title("BIGTREETECH TMC2209-V1.2", edition, body=14.0) == "BIGTREETECH TMC2209-V1.2"
    assert document_title("TMC2209 driver", edition, body=14.0) == "TMC2209 driver"  # names no edition


def test_a_cells_wrapped_line_goes_back_in_its_cell_and_a_bullet_set_apart_is_no_cell() -> None:
    cols = [95.0, 262.0]
    spec = [_table_line(["Dimensions", "64 x 56 x 32.55mm"], cols, 151.0, size=12.0),
            {**_page_line("Without case: 58 x 50 x 28mm", size=12.0, y=128.0), "x": [262.0], "e": [420.0]},
            _table_line(["Drive Chip", "TMC5160-TA"], cols, 105.0, size=12.0)]
    joined = wrapped_cells(spec)
    assert [ln["c"] for ln in joined] == [["Dimensions", "64 x 56 x 32.55mm Without case: 58 x 50 x 28mm"],
                                          ["Drive Chip", "TMC5160-TA"]]
    assert _table_runs(joined) == {0: "row", 1: "row"}  # one table, not two rows a paragraph apart
    # a line under the first column is a line of its own; so is one in other type
    first = {**spec[1], "x": [95.0]}
    assert len(wrapped_cells([spec[0], first, spec[2]])) == 3
    assert len(wrapped_cells([spec[0], {**spec[1], "s": 9.0}, spec[2]])) == 3
    # wide text wraps with no space
    zh = [_table_line(["v1.01", "新增 BOOT 按键标识，"], cols, 151.0, size=12.0),
          {**_page_line("增加重启说明", size=12.0, y=130.0), "x": [262.0], "e": [330.0]}]
    assert wrapped_cells(zh)[0]["c"][1] == "新增 BOOT 按键标识，增加重启说明"

    # an icon font's bullet, or a bullet, set apart from its item: a list item, not a row of cells
    runs = [("\uf09e", 95.0, 500.0, 11.0), ("Compact size and lightweight;\n", 120.0, 500.0, 11.0),
            ("•", 95.0, 480.0, 11.0), ("Non-contact operation.\n", 120.0, 480.0, 11.0)]
    got = _lines(runs)
    assert [(ln["t"], ln["c"]) for ln in got] == [("• Compact size and lightweight;", []),
                                                  ("• Non-contact operation.", [])]


def _widths_font(pdf: bytes) -> bytes:
    """``pdf`` with its font's glyph widths given (/Widths: 0.556 em a glyph, a space 0.278), as
    producers that embed their fonts write them."""
    widths = " ".join("278" if c == 32 else "556" for c in range(32, 127))
    return pdf.replace(b"/BaseFont /Helvetica >>",
                       f"/BaseFont /Helvetica /FirstChar 32 /LastChar 126 /Widths [{widths}] >>".encode())


def test_a_table_row_set_as_one_tj_array_reads_in_its_columns(lib: Path) -> None:
    # pdfTeX and Acrobat Distiller set a row as one TJ array whose numbers move the pen from cell to
    # cell; pypdf reads it as one run with single spaces ("BR-20 24 V 2.5 A"), its columns lost
    rows = [("Model", "Voltage", "Current"), ("BR-20", "24 V", "2.5 A"), ("BR-30", "48 V", "1.8 A")]
    content = ["BT /F1 10 Tf 72 720 Td (Ratings of the pumps:) Tj ET"]
    for k, (a, b, c) in enumerate(rows):
        content.append(f"BT /F1 10 Tf 72 {700 - 14 * k} Td [({a}) -4000 ({b}) 120 -3500 ({c})] TJ ET")
    content.append("BT /F1 10 Tf 72 640 Td [(Check) -333 (the) -1100 (seals.)] TJ 0 -14 Td (Then start.) Tj ET")
    path = lib / "ratings.pdf"
    path.write_bytes(_widths_font(raw_pdf("\n".join(content).encode())))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    rows = [b for b in blocks if b.kind == "table_row"]
    assert [doc.text[b.char_start:b.char_end] for b in rows] == [
        "Model | Voltage | Current", "BR-20 | 24 V | 2.5 A", "BR-30 | 48 V | 1.8 A"], doc.text
    assert rows[2].context == "Model | Voltage | Current"
    # a move of an em inside a line is a wide space, not a cell: the line reads on with one space,
    # and the next line, placed relative to it, keeps its place
    assert "Check the seals.\nThen start." in doc.text, doc.text


@pytest.mark.parametrize("content, widths, split", [
    ("BT /F1 10 Tf 72 700 Td [(A) -4000 (B) -2000 (C)] TJ ET", True, True),
    ("BT /F1 10 Tf 72 700 Td (Lead) Tj [(A) -4000 (B) -2000 (C)] TJ ET", True, False),  # the pen is not at the line's start
    ("BT /F1 10 Tf 72 700 Td [(A) -4000 (B) -2000 (C)] TJ (D) Tj ET", True, False),  # text after it would follow the start
    ("BT /F1 10 Tf 72 700 Td [(A) -1999 (B) -1700 (C)] TJ ET", True, False),  # alike, under two em: a justified line
    ("BT /F1 10 Tf 72 700 Td [(A) -1200 (B) -1900 (C)] TJ ET", True, True),  # unlike, from one em: columns
    ("BT /F1 10 Tf 72 700 Td [(2.0) -4000 (PROGRAM MODE ENTRY)] TJ ET", True, False),  # a number and its title
    ("BT /F1 10 Tf 72 700 Td [(A) -4000 (B) -2000 (C)] TJ ET", False, False),  # no glyph widths to place (B) by
])
def test_wide_moves_are_split_only_where_the_rewrite_is_exact(content: str, widths: bool, split: bool) -> None:
    from pypdf import PdfReader

    from engine.ingest.pdf_gaps import split_wide_moves

    pdf = raw_pdf(content.encode())
    page = PdfReader(io.BytesIO(_widths_font(pdf) if widths else pdf)).pages[0]
    assert split_wide_moves(page) is split
    runs: list[tuple[str, float]] = []
    page.extract_text(visitor_text=lambda t, cm, tm, font, size: runs.append((t.strip(), tm[4])) if t.strip() else None)
    if split:  # each piece after the width of those before it and the moves between them
        moves = [float(m) / 100 for m in re.findall(r"-(\d+)", content.split("[")[1])]
        assert runs == [("A", 72.0), ("B", 72.0 + 5.56 + moves[0]), ("C", 72.0 + 2 * 5.56 + moves[0] + moves[1])]


def test_cells_placed_one_by_one_on_a_line_and_a_header_wrapped_over_two_lines_read_as_a_table(lib: Path) -> None:
    # a producer that places each cell with Tm or Td on the row's baseline: pypdf reads the cells on
    # as one run at the first one's x ("1 10 41 49"), and a header cell wrapped onto two lines
    # ("Average" / "current") is written cell after cell; read so, the rows had no columns and no labels
    xs = [72, 150, 230, 330]
    content = ["BT /F1 10 Tf 72 730 Td (Levels of the pump:) Tj ET",
               "BT /F1 10 Tf 1 0 0 1 72 690 Tm (Level) Tj 1 0 0 1 150 690 Tm (Delay) Tj "
               "1 0 0 1 230 704 Tm (Average) Tj 0 -14 Td (current) Tj 1 0 0 1 330 690 Tm (Life (hours)) Tj ET"]
    for k, cells in enumerate([("1", "10", "41", "49"), ("2", "8", "33", "60"), ("3", "6", "28", "72")]):
        moves = " ".join(f"{b - a} 0 Td ({c}) Tj" for a, b, c in zip(xs, xs[1:], cells[1:]))
        content.append(f"BT /F1 10 Tf 72 {670 - 14 * k} Td ({cells[0]}) Tj {moves} ET")
    content.append("BT /F1 10 Tf 72 600 Td (Check) Tj 31 0 Td (the seals.) Tj ET")  # a word's move: one run
    path = lib / "levels.pdf"
    path.write_bytes(_widths_font(raw_pdf("\n".join(content).encode())))
    doc, blocks = read_document(lib, path, ChunkingConfig())
    rows = [doc.text[b.char_start:b.char_end] for b in blocks if b.kind == "table_row"]
    assert rows == ["Level | Delay | Average current | Life (hours)", "1 | 10 | 41 | 49", "2 | 8 | 33 | 60",
                    "3 | 6 | 28 | 72"], doc.text
    assert "Check the seals." in doc.text, doc.text


def test_a_paragraph_over_a_table_is_no_header_of_it() -> None:
    from engine.ingest.pdf import stacked_headers

    cols = [60.0, 150.0, 240.0]
    rows = [_table_line(["1", "10", "41"], cols, 660.0), _table_line(["2", "8", "33"], cols, 646.0)]
    prose = [_table_line(["The pump has three levels; each one"], [60.0], 688.0),
             _table_line(["is set on the front panel."], [60.0], 676.0)]
    prose[0]["e"], prose[1]["e"] = [330.0], [190.0]  # across the table's columns
    assert stacked_headers([*prose, *rows]) == [*prose, *rows]
    one = [_table_line(["Level", "Delay", "Current"], cols, 676.0)]  # one line: the table reading's own rule
    assert stacked_headers([*one, *rows]) == [*one, *rows]
    # rows with an empty cell over rows with all theirs: values, each line across the same columns
    short = [_table_line(["7", "100nF/16V"], cols[:2], 688.0), _table_line(["2", "100nF/100V"], cols[:2], 674.0)]
    assert stacked_headers([*short, *rows]) == [*short, *rows]
    same = [_table_line(["Part", "Value"], cols[:2], 688.0), _table_line(["Qty", "Note"], cols[:2], 674.0)]
    assert stacked_headers([*same, *rows]) == [*same, *rows]
    two = [_table_line(["Average"], [240.0], 690.0), _table_line(["Level", "Delay", "current"], cols, 676.0)]
    assert stacked_headers([*two, *rows])[0]["c"] == ["Level", "Delay", "Average current"]


def test_a_composite_fonts_widths_are_read_from_its_w_array() -> None:
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, NumberObject

    from engine.ingest.pdf_gaps import _cid_widths, _font_glyphs

    w = ArrayObject([NumberObject(3), ArrayObject([NumberObject(500), NumberObject(600)]),
                     NumberObject(10), NumberObject(12), NumberObject(250)])
    assert _cid_widths(w) == {3: 500.0, 4: 600.0, 10: 250.0, 11: 250.0, 12: 250.0}
    desc = DictionaryObject({NameObject("/W"): w, NameObject("/DW"): NumberObject(1000)})
    font = DictionaryObject({NameObject("/Subtype"): NameObject("/Type0"),
                             NameObject("/Encoding"): NameObject("/Identity-H"),
                             NameObject("/DescendantFonts"): ArrayObject([desc])})
    # two bytes a glyph; a glyph /W leaves out takes /DW; no word spacing for a two-byte code 32
    assert _font_glyphs(font)(b"\x00\x04\x00\x0b\x00\x20") == [(600.0, False), (250.0, False), (1000.0, False)]
    font[NameObject("/Encoding")] = NameObject("/UniJIS-UCS2-H")  # another CMap: its codes are not read
    assert _font_glyphs(font) is None
