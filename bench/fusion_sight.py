"""Fit (on train splits) and report (on dev splits) the lexical branch's weight in the fusion.

    .venv/bin/python bench/fusion_sight.py --sets klipper-manuals:train,piaf-fr:train:400,cmrc-zh:train:400,drcd-zh-hant:train:400
    .venv/bin/python bench/fusion_sight.py --sets klipper-manuals:dev --knees 0,0.5

RRF gives BM25's list the same weight whether or not it can see the question: a question in
another language than the manuals shares only identifiers with them, and its BM25 list is
mostly noise that drags the vector branch down. The fusion weighs the lexical list by
``min(1, sight / knee)`` (engine.search.stages.lexical_weight; sight: the IDF-weighted share of
the question's terms that occur in the index) and the vector list by 1. ``knee = 0`` is plain
RRF. This prints R@1 / R@5 / MRR@10 of the fused list for each knee per set and family (the
branch lists are computed once per question), so ``retrieval.lexical_sight_knee`` is chosen on
train questions. (A power rule, ``sight ** p``, was measured too: it also lowers the weight of
same-language questions with a few unknown words, and cost drcd-zh-hant train R@1 .835 -> .785.)
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import load_config  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402
from engine.search.fusion import fuse_rrf  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval"


def branch_lists(spec: str, config, index_root: Path) -> list[dict]:
    name, split, *rest = spec.split(":")
    lib = Library.open(EVAL / name / "corpus", config, index_root / name, repair=True)
    lib.build(rebuild=lib.generation is None)
    gold = GoldResolver(lib)
    questions = [q for q in load_questions(EVAL / name / f"questions.{split}.tsv") if q.targets]
    if rest and len(questions) > int(rest[0]):
        keep = sorted(np.random.default_rng(7).choice(len(questions), int(rest[0]), replace=False))
        questions = [questions[i] for i in keep]
    out = []
    for q in questions:
        res = lib.search(q.text, mode="hybrid")
        lex, vec = (res.trace.stage(n) for n in ("lexical", "vector"))
        out.append({"set": name, "family": q.family or name,
                    "gold": {c.id for t in q.targets for c in gold.hits(t)},
                    "lex": [r.chunk_id for r in lex.ranked], "vec": [r.chunk_id for r in vec.ranked],
                    "sight": lib.lexical_sight(q.text)})
    lib.close()
    return out


def scores(rows: list[dict], knee: float, c: int) -> dict[str, float]:
    r1 = r5 = mrr = 0.0
    for r in rows:
        w = min(1.0, r["sight"] / knee) if knee > 0 else 1.0
        fused = [i for i, _ in fuse_rrf([r["lex"], r["vec"]], c=c, weights=[w, 1.0])][:10]
        rank = next((k for k, i in enumerate(fused, 1) if i in r["gold"]), None)
        r1 += rank == 1
        r5 += rank is not None and rank <= 5
        mrr += 1 / rank if rank else 0.0
    n = max(1, len(rows))
    return {"n": len(rows), "R@1": r1 / n, "R@5": r5 / n, "MRR@10": mrr / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", required=True, help="NAME:SPLIT[:N],... of ../shared/eval")
    ap.add_argument("--knees", default="0,0.3,0.5,0.7,1")
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/fieldqa-answerability"))
    args = ap.parse_args(argv)
    config = load_config(None)
    rows = [r for spec in args.sets.split(",") for r in branch_lists(spec, config, args.index_root)]
    knees = [float(k) for k in args.knees.split(",")]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups["all"].append(r)
        groups[f"set:{r['set']}"].append(r)
        if r["family"] != r["set"]:
            groups[r["family"]].append(r)
    print(f"{'group':<24} {'n':>4} " + " ".join(f"{'knee=' + format(k, 'g'):>17}" for k in knees))
    for g, rs in sorted(groups.items()):
        cells = [scores(rs, k, config.retrieval.rrf_c) for k in knees]
        print(f"{g:<24} {len(rs):>4} " + " ".join(f"{s['R@1']:.3f}/{s['R@5']:.3f}/{s['MRR@10']:.3f}"
                                                  for s in cells))
    print("cells: R@1 / R@5 / MRR@10 of the fused list; mean sight", round(float(np.mean([r["sight"] for r in rows])), 3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
