"""A library folder -> documents -> blocks; one module per format.

    for item in iter_library(root, config.chunking):
        if isinstance(item, IngestIssue): report it
        else: doc, blocks = item; chunks = chunk_document(doc, blocks, count_tokens, config.chunking)
"""

from engine.ingest.library import FORMATS, iter_library, read_document, scan_library
from engine.ingest.metadata import Sidecar, read_sidecar

__all__ = ["FORMATS", "Sidecar", "iter_library", "read_document", "read_sidecar", "scan_library"]
