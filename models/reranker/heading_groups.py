#!/usr/bin/env python3
"""Training groups for the reranker from manuals that have no questions: heading -> section.

    .venv/bin/python models/reranker/heading_groups.py --corpus /tmp/marlin-docs \\
        --index /tmp/marlin-idx --out /tmp/heading-groups.jsonl

A manual's headings are its authors' own short statements of what each section answers
("Probe Z offset", "Setting up a flight controller"), so every section of a manual the project
never evaluates on is a question with a known answer. The heading is the question; the
section's chunks are the positives; the rest of the heading's first ``--pool`` hybrid
candidates (the weighted fusion the order stage receives) are hard negatives, most of them from
the same manual. Each passage is ``chunk.search_text`` with the chunk's own deepest heading taken
out, for every candidate alike, so the heading is never copied verbatim into its positive (and
negatives are not told apart by still having theirs). Chunks of the section's subsections
answer part of it and are left out of its group. A heading with fewer than ``--min-terms``
terms ("Notes") or a section under ``--min-chars`` of text asks nothing a group can teach.

Only manuals outside every evaluation corpus: the groups are training data.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.config import load_config  # noqa: E402
from engine.lang.words import terms  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.types import Chunk  # noqa: E402


def without_own_heading(chunk: Chunk) -> str:
    """``chunk.search_text`` without its deepest heading (in the heading path and as a line)."""
    if not chunk.heading_path:
        return chunk.search_text
    head = chunk.heading_path[-1]
    text = chunk.search_text.replace(" > " + head, "", 1)
    if text.startswith(head + "\n"):
        text = text[len(head) + 1:]
    text = re.sub(r"^#{1,6}[ \t]+" + re.escape(head) + r"[ \t#]*$\n?", "", text, count=1, flags=re.MULTILINE)
    return text.strip()


def sections(chunks: tuple[Chunk, ...], min_terms: int, min_chars: int) -> list[list[Chunk]]:
    """The sections worth a group: chunks by (document version, heading path), in order."""
    by: dict[tuple[str, str, tuple[str, ...]], list[Chunk]] = defaultdict(list)
    for c in chunks:
        if c.heading_path:
            by[(c.doc_id, c.version, c.heading_path)].append(c)
    out = []
    for (_d, _v, path), cs in by.items():
        if len(terms(path[-1])) >= min_terms and sum(len(c.text) for c in cs) >= min_chars:
            out.append(sorted(cs, key=lambda c: c.ordinal))
    return out


def groups(lib: Library, pool: int = 20, min_terms: int = 2, min_chars: int = 200,
           limit: int = 0, seed: int = 0) -> Iterator[dict]:
    """One group per section: its heading's first ``pool`` hybrid candidates, the section's
    chunks marked gold (put first when the pool missed them), its subsections' chunks left out."""
    secs = sections(lib.all_chunks(), min_terms, min_chars)
    random.Random(seed).shuffle(secs)
    for sec in secs[:limit] if limit else secs:
        path, doc = sec[0].heading_path, sec[0].doc_id
        gold = {c.id for c in sec}

        def inside(c: Chunk) -> bool:  # a subsection of the target
            return c.doc_id == doc and len(c.heading_path) > len(path) and c.heading_path[:len(path)] == path

        head = [h.chunk for h in lib.search(path[-1], mode="hybrid").hits[:pool] if not inside(h.chunk)]
        if not any(c.id in gold for c in head):
            head = sec[:2] + head[:pool - 2]
        yield {"question": path[-1], "family": "heading", "file": sec[0].path, "held_out": False,
               "passages": [without_own_heading(c) for c in head],
               "gold": [i for i, c in enumerate(head) if c.id in gold]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a folder of manuals outside every eval corpus")
    ap.add_argument("--index", type=Path, help="index folder (default: the library's own)")
    ap.add_argument("--pool", type=int, default=20)
    ap.add_argument("--min-terms", type=int, default=2)
    ap.add_argument("--min-chars", type=int, default=200)
    ap.add_argument("--limit", type=int, default=0, help="at most this many groups (a seeded sample; 0 = all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    # the answer units' own pass is not needed to search: pool them from the chunks' pass
    cfg = load_config(None, {"chunking.pooled_unit_vectors": True})
    n = 0
    with Library.open(a.corpus, cfg, a.index) as lib, a.out.open("w", encoding="utf-8") as out:
        lib.build()
        for group in groups(lib, a.pool, a.min_terms, a.min_chars, a.limit, a.seed):
            out.write(json.dumps(group, ensure_ascii=False) + "\n")
            n += 1
    print(f"{n} groups -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
