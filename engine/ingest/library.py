"""A library folder -> documents and blocks. Bad files are reported and skipped, never raised.

``scan_library`` lists the candidate files (hidden files and folders, and the sidecar
``fieldqa.toml``, are ignored); ``read_document`` reads one; ``iter_library`` does both
and yields, in path order, ``(Document, blocks)`` for each good file and an
``IngestIssue`` for each skipped one (``severity="skipped"``) or each problem in a file
that was still read (``severity="warning"``, yielded before that file's document). The copies of
pages' sources a documentation build keeps beside them (Sphinx's ``_sources/``) come last: one whose
page was read is skipped, as its duplicate (``engine.ingest.formats.source_of_page``); one whose page
was not (a page of links) is read in its place.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Iterator

from engine.config import ChunkingConfig
from engine.ingest.blocks import Parsed
from engine.ingest.formats import FORMATS, UNSUPPORTED, format_of, source_of_page
from engine.ingest.html import parse_html
from engine.ingest.markdown import FrontMatterError, parse_markdown
from engine.ingest.metadata import SIDECAR, Sidecar, build_meta, read_sidecar
from engine.ingest.pdf import PdfFailure, parse_pdf
from engine.ingest.rst import parse_rst
from engine.ingest.text import parse_text
from engine.types import Block, Document, Format, IngestIssue

# a Markdown or text line longer than this is generated data, not prose: the file is skipped
# (chunking one 49 MB line would take minutes and gigabytes)
MAX_LINE_CHARS = 200_000


Item = tuple[Document, list[Block]] | IngestIssue


def scan_library(root: Path, config: ChunkingConfig) -> list[Path]:
    """Every non-hidden entry under ``root`` that is not a folder, sorted; symlinks are not followed."""
    del config  # the size cap is applied when reading, so oversized files are reported
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not (Path(dirpath) / d).is_symlink())
        here = Path(dirpath)
        for name in filenames:
            if name.startswith(".") or (here == root and name == SIDECAR):
                continue
            found.append(here / name)
        # a symlink to a folder is listed (and reported) rather than walked
        found.extend(here / d for d in os.listdir(here)
                     if not d.startswith(".") and (here / d).is_symlink() and (here / d).is_dir())
    return sorted(set(found))


def relative_name(root: Path, path: Path) -> str:
    """POSIX path relative to the root; undecodable bytes shown as escapes, never raised."""
    rel = path.relative_to(root).as_posix()
    return rel.encode("utf-8", "backslashreplace").decode("utf-8") if _bad_name(rel) else rel


def _bad_name(name: str) -> bool:
    try:
        name.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def read_document(root: Path, path: Path, config: ChunkingConfig, sidecar: Sidecar | None = None) -> Item:
    """One file -> ``(Document, blocks)``, or the reason it was skipped."""
    got = _read(root, path, config, sidecar or Sidecar())
    return got if isinstance(got, IngestIssue) else got[:2]


def iter_library(root: Path, config: ChunkingConfig) -> Iterator[Item]:
    root = Path(root)
    if not root.is_dir():
        yield IngestIssue(str(root), "library folder not found")
        return
    sidecar = read_sidecar(root)
    for problem in sidecar.problems:
        yield IngestIssue(SIDECAR, problem, "warning")
    paths = [p for p in scan_library(root, config) if not sidecar.excludes(relative_name(root, p))]
    pages = {p for p in paths if format_of(p) == "html"}
    sources = {p: page for p in paths if (page := source_of_page(p, pages)) is not None}
    read: set[Path] = set()  # pages read (not skipped)
    for path in [p for p in paths if p not in sources] + list(sources):  # a page before its source copy
        page = sources.get(path)
        if page in read:
            yield IngestIssue(relative_name(root, path), f"the source of {relative_name(root, page)}, "
                              "which is read instead (Sphinx keeps a copy of each page's source)")
            continue
        try:
            got = _read(root, path, config, sidecar)
        except Exception as e:  # one bad file never ends the run: it is skipped and named
            got = IngestIssue(relative_name(root, path), f"could not be read ({type(e).__name__}: "
                              f"{' '.join(str(e).split())[:200]})")
        if isinstance(got, IngestIssue):
            yield got
            continue
        read.add(path)
        doc, blocks, warnings = got
        yield from warnings
        yield doc, blocks


def _read(root: Path, path: Path, config: ChunkingConfig,
          sidecar: Sidecar) -> tuple[Document, list[Block], list[IngestIssue]] | IngestIssue:
    rel = relative_name(root, path)
    got = _file_bytes(root, path, config)
    if isinstance(got, str):
        return IngestIssue(rel, got)
    fmt, data = got
    parsed = _parse(path, fmt, data, config)
    if isinstance(parsed, str):
        return IngestIssue(rel, parsed)
    return _finish(rel, hashlib.sha256(data).hexdigest(), fmt, parsed, sidecar)


def _file_bytes(root: Path, path: Path, config: ChunkingConfig) -> tuple[Format, bytes] | str:
    """The file's format and bytes, or why it is skipped (name, link, kind, type, size)."""
    if _bad_name(path.relative_to(root).as_posix()):
        return "file name is not valid UTF-8: rename the file"
    fmt = format_of(path)
    try:
        st = path.lstat()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return "broken symbolic link"
        if not target.is_relative_to(root.resolve()):
            return "symbolic link to outside the library: not followed"
        if target.is_dir():
            return "symbolic link to a folder: not followed"
        st = target.stat()
    if stat.S_ISDIR(st.st_mode):
        return "is a folder"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (device, FIFO or socket)"
    if fmt is None:
        return f"{UNSUPPORTED} '{path.suffix or '(none)'}' (supported: {', '.join(sorted(FORMATS))})"
    cap = config.max_file_mb * 1024 * 1024
    if st.st_size > cap:
        return f"larger than {config.max_file_mb:g} MB (chunking.max_file_mb): {st.st_size / 1048576:.1f} MB"
    if st.st_size == 0:
        return "empty file"
    try:
        with open(path, "rb") as f:
            data = f.read(int(cap) + 1)
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    if len(data) > cap:
        return f"larger than {config.max_file_mb:g} MB (chunking.max_file_mb)"
    return fmt, data


def _parse(path: Path, fmt: Format, data: bytes, config: ChunkingConfig) -> Parsed | str:
    """The parsed document, or why it is skipped."""
    if fmt == "pdf":
        if not data.lstrip()[:5].startswith(b"%PDF"):
            return "not a PDF (no %PDF header)"
        parsed = parse_pdf(path, timeout_s=config.pdf_timeout_s, memory_mb=config.pdf_memory_mb)
        return parsed.reason if isinstance(parsed, PdfFailure) else parsed
    text = decode(data)
    if isinstance(text, IngestIssue):
        return text.reason
    if not text.strip():
        return "only whitespace"
    text = _lone_cr_to_lf(text)
    if fmt != "html" and _longest_line(text) > MAX_LINE_CHARS:
        return f"a line longer than {MAX_LINE_CHARS:,} characters: not a manual (generated or minified data?)"
    try:
        return {"markdown": parse_markdown, "html": parse_html, "text": parse_text, "rst": parse_rst}[fmt](text)
    except FrontMatterError as e:
        return f"{e}: fix the front matter (its access rules cannot be read, so the file is not indexed)"


def _longest_line(text: str) -> int:
    return max(map(len, text.split("\n")))


def _finish(rel: str, sha: str, fmt: Format, parsed: Parsed,
            sidecar: Sidecar) -> tuple[Document, list[Block], list[IngestIssue]] | IngestIssue:
    warnings = [IngestIssue(rel, w, "warning") for w in parsed.warnings]
    if not parsed.blocks:
        reason = {"html": "no text outside scripts, styles and navigation",
                  "pdf": "no extractable text: scanned? OCR is not supported"}.get(fmt, "no text")
        return IngestIssue(rel, reason)
    meta, problems = build_meta(rel, parsed.meta, sidecar.values_for(rel),
                                first_heading=parsed.title_heading, text=parsed.text)
    warnings += [IngestIssue(rel, p, "warning") for p in problems]
    doc = Document(path=rel, sha256=sha, format=fmt, meta=meta, text=parsed.text,
                   page_starts=parsed.page_starts)
    return doc, parsed.blocks, warnings


def decode(data: bytes) -> str | IngestIssue:
    """UTF-8 (with or without BOM) or UTF-16 with a BOM; anything else is reported."""
    if data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return IngestIssue("", "invalid UTF-16")
    if b"\x00" in data[:65536] or b"\x00" in data[-4096:]:
        return IngestIssue("", "binary file (NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return IngestIssue("", f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}; looks like "
                               "latin-1/cp1252?): convert it to UTF-8")


def _lone_cr_to_lf(text: str) -> str:
    """Old Mac line ends: '\\r' alone becomes '\\n' (same length, so offsets are unchanged)."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


_LONE_CR = re.compile(r"\r(?!\n)")
