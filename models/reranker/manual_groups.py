#!/usr/bin/env python3
"""Training groups for the reranker from a manuals question set, through the real pipeline.

    .venv/bin/python models/reranker/manual_groups.py \\
        --questions ../shared/eval/klipper-manuals/questions.train.tsv \\
        --corpus ../shared/eval/klipper-manuals/corpus --out /tmp/klipper-groups.jsonl

Wikipedia passages (train.py's own sets) are single paragraphs; a manual's are chunks of long
sections, with codes, tables and questions asked in other languages than the text. Each answerable
question of the split is searched as the order stage receives it (``hybrid``: the weighted fusion
of both branches); its first ``--pool`` candidates are the group: the gold ones (the evaluation's
hit rule) are positives, the rest hard negatives (neighbouring sections of the same manual
included). Passages are ``chunk.search_text``, what the cross-encoder scores at run time. A
group whose file is held out (``data.held_out`` on the gold file, ``--holdout-every``) is for
checkpoint selection, never for training. Train splits only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import held_out  # noqa: E402

from engine.config import load_config  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402


def groups(lib: Library, questions, pool: int = 20, holdout_every: int = 5) -> Iterator[dict]:
    """One group per answerable question: its first ``pool`` hybrid candidates' texts and the
    indices of the gold ones (the gold chunks themselves first when the pool missed them)."""
    gold = GoldResolver(lib)
    for q in questions:
        if not q.targets:
            continue
        ids = gold.hit_ids(q.targets)
        head = [h.chunk for h in lib.search(q.text, mode="hybrid").hits[:pool]]
        if not any(c.id in ids for c in head):
            head = [lib.chunk(i) for i in sorted(ids)][:2] + head[:pool - 2]
        file = sorted(t.path for t in q.targets)[0]
        yield {"question": q.text, "family": q.family, "file": file, "held_out": held_out(file, holdout_every),
               "passages": [c.search_text for c in head], "gold": [i for i, c in enumerate(head) if c.id in ids]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, required=True, help="a train split (question TSV)")
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--index", type=Path, help="index folder (default: the library's own)")
    ap.add_argument("--pool", type=int, default=20)
    ap.add_argument("--holdout-every", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    n = held = 0
    with Library.open(a.corpus, load_config(None), a.index) as lib, a.out.open("w", encoding="utf-8") as out:
        lib.build()
        for group in groups(lib, load_questions(a.questions), a.pool, a.holdout_every):
            out.write(json.dumps(group, ensure_ascii=False) + "\n")
            n += 1
            held += group["held_out"]
    print(f"{n} groups ({held} held out) -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
