"""A folder of hostile input for the reliability bench: every kind of bad file, in bulk.

``make_bad_library(root, outside, n, seed)`` writes ``n`` files (plus a few good manuals) under
``root`` and returns what it wrote, by kind. The kinds follow issue 18's list: random bytes
under every extension, invalid UTF-8 and UTF-16, NUL bytes, very long single lines, deeply
nested HTML and Markdown, truncated, encrypted, corrupt and decompression-bomb PDFs, symlink
loops, links out of the root (to a file holding ``CANARY``), dangling links, FIFOs, odd names
(non-UTF-8 bytes, control characters, 255-byte names), and front matter built to exhaust a
YAML parser. Each PDF with a ``%PDF`` header costs a parser subprocess, so their share is kept
small and fixed.
"""

from __future__ import annotations

import codecs
import os
import random
import zlib
from dataclasses import dataclass, field
from pathlib import Path

CANARY = "CANARY-OUTSIDE-THE-LIBRARY-7f3a"
GOOD_MARK = "goodmark"
EXTENSIONS = (".md", ".markdown", ".html", ".htm", ".pdf", ".txt", ".text", ".docx", ".png", "")


@dataclass
class BadLibrary:
    root: Path
    kinds: dict[str, int] = field(default_factory=dict)  # kind -> files written
    good: list[str] = field(default_factory=list)  # names of the good manuals mixed in
    entries: list[Path] = field(default_factory=list)  # every entry written (files, links, FIFOs)

    def add(self, kind: str, path: Path) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.entries.append(path)


def raw_pdf(content: bytes, *, flate: bool = False) -> bytes:
    """A one-page PDF whose page stream is ``content``."""
    stream = f"<< /Length {len(content)}{' /Filter /FlateDecode' if flate else ''} >>".encode()
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
            stream + b"\nstream\n" + content + b"\nendstream"]
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


def _text_pdf(words: str) -> bytes:
    return raw_pdf(f"BT /F1 12 Tf 72 720 Td ({words}) Tj ET".encode())


def bomb_pdf(megabytes: int) -> bytes:
    z = zlib.compressobj(1)
    data = b"".join(z.compress(b" " * (1 << 20)) for _ in range(megabytes)) + z.flush()
    return raw_pdf(data, flate=True)


def _encrypted_pdf() -> bytes:
    # an /Encrypt entry the parser must refuse (or fail to decrypt), not hang on
    pdf = _text_pdf("locked manual")
    return pdf.replace(b"/Root 1 0 R >>", b"/Root 1 0 R /Encrypt << /Filter /Standard /V 2 /R 3 /O (x) "
                                          b"/U (y) /P -4 /Length 128 >> /ID [<00> <00>] >>")


def _front(body: str) -> str:
    return f"---\n{body}\n---\n# Manual\n\n## Part\n\nTighten to 52 N·m.\n"


def _alias_bomb() -> str:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        name = chr(ord("a") + i)
        lines.append(f"{name}: &{name} [{','.join('*' + prev for _ in range(9))}]")
    return _front("\n".join(lines))


TEXT_KINDS = ("random-bytes", "invalid-utf8", "invalid-utf16", "nul-bytes", "long-line", "deep-html",
              "deep-markdown", "deep-quote", "alias-bomb", "deep-yaml", "bad-date", "huge-version",
              "bad-visibility", "control-chars", "odd-name", "long-name")


def _content(kind: str, rnd: random.Random, long_line: int) -> tuple[str, bytes]:
    """(extension, bytes) for one file of a text kind."""
    if kind == "random-bytes":
        return rnd.choice(EXTENSIONS), rnd.randbytes(rnd.randint(1, 4096))
    if kind == "invalid-utf8":
        return rnd.choice((".md", ".txt", ".html")), b"# T\n\n" + bytes(rnd.randint(0x80, 0xFF) for _ in range(64))
    if kind == "invalid-utf16":
        return rnd.choice((".md", ".txt")), codecs.BOM_UTF16_LE + b"\x00\xd8\x00\xd8" + rnd.randbytes(7)
    if kind == "nul-bytes":
        return rnd.choice((".md", ".txt", ".html")), b"# Title\n\nText\x00with\x00NULs.\n"
    if kind == "long-line":
        return rnd.choice((".md", ".txt")), b"word " * (long_line // 5)
    if kind == "deep-html":
        depth = 10_000
        return ".html", ("<div>" * depth + "deep text" + "</div>" * depth).encode()
    if kind == "deep-markdown":
        return ".md", "".join("  " * i + "- level\n" for i in range(1000)).encode()
    if kind == "deep-quote":
        return ".md", (">" * 10_000 + " quoted\n").encode()
    if kind == "alias-bomb":
        return ".md", _alias_bomb().encode()
    if kind == "deep-yaml":
        return ".md", _front("a: " + "[" * 5000 + "]" * 5000).encode()
    if kind == "bad-date":
        return ".md", _front(f"date: 2026-02-{rnd.randint(30, 31)}").encode()
    if kind == "huge-version":
        return ".md", _front("version: " + "9" * 5000).encode()
    if kind == "bad-visibility":
        return ".md", _front(rnd.choice(("visibility: 1", "visibility: {team: electrical-team}",
                                         "status: Superseded (2026)"))).encode()
    if kind == "control-chars":
        return ".md", "# \x1b[31mRed\u202e title\n\nText with \x07 bell and \u200b zero width.\n".encode()
    return ".md", b"# Named oddly\n\nA body.\n"  # odd-name / long-name: the name is the test


def _name(kind: str, i: int, ext: str, rnd: random.Random) -> str | bytes:
    if kind == "odd-name":
        return rnd.choice((f"bad-\udcff-{i}{ext}".encode("utf-8", "surrogateescape"),
                           f"line\nbreak-{i}{ext}", f"-dash {i} (copy){ext}", f"tab\there-{i}{ext}",
                           f"rtl-\u202e{i}{ext}", f"空白 {i}{ext}"))
    if kind == "long-name":
        stem = f"n{i}-"
        return stem + "x" * (255 - len(stem) - len(ext)) + ext
    return f"{kind}-{i:05d}{ext}"


def make_bad_library(root: Path, outside: Path, n: int, *, seed: int = 18, pdfs: int = 8,
                     long_line: int = 210_000, huge_line_mb: float = 2, good: int = 5) -> BadLibrary:
    """Write ``n`` bad entries (and ``good`` good manuals) under ``root``; ``outside`` gets the canary."""
    rnd = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text(f"# Secret\n\n{CANARY} must never be indexed.\n", encoding="utf-8")
    lib = BadLibrary(root)
    for g in range(good):
        p = root / f"good-{g}.md"
        p.write_text(f"# Good manual {g}\n\n## Valves\n\nClose valve V{g} ({GOOD_MARK}-{g}).\n", encoding="utf-8")
        lib.good.append(p.name)
    huge = root / "one-huge-line.txt"
    huge.write_bytes(b"x" * int(huge_line_mb * 1024 * 1024))
    lib.add("huge-line", huge)
    _special(root, outside, lib, pdfs, rnd)
    i = 0
    while len(lib.entries) < n:
        sub = root / f"d{i % 23}"
        sub.mkdir(exist_ok=True)
        kind = TEXT_KINDS[i % len(TEXT_KINDS)]
        ext, data = _content(kind, rnd, long_line)
        name = _name(kind, i, ext, rnd)
        path = sub / (os.fsdecode(name) if isinstance(name, bytes) else name)
        path.write_bytes(data)
        lib.add(kind, path)
        i += 1
    return lib


def _special(root: Path, outside: Path, lib: BadLibrary, pdfs: int, rnd: random.Random) -> None:
    """PDFs (each one a parser subprocess), links and FIFOs: a fixed, small number."""
    pdf_dir = root / "pdf"
    pdf_dir.mkdir()
    good_pdf = _text_pdf("Manual page one")
    makers = (("pdf-truncated", lambda: good_pdf[: rnd.randint(20, len(good_pdf) - 10)]),
              ("pdf-encrypted", _encrypted_pdf),
              ("pdf-bomb", lambda: bomb_pdf(200)),
              ("pdf-garbage", lambda: b"%PDF-1.7\n" + rnd.randbytes(2048)))
    for j in range(pdfs):
        kind, make = makers[j % len(makers)]
        p = pdf_dir / f"{kind}-{j}.pdf"
        p.write_bytes(make())
        lib.add(kind, p)
    links = root / "links"
    links.mkdir()
    for j in range(4):
        a, b = links / f"loop-a{j}.md", links / f"loop-b{j}.md"
        os.symlink(b, a)
        os.symlink(a, b)
        lib.add("symlink-loop", a)
        lib.add("symlink-loop", b)
        out = links / f"escape-{j}.md"
        os.symlink(outside / "secret.md", out)
        lib.add("link-outside", out)
        dangling = links / f"dangling-{j}.md"
        os.symlink(links / "missing.md", dangling)
        lib.add("link-dangling", dangling)
    os.symlink(outside, links / "to-outside-dir")
    lib.add("link-outside-dir", links / "to-outside-dir")
    os.symlink(root, links / "to-root")  # a loop through a folder link
    lib.add("link-loop-dir", links / "to-root")
    for j in range(3):
        fifo = links / f"pipe-{j}.md"
        os.mkfifo(fifo)
        lib.add("fifo", fifo)
