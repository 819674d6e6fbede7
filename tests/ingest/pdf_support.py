"""PDFs made by the tests: fpdf2 for real documents, hand-written bytes for hostile ones
(raw_pdf, bomb_pdf: shared with the reliability bench's bad-file generator)."""

from __future__ import annotations

from pathlib import Path

from bench.badfiles import bomb_pdf, raw_pdf

__all__ = ["bomb_pdf", "encrypted_pdf", "manual_pdf", "no_text_pdf", "page_break_pdf", "raw_pdf",
           "running_header_pdf", "two_column_pdf"]


def manual_pdf(path: Path, pages: int = 2) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Corvid test guide")
    for p in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("helvetica", size=20)
        pdf.cell(0, 10, f"{p} Section {p}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, f"Isolate the unit before work on section {p}. " * 6)
        pdf.ln(4)
        if p == 1:
            for row in [("Fastener", "Size", "Torque (Nm)"), ("Casing bolts", "M12", "55"),
                        ("Impeller nut", "M16", "38")]:
                for cell in row:
                    pdf.cell(50, 6, cell)
                pdf.ln()
    pdf.output(str(path))
    return path


def running_header_pdf(path: Path, pages: int = 4) -> Path:
    """A manual whose every page has a running header (its title), a footer with the page number,
    and a paragraph that runs on from one page to the next."""
    from fpdf import FPDF

    class Manual(FPDF):
        def header(self) -> None:
            self.set_font("helvetica", size=9)
            self.cell(0, 8, "Corvid RX-7 service manual", new_x="LMARGIN", new_y="NEXT")

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("helvetica", size=9)
            self.cell(0, 8, f"Page {self.page_no()} of {pages}")

    pdf = Manual()
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for p in range(1, pages + 1):
        pdf.multi_cell(0, 6, f"Step {p}: loosen the clamp bolts of stage {p} and check the seal faces. " * 40)
        pdf.ln(2)
    pdf.output(str(path))
    return path


def page_break_pdf(path: Path) -> Path:
    """A manual whose sentence and table run on over page breaks: page 1 ends inside a sentence,
    page 2 ends inside a table whose last row is on page 3, page 3 ends on a finished sentence and
    page 4 opens with its own."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)

    def lines(rows: list[str], y: float) -> float:
        pdf.set_font("helvetica", size=11)
        for row in rows:
            pdf.set_xy(20, y)
            pdf.cell(170, 6, row)
            y += 6
        return y

    def table(rows: list[tuple[str, str, str]], y: float) -> float:
        pdf.set_font("helvetica", size=11)
        for row in rows:
            for k, cell in enumerate(row):
                pdf.set_xy(20 + 50 * k, y)
                pdf.cell(50, 6, cell)
            y += 6
        return y

    pdf.add_page()
    pdf.set_font("helvetica", size=18)
    pdf.set_xy(20, 20)
    pdf.cell(0, 10, "Seal replacement")
    lines(["Before you remove the seal cartridge, close the suction valve and the discharge",
           "valve, drain the casing through plug P2, then lock out breaker Q3 and"], 36)
    pdf.add_page()
    y = lines(["attach a tag to it before any work on the pump.", "Tighten every fastener to its torque."], 20)
    table([("Fastener", "Size", "Torque (Nm)"), ("Casing bolts", "M12", "55"), ("Impeller nut", "M16", "38")], y + 4)
    pdf.add_page()
    y = table([("Gland nuts", "M10", "25")], 20)
    lines(["Refit the coupling guard before you start the pump."], y + 8)
    pdf.add_page()
    lines(["Run the pump for ten minutes and check the seal for leaks."], 20)
    pdf.output(str(path))
    return path


LEFT_COLUMN = ["Before servicing the pump, close the", "suction valve and the discharge valve.",
               "Lock out breaker Q3 and attach a tag.", "Wait ten minutes for the motor to cool."]
RIGHT_COLUMN = ["To replace the mechanical seal, remove", "the coupling guard and the coupling",
                "spacer. Loosen the gland nuts evenly.", "Pull the seal cartridge out of the",
                "casing. Tighten the nuts to 25 N.m."]


def two_column_pdf(path: Path, line_by_line: bool = True) -> Path:
    """A title, two prose columns and a full-width note. ``line_by_line``: the columns are written
    across the page one line at a time (left line, right line, ...), as many generators do, so
    pypdf sees the two halves of each line at one height."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=18)
    pdf.cell(0, 10, "Pump maintenance", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    y = pdf.get_y() + 4
    rows = max(len(LEFT_COLUMN), len(RIGHT_COLUMN))
    order = ([(i, col) for i in range(rows) for col in (0, 1)] if line_by_line
             else [(i, col) for col in (0, 1) for i in range(rows)])
    for i, col in order:
        lines = (LEFT_COLUMN, RIGHT_COLUMN)[col]
        if i < len(lines):
            pdf.text(15 if col == 0 else 110, y + 5 * i, lines[i])
    pdf.set_y(y + 5 * rows + 6)
    pdf.cell(0, 6, "Full width note: keep this manual with the pump at all times.", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def no_text_pdf(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")  # a drawing, like a scanned image: no text layer
    pdf.output(str(path))
    return path


def encrypted_pdf(path: Path, source: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    w = PdfWriter(clone_from=PdfReader(source))
    w.encrypt(user_password="secret", owner_password="owner")
    with open(path, "wb") as f:
        w.write(f)
    return path
