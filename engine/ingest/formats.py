"""The file types a library may hold, whether a folder holds any (cheap: no parser is imported, so the
CLI can refuse an empty folder before anything is opened or created), and how the files skipped for
their type are shown (``folded``)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from engine.types import Format, IngestIssue

FORMATS: dict[str, Format] = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
                              ".html": "html", ".htm": "html", ".pdf": "pdf", ".txt": "text", ".text": "text",
                              ".rst": "rst", ".rest": "rst"}


def format_of(path: str | PurePath) -> Format | None:
    """The format a file is read as, by its name's suffix (None: not a manual's type). A text copy of
    a source file keeps the source's format: Sphinx keeps each page's source beside the built pages as
    ``_sources/NAME.rst.txt`` (or ``.md.txt``), reStructuredText or Markdown, not plain text."""
    p = PurePath(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt == "text":
        source = FORMATS.get(PurePath(p.stem).suffix.lower())
        return source if source in ("rst", "markdown") else fmt
    return fmt


def source_of_page(path: PurePath, pages: set[PurePath]) -> PurePath | None:
    """The built page among ``pages`` that ``path`` is the source copy of, or None: Sphinx copies each
    page's source to ``_sources/`` beside the built HTML (``_sources/guide/wiring.rst.txt`` for
    ``guide/wiring.html``). Read both, and every passage would come back twice, once as the page and
    once as its markup."""
    parts = path.parts
    if "_sources" not in parts or path.suffix.lower() != ".txt":
        return None
    i = len(parts) - 1 - parts[::-1].index("_sources")
    name = path.name[:-len(".txt")]
    stem, dot, ext = name.rpartition(".")
    if dot and "." + ext.lower() in FORMATS:
        name = stem  # NAME.rst.txt -> NAME
    for suffix in (".html", ".htm"):
        page = PurePath(*parts[:i], *parts[i + 1:-1], name + suffix)
        if page in pages:
            return page
    return None


def holds_manuals(root: Path) -> bool:
    """Whether ``root`` (or a folder under it, hidden ones aside) holds a file of a supported type."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(not f.startswith(".") and format_of(f) for f in filenames):
            return True
    return False


UNSUPPORTED = "unsupported file type"  # how a skip for the file's type begins (``folded``)


def folded(issues: list[IngestIssue]) -> list[IngestIssue]:
    """The issues to show a person: first one entry that counts the files skipped for their type, by
    type (a built site's pictures, scripts and style sheets: dozens of them), then the rest as they are."""
    types: dict[str, int] = {}
    rest: list[IngestIssue] = []
    for i in issues:
        if i.severity == "skipped" and i.reason.startswith(UNSUPPORTED):
            ext = Path(i.path).suffix.lower() or "(none)"
            types[ext] = types.get(ext, 0) + 1
        else:
            rest.append(i)
    if sum(types.values()) < 2:
        return issues
    counts = ", ".join(f"{n} {ext}" for ext, n in sorted(types.items(), key=lambda t: (-t[1], t[0])))
    return [IngestIssue(f"{sum(types.values())} files ({counts})",
                        f"{UNSUPPORTED}s (supported: {', '.join(sorted(FORMATS))})"), *rest]
