"""Helpers for the ingestion tests: write a file, read it, chunk it with the estimate counter."""

from __future__ import annotations

from pathlib import Path

from engine.config import ChunkingConfig
from engine.ingest import read_document
from engine.ingest.chunking import approx_counter, chunk_document
from engine.types import Block, Chunk, Document, IngestIssue


def read(root: Path, rel: str, content: str | bytes, config: ChunkingConfig | None = None
         ) -> tuple[Document, list[Block]] | IngestIssue:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_bytes(content.encode("utf-8"))
    return read_document(root, p, config or ChunkingConfig())


def chunks_of(root: Path, rel: str, content: str | bytes, **cfg) -> tuple[Document, list[Chunk]]:
    config = ChunkingConfig(**cfg)
    got = read(root, rel, content, config)
    assert not isinstance(got, IngestIssue), got
    doc, blocks = got
    chunks = chunk_document(doc, blocks, approx_counter(), config)
    for c in chunks:
        assert doc.text[c.char_start:c.char_end] == c.text
    return doc, chunks


def line_text(path: Path, line: int) -> str:
    return path.read_text(encoding="utf-8").split("\n")[line - 1]
