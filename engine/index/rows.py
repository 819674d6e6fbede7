"""How chunks and document metadata are kept as SQLite rows, and the hash each stored chunk
text is checked against (also the embedding cache's key)."""

from __future__ import annotations

import hashlib
import json
from datetime import date as Date

from engine.types import Chunk, DocumentMeta

__all__ = ["CHUNK_COLS", "chunk_from_row", "chunk_row", "meta_from_json", "meta_to_json", "text_sha", "unit_sha"]

def meta_to_json(meta: DocumentMeta) -> str:
    return json.dumps({
        "doc_id": meta.doc_id, "title": meta.title, "version": meta.version,
        "date": meta.date.isoformat() if meta.date else None, "models": list(meta.models),
        "status": meta.status, "visibility": list(meta.visibility), "language": meta.language,
        **({"invalid": list(meta.invalid)} if meta.invalid else {}),
    }, ensure_ascii=False)


def meta_from_json(text: str) -> DocumentMeta:
    d = json.loads(text)
    return DocumentMeta(
        doc_id=d["doc_id"], title=d["title"], version=d["version"],
        date=Date.fromisoformat(d["date"]) if d.get("date") else None,
        models=tuple(d["models"]), status=d["status"], visibility=tuple(d["visibility"]),
        language=d.get("language", ""), invalid=tuple(d.get("invalid", ())),
    )


CHUNK_COLS = ("id", "doc_id", "version", "path", "start_line", "end_line", "heading_path",
               "char_start", "char_end", "kind", "section_id", "language", "text", "context",
               "tokens", "page", "ordinal", "in_code", "end_page")


def chunk_row(c: Chunk) -> tuple:
    """The chunk's values in CHUNK_COLS order (the heading path as JSON)."""
    return tuple(json.dumps(list(c.heading_path), ensure_ascii=False) if col == "heading_path"
                 else int(c.in_code) if col == "in_code" else getattr(c, col) for col in CHUNK_COLS)


def chunk_from_row(values) -> Chunk:
    d = dict(zip(CHUNK_COLS, values))
    d["heading_path"] = tuple(json.loads(d["heading_path"]))
    d["in_code"] = bool(d["in_code"])
    return Chunk(**d)


def text_sha(chunk: Chunk) -> str:
    """The embedding cache's key for a chunk (and the hash its stored text is checked against)."""
    return hashlib.sha256(chunk.search_text.encode("utf-8")).hexdigest()


def unit_sha(text: str) -> str:
    """The embedding cache's key for an answer unit's embedded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
