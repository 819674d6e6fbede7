"""Errors shared by the on-disk index components."""

from __future__ import annotations


class IndexCorrupt(ValueError):
    """An index file is missing, unreadable or inconsistent with its manifest."""


class IndexBusy(RuntimeError):
    """Another process (or thread) is writing this index: one writer at a time."""


class IndexMismatch(IndexCorrupt):
    """The index is readable but was built with another model, tokenizer or chunker."""


def rebuild_hint(library=None) -> str:
    """The command that rebuilds the index of ``library`` (every index error names it)."""
    where = str(library) if library is not None else "PATH"
    return f"rebuild it with `fieldqa index {where} --rebuild`"
