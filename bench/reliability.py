"""Reliability bench: issue 18's nine properties tried in bulk, counted, written down.

    python -m bench.reliability [--quick] [--only leak,load,...] [--out FILE.json]

Every check builds its own libraries under a temporary folder with the real embedder (the
model files ``make models`` builds), tries the property many times and counts failures by
kind. The run writes ``bench/reliability.json`` and ``bench/reliability.md`` (one row per
check: tries, failures, kinds, figures) and exits 1 when any check failed. ``--quick`` (what
``make test`` runs, ~30 s) uses fewer tries and writes ``bench/reliability-quick.*`` (not
tracked); the full run (``make bench-reliability``) is the one the closing notes quote.

1. leak        random versions, statuses, dates, visibility and filters: no excluded chunk in
               any search stage, claim, citation, conflict side, "to consult" or export
2. corruption  every generation file and the database, truncated / zeroed / flipped / deleted,
               plus altered chunk text and crafted vector-graph files loaded in a child
               process: each a typed error naming ``--rebuild``, never silent, never a crash
3. stale       a cited file edited or deleted after indexing is flagged on the citation
4. errors      a second writer, read-only media, bad questions: each its own message / code
5. disk-full   ENOSPC at every Nth write of a build, and file-size limits (``ulimit -f``) on
               the CLI: the previous generation still answers the same, nothing left behind
6. metadata    each invalid access or lifecycle form keeps the document out of every answer,
               reported once, within seconds
7. bad-input   thousands of generated bad files: 0 crashes, each reported or indexed, 0 reads
               outside the root; slowest file and peak RSS
8. load        two reader processes asking while the library switches generations, and two
               concurrent ``fieldqa index``: 0 errors, 0 mixed-generation results, p95 latency
9. hostile     instructions, fake citations, markup, ANSI, bidi and zero-width controls inside
               a manual come out inert in CLI text, JSON and Markdown export
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass
class Outcome:
    """One check's tally: how often the property was tried, how often and how it failed."""

    name: str
    tries: int = 0
    failures: int = 0
    kinds: Counter = field(default_factory=Counter)
    figures: dict[str, Any] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def ok(self, n: int = 1) -> None:
        self.tries += n

    def fail(self, kind: str, detail: str) -> None:
        self.tries += 1
        self.failures += 1
        self.kinds[kind] += 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {detail}"[:300])

    def expect(self, condition: bool, kind: str, detail: str) -> bool:
        if condition:
            self.ok()
        else:
            self.fail(kind, detail)
        return condition

    def to_dict(self) -> dict[str, Any]:
        return {"tries": self.tries, "failures": self.failures, "kinds": dict(self.kinds),
                "figures": self.figures, "examples": self.examples, "seconds": round(self.seconds, 1)}


@dataclass(frozen=True)
class Settings:
    quick: bool
    work: Path
    embedder: Any

    def scale(self, quick: int, full: int) -> int:
        return quick if self.quick else full


def run_checks(settings: Settings, names: list[str]) -> dict[str, Outcome]:
    from bench import reliability_checks as checks

    table: dict[str, Callable[[Settings, Outcome], None]] = {
        "leak": checks.leak, "corruption": checks.corruption, "stale": checks.stale,
        "errors": checks.errors, "disk-full": checks.disk_full, "metadata": checks.metadata,
        "bad-input": checks.bad_input, "load": checks.load, "hostile": checks.hostile}
    out: dict[str, Outcome] = {}
    for name in names:
        outcome = Outcome(name)
        t0 = time.perf_counter()
        try:
            table[name](settings, outcome)
        except Exception as e:  # noqa: BLE001 - a check that breaks is a failure, reported
            outcome.fail("check crashed", f"{type(e).__name__}: {e}")
        outcome.seconds = time.perf_counter() - t0
        out[name] = outcome
        print(f"{name:11s} tries {outcome.tries:6d}  failures {outcome.failures:3d}  "
              f"{outcome.seconds:6.1f} s  {dict(outcome.kinds) or ''}", flush=True)
    return out


def markdown_table(results: dict[str, Outcome], quick: bool) -> str:
    lines = [f"# Reliability bench ({'quick' if quick else 'full'} run, {time.strftime('%Y-%m-%d %H:%M')})", "",
             "| check | tries | failures | kinds | figures | s |", "|---|---:|---:|---|---|---:|"]
    for o in results.values():
        kinds = ", ".join(f"{k} {v}" for k, v in o.kinds.items()) or "-"
        figs = ", ".join(f"{k} {v}" for k, v in o.figures.items()) or "-"
        lines.append(f"| {o.name} | {o.tries} | {o.failures} | {kinds} | {figs} | {o.seconds:.0f} |")
    return "\n".join(lines) + "\n"


ALL = ["leak", "corruption", "stale", "errors", "disk-full", "metadata", "bad-input", "load", "hostile"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer tries (what make test runs)")
    ap.add_argument("--only", default=",".join(ALL), help="comma-separated checks")
    ap.add_argument("--out", type=Path, default=None,
                    help="JSON report (default bench/reliability.json; bench/reliability-quick.json with --quick)")
    args = ap.parse_args(argv)
    args.out = args.out or HERE / ("reliability-quick.json" if args.quick else "reliability.json")
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - set(ALL)
    if unknown:
        ap.error(f"unknown checks: {sorted(unknown)} (known: {', '.join(ALL)})")

    from engine.config import Config
    from engine.models import Embedder

    cfg = Config()
    embedder = Embedder(cfg.embedder_dir, threads=cfg.models.threads, max_length=cfg.models.max_length,
                        batch_size=cfg.models.batch_size)
    with tempfile.TemporaryDirectory(prefix="fieldqa-reliability-") as tmp:
        results = run_checks(Settings(args.quick, Path(tmp), embedder), names)
    report = {"quick": args.quick, "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "totals": {"tries": sum(o.tries for o in results.values()),
                         "failures": sum(o.failures for o in results.values())},
              "checks": {n: o.to_dict() for n, o in results.items()}}
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown_table(results, args.quick), encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}: "
          f"{report['totals']['failures']} failures in {report['totals']['tries']} tries")
    return 1 if report["totals"]["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
