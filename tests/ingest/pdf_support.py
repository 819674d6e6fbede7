"""PDFs made by the tests: fpdf2 for real documents, hand-written bytes for hostile ones."""

from __future__ import annotations

import zlib
from pathlib import Path


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


def raw_pdf(content: bytes, *, flate: bool = False) -> bytes:
    """A one-page PDF with ``content`` as its page stream (optionally FlateDecode'd as given)."""
    stream_dict = f"<< /Length {len(content)}{' /Filter /FlateDecode' if flate else ''} >>".encode()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
        stream_dict + b"\nstream\n" + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def bomb_pdf(megabytes: int) -> bytes:
    """A tiny PDF whose content stream inflates to ``megabytes`` MB."""
    z = zlib.compressobj(1)
    chunk = b" " * (1 << 20)
    data = b"".join(z.compress(chunk) for _ in range(megabytes)) + z.flush()
    return raw_pdf(data, flate=True)


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
