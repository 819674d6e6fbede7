"""Errors shared by the on-disk index components."""

from __future__ import annotations


class IndexCorrupt(ValueError):
    """An index file is missing, unreadable or inconsistent with its manifest."""


class IndexBusy(RuntimeError):
    """Another process (or thread) is writing this index: one writer at a time."""
