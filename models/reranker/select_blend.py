#!/usr/bin/env python3
"""Learn the rerank stage's blend (engine.search.fusion.RerankBlend) on held-out TRAIN questions.

    python models/reranker/select_blend.py [--model models/fieldqa-reranker] [--per-set 400]
                                           [--index .index/multi-dev] [--write models/reranker-delta]

The questions are the train questions of the articles held out of reranker training
(``data.held_out``), a seeded sample of ``--per-set`` per set, asked against the multi-dev
corpus (all three corpora; it holds the train articles too) through the real pipeline: the
lexical and vector lists and the fused top ``rerank_input`` of ``Library.search(mode="hybrid")``,
the candidates scored once by the cross-encoder.

The blend is a weighted RRF of four orders of those candidates: the cross-encoder's, the fused
one and the two branches' (ranks only).  Its weights are fitted by a listwise softmax over each
question's candidates (gold = target, weights >= 0), c is chosen by 2-fold cross-validation over
whole articles.  Prints R@1 / MRR@10 of the fused order, the cross-encoder's alone, the plain RRF
blend (``retrieval.rerank_blend_c``, for models without weights) and the learned blend
(cross-validated: each question ranked by weights fitted on the other fold), and the same
fit without the cross-encoder (branch weighting alone: what the reranker itself adds).  ``--write DIR``
records the weights fitted on all questions as ``"blend"`` in DIR/delta.json; the model build
copies them into the model's manifest.  Dev is never read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import ROOT, SETS, held_out  # noqa: E402

from engine.config import Config  # noqa: E402
from fieldqa.question_sets import EVAL  # noqa: E402
from engine.eval.retrieval import Question  # noqa: E402
from engine.models import CrossEncoder  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver, parse_target  # noqa: E402
from engine.search.fusion import RerankBlend, blend_orders  # noqa: E402

FOLDER = {"piaf-fr": "fr", "cmrc-zh": "zh-hans", "drcd-zh-hant": "zh-hant"}
C_GRID = (1, 2, 3, 5, 10)


def heldout_questions(per_set: int, seed: int = 0) -> list[Question]:
    out = []
    for s in SETS:
        rows = []
        lines = (EVAL / s / "questions.train.tsv").read_text(encoding="utf-8").split("\n")
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


def collect(lib: Library, ce: CrossEncoder, questions: list[Question], k: int) -> list[dict]:
    """Per question: candidate ids (fused order), the CE's order, both branch lists, gold ids."""
    resolver = GoldResolver(lib)
    out = []
    for i, q in enumerate(questions, 1):
        res = lib.search(q.text, mode="hybrid")
        top = [h.chunk for h in res.hits[:k]]
        if not top:
            continue
        ids = [c.id for c in top]
        scores = ce.score(q.text, [c.search_text for c in top])
        stage = {s.name: [r.chunk_id for r in s.ranked] for s in res.trace.stages}
        out.append({"ids": ids, "ce": [ids[j] for j in sorted(range(len(ids)), key=lambda j: (-scores[j], j))],
                    "lexical": stage.get("lexical", []), "vector": stage.get("vector", []),
                    "gold": resolver.hit_ids(q.targets), "article": q.targets[0].path})
        if i % 100 == 0:
            print(f"{i}/{len(questions)}", file=sys.stderr, flush=True)
    return out


def features(rec: dict, c: int) -> np.ndarray:
    """[candidates, 4]: 1/(c + rank) in each order of RerankBlend.ORDERS (0 where absent)."""
    orders = {"cross_encoder": rec["ce"], "fused": rec["ids"], "lexical": rec["lexical"], "vector": rec["vector"]}
    x = np.zeros((len(rec["ids"]), len(RerankBlend.ORDERS)))
    for col, name in enumerate(RerankBlend.ORDERS):
        rank = {cid: r for r, cid in enumerate(orders[name], 1)}
        for row, cid in enumerate(rec["ids"]):
            if cid in rank:
                x[row, col] = 1.0 / (c + rank[cid])
    return x


def fit(recs: list[dict], c: int, iters: int = 400, lr: float = 0.05,
        without: tuple[str, ...] = ()) -> np.ndarray:
    """Weights >= 0 maximising the listwise softmax likelihood of the gold candidates
    (projected Adam from equal weights; deterministic).  ``without``: orders held at 0."""
    off = [RerankBlend.ORDERS.index(n) for n in without]
    xs = [features(r, c) for r in recs]
    for x in xs:
        x[:, off] = 0.0
    ys = [np.array([cid in r["gold"] for cid in r["ids"]], dtype=float) for r in recs]
    keep = [i for i, y in enumerate(ys) if y.any()]
    w = np.ones(len(RerankBlend.ORDERS))
    w[off] = 0.0
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    scale = 1.0 / max(1, len(keep))
    for t in range(1, iters + 1):
        g = np.zeros_like(w)
        for i in keep:
            s = (c + 1) * (xs[i] @ w)  # scaled so that rank 1 in an order of weight 1 counts 1
            p = np.exp(s - s.max())
            p /= p.sum()
            g += (c + 1) * scale * (xs[i].T @ (p - ys[i] / ys[i].sum()))
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = np.maximum(0.0, w - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8))
    return w / max(w.max(), 1e-12)


def gold_rank(rec: dict, order: list[str]) -> int | None:
    """Rank (from 1) of the first gold id in ``order``, None when absent."""
    return next((r for r, cid in enumerate(order, 1) if cid in rec["gold"]), None)


def ranked(rec: dict, blend: RerankBlend) -> int | None:
    return gold_rank(rec, blend.order(rec["ids"], rec["ce"], rec["lexical"], rec["vector"]))


def as_blend(c: int, w: np.ndarray) -> RerankBlend:
    return RerankBlend(c, *(round(float(x), 4) for x in w))


def cross_validated(recs: list[dict], c: int, without: tuple[str, ...] = ()) -> list[int | None]:
    fold = [int(hashlib.sha1(r["article"].encode()).hexdigest(), 16) % 2 for r in recs]
    out: list[int | None] = [None] * len(recs)
    for k in (0, 1):
        blend = as_blend(c, fit([r for r, f in zip(recs, fold) if f != k], c, without=without))
        for i, (r, f) in enumerate(zip(recs, fold)):
            if f == k:
                out[i] = ranked(r, blend)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "fieldqa-reranker")
    ap.add_argument("--index", type=Path, default=ROOT / ".index" / "multi-dev")
    ap.add_argument("--per-set", type=int, default=400)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--write", type=Path, default=None, help="delta folder whose delta.json gets the fitted blend")
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    cfg = Config().replace(**{"models.reranker": ""})
    k = cfg.retrieval.rerank_input
    ce = CrossEncoder(a.model, threads=cfg.models.threads, max_length=cfg.models.rerank_max_length)
    questions = heldout_questions(a.per_set)
    with Library.open(EVAL / "multi-dev" / "corpus", cfg, a.index, create=False) as lib:
        recs = collect(lib, ce, questions, k)

    plain_c = cfg.retrieval.rerank_blend_c
    orders = {
        "fused": metrics([gold_rank(r, r["ids"]) for r in recs]),
        "cross-encoder": metrics([gold_rank(r, r["ce"]) for r in recs]),
        f"RRF blend c={plain_c}": metrics([gold_rank(r, blend_orders(r["ids"], r["ce"], plain_c)) for r in recs]),
    }
    cv = {c: metrics(cross_validated(recs, c)) for c in C_GRID}
    best_c = max(C_GRID, key=lambda c: (cv[c]["R@1"], cv[c]["MRR@10"], -c))
    for c in C_GRID:
        orders[f"learned blend c={c} (2-fold CV)"] = cv[c]
    # ablation: the same fit without the cross-encoder (how much of the gain is branch weighting alone)
    orders[f"learned blend c={best_c} without cross-encoder (CV)"] = metrics(
        cross_validated(recs, best_c, without=("cross_encoder",)))
    blend = as_blend(best_c, fit(recs, best_c))
    orders[f"learned blend c={best_c} (fitted on all)"] = metrics([ranked(r, blend) for r in recs])
    report = {"questions": len(recs), "rerank_input": k, "model": ce.model_id, "orders": orders,
              "blend": {"c": blend.c, "weights": {n: getattr(blend, n) for n in RerankBlend.ORDERS},
                        "fitted_on": f"{len(recs)} held-out train questions (select_blend.py --per-set {a.per_set})",
                        "cv": cv[best_c]},
              "seconds": round(time.perf_counter() - t0, 1)}
    for name, m in orders.items():
        print(f"{name:<36} R@1 {m['R@1']:.3f}  MRR@10 {m['MRR@10']:.3f}")
    print(f"chosen: {blend.describe()}")
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if a.write:
        path = a.write / "delta.json"
        meta = json.loads(path.read_text(encoding="utf-8"))
        meta["blend"] = report["blend"]
        path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote the blend into {path}; rebuild the model (make models) to carry it into the manifest")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
