"""Answer benchmark: abstention and citation rates, and the abstention threshold's calibration.

    .venv/bin/python bench/answers.py                       # samples/questions.tsv
    .venv/bin/python bench/answers.py --dev piaf-fr --limit 150
    .venv/bin/python bench/answers.py --dev klipper-manuals,meshtastic-docs,micropython-docs   # manuals, dev
    .venv/bin/python bench/answers.py --dev piaf-fr,cmrc-zh,drcd-zh-hant --limit 100 --json

For each set it builds (or reuses) an index under ``--index-root``, searches every
question once (``mode="full"``), scores the evidence (``engine.answer.assess``)
and composes the answer without a threshold (each threshold is then applied to the scores). It
prints, per set:

* cited rate (answerable questions whose answer cites a gold passage), abstention
  rate on answerable and on no-answer questions (and how many abstained because no
  passage gives the attribute asked for, ``engine.answer.answertype``), claims outside their
  span, at the threshold in force and at the calibrated one;
* the evidence-score distribution (min, p5, p10, p25, p50) of answerable and of
  no-answer questions;
* a threshold sweep, and the calibrated choice: the highest threshold that keeps
  the abstention rate on answerable questions at or below ``--max-answerable-abstain``
  (default 0.05, half the 10 % target, for margin) over all sets together, which is
  what ``engine.answer.CALIBRATED_THRESHOLD`` is set from.

Dev sets (``../shared/eval``) hold only answerable questions: they calibrate the
"do not abstain when the answer is there" side; ``samples/questions.tsv`` holds both.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.answer import abstain_threshold, abstains, assess, compose_answer  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.eval.answers import AnswerEval  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from fieldqa.question_sets import set_folder  # noqa: E402



def run_set(name: str, corpus: Path, questions_file: Path, index_root: Path, limit: int | None,
            config) -> dict:
    lib = Library.open(corpus, config, index_root / name, repair=True)  # the bench's own index
    t = time.perf_counter()
    if lib.generation is None:
        print(f"[{name}] building index of {corpus} ...", file=sys.stderr)
    report = lib.build(rebuild=lib.generation is None)
    print(f"[{name}] index: {report.documents} documents, {report.chunks} chunks "
          f"({time.perf_counter() - t:.0f} s)", file=sys.stderr)
    questions = load_questions(questions_file, limit)
    free = config.replace(**{"answer.abstain_threshold": -1e9})  # answer everything; abstain offline
    hook = AnswerEval(lib, free)
    rows = []
    t = time.perf_counter()
    for i, q in enumerate(questions, 1):
        result = lib.search(q.text, mode="full")
        a = assess(q.text, result, lib, config)
        answer = compose_answer(q.text, result, lib, free)
        out = hook.score(q, answer)
        rows.append({"question": q.text, "family": q.family, "answerable": out.answerable,
                     "evidence": round(a.evidence, 4), "best_cosine": round(a.best_cosine, 4),
                     "missing": list(a.missing_codes), "expected": list(a.expected),
                     "unanswered": list(a.unanswered), "type_missing": a.type_missing,
                     "abstains_anyway": abstains(a, float("-inf")),
                     "cited": out.cited, "outside": out.outside,
                     "claims": len(answer.claims), "conflicts": len(answer.conflicts)})
        if i % 25 == 0:
            print(f"[{name}] {i}/{len(questions)} ({(time.perf_counter() - t) / i:.2f} s/question)",
                  file=sys.stderr)
    lib.close()
    return {"set": name, "rows": rows}


def rates_at(rows: list[dict], threshold: float) -> dict:
    """Rates had the threshold been ``threshold`` (the answer-type rule applies at every threshold)."""
    ans = [r for r in rows if r["answerable"]]
    no = [r for r in rows if not r["answerable"]]

    def rate(xs, pred):
        return round(sum(1 for r in xs if pred(r)) / len(xs), 4) if xs else None

    def abstained(r):
        return r["evidence"] < threshold or r["abstains_anyway"]

    return {
        "threshold": round(threshold, 4),
        "abstain_rate_answerable": rate(ans, abstained),
        "abstain_rate_noanswer": rate(no, abstained),
        "abstain_rate_by_type": rate(rows, lambda r: r["type_missing"]),
        "cited_rate": rate(ans, lambda r: r["cited"] and not abstained(r)),
    }


def distribution(values: list[float]) -> dict:
    if not values:
        return {}
    a = np.asarray(values)
    return {k: round(float(np.percentile(a, p)), 4) for k, p in
            (("min", 0), ("p5", 5), ("p10", 10), ("p25", 25), ("p50", 50), ("max", 100))}


def calibrate(rows: list[dict], max_answerable_abstain: float) -> float:
    ans = sorted(r["evidence"] for r in rows if r["answerable"])
    if not ans:
        return 0.0
    k = int(np.floor(max_answerable_abstain * len(ans)))  # questions we may lose
    return float(ans[k]) - 1e-4 if k < len(ans) else float(ans[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", action="store_true", help="run samples/questions.tsv (default if no --dev)")
    ap.add_argument("--dev", default="", help="comma-separated dev sets of ../shared/eval (e.g. piaf-fr)")
    ap.add_argument("--limit", type=int, default=None, help="questions per set")
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/fieldqa-bench-answers"))
    ap.add_argument("--max-answerable-abstain", type=float, default=0.05)
    ap.add_argument("--config", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", type=Path, default=None, help="write per-question rows (JSON) here")
    args = ap.parse_args(argv)
    config = load_config(args.config)
    sets = []
    if args.samples or not args.dev:
        sets.append(("samples", ROOT / "samples", ROOT / "samples" / "questions.tsv"))
    for name in filter(None, args.dev.split(",")):
        folder = set_folder(name)  # the project's own training sets' dev splits are reported too
        qf = folder / "questions.dev.tsv"
        if not qf.exists():
            qf = folder / "questions.tsv"
        sets.append((name, folder / "corpus", qf))
    results = [run_set(n, c, q, args.index_root, args.limit, config) for n, c, q in sets]
    all_rows = [r for res in results for r in res["rows"]]
    chosen = calibrate(all_rows, args.max_answerable_abstain)
    report = {"calibrated_threshold": round(chosen, 4), "sets": {}}
    for res in results:
        rows = res["rows"]
        ans = [r["evidence"] for r in rows if r["answerable"]]
        no = [r["evidence"] for r in rows if not r["answerable"]]
        sweep = [rates_at(rows, t) for t in np.round(np.arange(0.70, 0.95, 0.01), 2)]
        report["sets"][res["set"]] = {
            "questions": len(rows),
            "in_force": rates_at(rows, abstain_threshold(config)),
            "at_calibrated": rates_at(rows, chosen),
            "claims_outside_span": sum(r["outside"] for r in rows),
            "cited_rate_without_abstention": round(sum(r["cited"] for r in rows if r["answerable"])
                                                   / max(1, len(ans)), 4),
            "evidence_answerable": distribution(ans),
            "evidence_noanswer": distribution(no),
            "sweep": sweep,
        }
    if args.rows:
        args.rows.write_text(json.dumps(all_rows, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"calibrated threshold: {chosen:.4f} (answerable abstain <= {args.max_answerable_abstain:.0%})")
    for name, r in report["sets"].items():
        print(f"\n== {name}: {r['questions']} questions")
        for label in ("in_force", "at_calibrated"):
            c = r[label]
            print(f"  {label} ({c['threshold']}): cited {c['cited_rate']}  abstain answerable "
                  f"{c['abstain_rate_answerable']}  abstain no-answer {c['abstain_rate_noanswer']}"
                  f"  (by answer type {c['abstain_rate_by_type']})")
        print(f"  claims outside span {r['claims_outside_span']}")
        print(f"  cited without abstention: {r['cited_rate_without_abstention']}")
        print(f"  evidence answerable: {r['evidence_answerable']}")
        print(f"  evidence no-answer:  {r['evidence_noanswer']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
