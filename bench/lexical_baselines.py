"""Lexical baselines for the retrieval bench, and a lexical-only comparison.

Each baseline is ``build(texts) -> searcher`` with ``searcher.search(query, k) -> list[int]``
(row indices, best first):

- ``build_fts5_unicode61``: SQLite FTS5, unicode61 tokenizer, query = OR of the words;
- ``build_fts5_trigram``: SQLite FTS5, trigram tokenizer, query = OR of every character
  trigram of the question's words (FTS5 cannot match a phrase under 3 characters);
- ``build_rank_bm25``: rank_bm25's BM25Okapi over ``engine.index.lexical.tokenize`` terms;
- ``build_lexical``: fieldqa's ``LexicalIndex`` behind the same interface.

Run ``python -m bench.lexical_baselines [SET_DIR]`` (default: ../shared/eval/multi-dev)
to print R@1/R@5/R@10/MRR@10 and queries/s for each, under the eval README's hit rule.
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.index.lexical import LexicalIndex
from engine.lang.words import tokenize
from fieldqa.question_sets import EVAL

DEFAULT_SET = EVAL / "multi-dev"
_WORD_RE = re.compile(r"\w+")


class Fts5Searcher:
    """An in-memory FTS5 table; rowid = row index + 1."""

    def __init__(self, texts: Sequence[str], tokenizer: str):
        self.tokenizer = tokenizer
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(f"CREATE VIRTUAL TABLE passages USING fts5(body, tokenize='{tokenizer}')")
        self.db.executemany(
            "INSERT INTO passages(rowid, body) VALUES (?, ?)", ((i + 1, t) for i, t in enumerate(texts))
        )
        self.db.commit()

    def match_expression(self, query: str) -> str:
        words = _WORD_RE.findall(query)
        if self.tokenizer == "trigram":
            terms = []
            for w in words:
                terms.extend(w[i : i + 3] for i in range(len(w) - 2))
        else:
            terms = words
        terms = list(dict.fromkeys(t for t in terms))
        return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)

    def search(self, query: str, k: int) -> list[int]:
        expr = self.match_expression(query)
        if not expr:
            return []
        rows = self.db.execute(
            "SELECT rowid FROM passages WHERE passages MATCH ? ORDER BY rank LIMIT ?", (expr, k)
        ).fetchall()
        return [r[0] - 1 for r in rows]


def build_fts5_unicode61(texts: Sequence[str]) -> Fts5Searcher:
    return Fts5Searcher(texts, "unicode61")


def build_fts5_trigram(texts: Sequence[str]) -> Fts5Searcher:
    return Fts5Searcher(texts, "trigram")


class RankBm25Searcher:
    def __init__(self, texts: Sequence[str]):
        from rank_bm25 import BM25Okapi  # dev extra: pip install -e '.[dev]'

        self.bm25 = BM25Okapi([tokenize(t) or [""] for t in texts])

    def search(self, query: str, k: int) -> list[int]:
        toks = tokenize(query)
        if not toks:
            return []
        scores = self.bm25.get_scores(toks)
        top = np.argsort(-scores, kind="stable")[:k]
        return [int(i) for i in top if scores[i] > 0]


def build_rank_bm25(texts: Sequence[str]) -> RankBm25Searcher:
    return RankBm25Searcher(texts)


class LexicalSearcher:
    def __init__(self, texts: Sequence[str], **kw):
        self.index = LexicalIndex.build(texts, **kw)

    def search(self, query: str, k: int) -> list[int]:
        return [row for row, _ in self.index.search(query, k)]


def build_lexical(texts: Sequence[str]) -> LexicalSearcher:
    return LexicalSearcher(texts)


# ---- the eval sets ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Passage:
    path: str  # relative to corpus/
    start_line: int  # 1-based, the `## ` line
    end_line: int  # inclusive
    text: str  # article title, section title, body


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    targets: tuple[tuple[str, int], ...]  # (path, heading line); () = no answer
    family: str


def load_passages(set_dir: Path) -> list[Passage]:
    """Each `## ` section of every corpus file as one passage."""
    corpus = set_dir / "corpus"
    out: list[Passage] = []
    for f in sorted(corpus.rglob("*.md")):
        rel = f.relative_to(corpus).as_posix()
        lines = f.read_text(encoding="utf-8").split("\n")
        title = lines[0][2:].strip() if lines and lines[0].startswith("# ") else ""
        heads = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
        for j, h in enumerate(heads):
            end = heads[j + 1] if j + 1 < len(heads) else len(lines)
            while end > h + 1 and not lines[end - 1].strip():
                end -= 1
            section = lines[h][3:].strip()
            body = "\n".join(lines[h + 1 : end]).strip()
            head = section if section.startswith(title) else f"{title} — {section}"
            out.append(Passage(rel, h + 1, end, f"{head}\n{body}"))
    return out


def load_questions(path: Path) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        q, expected, family = line.split("\t")
        targets: tuple[tuple[str, int], ...] = ()
        if expected != "-":
            targets = tuple((t.rsplit(":", 1)[0], int(t.rsplit(":", 1)[1])) for t in expected.split("|"))
        out.append(Question(q, targets, family))
    return out


def gold_spans(passages: Sequence[Passage], q: Question) -> list[tuple[str, int, int]]:
    """Gold sections as (path, first line, last line), from each target's heading."""
    by_start = {(p.path, p.start_line): p for p in passages}
    return [(path, line, by_start[(path, line)].end_line) for path, line in q.targets]


def is_hit(p: Passage, gold: Sequence[tuple[str, int, int]]) -> bool:
    return any(p.path == g and p.start_line <= e and s <= p.end_line for g, s, e in gold)


@dataclass(frozen=True, slots=True)
class Scores:
    name: str
    n: int
    r1: float
    r5: float
    r10: float
    mrr10: float
    qps: float
    build_s: float

    def line(self) -> str:
        return (f"{self.name:<22} n={self.n:<5} R@1 {self.r1:.3f}  R@5 {self.r5:.3f}  R@10 {self.r10:.3f}"
                f"  MRR@10 {self.mrr10:.3f}  {self.qps:8.1f} q/s  build {self.build_s:.1f}s")


def evaluate(
    name: str,
    build: Callable[[Sequence[str]], object],
    passages: Sequence[Passage],
    questions: Sequence[Question],
    k: int = 10,
) -> Scores:
    t0 = time.perf_counter()
    searcher = build([p.text for p in passages])
    build_s = time.perf_counter() - t0
    golds = [gold_spans(passages, q) for q in questions]
    t0 = time.perf_counter()
    results = [searcher.search(q.text, k) for q in questions]  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - t0
    ranks = []
    for res, gold in zip(results, golds):
        rank = next((i + 1 for i, row in enumerate(res[:k]) if is_hit(passages[row], gold)), None)
        ranks.append(rank)
    n = len(questions)

    def recall(c: int) -> float:
        return sum(1 for r in ranks if r is not None and r <= c) / n

    mrr = sum(1 / r for r in ranks if r is not None) / n
    return Scores(name, n, recall(1), recall(5), recall(10), mrr, n / elapsed, build_s)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("set_dir", nargs="?", type=Path, default=DEFAULT_SET)
    ap.add_argument("--questions", default="questions.tsv")
    ap.add_argument("--rank-bm25-sample", type=int, default=300)
    ap.add_argument("--only", nargs="*", help="names of searchers to run")
    args = ap.parse_args(argv)
    passages = load_passages(args.set_dir)
    questions = [q for q in load_questions(args.set_dir / args.questions) if q.targets]
    print(f"{args.set_dir}: {len(passages)} passages, {len(questions)} questions", flush=True)
    sample = random.Random(0).sample(questions, min(args.rank_bm25_sample, len(questions)))
    runs = [
        ("lexical (fieldqa)", build_lexical, questions),
        ("fts5 unicode61", build_fts5_unicode61, questions),
        ("fts5 trigram", build_fts5_trigram, questions),
        (f"rank_bm25 ({len(sample)} q)", build_rank_bm25, sample),
        ("lexical, same sample", build_lexical, sample),
    ]
    results = {}
    for name, build, qs in runs:
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        s = evaluate(name, build, passages, qs)
        results[name] = s
        print(s.line(), flush=True)
    for fam in sorted({q.family for q in questions}):
        if args.only and "family" not in args.only:
            break
        fq = [q for q in questions if q.family == fam]
        for name, build in (("lexical", build_lexical), ("fts5 trigram", build_fts5_trigram)):
            print(f"  [{fam}] " + evaluate(name, build, passages, fq).line(), flush=True)
    lex, tri = results.get("lexical (fieldqa)"), results.get("fts5 trigram")
    if lex and tri:
        print(f"lexical vs fts5 trigram: R@1 {lex.r1:.3f} vs {tri.r1:.3f}; speed x{lex.qps / tri.qps:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
