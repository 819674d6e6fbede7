"""Fit the learned passage order (engine.search.order) on training questions.

    python models/passage_order/fit.py --questions ../shared/eval/klipper-manuals/questions.train.tsv \
        --corpus ../shared/eval/klipper-manuals/corpus [--index DIR] [--write]

Every answerable question is searched in ``hybrid`` mode (the fused list, as the ``order`` stage
receives it); the first ``--depth`` candidates get ``engine.search.order.candidate_features`` (the
function the search runs) and a label (a hit of the question's gold section, the evaluation's
hit rule). A linear score is fitted with a listwise softmax loss (each question's candidates
compete; the gold ones share the target) and L2, features standardised. The report gives R@1 of
the fused order and of the learned one, cross-validated by gold file (folds never share a file)
and per family; ``--write`` stores the model fitted on all questions in
``models/passage_order/passage_order.json`` with that record. Train splits only: dev questions
are for the report of ``fieldqa eval``, never for this fit.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.config import load_config  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.models import sha256_file  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402
from engine.search.order import ORDER_FEATURES, OrderModel  # noqa: E402

RANK_C = 5.0


def collect(lib: Library, questions, depth: int) -> list[dict]:
    """Per answerable question: features and labels of its first ``depth`` fused candidates."""
    resolver = GoldResolver(lib)
    out = []
    for q in questions:
        if not q.targets:
            continue
        gold = {c.id for t in q.targets for c in resolver.hits(t)}
        result = lib.search(q.text, mode="hybrid")
        head = [h.chunk for h in result.hits[:depth]]
        if not head:
            continue
        x = lib.order_features(result, depth, RANK_C)
        y = np.array([c.id in gold for c in head])
        out.append({"x": x, "y": y, "family": q.family, "file": sorted(t.path for t in q.targets)[0]})
    return out


def fit(rows: list[dict], l2: float, iters: int = 800, lr: float = 0.5) -> tuple[np.ndarray, ...]:
    """Listwise softmax over each question's candidates; returns (mean, scale, weights)."""
    allx = np.vstack([r["x"] for r in rows])
    mean, scale = allx.mean(0), allx.std(0)
    scale[scale <= 0] = 1.0
    w = np.zeros(allx.shape[1])
    used = [r for r in rows if r["y"].any()]
    for _ in range(iters):
        g = l2 * w
        for r in used:
            z = (r["x"] - mean) / scale
            s = z @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            g += z.T @ (p - r["y"] / r["y"].sum()) / len(used)
        w -= lr * g
    return mean, scale, w


def first_hits(rows: list[dict], model: tuple[np.ndarray, ...] | None) -> list[bool]:
    hits = []
    for r in rows:
        if model is None:
            top = 0
        else:
            s = ((r["x"] - model[0]) / model[1]) @ model[2]
            top = min(range(len(s)), key=lambda i: (-s[i], i))
        hits.append(bool(r["y"][top]))
    return hits


def by_family(rows: list[dict], hits: list[bool]) -> dict[str, float]:
    fam: dict[str, list[bool]] = {}
    for r, h in zip(rows, hits):
        fam.setdefault(r["family"], []).append(h)
    return {k: round(float(np.mean(v)), 3) for k, v in sorted(fam.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, required=True, help="a train split (question TSV)")
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--index", type=Path, help="index folder (default: the library's own)")
    ap.add_argument("--depth", type=int, default=20, help="candidates re-ordered (retrieval.rerank_input)")
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--write", action="store_true", help="store the model in models/passage_order/")
    ap.add_argument("--config", type=Path, default=None, help="config TOML (default: the user's)")
    args = ap.parse_args(argv)
    t0 = time.time()
    config = load_config(args.config).replace(**{"retrieval.passage_order": ""})
    with Library.open(args.corpus, config, args.index) as lib:
        lib.build()
        rows = collect(lib, load_questions(args.questions), args.depth)
        checksum = lib.embedder.checksum
    folds = [zlib.crc32(r["file"].encode()) % args.folds for r in rows]
    cv = [False] * len(rows)
    for k in range(args.folds):
        test = [i for i, f in enumerate(folds) if f == k]
        if not test:
            continue
        model = fit([r for r, f in zip(rows, folds) if f != k], args.l2)
        for i, h in zip(test, first_hits([rows[i] for i in test], model)):
            cv[i] = h
    fused = first_hits(rows, None)
    mean, scale, w = fit(rows, args.l2)
    record = {
        "questions": len(rows), "source": str(args.questions.name), "depth": args.depth, "l2": args.l2,
        "fused_r1": round(float(np.mean(fused)), 3), "learned_r1_cv": round(float(np.mean(cv)), 3),
        "folds": args.folds, "by_family_fused": by_family(rows, fused), "by_family_learned_cv": by_family(rows, cv),
        "pool_coverage": round(float(np.mean([r["y"].any() for r in rows])), 3),
        "command": "python models/passage_order/fit.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": round(time.time() - t0, 1),
    }
    print(json.dumps(record, indent=1))
    print("weights:", dict(zip(ORDER_FEATURES, np.round(w, 3).tolist())))
    if args.write:
        model = OrderModel(ORDER_FEATURES, mean, scale, w, RANK_C, checksum,
                           f"{args.questions.parent.name}/{args.questions.name}", record)
        out = ROOT / "models" / "passage_order" / "passage_order.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(out)
        manifest = {"name": "passage_order", "files": {out.name: sha256_file(out)}}
        (out.parent / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out} and its manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
