"""The file types a library may hold, and whether a folder holds any (cheap: no parser is
imported, so the CLI can refuse an empty folder before anything is opened or created)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from engine.types import Format

FORMATS: dict[str, Format] = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
                              ".html": "html", ".htm": "html", ".pdf": "pdf", ".txt": "text", ".text": "text",
                              ".rst": "rst", ".rest": "rst"}


def format_of(path: str | PurePath) -> Format | None:
    """The format a file is read as, by its name's suffix (None: not a manual's type)."""
    return FORMATS.get(PurePath(path).suffix.lower())


def holds_manuals(root: Path) -> bool:
    """Whether ``root`` (or a folder under it, hidden ones aside) holds a file of a supported type."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(not f.startswith(".") and format_of(f) for f in filenames):
            return True
    return False
