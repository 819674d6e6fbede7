"""fieldqa's engine: ingestion, retrieval, cited answers. No UI imports.

The public API is small and synchronous, so a TUI, a CLI and a test can drive it:

    lib = Library.open(folder, config)          # opens (or creates) the index
    report = lib.build(progress=..., cancel=ev)  # incremental re-index
    result = lib.search("question")              # hits + per-stage trace
    answer = lib.ask("question")                 # cited claims, conflicts, abstention
"""

from engine.config import Config, load_config
from engine.types import (
    Answer,
    Chunk,
    Citation,
    Claim,
    Conflict,
    Document,
    DocumentMeta,
    Hit,
    IngestIssue,
    IngestReport,
    SearchResult,
    Stage,
    Trace,
)

__all__ = [
    "Answer", "Chunk", "Citation", "Claim", "Config", "Conflict", "Document", "DocumentMeta",
    "Hit", "IngestIssue", "IngestReport", "Library", "SearchResult", "Stage", "Trace", "load_config",
]


def __getattr__(name: str):
    if name == "Library":  # heavy imports (onnxruntime, hnswlib) only when used
        from engine.pipeline import Library

        return Library
    raise AttributeError(name)
