"""Why an expected passage is (not) in the answer: one verdict per (question, expected location).

``expect`` is ``path:LINE`` (LINE = the section's heading line) or ``path:pN`` (PDF page).
The gold section follows the hit rule of the evaluation sets: from LINE to the line
before the next Markdown heading of the same or a higher level (or the end of file); in a
reStructuredText file LINE is a title's line, and its section runs to the next title of the
same or a higher level as the reader (engine.ingest.rst) levels them.
When LINE is not a heading (HTML, text, a line inside a section), the gold
section is the indexed section (``Chunk.section_id``) of the chunk holding that line.
A chunk is a hit when it comes from that file and its line span overlaps the section.

Verdicts, first match wins (``Diagnosis.stage`` is the loss key used by ``fieldqa eval``):

=================================  ===============  =========================================
verdict                            stage            meaning
=================================  ===============  =========================================
not in the library                 library          no such file in the library
not indexed                        index            skipped at ingestion (reason given), or
                                                    no chunk covers the section
excluded                           eligibility      every gold chunk fails a filter rule
not retrieved                      retrieval        missed by lexical AND by vector at depth N
cut by the fused window            fused            a branch found it, fusion ranked it out of
                                                    the window / the rerank input
demoted by the learned order       order            within the final window in fused order, below
                                                    it in the learned passage order (no reranker)
demoted by the reranker            rerank           in the rerank input, ranked below the kept top
cut by the final window            final_window     reranker degraded: fused order past final_context
dropped by context assembly        context          in the kept top, removed by dedupe or budget
present at rank r                  None             in the final list (context, or the mode's last)
=================================  ===============  =========================================

A branch miss that fusion made up for is reported in ``detail`` and ``branch_misses``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import FilterConfig
from engine.ingest.formats import format_of
from engine.types import Chunk, Trace

if TYPE_CHECKING:
    from engine.pipeline import Library

__all__ = ["Target", "Diagnosis", "GoldResolver", "parse_target", "classify", "diagnose", "LOSS_STAGES"]

LOSS_STAGES = ("library", "index", "eligibility", "retrieval", "fused", "order", "rerank", "final_window",
               "context")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    line: int | None = None
    page: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:p{self.page}" if self.page is not None else f"{self.path}:{self.line}"


def parse_target(text: str) -> Target:
    path, sep, loc = text.strip().rpartition(":")
    if not sep or not path:
        raise ValueError(f"expected PATH:LINE or PATH:pN, got {text!r}")
    if loc[:1] in ("p", "P") and loc[1:].isdigit():
        return Target(path, page=int(loc[1:]))
    if loc.isdigit() and int(loc) >= 1:
        return Target(path, line=int(loc))
    raise ValueError(f"expected PATH:LINE or PATH:pN, got {text!r}")


@dataclass(frozen=True, slots=True)
class Diagnosis:
    verdict: str
    detail: str
    stage: str | None  # loss key (LOSS_STAGES) or None when present
    rank: int | None = None
    branch_misses: tuple[str, ...] = ()
    trace: Trace | None = None

    @property
    def found(self) -> bool:
        return self.stage is None


def rst_titles(text: str) -> tuple[list[tuple[int, int, int]], int]:
    """The reStructuredText titles of ``text`` as the reader finds them, ``(first line, last
    line, level)`` each (a title's lines: its text and adornment), and the number of lines."""
    from engine.ingest.rst import parse_rst

    heads = [(b.start_line, b.end_line, b.level) for b in parse_rst(text).blocks if b.kind == "heading"]
    return heads, text.count("\n") + 1


def rst_section(titles: tuple[list[tuple[int, int, int]], int], line: int) -> tuple[int, int] | None:
    """(first, last) line of the section whose title (its text or adornment lines) is at
    ``line`` (1-based), from ``rst_titles``: it runs to the next title of the same or a higher
    level."""
    heads, n_lines = titles
    at = next((h for h in heads if h[0] <= line <= h[1]), None)
    if at is None:
        return None
    end = next((h[0] - 1 for h in heads if h[0] > at[1] and h[2] <= at[2]), n_lines)
    return at[0], end


def markdown_section(lines: Sequence[str], line: int) -> tuple[int, int] | None:
    """(first, last) line of the Markdown section whose heading is at ``line`` (1-based)."""
    if not 1 <= line <= len(lines):
        return None
    fenced = None
    levels: dict[int, int] = {}
    for i, text in enumerate(lines, 1):
        f = _FENCE_RE.match(text)
        if f:
            mark = f.group(1)[0]
            fenced = None if fenced == mark else (mark if fenced is None else fenced)
            continue
        if fenced is None:
            h = _HEADING_RE.match(text)
            if h:
                levels[i] = len(h.group(1))
    level = levels.get(line)
    if level is None:
        return None
    end = len(lines)
    for i in sorted(levels):
        if i > line and levels[i] <= level:
            end = i - 1
            break
    return line, end


class GoldResolver:
    """Turns targets into the chunks that count as hits (cached per file)."""

    def __init__(self, library: Library):
        self.library = library
        self._lines: dict[str, list[str] | None] = {}
        self._rst: dict[str, tuple[list[tuple[int, int, int]], int]] = {}  # path -> rst_titles, read once

    def _file_lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            lines = None
            f = Path(self.library.root) / path
            if f.is_file():
                lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
            else:
                try:
                    lines = self.library.document_text(path).splitlines()
                except KeyError:
                    lines = None
            self._lines[path] = lines
        return self._lines[path]

    def span(self, target: Target) -> tuple[int, int] | None:
        """Line span of the gold section, or None when LINE is no heading (Markdown, reStructuredText)."""
        if target.line is None:
            return None
        lines = self._file_lines(target.path)
        if lines is None:
            return None
        if format_of(target.path) == "rst":
            if target.path not in self._rst:
                self._rst[target.path] = rst_titles("\n".join(lines))
            return rst_section(self._rst[target.path], target.line)
        return markdown_section(lines, target.line)

    def hits(self, target: Target) -> list[Chunk]:
        """Every indexed chunk (eligible or not) that counts as a hit for ``target``."""
        chunks = self.library.chunks_of(target.path)
        if target.page is not None:
            return [c for c in chunks if c.page is not None
                    and c.page <= target.page <= (c.end_page if c.end_page is not None else c.page)]
        span = self.span(target)
        if span is not None:
            lo, hi = span
            return [c for c in chunks if c.start_line <= hi and c.end_line >= lo]
        holding = [c for c in chunks if c.start_line <= target.line <= c.end_line]  # type: ignore[operator]
        sections = {c.section_id for c in holding}
        return [c for c in chunks if c.section_id in sections]

    def hit_ids(self, targets: Iterable[Target]) -> set[str]:
        return {c.id for t in targets for c in self.hits(t)}


def _best(stage, ids: set[str]) -> int | None:
    if stage is None:
        return None
    ranks = [r.rank for r in stage.ranked if r.chunk_id in ids]
    return min(ranks) if ranks else None


def classify(trace: Trace, gold_ids: set[str], eligible_ids: set[str]) -> Diagnosis:
    """Where the eligible gold chunks were lost in ``trace`` (see the module table)."""
    ids = gold_ids & eligible_ids
    lex, vec = trace.stage("lexical"), trace.stage("vector")
    misses = []
    if lex is not None and _best(lex, ids) is None:
        misses.append(("lexical", f"missed by lexical at depth {lex.window}"))
    if vec is not None and _best(vec, ids) is None:
        misses.append(("vector", f"missed by vector at depth {vec.window}"))
    branch = tuple(m for m, _ in misses)
    miss_text = "; ".join(t for _, t in misses)

    def d(verdict: str, detail: str, stage: str | None, rank: int | None = None) -> Diagnosis:
        detail = "; ".join(x for x in (detail, miss_text) if x)
        return Diagnosis(verdict, detail, stage, rank, branch, trace)

    last = trace.stages[-1] if trace.stages else None
    r = _best(last, ids)
    if r is not None:
        return d(f"present at rank {r}", f"{last.name} rank {r}", None, r)
    ctx, rr, fu = trace.stage("context"), trace.stage("rerank"), trace.stage("fused")
    branches = [s for s in (lex, vec) if s is not None]
    if branches and all(_best(s, ids) is None for s in branches):
        return d("not retrieved", "", "retrieval")
    r_rr = _best(rr, ids)
    if rr is not None and r_rr is not None:
        final = ctx.window if ctx is not None else 0
        if r_rr <= final:
            return d("dropped by context assembly", f"rerank rank {r_rr} <= final window {final}, "
                     f"removed as a duplicate or over the token budget", "context", r_rr)
        od = trace.stage("order")
        r_fu = _best(fu, ids)
        if rr.passed_through and od is not None and not od.passed_through and r_fu is not None and r_fu <= final:
            return d("demoted by the learned order", f"fused rank {r_fu}, learned order rank {r_rr} > final "
                     f"window {final}", "order", r_rr)
        if rr.passed_through:
            return d("cut by the final window", f"fused order kept (reranker {rr.note}); rank {r_rr} "
                     f"> final window {final}", "final_window", r_rr)
        return d("demoted by the reranker", f"rerank rank {r_rr} > final window {final}", "rerank", r_rr)
    r_fu = _best(fu, ids)
    if fu is not None and r_fu is not None:
        return d("cut by the fused window", f"fused rank {r_fu} > rerank input {rr.window if rr else '?'}",
                 "fused", r_fu)
    found = ", ".join(f"{s.name} rank {_best(s, ids)}" for s in branches if _best(s, ids) is not None)
    return d("cut by the fused window", f"{found}; fused window {fu.window if fu else '?'}", "fused")


def diagnose(library: Library, question: str, expect: str | Sequence[Target], *,
             filters: FilterConfig | None = None, mode: str = "full") -> Diagnosis:
    """Run ``question`` and say where the passage(s) at ``expect`` were lost (or kept)."""
    targets = [parse_target(t) for t in expect.split("|")] if isinstance(expect, str) else list(expect)
    result = library.search(question, mode=mode, filters=filters)  # type: ignore[arg-type]
    return diagnose_result(library, result.trace, targets, filters=filters)


def diagnose_result(library: Library, trace: Trace, targets: Sequence[Target], *,
                    filters: FilterConfig | None = None, resolver: GoldResolver | None = None,
                    known: set[str] | None = None, issues: dict | None = None) -> Diagnosis:
    """Diagnose an already-run search; the best verdict over ``targets`` wins.

    ``known`` (indexed paths) and ``issues`` (path -> skipped IngestIssue) may be passed
    in by callers that diagnose many questions.
    """
    resolver = resolver or GoldResolver(library)
    if known is None:
        known = {d.path for d in library.documents()}
    if issues is None:
        issues = {i.path: i for i in library.issues() if i.severity == "skipped"}
    best: Diagnosis | None = None
    for t in targets:
        dg = _one(library, trace, t, known, issues, resolver, filters)
        if best is None or _order(dg) > _order(best):
            best = dg
    assert best is not None, "no target given"
    return best


def _order(d: Diagnosis) -> int:
    """How far a diagnosis got: present beats any loss; later losses beat earlier ones."""
    if d.stage is None:
        return 100 - (d.rank or 0) / 1000
    return LOSS_STAGES.index(d.stage)


def _one(library: Library, trace: Trace, t: Target, known: set[str], issues: dict, resolver: GoldResolver,
         filters: FilterConfig | None) -> Diagnosis:
    if t.path not in known:
        if t.path in issues:
            return Diagnosis("not indexed", f"{t.path}: {issues[t.path].reason}", "index", trace=trace)
        if (Path(library.root) / t.path).is_file():
            return Diagnosis("not indexed", f"{t.path} is in the folder but not in the index "
                             f"(run `fieldqa index`)", "index", trace=trace)
        return Diagnosis("not in the library", f"no file {t.path} in {library.root}", "library", trace=trace)
    lines = resolver._file_lines(t.path)
    if t.line is not None and lines is not None and t.line > len(lines):
        return Diagnosis("not in the library", f"{t.path} has {len(lines)} lines, no line {t.line}",
                         "library", trace=trace)
    gold = resolver.hits(t)
    if not gold:
        return Diagnosis("not indexed", f"no indexed chunk of {t.path} covers {t}", "index", trace=trace)
    rule = library.eligibility(filters)
    eligible = {c.id for c in gold if rule.allows(library.meta_of(c))}
    if not eligible:
        reason = rule.reason(library.meta_of(gold[0])) or "filtered"
        return Diagnosis("excluded", f"{t}: {reason}", "eligibility", trace=trace)
    return classify(trace, {c.id for c in gold}, eligible)
