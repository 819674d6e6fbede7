"""Fit the learned passage order (engine.search.order) on training questions.

    # the query encoders a manual never seen gets, one per fitted set (models/query_encoder/):
    for s in klipper-manuals meshtastic-docs micropython-docs px4-docs valetudo-docs; do
      python models/query_encoder/train_query.py --without $s --out /tmp/qd-$s
      python models/query_encoder/assemble_query.py --delta /tmp/qd-$s --out models/fieldqa-query-without-$s
    done
    python models/passage_order/fit.py --sets klipper-manuals,meshtastic-docs,micropython-docs,px4-docs,\
valetudo-docs --cross-fit --report wled-docs,zmk-docs [--write]

Every answerable question of each set's **train** split is searched in ``hybrid`` mode (the
fused list, as the ``order`` stage receives it); the first ``--depth`` candidates get
``engine.search.order.candidate_features`` (the function the search runs), their cosines those of
the question's vector named by ``--question-vector`` (the query encoder's, by default), and a label
(a hit of the question's gold section, the evaluation's hit rule). A linear score is fitted with
a listwise softmax loss (each question's candidates compete; the gold ones share the target) and
L2, features standardised.

``--cross-fit``: each set's questions go through the query encoder trained without that set
(``fieldqa-query-without-<set>``, built as above), which is how the shipped encoder sees a manual
it was not trained on; through the shipped encoder, which was trained on these very questions,
the fused rank and the cosines would look better than they are on a new manual, and the fit would
trust them too much. The model written names the shipped query encoder (its checksum), the one
the search runs.

The report gives, per set, R@1 of the fused order and of the learned one fitted without that set
(leave one set out; with one set, 5 folds by gold file), and for the ``--report`` sets (held out
of every fit: both splits are reports) the model fitted on all the sets. ``--write`` stores the
model fitted on every set's rows in ``models/passage_order/passage_order.json`` with that record.
Dev questions are for the report of ``fieldqa eval``, never for this fit.

Chosen this way (2026-12-02), leave one set out over the five fitted sets, mean R@1 (held-out
WLED / ZMK train splits after it): fused .606; the query encoder's cosines .707 (.787 / .693)
against the embedder's fitted the same way .679 (.787 / .707); both side by side (six features)
no better (.689 at L2 .01); ``--l2`` .0001 to .003 all give .705-.707, .01 .694, .03 .692.
Also no better (2026-12-02; the four features give .704 on that dump): each branch's own rank as a further feature (``1/(5 + rank)``
in the lexical list, weighted by its fusion weight or not, and in the embedder's and the query
encoder's vector lists): .684-.697; the cross-encoder's logit (models/reranker/MODEL_CARD.md):
.682-.693. And a fusion that counts the embedder's and the query encoder's lists as two rankings
next to the lexical one (branch ``research/vector-votes``): fused R@1 .606 -> .639, the order refitted
on it .697 (WLED / ZMK .800 / .707), but multi-dev hybrid R@1 .852 -> .804 and full .898 -> .894
(Wikipedia's strong lexical list loses weight); the same only for a question whose lexical weight is
below 1 (asked in another language: hybrid R@1 of those .592 -> .617, vector alone .596; multi-dev
untouched): fused .616, the order refitted on it .694 (PX4 .618 -> .579, Meshtastic .711 -> .684,
MicroPython .770 -> .784; WLED / ZMK unchanged); not shipped.
Nor the passage's surroundings (2026-12-02, a fifth feature beside the four, the same cross-fitted
run; the four give .707, WLED / ZMK .787 / .693): the best cosine of the other chunks of its section
.682 (.760 / .693), their mean .669 (.747 / .680), the best cosine of its document .682 (.773 /
.707), the mean of the document's three best .699 (.787 / .707), the better of its two neighbours'
.692 (.773 / .680), section and document best together .677 (.773 / .693). A passage whose section
or manual is about the question is already near the top of the fused list; these features move
the wrong neighbour up as often as the right passage.
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
from engine.models import query_encoder_identity, read_manifest, sha256_file  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402
from engine.search.order import ORDER_FEATURES, QUESTION_VECTORS, OrderModel  # noqa: E402
from fieldqa.question_sets import set_folder  # noqa: E402

RANK_C = 5.0


def collect(lib: Library, questions, depth: int, question_vector: str) -> list[dict]:
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
        x = lib.order_features(result, depth, RANK_C, question_vector)
        y = np.array([c.id in gold for c in head])
        out.append({"x": x, "y": y, "family": q.family, "file": sorted(t.path for t in q.targets)[0]})
    return out


def set_rows(name: str, a, base, cross_fit: bool) -> tuple[list[dict], str]:
    """One set's train rows, through the query encoder trained without it when ``cross_fit``; and
    the embedder's checksum."""
    config = base
    if cross_fit:
        encoder = f"fieldqa-query-without-{name}"
        if not (base.models.dir / encoder / "model.onnx").is_file():
            raise SystemExit(f"{base.models.dir / encoder} missing: build it first (this script's docstring)")
        config = base.replace(**{"models.query_encoder": encoder})
    with Library.open(set_folder(name) / "corpus", config, a.index_root / name, repair=True) as lib:
        lib.build()
        rows = collect(lib, load_questions(set_folder(name) / "questions.train.tsv"), a.depth, a.question_vector)
        return rows, lib.embedder.checksum


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


def cross_validated(rows: list[dict], groups: list[str], l2: float) -> list[bool]:
    """First hits of each row under a model fitted without its group."""
    hits = [False] * len(rows)
    for g in sorted(set(groups)):
        test = [i for i, x in enumerate(groups) if x == g]
        model = fit([r for r, x in zip(rows, groups) if x != g], l2)
        for i, h in zip(test, first_hits([rows[i] for i in test], model)):
            hits[i] = h
    return hits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", required=True, help="comma-separated question sets (train splits), in "
                    "models/training/ or ../shared/eval/")
    ap.add_argument("--report", default="", help="comma-separated sets held out of the fit, reported only")
    ap.add_argument("--question-vector", choices=QUESTION_VECTORS, default="query_encoder",
                    help="whose vector of the question the cosines are of")
    ap.add_argument("--cross-fit", action="store_true",
                    help="each set through the query encoder trained without it (fieldqa-query-without-SET)")
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/fieldqa-answerability"),
                    help="one index folder per set below it")
    ap.add_argument("--depth", type=int, default=20, help="candidates re-ordered (retrieval.rerank_input)")
    ap.add_argument("--l2", type=float, default=0.001)
    ap.add_argument("--folds", type=int, default=5, help="folds by gold file when only one set is fitted")
    ap.add_argument("--write", action="store_true", help="store the model in models/passage_order/")
    ap.add_argument("--write-without", type=Path, default=None, metavar="DIR",
                    help="with --cross-fit: also store, per set, the model fitted without it, for the query "
                         "encoder trained without it (DIR/passage_order-without-SET.json), so that a set's train "
                         "questions can be asked of the whole pipeline as of a manual it never saw")
    ap.add_argument("--config", type=Path, default=None, help="config TOML (default: the user's)")
    args = ap.parse_args(argv)
    t0 = time.time()
    base = load_config(args.config).replace(**{"retrieval.passage_order": ""})
    encoder_checksum = ""
    if args.question_vector == "query_encoder":
        if base.query_encoder_dir is None:
            ap.error("--question-vector query_encoder, but models.query_encoder is off")
        encoder_checksum = query_encoder_identity(read_manifest(base.query_encoder_dir, required=True))
    sets = [x for x in args.sets.split(",") if x]
    by_set = {}
    for name in sets:
        by_set[name], checksum = set_rows(name, args, base, args.cross_fit)
    rows = [r for name in sets for r in by_set[name]]
    if len(sets) > 1:
        cv = cross_validated(rows, [name for name in sets for _ in by_set[name]], args.l2)
    else:
        cv = cross_validated(rows, [str(zlib.crc32(r["file"].encode()) % args.folds) for r in rows], args.l2)
    fused = first_hits(rows, None)
    mean, scale, w = fit(rows, args.l2)
    per_set, at = {}, 0
    for name in sets:
        n = len(by_set[name])
        per_set[name] = {"questions": n, "fused_r1": round(float(np.mean(fused[at:at + n])), 3),
                         "learned_r1_cv": round(float(np.mean(cv[at:at + n])), 3)}
        at += n
    held = {}
    for name in [x for x in args.report.split(",") if x]:  # never fitted: the shipped encoder is theirs
        reported, _ = set_rows(name, args, base, cross_fit=False)
        held[name] = {"questions": len(reported), "fused_r1": round(float(np.mean(first_hits(reported, None))), 3),
                      "learned_r1": round(float(np.mean(first_hits(reported, (mean, scale, w)))), 3)}
    record = {
        "questions": len(rows), "sets": per_set, "held_out": held, "question_vector": args.question_vector,
        "cross_fit": args.cross_fit, "depth": args.depth, "l2": args.l2,
        "fused_r1": round(float(np.mean(fused)), 3), "learned_r1_cv": round(float(np.mean(cv)), 3),
        "cv": "leave one set out" if len(sets) > 1 else f"{args.folds} folds by gold file",
        "by_family_fused": by_family(rows, fused), "by_family_learned_cv": by_family(rows, cv),
        "pool_coverage": round(float(np.mean([r["y"].any() for r in rows])), 3),
        "command": "python models/passage_order/fit.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seconds": round(time.time() - t0, 1),
    }
    print(json.dumps(record, indent=1))
    print("weights:", dict(zip(ORDER_FEATURES, np.round(w, 3).tolist())))
    if args.write_without is not None:
        if not args.cross_fit or len(sets) < 2:
            ap.error("--write-without needs --cross-fit and two sets or more")
        args.write_without.mkdir(parents=True, exist_ok=True)
        for name in sets:
            m, sc, wt = fit([r for other in sets if other != name for r in by_set[other]], args.l2)
            encoder = base.models.dir / f"fieldqa-query-without-{name}"
            identity = query_encoder_identity(read_manifest(encoder, required=True)) if encoder_checksum else ""
            without = OrderModel(ORDER_FEATURES, m, sc, wt, RANK_C, checksum, f"without {name}", {"without": name},
                                 args.question_vector, identity)
            path = args.write_without / f"passage_order-without-{name}.json"
            path.write_text(json.dumps(without.to_json(), indent=1) + "\n", encoding="utf-8")
            print(f"wrote {path}")
    if args.write:
        model = OrderModel(ORDER_FEATURES, mean, scale, w, RANK_C, checksum, ",".join(f"{x}:train" for x in sets),
                           record, args.question_vector, encoder_checksum)
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
