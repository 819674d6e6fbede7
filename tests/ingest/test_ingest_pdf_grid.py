"""Tables drawn with rules (engine.ingest.pdf_grid): a row's wrapped cells read as one row."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pdf_support import raw_pdf

from engine.config import ChunkingConfig
from engine.ingest import read_document
from engine.ingest.pdf_grid import page_rules, ruled_rows

ROWS = [("Symptom", "Possible cause", "Remedy"),
        ("The pump does not start when the switch is turned on", "No supply voltage or the thermal cut-out has tripped",
         "Check the fuse F2 and let the motor cool for 30 minutes before restarting"),
        ("Display shows E4", "Water pressure below 0.8 bar", "Open the inlet valve fully and check the filter screen for debris"),
        ("Loud rattling noise", "Air in the pump housing",
         "Bleed the pump through the venting screw on top of the housing until water comes out")]


def _troubleshooting_pdf(path: Path, layout: str, tables: int = 1) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=16)
    pdf.cell(0, 10, "Troubleshooting", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    for t in range(tables):
        pdf.multi_cell(0, 5, "If the unit does not work as expected, check the table below before you call the "
                             "service department, and keep the unit switched off while you check it.")
        pdf.ln(2)
        with pdf.table(col_widths=(40, 40, 60), borders_layout=layout) as table:
            for r in ROWS:
                row = table.row()
                for c in r:
                    row.cell(c)
        pdf.ln(2)
    pdf.multi_cell(0, 5, "Contact your dealer if the fault persists.")
    pdf.output(str(path))
    return path


def _blocks(lib: Path, path: Path) -> list[tuple[str, str, str]]:
    doc, blocks = read_document(lib, path, ChunkingConfig())
    return [(b.kind, doc.text[b.char_start:b.char_end], b.context) for b in blocks]


@pytest.mark.parametrize("layout", ["ALL", "HORIZONTAL_LINES", "INTERNAL"])
def test_a_ruled_tables_wrapped_cells_are_read_in_their_rows(lib: Path, layout: str) -> None:
    # each cell wraps onto two lines, set cell after cell: line by line, no line holds a row's cells
    blocks = _blocks(lib, _troubleshooting_pdf(lib / "pump.pdf", layout))
    header = "Symptom | Possible cause | Remedy"
    assert [b for b in blocks if b[0] == "table_row"] == [
        ("table_row", header, ""), *(("table_row", " | ".join(r), header) for r in ROWS[1:])], blocks
    assert blocks[0][:2] == ("heading", "Troubleshooting")  # the title above the rules stays the title
    assert blocks[-1][:2] == ("paragraph", "Contact your dealer if the fault persists.")


def test_prose_between_two_ruled_tables_of_one_width_is_no_row(lib: Path) -> None:
    blocks = _blocks(lib, _troubleshooting_pdf(lib / "pumps.pdf", "ALL", tables=2))
    rows = [b for b in blocks if b[0] == "table_row"]
    assert len(rows) == 2 * len(ROWS)
    assert [" ".join(b[1].split()) for b in blocks if b[0] == "paragraph"].count(
        "If the unit does not work as expected, check the table below before you call the service department, "
        "and keep the unit switched off while you check it.") == 2


def _line(text: str, x: float, y: float, size: float = 10.0) -> dict:
    return {"t": text, "s": size, "y": y, "b": 0.0, "c": [], "x": [x], "e": [x + 5.0 * len(text)]}


def _cells(cells: list[str], xs: list[float], y: float) -> dict:
    return {"t": " ".join(cells), "s": 10.0, "y": y, "b": 0.0, "c": cells, "x": xs,
            "e": [x + 5.0 * len(c) for c, x in zip(cells, xs)]}


def test_lines_between_two_rules_that_read_as_rows_stay_rows() -> None:
    # ruled under its header, between groups of rows and at its ends, as a book sets a table: the
    # lines between two rules are rows of their own, line for line at one height in every column
    head = _cells(["Fastener", "Size", "Torque"], [72.0, 200.0, 300.0], 700.0)
    body = [_cells([a, b, c], [72.0, 200.0, 300.0], 680.0 - 14 * k)
            for k, (a, b, c) in enumerate([("Casing bolt", "M12", "55 Nm"), ("Impeller nut", "M16", "38 Nm"),
                                           ("Cover screw", "M6", "9 Nm"), ("Drain plug", "G1/4", "20 Nm"),
                                           ("Motor bolt", "M10", "45 Nm"), ("Fan screw", "M5", "6 Nm")])]
    lines = [head, *body]
    rules = ([(712.0, 70.0, 400.0), (692.0, 70.0, 400.0), (645.0, 70.0, 400.0), (600.0, 70.0, 400.0)], [])
    assert ruled_rows(lines, rules) == lines


def test_ruled_rows_of_wrapped_cells_without_vertical_rules_take_their_columns_from_the_cells() -> None:
    xs = [72.0, 200.0, 300.0]
    lines = [_cells(["Code", "Meaning", "What to do"], xs, 700.0),
             _cells(["E1", "Sensor open"], xs[:2], 676.0), _line("Check the probe cable", xs[2], 676.0),
             _line("and its plug", xs[2], 664.0),
             _cells(["E2", "Sensor short", "Replace the probe"], xs, 640.0)]
    rules = ([(712.0, 70.0, 450.0), (690.0, 70.0, 450.0), (652.0, 70.0, 450.0), (630.0, 70.0, 450.0)], [])
    got = ruled_rows(lines, rules)
    assert [ln["c"] for ln in got] == [["Code", "Meaning", "What to do"],
                                       ["E1", "Sensor open", "Check the probe cable and its plug"],
                                       ["E2", "Sensor short", "Replace the probe"]]


def test_page_rules_reads_strokes_thin_fills_and_the_transform_but_not_clipping_paths() -> None:
    from pypdf import PdfReader

    content = b"\n".join([
        b"q 1 0 0 1 10 20 cm 0 0 m 200 0 l S Q",  # a stroked line, moved by the transform
        b"50 400 300 0.5 re f",  # a thin filled bar: a rule
        b"60 300 0.8 100 re f",  # a thin upright bar
        b"0 0 612 792 re W n",  # a clipping path: no rule
        b"100 100 50 50 re S",  # a box: its four edges
    ])
    h, v = page_rules(PdfReader(io.BytesIO(raw_pdf(content))).pages[0])
    assert sorted(h) == [(20.0, 10.0, 210.0), (100.0, 100.0, 150.0), (150.0, 100.0, 150.0), (400.25, 50.0, 350.0)]
    assert sorted(v) == [(60.4, 300.0, 400.0), (100.0, 100.0, 150.0), (150.0, 100.0, 150.0)]


def test_shaded_areas_side_by_side_are_one_and_their_sides_no_rule() -> None:
    from pypdf import PdfReader

    # a word processor's highlight: a box a word and a box a space, touching; then a shaded caption
    content = b"72 700 30 14 re f 102 700 4 14 re f 106 700 40 14 re f 300 500 80 12 re f"
    h, v = page_rules(PdfReader(io.BytesIO(raw_pdf(content))).pages[0])
    assert sorted(h) == [(500.0, 300.0, 380.0), (512.0, 300.0, 380.0), (700.0, 72.0, 146.0), (714.0, 72.0, 146.0)]
    assert v == []


def test_highlighted_prose_is_no_table(lib: Path) -> None:
    from fpdf import FPDF

    words = ("Press and hold the boot button on the board, connect the board and the computer with a "
             "USB cable, then copy the compiled firmware file to the disk that appears.").split()
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=16)
    pdf.cell(0, 10, "Firmware update", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=11)
    pdf.set_fill_color(255, 255, 0)
    pdf.c_margin = 0
    for line in (words[:8], words[8:16], words[16:]):  # a highlight box a word and a box a space
        for w in line:
            pdf.cell(pdf.get_string_width(w), 7, w, fill=True)
            pdf.cell(pdf.get_string_width(" "), 7, " ", fill=True)
        pdf.ln(9)
    pdf.output(str(lib / "flash.pdf"))
    blocks = _blocks(lib, lib / "flash.pdf")
    assert [b[0] for b in blocks] == ["heading", "paragraph"], blocks
    assert " ".join(blocks[1][1].split()) == " ".join(words)
