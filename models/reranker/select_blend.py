#!/usr/bin/env python3
"""Choose the pipeline's rerank blend (``retrieval.rerank_blend_c``) on held-out TRAIN questions.

    python models/reranker/select_blend.py [--model models/fieldqa-reranker] [--per-set 200]
                                           [--index .index/multi-dev] [--c 1,2,3,5,10,20]

The questions are the train questions of the articles held out of reranker training
(``data.held_out``), a seeded sample of ``--per-set`` per set, asked against the multi-dev
corpus (all three corpora; it holds the train articles too) through the real pipeline: the
fused top ``rerank_input`` of ``Library.search(mode="hybrid")`` is scored once by the
cross-encoder, then every blend is ranked from the same scores.  Prints R@1 / MRR@10 of the
fused order, the cross-encoder's order alone and each RRF blend.  Dev is never read.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import EVAL_DIR, ROOT, SETS, held_out  # noqa: E402

from engine.config import Config  # noqa: E402
from engine.diagnose import GoldResolver, parse_target  # noqa: E402
from engine.evaluate import Question  # noqa: E402
from engine.fusion import blend_orders  # noqa: E402
from engine.models import CrossEncoder  # noqa: E402
from engine.pipeline import Library  # noqa: E402

FOLDER = {"piaf-fr": "fr", "cmrc-zh": "zh-hans", "drcd-zh-hant": "zh-hant"}


def heldout_questions(per_set: int, seed: int = 0) -> list[Question]:
    out = []
    for s in SETS:
        rows = []
        lines = (EVAL_DIR / s / "questions.train.tsv").read_text(encoding="utf-8").split("\n")
        for n, line in enumerate(lines, 1):
            if not line or line.startswith("#"):
                continue
            q, expected, family = line.split("\t")
            targets = expected.split("|")
            if held_out(targets[0]):
                rows.append(Question(q, tuple(parse_target(f"{FOLDER[s]}/{t}") for t in targets), family, n))
        random.Random(seed).shuffle(rows)
        out += rows[:per_set]
    return out


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    return {"R@1": round(sum(r == 1 for r in ranks) / n, 4),
            "MRR@10": round(sum(1 / r for r in ranks if r is not None and r <= 10) / n, 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "fieldqa-reranker")
    ap.add_argument("--index", type=Path, default=ROOT / ".index" / "multi-dev")
    ap.add_argument("--per-set", type=int, default=200)
    ap.add_argument("--c", default="1,2,3,5,10,20,60")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)

    cfg = Config().replace(**{"models.reranker": ""})
    k = cfg.retrieval.rerank_input
    ce = CrossEncoder(a.model, threads=cfg.models.threads, max_length=cfg.models.rerank_max_length)
    questions = heldout_questions(a.per_set)
    cs = [int(c) for c in a.c.split(",")]
    ranks: dict[str, list[int | None]] = {"fused": [], "cross-encoder": []} | {f"blend c={c}": [] for c in cs}
    with Library.open(EVAL_DIR / "multi-dev" / "corpus", cfg, a.index, create=False) as lib:
        resolver = GoldResolver(lib)
        for i, q in enumerate(questions, 1):
            res = lib.search(q.text, mode="hybrid")
            top = [h.chunk for h in res.hits[:k]]
            gold = resolver.hit_ids(q.targets)
            scores = ce.score(q.text, [c.search_text for c in top]) if top else []
            fused = list(range(len(top)))
            own = sorted(fused, key=lambda j: (-scores[j], j))
            orders = {"fused": fused, "cross-encoder": own}
            for c in cs:
                orders[f"blend c={c}"] = blend_orders(fused, own, c)
            for name, order in orders.items():
                ranks[name].append(next((r for r, j in enumerate(order, 1) if top[j].id in gold), None))
            if i % 100 == 0:
                print(f"{i}/{len(questions)}", file=sys.stderr, flush=True)
    report = {"questions": len(questions), "rerank_input": k, "model": ce.model_id,
              "orders": {name: metrics(r) for name, r in ranks.items()}}
    for name, m in report["orders"].items():
        print(f"{name:<16} R@1 {m['R@1']:.3f}  MRR@10 {m['MRR@10']:.3f}")
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
