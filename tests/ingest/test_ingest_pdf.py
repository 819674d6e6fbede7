"""PDF ingestion: pages, headings from font size, table rows, and the subprocess limits."""

from __future__ import annotations

from pathlib import Path

from pdf_support import bomb_pdf, manual_pdf, raw_pdf

from engine.config import ChunkingConfig
from engine.ingest import read_document
from engine.ingest.chunking import approx_counter, chunk_document
from engine.ingest.pdf import PdfFailure, parse_pdf
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
