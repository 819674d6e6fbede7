#!/usr/bin/env python3
"""Reranker benchmark: latency of scoring 20 candidates, and quality on the dev splits.

    python bench/rerank.py [--model models/fieldqa-reranker] [--limit 150] [--sets ...]
                           [--threads 2] [--json out.json]

Latency: ``engine.models.CrossEncoder.score(question, 20 passages)`` (onnxruntime,
``--threads`` intra-op threads, max length 256) on real dev questions and their 20
first-stage candidates; p50/p95 wall time and the CPU time per call (on a shared machine
the CPU time says what the wall time would be on idle cores).

Quality, per dev split (``../shared/eval``): R@1, R@5 and MRR@10 of the lexical branch
(``engine.index.lexical``), the e5 vector branch (``models/multilingual-e5-small``), their RRF
fusion ("hybrid", top 20), hybrid + rerank (the top 20 reordered by the cross-encoder;
"20 -> 5" keeps the first 5), the plain blend (RRF of the fused and the cross-encoder
orders, ``retrieval.rerank_blend_c``) and, when the model carries one, the learned blend the
pipeline uses (engine.search.fusion.RerankBlend).  ``--split heldout`` scores the train
questions of the articles held out of training instead: settings are chosen there, never
on dev.  ``--limit N`` scores a seeded random sample of N questions
per split (multi-dev: the union of the per-split samples).  The first stage is the
approximation in ``models/reranker/data.py`` (e5 passages truncated at 256 tokens).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "models" / "reranker"))

from data import SETS, held_out, load_split, mrr_at, recall_at, sample_rows, split_candidates  # noqa: E402

from engine.config import Config  # noqa: E402
from engine.models import CrossEncoder  # noqa: E402
from engine.search.fusion import blend_orders  # noqa: E402

FAMILY_SET = {"fr": "piaf-fr", "zh-hans": "cmrc-zh", "zh-hant": "drcd-zh-hant"}
RERANK_INPUT = 20
RERANK_KEEP = 5


def latency(ce: CrossEncoder, items: list[tuple[str, list[str]]], runs: int) -> dict[str, float]:
    ce.score(items[0][0], items[0][1])  # warm up
    wall, cpu = [], []
    for i in range(runs):
        q, ps = items[i % len(items)]
        t, c = time.perf_counter(), time.process_time()
        ce.score(q, ps)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return {"p50_ms": 1000 * float(np.percentile(wall, 50)), "p95_ms": 1000 * float(np.percentile(wall, 95)),
            "cpu_p50_ms": 1000 * float(np.percentile(cpu, 50)), "runs": runs}


def metrics(rankings: list[list[int]], golds: list[frozenset[int]]) -> dict[str, float]:
    return {"R@1": float(np.mean([recall_at(r, g, 1) for r, g in zip(rankings, golds)])),
            "R@5": float(np.mean([recall_at(r, g, 5) for r, g in zip(rankings, golds)])),
            "MRR@10": float(np.mean([mrr_at(r, g, 10) for r, g in zip(rankings, golds)]))}


def heldout_rows(name: str, limit: int, seed: int) -> list[int]:
    """Rows of the train questions whose gold article is held out of training."""
    corpus, qs = load_split(name, "train")
    rows = [i for i, q in enumerate(qs) if q.gold and held_out(corpus.keys[min(q.gold)])]
    return [rows[j] for j in sample_rows(len(rows), limit, seed)]


def evaluate_set(ce: CrossEncoder | None, name: str, rows: list[int] | None, limit: int,
                 cache: dict[tuple[str, str], float], threads: int, blend_c: Sequence[int],
                 split: str = "dev") -> dict:
    corpus, qs, cand = split_candidates(name, split, limit=limit, rows=rows, threads=threads)
    golds = [q.gold for q in qs]
    out = {"questions": len(qs), "lexical": metrics(cand.lexical, golds), "vector": metrics(cand.vector, golds),
           "hybrid": metrics(cand.fused, golds)}
    if ce is None:
        return out
    reranked = []
    t0 = time.perf_counter()
    for q, fused in zip(qs, cand.fused):
        top = fused[:RERANK_INPUT]
        todo = [r for r in top if (q.text, corpus.texts[r]) not in cache]
        if todo:
            for r, s in zip(todo, ce.score(q.text, [corpus.texts[r] for r in todo])):
                cache[(q.text, corpus.texts[r])] = float(s)
        s = np.array([cache[(q.text, corpus.texts[r])] for r in top])
        reranked.append([top[i] for i in np.argsort(-s, kind="stable")])
    out["hybrid+rerank"] = metrics(reranked, golds)
    out["hybrid+rerank 20->5"] = metrics([r[:RERANK_KEEP] for r in reranked], golds)
    for c in blend_c:
        blended = [blend_orders(f[:RERANK_INPUT], r, c) for f, r in zip(cand.fused, reranked)]
        out[f"hybrid+rerank rrf(c={c})"] = metrics(blended, golds)
    if ce.blend is not None:  # the weighted RRF learned with the model (engine.search.fusion.RerankBlend)
        learned = [ce.blend.order(f[:RERANK_INPUT], r, lx, vx)
                   for f, r, lx, vx in zip(cand.fused, reranked, cand.lexical, cand.vector)]
        out[f"hybrid+rerank learned(c={ce.blend.c})"] = metrics(learned, golds)
    out["rerank_seconds"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "fieldqa-reranker")
    ap.add_argument("--sets", nargs="+", default=[*SETS, "multi-dev"])
    ap.add_argument("--limit", type=int, default=0, help="questions sampled per split (0 = all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--latency-runs", type=int, default=20)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--no-rerank", action="store_true", help="first stage only")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--split", choices=("dev", "heldout"), default="dev",
                    help="dev splits (report), or the held-out articles of train (where settings are chosen)")
    ap.add_argument("--blend-c", default=str(Config().retrieval.rerank_blend_c),
                    help="c of the RRF of fused and reranked orders (the pipeline's retrieval.rerank_blend_c); "
                         "a comma-separated list reports each")
    a = ap.parse_args(argv)
    a.blend_c = [int(c) for c in str(a.blend_c).split(",") if int(c) >= 0]

    ce = None if a.no_rerank else CrossEncoder(a.model, threads=a.threads, max_length=a.max_length)
    report: dict = {"model": str(a.model), "threads": a.threads, "max_length": a.max_length,
                    "limit": a.limit, "seed": a.seed}
    if ce is not None:
        report["model_manifest"] = ce.manifest
        corpus, qs, cand = split_candidates("drcd-zh-hant", "dev", limit=a.limit or 100, seed=a.seed,
                                            threads=a.threads)
        items = [(q.text, [corpus.texts[r] for r in f[:RERANK_INPUT]]) for q, f in zip(qs[:10], cand.fused)]
        report["latency_20_candidates"] = latency(ce, items, a.latency_runs)
        print(f"latency, 20 candidates (drcd dev): {json.dumps(report['latency_20_candidates'])}", flush=True)
    if not a.no_quality:
        cache: dict[tuple[str, str], float] = {}
        results = {}
        for name in a.sets:
            rows = None
            if name == "multi-dev" and a.limit:
                _, mq = load_split("multi-dev", "dev")
                fam_rows: dict[str, list[int]] = {}
                for i, q in enumerate(mq):
                    fam_rows.setdefault(q.family, []).append(i)
                rows = sorted(r for fam, rs in fam_rows.items()
                              for r in (rs[j] for j in sample_rows(len(rs), a.limit, a.seed)))
            if a.split == "heldout":
                if name == "multi-dev":
                    continue
                rows = heldout_rows(name, a.limit, a.seed)
            results[name] = evaluate_set(ce, name, rows, a.limit, cache, a.threads, a.blend_c,
                                         "train" if a.split == "heldout" else "dev")
            r = results[name]
            line = " | ".join(f"{k} R@1 {v['R@1']:.3f} MRR@10 {v['MRR@10']:.3f}"
                              for k, v in r.items() if isinstance(v, dict) and k != "hybrid+rerank 20->5")
            print(f"{name} ({r['questions']} q): {line}", flush=True)
        report["quality"] = results
    if a.json:
        a.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
