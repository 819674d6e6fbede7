"""`fieldqa chunks PATH`: the chunks of a file or folder, then the ingestion report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.config import Config
from engine.ingest import iter_library, read_document, read_sidecar
from engine.ingest.formats import folded
from engine.ingest.chunking import CountTokens, approx_counter, chunk_document, tokenizer_counter
from engine.safety import json_dumps
from engine.types import Chunk, IngestIssue


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chunks", help="show how a file or folder is chunked")
    p.add_argument("path", type=Path, help="a manual or a library folder")
    p.add_argument("--json", action="store_true", help="one JSON object: chunks and issues")
    p.add_argument("--max-tokens", type=int, default=None, help="token budget (chunking.max_tokens)")
    p.set_defaults(func=show_chunks)


def token_counter(cfg: Config) -> tuple[CountTokens, str]:
    """The embedder's tokenizer when it is built; else an estimate, with a note saying so."""
    if (cfg.embedder_dir / "tokenizer.json").exists():
        from engine.models import load_tokenizer

        return tokenizer_counter(load_tokenizer(cfg.embedder_dir)), ""
    return approx_counter(), f"token counts approximate: tokenizer not built ({cfg.embedder_dir})"


def show_chunks(args: argparse.Namespace) -> int:
    from fieldqa.cli import config_from

    overrides = {"chunking.max_tokens": args.max_tokens} if args.max_tokens is not None else {}
    cfg = config_from(args, **overrides)
    path: Path = args.path
    if not path.exists() and not path.is_symlink():
        print(f"fieldqa chunks: no such file or folder: {path}", file=sys.stderr)
        return 2
    count, note = token_counter(cfg)
    if path.is_dir():
        items = list(iter_library(path, cfg.chunking))
    else:
        root = path.parent
        items = [read_document(root, path, cfg.chunking, read_sidecar(root))]
    chunks: list[Chunk] = []
    issues: list[IngestIssue] = []
    docs = 0
    for item in items:
        if isinstance(item, IngestIssue):
            issues.append(item)
            continue
        docs += 1
        chunks += chunk_document(item[0], item[1], count, cfg.chunking)
    if args.json:
        print(json_dumps({
            "note": note,
            "chunks": [_chunk_json(c) for c in chunks],
            "issues": [{"path": i.path, "reason": i.reason, "severity": i.severity} for i in issues],
        }, indent=1))
        return 0
    if note:
        print(f"note: {note}")
    from engine.safety import terminal_safe as safe

    for c in chunks:
        where = c.location.rpartition(":")[2] if c.page is not None else f"{c.start_line}-{c.end_line}"
        preview = " ".join(safe(c.text).split())[:90]
        print(f"{c.id}  {safe(c.path)}:{where}  {c.kind:<5} {c.tokens:>4} tok  {safe(' > '.join(c.heading_path))}")
        print(f"    {preview}")
    skipped = [i for i in issues if i.severity == "skipped"]
    print(f"\n{docs} documents, {len(chunks)} chunks, {len(skipped)} skipped, "
          f"{len(issues) - len(skipped)} warnings")
    for i in folded(issues):
        print(f"  {i.severity:<8} {safe(i.path)}: {safe(i.reason)}")
    return 0


def _chunk_json(c: Chunk) -> dict:
    return {"id": c.id, "doc_id": c.doc_id, "version": c.version, "path": c.path,
            "start_line": c.start_line, "end_line": c.end_line, "page": c.page, "end_page": c.end_page,
            "heading_path": list(c.heading_path), "kind": c.kind, "tokens": c.tokens,
            "char_start": c.char_start, "char_end": c.char_end, "section_id": c.section_id,
            "language": c.language, "context": c.context, "text": c.text, "ordinal": c.ordinal}
