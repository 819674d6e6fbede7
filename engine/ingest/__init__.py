"""A library folder -> documents -> blocks; one module per format.

    for item in iter_library(root, config.chunking):
        if isinstance(item, IngestIssue): report it
        else: doc, blocks = item; chunks = chunk_document(doc, blocks, count_tokens, config.chunking)

The names below are imported on first use: ``engine.ingest.formats`` (the file types) stays
cheap for the CLI's up-front folder check, without the parsers.
"""

from __future__ import annotations

import importlib

_HOMES = {"FORMATS": "engine.ingest.formats", "iter_library": "engine.ingest.library",
          "read_document": "engine.ingest.library", "scan_library": "engine.ingest.library",
          "Sidecar": "engine.ingest.metadata", "read_sidecar": "engine.ingest.metadata"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engine.ingest' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
