"""End to end: what the technician waits for, on real libraries and as a library grows.

    python -m bench.e2e [--quick] [--sizes 1000,10000,100000] [--build-sizes 10000]
                        [--parts libraries,build,growth]

Part 1, real libraries (the bundled samples and the klipper-manuals corpus), each measured in
its own child process (so peak RSS is that library's) on a fresh index folder (every passage
embedded, nothing cached): build time and chunks/s, the embedder's share of the chunk phase and
the embedder's own passages/s on the same texts at the same thread count (so the ratio says what
indexing adds around the model), the answer-unit phase that follows the switch, index size on
disk, warm search (mode full, rerank off) and warm ask p50/p95 with the rerank stage off and on,
cold ``fieldqa ask`` (one process, one question) and, on the same questions and chunk texts,
SQLite FTS5 trigram and brute-force numpy dense search as peers.

Part 2, index throughput: a fresh index of ~10k chunks of real text (klipper chunks reworded), the
whole build with its answer units (a pass of their own, the default, and pooled from the chunk's
pass), against the embedder's own passages/s on the same texts.

Part 3, growth: libraries of 1k / 10k / 100k chunks synthesized from the klipper chunks
(bench.retrieval.synthesize: real texts reworded; real vectors plus noise up to 20k, random unit
vectors beyond) searched warm per mode, with the same two peers, and peak RSS.

Writes bench/e2e.json and bench/e2e.md (``--out``). Ratios matter, not absolute times: the
figures are from whatever machine runs it, in one run.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from fieldqa.question_sets import EVAL

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIBRARIES = {"samples": (REPO / "samples", REPO / "samples" / "questions.tsv"),
             "klipper": (EVAL / "klipper-manuals" / "corpus", EVAL / "klipper-manuals" / "questions.dev.tsv")}


def pct(values) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 1), "p95": round(float(np.percentile(values, 95)), 1)}


def timed(fn, items) -> list[float]:
    out = []
    for x in items:
        t0 = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def folder_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1048576, 1)


# ---- part 1: one real library (run in a child process) ---------------------------------------

def one_library(name: str, n_questions: int) -> dict[str, Any]:
    from bench.lexical_baselines import build_fts5_trigram
    from engine.config import Config
    from engine.eval.retrieval import load_questions
    from engine.pipeline import Library

    root, qfile = LIBRARIES[name]
    questions = [q.text for q in load_questions(qfile)]
    questions = random.Random(7).sample(questions, min(n_questions, len(questions)))
    cfg = Config()
    with tempfile.TemporaryDirectory(prefix="fieldqa-e2e-") as tmp:
        index = Path(tmp) / "index"
        phases: dict[str, float] = {}

        def progress(p) -> None:
            phases.setdefault(p.phase, time.perf_counter())

        lib = Library.open(root, cfg, index)
        t0 = time.perf_counter()
        report = lib.build(progress=progress)
        total_s = time.perf_counter() - t0
        chunks = lib.all_chunks()
        units_s = total_s - (phases.get("units", t0 + total_s) - t0)
        chunk_phase_s = total_s - units_s
        embed_s = phases.get("index", t0) - phases.get("embed", t0)
        sample = [c.search_text for c in chunks[:128]]
        t1 = time.perf_counter()
        lib.embedder.embed_passages(sample)
        own_per_s = len(sample) / (time.perf_counter() - t1)
        out: dict[str, Any] = {
            "documents": report.documents, "chunks": len(chunks),
            "build": {"chunk_phase_s": round(chunk_phase_s, 1), "chunks_per_s": round(len(chunks) / chunk_phase_s, 2),
                      "embedder_share": round(embed_s / chunk_phase_s, 2),
                      "embedder_own_passages_per_s": round(own_per_s, 2),
                      "index_vs_embedder": round(len(chunks) / chunk_phase_s / own_per_s, 2),
                      "units_phase_s": round(units_s, 1),
                      "with_units_vs_embedder": round(len(chunks) / total_s / own_per_s, 2)},
            "index_mb": folder_mb(index)}
        lib.search(questions[0])
        lib.embedder.recent_queries = 0  # every question embedded, as a new one would be
        out["search_full_ms"] = pct(timed(lambda q: lib.search(q, mode="full"), questions))
        lib.embedder.recent_queries = 64  # as shipped: the answer reuses its search's query vector
        out["ask_ms"] = pct(timed(lib.ask, questions))
        lib.close()
        on = Library.open(root, cfg.replace(**{"retrieval.rerank": True}), index, create=False,
                          embedder=lib.embedder)
        on.ask(questions[0])
        out["ask_rerank_on_ms"] = pct(timed(on.ask, questions))
        texts = [c.search_text for c in chunks]
        fts = build_fts5_trigram(texts)
        out["peer_fts5_trigram_ms"] = pct(timed(lambda q: fts.search(q, 10), questions))
        matrix = np.asarray(on._snap.vectors.matrix)
        on.embedder.recent_queries = 0
        out["peer_numpy_dense_ms"] = pct(timed(  # the question embedded too, as in our vector branch
            lambda q: np.argpartition(-(matrix @ on.embedder.embed_queries([q])[0]), 10)[:10], questions))
        on.close()
        out["cold_ask_s"] = cold_ask(root, index, questions[0])
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def cold_ask(root: Path, index: Path, question: str, runs: int = 3) -> float:
    """`fieldqa ask` in a new process, wall seconds (median of ``runs``)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "fieldqa", "ask", question, str(root), "--index", str(index)],
                       cwd=REPO, capture_output=True, timeout=300)
        times.append(time.perf_counter() - t0)
    return round(sorted(times)[len(times) // 2], 2)


def build_throughput(n: int, pooled: bool) -> dict[str, Any]:
    """A fresh index of about ``n`` chunks of real text (the klipper chunks, reworded past the
    first copy by bench.retrieval.synthesize, written as Markdown sections): the whole build,
    answer units included (``pooled``: chunking.pooled_unit_vectors), against the embedder's own
    passages/s on the same chunk texts at the same thread count."""
    from bench.retrieval import synthesize
    from engine.config import Config
    from engine.pipeline import Library

    root, _q = LIBRARIES["klipper"]
    base = Library.open(root, Config(), create=False)
    chunks, _metas, _vecs = synthesize(base.all_chunks(), np.zeros((1, 1), np.float32), n, True)
    base.close()
    with tempfile.TemporaryDirectory(prefix="fieldqa-e2e-build-") as tmp:
        lib_dir = Path(tmp) / "library"
        for start in range(0, len(chunks), 50):
            part = chunks[start:start + 50]
            body = "\n\n".join(f"## {(c.heading_path or ('Section',))[-1]} {start + k}\n\n{c.text}"
                                for k, c in enumerate(part))
            path = lib_dir / f"{start // 50:05d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Manual {start // 50}\n\n{body}\n", encoding="utf-8")
        phases: dict[str, float] = {}
        lib = Library.open(lib_dir, Config().replace(**{"chunking.pooled_unit_vectors": pooled}), Path(tmp) / "index")
        t0 = time.perf_counter()
        lib.build(progress=lambda p: phases.setdefault(p.phase, time.perf_counter()))
        total_s = time.perf_counter() - t0
        built = lib.all_chunks()
        units_s = total_s - (phases.get("units", t0 + total_s) - t0)
        sample = [c.search_text for c in random.Random(3).sample(list(built), min(256, len(built)))]
        t1 = time.perf_counter()
        lib.embedder.embed_passages(sample)
        own_per_s = len(sample) / (time.perf_counter() - t1)
        pooled = lib.config.chunking.pooled_unit_vectors
        lib.close()
    return {"chunks": len(built), "build_s": round(total_s, 1), "units_phase_s": round(units_s, 1),
            "chunks_per_s": round(len(built) / total_s, 2), "embedder_own_passages_per_s": round(own_per_s, 2),
            "with_units_vs_embedder": round(len(built) / total_s / own_per_s, 2),
            "pooled_unit_vectors": pooled, "peak_rss_mb": peak_rss_mb()}


# ---- part 2: growth ----------------------------------------------------------------------------

def growth(sizes: list[int], n_queries: int) -> dict[str, Any]:
    from bench.lexical_baselines import build_fts5_trigram
    from bench.retrieval import latency, synthesize
    from engine.config import Config
    from engine.eval.retrieval import load_questions
    from engine.pipeline import Library

    root, qfile = LIBRARIES["klipper"]
    cfg = Config()
    base = Library.open(root, cfg, create=False)  # the user-data index `fieldqa index` builds
    questions = load_questions(qfile)
    out = latency(base, cfg, questions, sizes, n_queries)
    qs = [q.text for q in random.Random(1).sample(list(questions), min(n_queries, len(questions)))]
    base_vecs = np.asarray(base._snap.vectors.matrix)
    for n in sizes:
        chunks, _metas, vecs = synthesize(base.all_chunks(), base_vecs, n, n > 20_000)
        fts = build_fts5_trigram([c.search_text for c in chunks])
        out[str(n)]["peer_fts5_trigram_ms"] = pct(timed(lambda q: fts.search(q, 10), qs))
        out[str(n)]["peer_numpy_dense_ms"] = pct(timed(  # the question embedded too, as in our vector branch
            lambda q: np.argpartition(-(vecs @ base.embedder.embed_queries([q])[0]), 10)[:10], qs))
    base.close()
    return out


# ---- report -------------------------------------------------------------------------------------

def markdown(report: dict[str, Any]) -> str:
    lines = [f"# End-to-end bench ({report['date']}, {'quick' if report['quick'] else 'full'} run)", "",
             "## Real libraries (fresh index, rerank off unless said)", "",
             "| library | chunks | build chunks/s | vs embedder alone | embedder share | units phase s | "
             "with units vs embedder | index MB | search p50/p95 ms | ask p50/p95 ms | ask rerank on p50/p95 | "
             "cold ask s | FTS5 trigram p50 | numpy dense p50 | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|"]
    for name, r in report["libraries"].items():
        b = r["build"]
        lines.append(
            f"| {name} | {r['chunks']} | {b['chunks_per_s']} | {b['index_vs_embedder']} | {b['embedder_share']} | "
            f"{b['units_phase_s']} | {b.get('with_units_vs_embedder', '–')} | {r['index_mb']} | "
            f"{r['search_full_ms']['p50']}/{r['search_full_ms']['p95']} | "
            f"{r['ask_ms']['p50']}/{r['ask_ms']['p95']} | {r['ask_rerank_on_ms']['p50']}/"
            f"{r['ask_rerank_on_ms']['p95']} | {r['cold_ask_s']} | {r['peer_fts5_trigram_ms']['p50']} | "
            f"{r['peer_numpy_dense_ms']['p50']} | {r['peak_rss_mb']} |")
    if report.get("build"):
        lines += ["", "## Index throughput (fresh index of real reworded text, answer units included)", "",
                  "| chunks | build s | units phase s | chunks/s | embedder alone passages/s | ratio | "
                  "pooled unit vectors | peak RSS MB |", "|---:|---:|---:|---:|---:|---:|---|---:|"]
        for b in report["build"].values():
            lines.append(f"| {b['chunks']} | {b['build_s']} | {b['units_phase_s']} | {b['chunks_per_s']} | "
                         f"{b['embedder_own_passages_per_s']} | {b['with_units_vs_embedder']} | "
                         f"{b['pooled_unit_vectors']} | {b['peak_rss_mb']} |")
    lines += ["", "## Growth (synthetic from the klipper chunks; warm search, ms)", "",
              "| chunks | vectors | lexical p50 | vector p50 | hybrid p50/p95 | full p50/p95 | FTS5 trigram p50 | "
              "numpy dense p50 | peak RSS MB |", "|---:|---|---:|---:|---|---|---:|---:|---:|"]
    for n, g in report["growth"].items():
        lines.append(
            f"| {n} | {g['vectors']} | {g['lexical']['total_ms']['p50']} | {g['vector']['total_ms']['p50']} | "
            f"{g['hybrid']['total_ms']['p50']}/{g['hybrid']['total_ms']['p95']} | "
            f"{g['full']['total_ms']['p50']}/{g['full']['total_ms']['p95']} | {g['peer_fts5_trigram_ms']['p50']} | "
            f"{g['peer_numpy_dense_ms']['p50']} | {g['peak_rss_mb']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="samples only, 1k and 10k chunks, fewer questions")
    ap.add_argument("--sizes", default="", help="growth: library sizes searched (default 1k,10k,100k)")
    ap.add_argument("--build-sizes", default="", help="index throughput: library sizes built (default 10k)")
    ap.add_argument("--parts", default="libraries,build,growth", help="which parts to run (comma-separated)")
    ap.add_argument("--build-one", help=argparse.SUPPRESS)  # child mode: "N" or "N pooled", JSON on stdout
    ap.add_argument("--one", help=argparse.SUPPRESS)  # child mode: one library, JSON on stdout
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--out", type=Path, default=HERE / "e2e.json")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_library(args.one, args.questions)))
        return 0
    if args.build_one:
        n, *mode = args.build_one.split()
        print(json.dumps(build_throughput(int(n), mode == ["pooled"])))
        return 0
    parts = set(args.parts.split(","))
    if parts - {"libraries", "build", "growth"}:
        ap.error(f"--parts: unknown {', '.join(sorted(parts - {'libraries', 'build', 'growth'}))}")
    names = ["samples"] if args.quick else list(LIBRARIES)
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1000, 10000] if args.quick else [1000, 10000, 100000])
    build_sizes = [int(s) for s in args.build_sizes.split(",") if s] or ([1000] if args.quick else [10000])
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M"), "quick": args.quick, "libraries": {},
                              "build": {}, "growth": {}}
    if parts != {"libraries", "build", "growth"} and args.out.is_file():  # a partial run updates its parts
        kept = json.loads(args.out.read_text(encoding="utf-8"))
        report = {**report, **{k: v for k, v in kept.items() if k in ("libraries", "build", "growth")},
                  "date": f"{kept.get('date')}; {'/'.join(sorted(parts))} {report['date']}"}
    for part in parts:
        report[part] = {}
    children = [(f"library {n}", "libraries", n, ["--one", n]) for n in names if "libraries" in parts]
    children += [(f"build {key}", "build", key, ["--build-one", key])  # units: a pass each, or pooled
                 for n in build_sizes for key in (str(n), f"{n} pooled") if "build" in parts]
    for label, part, key, child in children:  # each in its own process: peak RSS is its own
        print(f"{label}…", file=sys.stderr, flush=True)
        run = subprocess.run([sys.executable, "-m", "bench.e2e", *child, "--questions", str(args.questions)],
                             cwd=REPO, capture_output=True, text=True, timeout=3600)
        if run.returncode:
            print(run.stderr[-2000:], file=sys.stderr)
            return 1
        report[part][key] = json.loads(run.stdout.strip().splitlines()[-1])
    if "growth" in parts:
        print("growth…", file=sys.stderr, flush=True)
        report["growth"] = growth(sizes, args.questions)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
