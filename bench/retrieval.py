"""Retrieval bench: quality per mode on the eval sets, stage latency at 1k/10k/100k chunks,
build throughput, peak RSS, and baselines (rank_bm25, SQLite FTS5 unicode61/trigram,
brute-force numpy vectors) measured in the same run and printed as ratios.

    python -m bench.retrieval [--quick] [--json] [--sets multi-dev,piaf-fr] [--limit N]

- Quality: each set in ../shared/eval (``questions.dev.tsv``; ``questions.tsv`` for
  multi-dev) is indexed with the real embedder into ``--index-root`` (default
  ``.index/``, git-ignored; the corpus folders are only read).  Embeddings are cached in
  each index; the per-language sets first import the multi-dev cache (same passages), so
  the corpus is embedded once.  Scores follow the eval README's hit rule
  (engine.eval.retrieval).  Baselines search the *same chunk texts* (``Chunk.search_text``).
- Latency: chunks synthesized from the multi-dev chunks — the real ones first, then
  copies with their words rotated and every 7th word dropped.  Vectors of copies are the
  source vector plus Gaussian noise (sigma 0.02 per dimension, renormalised); at 100k all
  vectors are random unit vectors (embedding 100k passages is not feasible here), which
  makes HNSW's job harder than with real data.  Queries are real questions embedded by
  the real model, so the vector stage includes query embedding.
- Acceptance lines at the end: hybrid R@5 >= max(lexical, vector) on multi-dev; full
  (hybrid + rerank 20 -> context 5) R@1 >= hybrid R@1 + 0.03; lexical R@1 >= FTS5 trigram
  R@1 and >= 5x its queries/s; hybrid p50 <= 60 ms at 10k chunks.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import Config
from engine.eval.retrieval import Question, evaluate, load_questions
from engine.index.lexical import LexicalIndex
from engine.index.store import DB_NAME
from engine.index.vectors import VectorIndex
from engine.pipeline import BuildProgress, Library
from engine.search.diagnose import GoldResolver
from engine.types import Chunk, DocumentMeta
from fieldqa.question_sets import EVAL

SETS = {"multi-dev": "questions.tsv", "piaf-fr": "questions.dev.tsv", "cmrc-zh": "questions.dev.tsv",
        "drcd-zh-hant": "questions.dev.tsv"}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _progress(p: BuildProgress) -> None:
    if p.phase == "embed" and p.total and (p.done % 640 == 0 or p.done == p.total):
        eta = f", ETA {p.eta_s:.0f} s" if p.eta_s else ""
        log(f"  embed {p.done}/{p.total}{eta}")


def open_set(name: str, index_root: Path, cfg: Config, embedder: Any) -> tuple[Library, dict]:
    corpus = EVAL / name / "corpus"
    lib = Library.open(corpus, cfg, index_root / name, embedder=embedder)
    shared = index_root / "multi-dev" / DB_NAME
    if name != "multi-dev" and shared.exists():
        lib.store.import_embeddings(shared)
    t0 = time.perf_counter()
    report = lib.build(progress=_progress)
    return lib, {"build_s": round(time.perf_counter() - t0, 2), "documents": report.documents,
                 "chunks": report.chunks, "unchanged_documents": report.unchanged}


# ---- baselines on the same chunk texts --------------------------------------------------------


def _rank_scores(ranks: Sequence[int | None], n_questions: int) -> dict[str, float]:
    def r(k: int) -> float:
        return round(sum(1 for x in ranks if x is not None and x <= k) / n_questions, 4)

    return {"recall@1": r(1), "recall@5": r(5), "recall@10": r(10),
            "mrr@10": round(sum(1 / x for x in ranks if x is not None and x <= 10) / n_questions, 4)}


def baselines(lib: Library, questions: Sequence[Question], rank_bm25_sample: int) -> dict[str, dict]:
    from bench.lexical_baselines import build_fts5_trigram, build_fts5_unicode61, build_lexical, build_rank_bm25

    chunks = lib.all_chunks()
    texts = [c.search_text for c in chunks]
    resolver = GoldResolver(lib)
    scored = [q for q in questions if q.targets]
    gold = [resolver.hit_ids(q.targets) for q in scored]
    sample_idx = sorted(random.Random(0).sample(range(len(scored)), min(rank_bm25_sample, len(scored))))
    out: dict[str, dict] = {}
    runs = [("lexical", build_lexical, range(len(scored))),
            ("fts5-unicode61", build_fts5_unicode61, range(len(scored))),
            ("fts5-trigram", build_fts5_trigram, range(len(scored))),
            ("rank_bm25", build_rank_bm25, sample_idx),
            ("lexical@rank_bm25-sample", build_lexical, sample_idx)]
    for name, build, idx in runs:
        t0 = time.perf_counter()
        searcher = build(texts)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = [searcher.search(scored[i].text, 10) for i in idx]
        elapsed = time.perf_counter() - t0
        ranks = [next((r + 1 for r, row in enumerate(res) if chunks[row].id in gold[i]), None)
                 for i, res in zip(idx, results)]
        out[name] = {**_rank_scores(ranks, len(ranks)), "questions": len(ranks),
                     "qps": round(len(ranks) / elapsed, 1), "build_s": round(build_s, 2)}
        log(f"  {name}: R@1 {out[name]['recall@1']:.3f} R@5 {out[name]['recall@5']:.3f} "
            f"{out[name]['qps']:.0f} q/s")
    # vectors: brute-force numpy against the HNSW graph, same query vectors
    vindex = lib._snap.vectors
    matrix = vindex.matrix
    t0 = time.perf_counter()
    qv = lib.embedder.embed_queries([q.text for q in scored])
    embed_qps = len(scored) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    brute = [np.argsort(-(matrix @ q), kind="stable")[:10] for q in qv]
    brute_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = [[row for row, _ in vindex.search(q, 10, exact_below=0)] for q in qv]
    graph_s = time.perf_counter() - t0
    overlap = float(np.mean([len(set(map(int, b)) & set(g)) / 10 for b, g in zip(brute, graph)]))
    for name, res, secs in (("numpy-brute-force", brute, brute_s), ("hnsw", graph, graph_s)):
        ranks = [next((r + 1 for r, row in enumerate(rows) if chunks[int(row)].id in gold[i]), None)
                 for i, rows in enumerate(res)]
        out[name] = {**_rank_scores(ranks, len(ranks)), "questions": len(ranks),
                     "qps": round(len(ranks) / secs, 1)}
    out["hnsw"]["recall@10_vs_brute_force"] = round(overlap, 4)
    out["query_embedding_qps"] = {"qps": round(embed_qps, 1)}
    return out


# ---- latency at scale -----------------------------------------------------------------------


def _perturb(text: str, i: int) -> str:
    words = text.split()
    if len(words) < 4:  # CJK without spaces: rotate characters instead
        k = i % max(1, len(text))
        return text[k:] + text[:k]
    k = i % len(words)
    rotated = words[k:] + words[:k]
    return " ".join(w for j, w in enumerate(rotated) if j % 7 != 6)


def synthesize(base: Sequence[Chunk], base_vecs: np.ndarray, n: int, random_vectors: bool,
               seed: int = 0) -> tuple[list[Chunk], dict[str, DocumentMeta], np.ndarray]:
    rng = np.random.default_rng(seed)
    chunks: list[Chunk] = []
    for i in range(n):
        src = base[i % len(base)]
        if i < len(base):
            chunks.append(src)
            continue
        path = f"synthetic/{i // 50:05d}.md"
        text = _perturb(src.text, i)
        chunks.append(Chunk(id=f"syn-{i}", doc_id=path, version="1", path=path, start_line=i % 50 + 1,
                            end_line=i % 50 + 1, heading_path=src.heading_path, char_start=0, char_end=len(text),
                            kind=src.kind, section_id=f"syn-{i}", language=src.language, text=text,
                            context=src.context, tokens=src.tokens, ordinal=i % 50))
    metas: dict[str, DocumentMeta] = {}
    for c in chunks:
        if c.path not in metas:
            metas[c.path] = DocumentMeta(c.doc_id, c.path)
    if random_vectors:
        vecs = rng.standard_normal((n, base_vecs.shape[1])).astype(np.float32)
    else:
        src_rows = np.arange(n) % len(base)
        vecs = base_vecs[src_rows].copy()
        noisy = np.arange(n) >= len(base)
        vecs[noisy] += rng.normal(0, 0.02, (int(noisy.sum()), base_vecs.shape[1])).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return chunks, metas, vecs


def _pct(v: Sequence[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(v, 50)), 2), "p95": round(float(np.percentile(v, 95)), 2)}


def latency(base_lib: Library, cfg: Config, questions: Sequence[Question], sizes: Sequence[int],
            n_queries: int) -> dict[str, dict]:
    base = base_lib.all_chunks()
    base_vecs = np.asarray(base_lib._snap.vectors.matrix)
    base_lib.embedder.recent_queries = 0  # each search embeds its question (the same few repeat here)
    qs = [q.text for q in random.Random(1).sample(list(questions), min(n_queries, len(questions)))]
    out: dict[str, dict] = {}
    for n in sizes:
        random_vectors = n > 20_000
        log(f"latency at {n} chunks ({'random unit vectors' if random_vectors else 'real + perturbed vectors'})")
        chunks, metas, vecs = synthesize(base, base_vecs, n, random_vectors)
        t0 = time.perf_counter()
        lexical = LexicalIndex.build([c.search_text for c in chunks])
        lex_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        vindex = VectorIndex.build(vecs, m=cfg.retrieval.hnsw_m, ef_construction=cfg.retrieval.hnsw_ef_construction)
        vec_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            lib = Library.in_memory(chunks, metas, lexical, vindex, cfg, Path(tmp), embedder=base_lib.embedder)
            entry: dict[str, Any] = {"chunks": n, "vectors": "random unit" if random_vectors else "real+noise",
                                     "build": {"lexical_s": round(lex_s, 2), "hnsw_s": round(vec_s, 2),
                                               "lexical_chunks_per_s": round(n / lex_s, 1),
                                               "hnsw_chunks_per_s": round(n / vec_s, 1)}}
            for mode in ("lexical", "vector", "hybrid", "full"):
                totals: list[float] = []
                stages: dict[str, list[float]] = {}
                lib.search(qs[0], mode=mode)  # warm-up
                for q in qs:
                    t0 = time.perf_counter()
                    res = lib.search(q, mode=mode)
                    totals.append((time.perf_counter() - t0) * 1000)
                    for s in res.trace.stages:
                        stages.setdefault(s.name, []).append(s.ms)
                entry[mode] = {"total_ms": _pct(totals), "stages_ms": {k: _pct(v) for k, v in stages.items()}}
                log(f"  {mode}: p50 {entry[mode]['total_ms']['p50']:.1f} ms, p95 {entry[mode]['total_ms']['p95']:.1f} ms")
            lib.close()
        entry["peak_rss_mb"] = round(rss_mb(), 1)
        out[str(n)] = entry
    return out


# ---- main -------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="multi-dev only, 300 questions, 1k and 10k chunks")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sets", default=None, help="comma-separated set names (default: all)")
    ap.add_argument("--limit", type=int, default=None, help="questions per set (the first N)")
    ap.add_argument("--sample", type=int, default=None,
                    help="a seeded random sample of N questions per set, file order kept (multi-dev mixes languages)")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--index-root", type=Path, default=Path(".index"))
    ap.add_argument("--sizes", default=None, help="latency sizes, e.g. 1000,10000,100000")
    ap.add_argument("--queries", type=int, default=100, help="queries per latency measurement")
    ap.add_argument("--rank-bm25-sample", type=int, default=200)
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, e.g. retrieval.rrf_c=5 (repeatable)")
    args = ap.parse_args(argv)
    sets = args.sets.split(",") if args.sets else (["multi-dev"] if args.quick else list(SETS))
    limit = args.limit if args.limit is not None else (300 if args.quick else None)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else \
        ([1000, 10000] if args.quick else [1000, 10000, 100000])
    overrides: dict[str, Any] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key.strip()] = json.loads(value) if value.strip()[:1] in "0123456789-[{tf\"" else value
    cfg = Config().replace(**overrides)
    from engine.models import Embedder

    embedder = Embedder(cfg.embedder_dir, threads=cfg.models.threads, max_length=cfg.models.max_length,
                        batch_size=cfg.models.batch_size, query_model_dir=cfg.query_encoder_dir)
    report: dict[str, Any] = {"embedder": embedder.model_id, "config_overrides": overrides, "sets": {},
                              "query_encoder": embedder.query_model_dir.name if embedder.query_model_dir else ""}
    # multi-dev first: the other sets import its embedding cache
    order = sorted(sets, key=lambda s: s != "multi-dev")
    libs: dict[str, Library] = {}
    for name in order:
        log(f"{name}: indexing")
        lib, build = open_set(name, args.index_root, cfg, embedder)
        libs[name] = lib
        questions = load_questions(EVAL / name / SETS[name], limit=limit)
        if args.sample is not None and args.sample < len(questions):
            keep = sorted(random.Random(0).sample(range(len(questions)), args.sample))
            questions = [questions[i] for i in keep]
        log(f"{name}: {len(questions)} questions")
        t0 = time.perf_counter()
        quality = evaluate(lib, questions)
        entry = {"build": build, "quality": quality, "eval_s": round(time.perf_counter() - t0, 1)}
        if questions:  # what the rerank stage did (off / degraded / which blend), said once per set
            rr = lib.search(questions[0].text).trace.stage("rerank")
            entry["rerank_stage"] = rr.note if rr else ""
        if not args.no_baselines:
            entry["baselines"] = baselines(lib, questions, args.rank_bm25_sample)
        report["sets"][name] = entry
        log(_set_text(name, entry))
    if not args.no_latency:
        base = libs.get("multi-dev") or next(iter(libs.values()))
        name = "multi-dev" if "multi-dev" in libs else next(iter(libs))
        questions = [q for q in load_questions(EVAL / name / SETS[name]) if q.targets]
        report["latency"] = latency(base, cfg, questions, sizes, args.queries)
    report["peak_rss_mb"] = round(rss_mb(), 1)
    report["acceptance"] = acceptance(report)
    for lib in libs.values():
        lib.close()
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(text_report(report))
    return 0


def acceptance(report: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    md = report["sets"].get("multi-dev")
    if md:
        modes = md["quality"]["modes"]
        lex, vec, hyb = (modes[m].get("recall@5") for m in ("lexical", "vector", "hybrid"))
        if None not in (lex, vec, hyb):
            out["hybrid_r5_ge_best_branch"] = {"hybrid": hyb, "lexical": lex, "vector": vec,
                                               "ok": hyb >= max(lex, vec)}
        full = modes.get("full", {})
        if "recall@1" in full and modes["hybrid"].get("recall@1") is not None:
            gain = round(full["recall@1"] - modes["hybrid"]["recall@1"], 4)
            out["rerank_r1_gain_ge_0.03"] = {"hybrid": modes["hybrid"]["recall@1"], "full": full["recall@1"],
                                             "gain": gain, "ok": gain >= 0.03}
        b = md.get("baselines")
    if md and b:
        out["lexical_vs_fts5_trigram"] = {
            "lexical_r1": b["lexical"]["recall@1"], "fts5_trigram_r1": b["fts5-trigram"]["recall@1"],
            "qps_ratio": round(b["lexical"]["qps"] / b["fts5-trigram"]["qps"], 2),
            "ok": b["lexical"]["recall@1"] >= b["fts5-trigram"]["recall@1"]
            and b["lexical"]["qps"] >= 5 * b["fts5-trigram"]["qps"]}
    lat = report.get("latency", {}).get("10000")
    if lat:
        p50 = lat["hybrid"]["total_ms"]["p50"]
        out["hybrid_p50_at_10k_ms"] = {"p50": p50, "ok": p50 <= 60}
    return out


def _set_text(name: str, e: dict[str, Any]) -> str:
    lines = [f"== {name}: {e['build']['chunks']} chunks, {e['quality']['scored']} scored questions "
             f"(build {e['build']['build_s']} s, eval {e['eval_s']} s)"]
    for mode, m in e["quality"]["modes"].items():
        if "unavailable" in m:
            lines.append(f"  {mode:<8} unavailable: {m['unavailable']}")
            continue
        lines.append(f"  {mode:<8} R@1 {m['recall@1']:.3f}  R@3 {m['recall@3']:.3f}  R@5 {m['recall@5']:.3f}"
                     f"  R@10 {m['recall@10']:.3f}  MRR@10 {m['mrr@10']:.3f}")
        for fam, f in m["by_family"].items():
            lines.append(f"      {fam:<9} R@1 {f['recall@1']:.3f}  R@5 {f['recall@5']:.3f}  n={f['questions']}")
    if e.get("rerank_stage"):
        lines.append(f"  rerank stage: {e['rerank_stage']}")
    if e["quality"].get("losses"):
        lines.append("  losses (full): " + ", ".join(f"{k} {v}" for k, v in e["quality"]["losses"].items() if v))
    lines.append("  timings (ms): " + ", ".join(f"{k} p50 {v['p50']}/p95 {v['p95']}"
                                                for k, v in e["quality"]["timings_ms"].items()))
    b = e.get("baselines")
    if not b:
        return "\n".join(lines)
    lex_qps = b["lexical"]["qps"]
    for name_b, s in b.items():
        if "recall@1" not in s:
            lines.append(f"  {name_b:<26} {s['qps']:.0f} q/s")
            continue
        ratio = f"  lexical/this qps x{lex_qps / s['qps']:.2f}" if name_b.startswith("fts5") or name_b == "rank_bm25" else ""
        extra = f"  overlap@10 vs brute force {s['recall@10_vs_brute_force']:.3f}" if "recall@10_vs_brute_force" in s else ""
        lines.append(f"  {name_b:<26} R@1 {s['recall@1']:.3f}  R@5 {s['recall@5']:.3f}  R@10 {s['recall@10']:.3f}"
                     f"  {s['qps']:8.1f} q/s (n={s['questions']}){ratio}{extra}")
    return "\n".join(lines)


def text_report(report: dict[str, Any]) -> str:
    lines = [f"embedder: {report['embedder']}; config overrides: {report.get('config_overrides') or 'none'}"]
    for name, e in report["sets"].items():
        lines.append(_set_text(name, e))
    for n, e in report.get("latency", {}).items():
        lines.append(f"== latency at {n} chunks ({e['vectors']} vectors); build: lexical {e['build']['lexical_s']} s "
                     f"({e['build']['lexical_chunks_per_s']:.0f}/s), hnsw {e['build']['hnsw_s']} s "
                     f"({e['build']['hnsw_chunks_per_s']:.0f}/s); peak RSS {e['peak_rss_mb']} MB")
        for mode in ("lexical", "vector", "hybrid", "full"):
            st = ", ".join(f"{k} {v['p50']}/{v['p95']}" for k, v in e[mode]["stages_ms"].items())
            lines.append(f"  {mode:<8} total p50 {e[mode]['total_ms']['p50']} / p95 {e[mode]['total_ms']['p95']} ms"
                         f"  [{st}]")
    lines.append(f"peak RSS: {report['peak_rss_mb']} MB")
    for k, v in report["acceptance"].items():
        lines.append(f"acceptance {k}: {'OK' if v['ok'] else 'FAIL'}  {json.dumps({a: b for a, b in v.items() if a != 'ok'})}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
