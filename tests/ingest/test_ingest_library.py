"""A library folder full of bad files: each reported with its reason, the good ones chunked."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from pdf_support import encrypted_pdf, manual_pdf, no_text_pdf

from engine.config import ChunkingConfig
from engine.ingest import iter_library
from engine.ingest.chunking import approx_counter, chunk_document
from engine.types import IngestIssue

GOOD_MD = "# Good\n\n## Part\n\nA good paragraph about valves.\n"


def _bad_library(root: Path, outside: Path) -> dict[str, str]:
    """Write the files; return {relative path: expected words in the reason}."""
    w = lambda rel, data: (root / rel).parent.mkdir(parents=True, exist_ok=True) or (  # noqa: E731
        (root / rel).write_bytes(data if isinstance(data, bytes) else data.encode()))
    expect: dict[str, str] = {}
    w("good.md", GOOD_MD)
    w("good.txt", "1 Intro\n\nPlain text manual.\n")
    w("sub/good.html", "<html><body><h1>H</h1><p>Para.</p></body></html>")
    w("utf16.txt", codecs.BOM_UTF16_LE + "UTF-16 text with a BOM.".encode("utf-16-le"))
    w("bom.md", codecs.BOM_UTF8 + "# BOM\n\nText.\n".encode())
    w("oldmac.txt", "Line one.\rLine two.\r\rSecond paragraph.\r")
    w("huge-line.txt", "word " * 40000)  # one 200 KB line: chunked, within budget
    w("nested.md", "".join("  " * i + "- level\n" for i in range(120)))  # deeper than the parser follows
    w("bad-front.md", "---\ntitle: [unclosed\n---\n# Body\n\nText.\n")
    expect["bad-front.md"] = "not valid YAML"  # its access rules cannot be read: fails closed
    w("bad-date.md", "---\ndate: yesterday\nstatus: retired\n---\n# Body\n\nText.\n")
    manual_pdf(root / "manual.pdf", pages=1)

    w("binary.md", b"# Title\x00\x01\x02 binary")
    expect["binary.md"] = "NUL"
    w("latin1.txt", "Température élevée".encode("cp1252"))
    expect["latin1.txt"] = "not UTF-8"
    w("empty.md", b"")
    expect["empty.md"] = "empty"
    w("blank.txt", "  \n\t\n   \n")
    expect["blank.txt"] = "whitespace"
    w("big.md", "x" * 600_000)
    expect["big.md"] = "larger than"
    w("image.png", b"\x89PNG\r\n")
    expect["image.png"] = "unsupported"
    w("doc.docx", b"PK\x03\x04")
    expect["doc.docx"] = "unsupported"
    w("noext", "text")
    expect["noext"] = "unsupported"
    (outside / "secret.md").write_text("# Secret\n\nOutside the root.\n")
    os.symlink(outside / "secret.md", root / "escape.md")
    expect["escape.md"] = "outside the library"
    os.symlink(root / "missing.md", root / "dangling.md")
    expect["dangling.md"] = "broken"
    os.symlink(outside, root / "linked-dir")
    expect["linked-dir"] = "not followed"
    os.mkfifo(root / "pipe.md")
    expect["pipe.md"] = "not a regular file"
    w("garbage.pdf", b"%PDF-1.4 this is not really a pdf")
    expect["garbage.pdf"] = "PDF"
    w("fake.pdf", b"<html>not a pdf</html>")
    expect["fake.pdf"] = "no %PDF header"
    data = (root / "manual.pdf").read_bytes()
    w("truncated.pdf", data[: len(data) // 2])
    expect["truncated.pdf"] = "PDF"
    encrypted_pdf(root / "locked.pdf", root / "manual.pdf")
    expect["locked.pdf"] = "encrypted"
    no_text_pdf(root / "scanned.pdf")
    expect["scanned.pdf"] = "OCR is not supported"
    # the decompression bomb is in test_ingest_pdf.py (each PDF costs a subprocess start)
    w("script.html", "<html><head><script>x()</script><style>p{}</style></head><body><nav>n</nav></body></html>")
    expect["script.html"] = "no text"
    w("only-front.md", "---\ntitle: Nothing\n---\n")
    expect["only-front.md"] = "no text"
    (root / os.fsdecode(b"bad-\xff-name.md")).write_text("# x\n\ny\n")
    expect["bad-\\udcff-name.md"] = "not valid UTF-8"
    w(".hidden.md", "# hidden\n\nnot read\n")
    w(".git/config.md", "# hidden dir\n\nnot read\n")
    w("fieldqa.toml", '[[documents]]\nglob = "*.txt"\nmodels = ["HY-400"]\n')
    return expect


def test_bad_files_are_reported_and_good_files_chunked(tmp_path: Path) -> None:
    root, outside = tmp_path / "lib", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    expect = _bad_library(root, outside)
    assert len(expect) >= 20
    config = ChunkingConfig(max_file_mb=0.5, max_tokens=120, pdf_timeout_s=30, pdf_memory_mb=512)
    items = list(iter_library(root, config))
    skipped = {i.path: i.reason for i in items if isinstance(i, IngestIssue) and i.severity == "skipped"}
    warnings = {i.path: i.reason for i in items if isinstance(i, IngestIssue) and i.severity == "warning"}
    docs = {d.path: (d, b) for d, b in (i for i in items if not isinstance(i, IngestIssue))}
    for rel, words in expect.items():
        assert rel in skipped, f"{rel} not reported"
        assert words in skipped[rel], (rel, skipped[rel])
    assert set(skipped) == set(expect)
    assert sorted(docs) == ["bad-date.md", "bom.md", "good.md", "good.txt", "huge-line.txt",
                            "manual.pdf", "nested.md", "oldmac.txt", "sub/good.html", "utf16.txt"]
    assert "nested deeper" in warnings["nested.md"]
    date_warnings = " / ".join(i.reason for i in items if isinstance(i, IngestIssue) and i.path == "bad-date.md")
    assert "date: not a valid ISO date" in date_warnings and "status: must be" in date_warnings
    assert docs["good.txt"][0].meta.models == ("HY-400",)  # from the sidecar
    assert docs["utf16.txt"][0].text == "UTF-16 text with a BOM."
    assert docs["oldmac.txt"][0].text.count("\n") == 4
    for doc, blocks in docs.values():
        chunks = chunk_document(doc, blocks, approx_counter(), config)
        assert chunks, doc.path
        for c in chunks:
            assert doc.text[c.char_start:c.char_end] == c.text
            assert c.tokens <= 120 or c.tokens == approx_counter()(c.text) and len(c.text.split()) == 1


def test_a_sphinx_builds_copies_of_sources_are_read_only_where_their_page_is_not(tmp_path: Path) -> None:
    # Sphinx keeps each page's source as _sources/NAME.rst.txt beside NAME.html: read both, and
    # every passage comes back twice. A page of links skipped, its source is read instead
    from engine.ingest.formats import format_of, source_of_page

    pages = {"guide/wiring.html": "<html><body><h1>Wiring</h1><p>Connect J3 before power-on.</p></body></html>",
             "index.html": "<html><body><h1>Manual</h1><ul>" + "".join(
                 f'<li><a href="{n}.html">{n}</a></li>' for n in ("install", "wiring", "menus", "faq", "safety"))
                 + "</ul></body></html>",
             "_sources/guide/wiring.rst.txt": "Wiring\n======\n\nConnect J3 before power-on.\n",
             "_sources/index.rst.txt": "Manual\n======\n\nThis manual covers the P1125.\n\n.. toctree::\n\n   wiring\n",
             "_sources/v1.2-notes.md.txt": "# Notes\n\nRelease notes.\n"}
    for rel, text in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    items = list(iter_library(tmp_path, ChunkingConfig()))
    read = {i[0].path: i[0] for i in items if not isinstance(i, IngestIssue)}
    skipped = {i.path: i.reason for i in items if isinstance(i, IngestIssue)}
    assert "the source of guide/wiring.html" in skipped["_sources/guide/wiring.rst.txt"]
    assert "a page of links" in skipped["index.html"]
    assert set(read) == {"guide/wiring.html", "_sources/index.rst.txt", "_sources/v1.2-notes.md.txt"}
    assert read["_sources/index.rst.txt"].format == "rst" and "covers the P1125" in read["_sources/index.rst.txt"].text
    assert read["_sources/v1.2-notes.md.txt"].format == "markdown" and format_of("readme.txt") == "text"
    assert source_of_page(Path("_sources/v1.2-notes.md.txt"), {Path("v1.2-notes.html")}) == Path("v1.2-notes.html")


def test_files_skipped_for_their_type_are_shown_as_one_count_by_type() -> None:
    from engine.ingest.formats import UNSUPPORTED, folded

    issues = [IngestIssue(f"_images/p{k}.png", f"{UNSUPPORTED} '.png' (supported: .md)") for k in range(3)]
    issues += [IngestIssue("_static/a.js", f"{UNSUPPORTED} '.js' (supported: .md)"),
               IngestIssue("bad.pdf", "not a PDF (no %PDF header)"), IngestIssue("a.md", "odd", "warning")]
    shown = folded(issues)
    assert shown[0].path == "4 files (3 .png, 1 .js)" and shown[0].reason.startswith("unsupported file types")
    assert shown[1:] == issues[4:]
    assert folded(issues[3:]) == issues[3:]  # one such file is shown as it is
