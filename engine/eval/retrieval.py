"""Golden-set evaluation: recall@k / MRR@10 per mode and family, losses per stage, timings.

Questions file (the format of ``../shared/eval``): ``question<TAB>expected<TAB>family``,
``expected`` = ``path:LINE`` targets joined by ``|`` (any one answers), a target group joined
by ``&`` (all of them are needed: a question that needs two passages counts as found at the rank
by which both are in the list, "joint coverage"), or ``-`` (no passage answers it; such rows are
excluded from recall).  ``#`` lines are comments.

Each question is searched once, with the largest mode asked for: a ``full`` search's
trace holds the lexical, vector and fused lists too, and they are exactly what the
``lexical``, ``vector`` and ``hybrid`` modes return.  The ranked list of a mode is:
lexical -> lexical stage, vector -> vector stage, hybrid -> fused stage, full -> context
stage (the final passages; for k larger than the list, recall@k counts what is there).

JSON shape (``evaluate()`` returns it, ``fieldqa eval --json`` prints it)::

    {"questions": N,                      # rows read (after --limit)
     "scored": M,                         # rows with an expected passage
     "no_answer": N - M,
     "modes": {MODE: {"recall@1": x, "recall@3": x, "recall@5": x, "recall@10": x, "mrr@10": x,
                      "by_family": {FAMILY: {same keys, "questions": n}}}
               | {"unavailable": "reason"}},
     "pool_coverage": {"all" | FAMILY: {"questions": n, "coverage": x}},  # gold anywhere in the fused pool
     "misses": [{"line", "question", "family", "rank", "pool_rank", "verdict", "stage"}],  # not at rank 1
     "losses": {STAGE: count},            # full mode only; STAGE in engine.search.diagnose.LOSS_STAGES
                                          # plus "missed_by_lexical"/"missed_by_vector" (branch misses)
     "timings_ms": {STAGE: {"p50": x, "p95": x}},   # per trace stage, plus "total"
     "reranker": "ready: ..." | "degraded: ..." | "off: ...",
     "passage_order": "learned: ..." | why there is none,     # engine.search.order
     ...hooks}                            # e.g. "answers" added by an EvalHook

Hooks: ``evaluate(..., hooks=[h])`` calls ``h.observe(question, result)`` after each full
search and puts ``h.summary()`` (a (key, JSON-able value) pair) into the output; the
answers module uses this for its "answers" object: ``fieldqa eval --answers`` passes an
``engine.eval.answers.AnswerEval``. ``--misses`` prints every question not answered at rank 1
(``format_misses``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from engine.config import FilterConfig
from engine.search.diagnose import LOSS_STAGES, GoldResolver, Target, diagnose_result, parse_target
from engine.types import SearchResult

if TYPE_CHECKING:
    from engine.pipeline import Library

__all__ = ["Question", "EvalHook", "load_questions", "evaluate", "format_misses", "format_report", "joint_rank",
           "KS", "MODE_STAGE"]

KS = (1, 3, 5, 10)
MODE_STAGE = {"lexical": "lexical", "vector": "vector", "hybrid": "fused", "full": "context"}


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    targets: tuple[Target, ...]  # () = no passage answers it
    family: str
    line: int  # line in the questions file
    # alternatives (joined by "|"), each a group of targets that are all needed (joined by "&");
    # () means one group per target (any one target answers)
    groups: tuple[tuple[Target, ...], ...] = ()

    def alternatives(self) -> tuple[tuple[Target, ...], ...]:
        return self.groups or tuple((t,) for t in self.targets)


class EvalHook(Protocol):
    def observe(self, question: Question, result: SearchResult) -> None: ...

    def summary(self) -> tuple[str, Any]: ...


def load_questions(path: Path, limit: int | None = None) -> list[Question]:
    out: list[Question] = []
    for n, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        if len(parts) < 2:
            raise ValueError(f"{path}:{n}: expected question<TAB>expected<TAB>family")
        text, expected = parts[0], parts[1].strip()
        family = parts[2].strip() if len(parts) > 2 else ""
        groups = () if expected == "-" else tuple(
            tuple(parse_target(t) for t in alt.split("&")) for alt in expected.split("|"))
        targets = tuple(t for g in groups for t in g)
        out.append(Question(text, targets, family, n, groups if any(len(g) > 1 for g in groups) else ()))
        if limit is not None and len(out) >= limit:
            break
    return out


def _top_mode(modes: Sequence[str]) -> str:
    if "full" in modes:
        return "full"
    if "hybrid" in modes or ("lexical" in modes and "vector" in modes):
        return "hybrid"
    return modes[0]


def _metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks)
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall@{k}"] = round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) if n else 0.0
    out["mrr@10"] = round(sum(1.0 / r for r in ranks if r is not None and r <= 10) / n, 4) if n else 0.0
    return out


def joint_rank(stage, groups: Sequence[Sequence[set[str]]]) -> int | None:
    """The rank by which a question is answered: for each alternative, the rank by which every
    one of its targets has a hit (its worst target's best rank); the best alternative's."""
    if stage is None:
        return None
    best: int | None = None
    for group in groups:
        worst = 0
        for ids in group:
            r = next((x.rank for x in stage.ranked if x.chunk_id in ids), None)
            if r is None:
                worst = None
                break
            worst = max(worst, r)
        if worst is not None and (best is None or worst < best):
            best = worst
    return best


def _coverage(ranks: Sequence[int | None]) -> dict[str, float | int]:
    """Share of questions whose gold is anywhere in the candidate pool (the fused window)."""
    return {"questions": len(ranks), "coverage": round(sum(r is not None for r in ranks) / len(ranks), 4)
            if ranks else 0.0}


def _pct(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {"p50": round(float(np.percentile(a, 50)), 2), "p95": round(float(np.percentile(a, 95)), 2)}


def evaluate(library: Library, questions: Sequence[Question], *, modes: Sequence[str] = tuple(MODE_STAGE),
             filters: FilterConfig | None = None, hooks: Sequence[EvalHook] = (),
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    modes = [m for m in MODE_STAGE if m in modes]
    if not modes:
        raise ValueError(f"no known mode in {modes!r}; use {', '.join(MODE_STAGE)}")
    unavailable = _probe(library, modes, filters)
    runnable = [m for m in modes if m not in unavailable]
    tally = _Tally(runnable, _top_mode(runnable) if runnable else None)
    resolver = GoldResolver(library)
    known = {d.path for d in library.documents()}
    issues = {i.path: i for i in library.issues() if i.severity == "skipped"}
    for i, q in enumerate(questions):
        if progress is not None:
            progress(i, len(questions))
        if tally.top is None:
            break
        t0 = time.perf_counter()
        result = library.search(q.text, mode=tally.top, filters=filters)  # type: ignore[arg-type]
        tally.timing((time.perf_counter() - t0) * 1000, result)
        if tally.top == "full":
            for h in hooks:
                h.observe(q, result)
        if q.targets:
            dg = diagnose_result(library, result.trace, q.targets, filters=filters, resolver=resolver,
                                 known=known, issues=issues) if tally.top == "full" else None
            tally.score(q, result, resolver, dg)
    if progress is not None:
        progress(len(questions), len(questions))
    out = tally.report(len(questions), modes, unavailable)
    out["reranker"] = library.reranker_status
    order = getattr(library, "order", None)
    out["passage_order"] = order.status if order is not None else "none"
    for h in hooks:
        key, value = h.summary()
        out[key] = value
    return out


def _probe(library: Library, modes: Sequence[str], filters: FilterConfig | None) -> dict[str, str]:
    """Modes that cannot run, and why: reported, not fatal."""
    unavailable: dict[str, str] = {}
    for m in modes:
        try:
            library.search("probe", mode=m, filters=filters)  # type: ignore[arg-type]
        except Exception as e:  # noqa: BLE001 - the reason goes into the report
            unavailable[m] = f"{type(e).__name__}: {e}"
    return unavailable


@dataclass(slots=True)
class _Tally:
    """What the questions add up to: ranks per mode and family, losses, misses, timings."""

    runnable: list[str]
    top: str | None
    scored: int = 0
    ranks: dict[str, list[int | None]] = field(default_factory=dict)
    fam_ranks: dict[str, dict[str, list[int | None]]] = field(default_factory=dict)
    pool_ranks: dict[str, list[int | None]] = field(default_factory=dict)  # per family, in the fused pool
    losses: dict[str, int] = field(default_factory=lambda: {s: 0 for s in LOSS_STAGES}
                                   | {"missed_by_lexical": 0, "missed_by_vector": 0})
    misses: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, list[float]] = field(default_factory=dict)

    def timing(self, total_ms: float, result: SearchResult) -> None:
        self.timings.setdefault("total", []).append(total_ms)
        for s in result.trace.stages:
            self.timings.setdefault(s.name, []).append(s.ms)

    def score(self, q: Question, result: SearchResult, resolver: GoldResolver, dg) -> None:
        assert self.top is not None
        self.scored += 1
        groups = [[resolver.hit_ids([t]) for t in g] for g in q.alternatives()]
        for m in self.runnable:
            r = joint_rank(result.trace.stage(MODE_STAGE[m]), groups)
            self.ranks.setdefault(m, []).append(r)
            self.fam_ranks.setdefault(m, {}).setdefault(q.family, []).append(r)
        pool = result.trace.stage("fused") or result.trace.stage(MODE_STAGE[self.top])
        pool_rank = joint_rank(pool, groups)
        self.pool_ranks.setdefault(q.family, []).append(pool_rank)
        if dg is not None:
            if dg.stage is not None:
                self.losses[dg.stage] += 1
            for b in dg.branch_misses:
                self.losses[f"missed_by_{b}"] += 1
        rank = self.ranks[self.top][-1]
        if rank != 1:
            self.misses.append({"line": q.line, "question": q.text, "family": q.family, "rank": rank,
                                "pool_rank": pool_rank, "verdict": dg.verdict if dg else "",
                                "stage": dg.stage if dg else None})

    def report(self, questions: int, modes: Sequence[str], unavailable: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": questions, "scored": self.scored,
                               "no_answer": questions - self.scored, "modes": {}}
        for m in modes:
            if m in unavailable:
                out["modes"][m] = {"unavailable": unavailable[m]}
                continue
            entry: dict[str, Any] = _metrics(self.ranks.get(m, []))
            entry["by_family"] = {f: {**_metrics(r), "questions": len(r)}
                                  for f, r in sorted(self.fam_ranks.get(m, {}).items())}
            out["modes"][m] = entry
        out["losses"] = self.losses if self.top == "full" else {}
        pool = [r for rs in self.pool_ranks.values() for r in rs]
        out["pool_coverage"] = {"all": _coverage(pool),
                                **{f: _coverage(r) for f, r in sorted(self.pool_ranks.items())}}
        out["misses"] = self.misses
        out["timings_ms"] = {s: _pct(v) for s, v in self.timings.items()}
        return out


def format_report(report: dict[str, Any]) -> str:
    """The plain-text table ``fieldqa eval`` prints."""
    lines = [f"questions: {report['questions']} (scored {report['scored']}, no-answer {report['no_answer']})",
             f"reranker: {report.get('reranker', '?')}",
             f"passage order: {report.get('passage_order', '?')}", ""]
    head = f"{'mode':<8} {'family':<10} {'n':>5} " + " ".join(f"{'R@' + str(k):>6}" for k in KS) + f" {'MRR@10':>7}"
    lines.append(head)
    for mode, e in report["modes"].items():
        if "unavailable" in e:
            lines.append(f"{mode:<8} unavailable: {e['unavailable']}")
            continue
        rows = [("all", report["scored"], e)] + [(f, v["questions"], v) for f, v in e["by_family"].items()]
        for fam, n, v in rows:
            lines.append(f"{mode:<8} {fam:<10} {n:>5} " + " ".join(f"{v[f'recall@{k}']:>6.3f}" for k in KS)
                         + f" {v['mrr@10']:>7.3f}")
    if report.get("pool_coverage"):
        cov = report["pool_coverage"]
        lines += ["", "gold in the fused pool (coverage at the pool depth): "
                  + ", ".join(f"{f} {v['coverage']:.3f}" for f, v in cov.items())]
    if report.get("answers"):
        lines += ["", format_answers(report["answers"])]
    if report.get("losses"):
        lines += ["", "full pipeline, where expected passages were lost:"]
        lines += [f"  {k:<18} {v}" for k, v in report["losses"].items()]
    if report.get("timings_ms"):
        lines += ["", "timings (ms):   p50      p95"]
        lines += [f"  {k:<10} {v['p50']:>8.1f} {v['p95']:>8.1f}" for k, v in report["timings_ms"].items()]
    return "\n".join(lines)


def format_answers(a: dict[str, Any]) -> str:
    """The answer scores of ``fieldqa eval --answers`` as a table (engine.eval.answers)."""
    cols = (("cited", "cited_rate"), ("first", "first_claim_hit"), ("abst.ans", "abstain_rate_answerable"),
            ("abst.no", "abstain_rate_noanswer"), ("brier", "brier"), ("claims", "claims_per_answer"),
            ("on.gold", "gold_claim_share"))
    fmt = lambda v: f"{v:>9.3f}" if isinstance(v, (int, float)) else f"{'-':>9}"  # noqa: E731
    lines = ["answers (cited answer, first claim cites gold, abstention on answerable / no-answer, "
             "Brier of the answerability, claims per answer and their share citing gold)",
             f"{'family':<14} {'n':>4} " + " ".join(f"{h:>9}" for h, _ in cols)]
    rows = [("all", a)] + sorted(a.get("by_family", {}).items())
    for fam, v in rows:
        lines.append(f"{fam:<14} {v['questions']:>4} " + " ".join(fmt(v.get(k)) for _, k in cols))
    lines.append(f"claims outside their span: {a.get('claims_outside_span', 0)}")
    if a.get("lead_ins"):
        lines.append(f"claims announcing a command or list (ending with ':'): {a['lead_ins']}, "
                     f"{a.get('lead_ins_open', 0)} not followed by what they announce")
    return "\n".join(lines)


def format_misses(report: dict[str, Any]) -> str:
    """``fieldqa eval --misses``: every scored question not answered at rank 1, with its rank in
    the final list and in the fused pool, and the stage the trace blames."""
    rows = report.get("misses", [])
    lines = [f"misses: {len(rows)} of {report['scored']} scored questions not at rank 1"]
    for m in rows:
        rank = m["rank"] if m["rank"] is not None else "-"
        pool = m["pool_rank"] if m["pool_rank"] is not None else "-"
        why = f" — {m['verdict']}" if m.get("verdict") else ""
        lines.append(f"  line {m['line']:>4} [{m['family']}] rank {rank}, pool {pool}{why}: {m['question']}")
    return "\n".join(lines)
