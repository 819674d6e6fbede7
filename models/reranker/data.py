"""Eval-set loading, first-stage candidates and pair encoding for the reranker tools.

Used by ``models/reranker/train.py`` and ``bench/rerank.py`` (dev tooling; numpy,
tokenizers, onnxruntime and the project's own ``engine`` only, no torch).

A *set* is a folder of ``../shared/eval`` (see its README): ``corpus/**.md`` where each
``## `` section is one passage, and ``questions.{train,dev}.tsv`` (or ``questions.tsv``)
rows ``question<TAB>path:LINE[|path:LINE...]<TAB>family``.

Passage text = the section exactly as it stands in the file (``## heading``, blank line,
paragraph), which is what a Markdown chunker hands the pipeline for these corpora.

First stage ("hybrid"): ``engine.index.lexical.LexicalIndex`` BM25 top 100 and e5 cosine top 100
(vectors from ``models/multilingual-e5-small`` through ``engine.models.Embedder``), fused
with reciprocal rank fusion (c = 60).  Vectors are cached by content under
``models/.cache/reranker/`` (git-ignored).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fieldqa.question_sets import EVAL  # noqa: E402  (../shared/eval, or $FIELDQA_EVAL_DIR)

SETS = ("piaf-fr", "cmrc-zh", "drcd-zh-hant")
CACHE_DIR = ROOT / "models" / ".cache" / "reranker"
EMBEDDER_DIR = ROOT / "models" / "multilingual-e5-small"
RRF_C = 60
BRANCH_K = 100
EMBED_MAX_LENGTH = 256


@dataclass(frozen=True, slots=True)
class Corpus:
    keys: tuple[str, ...]  # "rel/path.md:LINE" of each passage
    texts: tuple[str, ...]

    def index_of(self) -> dict[str, int]:
        return {k: i for i, k in enumerate(self.keys)}


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    gold: frozenset[int]  # passage rows
    family: str


def load_corpus(corpus_dir: Path) -> Corpus:
    keys: list[str] = []
    texts: list[str] = []
    for f in sorted(Path(corpus_dir).rglob("*.md")):
        rel = f.relative_to(corpus_dir).as_posix()
        lines = f.read_text(encoding="utf-8").split("\n")
        starts = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
        for j, s in enumerate(starts):
            end = starts[j + 1] if j + 1 < len(starts) else len(lines)
            keys.append(f"{rel}:{s + 1}")
            texts.append("\n".join(lines[s:end]).strip())
    return Corpus(tuple(keys), tuple(texts))


def load_questions(tsv: Path, corpus: Corpus) -> list[Question]:
    index = corpus.index_of()
    out = []
    for line in Path(tsv).read_text(encoding="utf-8").split("\n"):
        if not line or line.startswith("#"):
            continue
        q, expected, family = line.split("\t")
        gold = frozenset(index[t] for t in expected.split("|") if t != "-")
        out.append(Question(q, gold, family))
    return out


# ----------------------------------------------------------------------- vectors
def _digest(texts: Sequence[str], tag: str) -> str:
    h = hashlib.sha256(tag.encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()[:20]


def embed_cached(texts: Sequence[str], kind: str, *, threads: int = 2) -> np.ndarray:
    """e5 vectors of ``texts`` (kind 'query' or 'passage'), cached by content.

    Truncated at ``EMBED_MAX_LENGTH`` tokens (256, not the pipeline's 512: the
    shared 2-core machine could not afford the longer passages; most paragraphs fit)."""
    from engine.models import Embedder

    manifest = (EMBEDDER_DIR / "manifest.json").read_text(encoding="utf-8")
    tag = kind + hashlib.sha256(manifest.encode()).hexdigest()[:12] + str(EMBED_MAX_LENGTH)
    path = CACHE_DIR / f"vec-{kind}-{_digest(texts, tag)}.npy"
    if path.is_file():
        return np.load(path)
    emb = Embedder(EMBEDDER_DIR, threads=threads, batch_size=8, max_length=EMBED_MAX_LENGTH)
    vec = emb.embed_queries(texts) if kind == "query" else emb.embed_passages(texts)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vec)
    tmp.replace(path)
    return vec


# -------------------------------------------------------------------- first stage
def fuse_rrf(rankings: Sequence[Sequence[int]], c: int = RRF_C) -> list[int]:
    score: dict[int, float] = {}
    for r in rankings:
        for rank, row in enumerate(r, 1):
            score[row] = score.get(row, 0.0) + 1.0 / (c + rank)
    return sorted(score, key=lambda row: (-score[row], row))


@dataclass(frozen=True, slots=True)
class Candidates:
    lexical: list[list[int]]
    vector: list[list[int]]
    fused: list[list[int]]


def first_stage(corpus: Corpus, questions: Sequence[Question], *, k: int = BRANCH_K,
                threads: int = 2) -> Candidates:
    from engine.index.lexical import LexicalIndex

    lex = LexicalIndex.build(list(corpus.texts))
    # embed per top-level folder so multi-dev reuses each part's cached vectors
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(corpus.keys):
        groups.setdefault(key.split("/", 1)[0] if "/" in key else "", []).append(i)
    pv = np.zeros((len(corpus.texts), 384), np.float32)
    for rows in groups.values():
        pv[rows] = embed_cached([corpus.texts[i] for i in rows], "passage", threads=threads)
    qv = embed_cached([q.text for q in questions], "query", threads=threads)
    lexical = [[row for row, _ in lex.search(q.text, k)] for q in questions]
    vector = []
    for i in range(0, len(questions), 512):
        sims = qv[i:i + 512] @ pv.T
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        vector.extend(top.tolist())
    fused = [fuse_rrf([a, b]) for a, b in zip(lexical, vector)]
    return Candidates(lexical, vector, fused)


def held_out(key: str, every: int = 12) -> bool:
    """Deterministic article-level hold-out on TRAIN (by the gold file path): never trained
    on; where the reranker's checkpoint and the pipeline's blend are chosen."""
    path = key.rsplit(":", 1)[0]
    return int(hashlib.sha1(path.encode()).hexdigest(), 16) % every == 0


# ---------------------------------------------------------------------- metrics
def recall_at(ranked: Sequence[int], gold: frozenset[int], k: int) -> float:
    return float(any(r in gold for r in ranked[:k]))


def mrr_at(ranked: Sequence[int], gold: frozenset[int], k: int = 10) -> float:
    for i, r in enumerate(ranked[:k], 1):
        if r in gold:
            return 1.0 / i
    return 0.0


# ------------------------------------------------------------------ pair encoding
def encode_pair(tokenizer, query: str, passage: str, max_length: int, n_special: int = 4
                ) -> list[int]:
    """Same ids as ``engine.models.CrossEncoder.encode_pair``: the one truncation rule."""
    from engine.models import encode_pair as encode

    return list(encode(tokenizer, query, passage, max_length, n_special).ids)


def load_tokenizer(path: Path | None = None):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path or EMBEDDER_DIR / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def load_split(set_name: str, split: str) -> tuple[Corpus, list[Question]]:
    """``split`` = 'train' or 'dev' (multi-dev: 'dev' reads questions.tsv)."""
    d = EVAL / set_name
    corpus = load_corpus(d / "corpus")
    tsv = d / ("questions.tsv" if set_name == "multi-dev" else f"questions.{split}.tsv")
    return corpus, load_questions(tsv, corpus)


def sample_rows(n: int, limit: int, seed: int = 0) -> list[int]:
    """A seeded subset of ``range(n)`` in file order; a smaller limit gives a subset of a larger one."""
    if not 0 < limit < n:
        return list(range(n))
    return sorted(int(i) for i in np.random.default_rng(seed).permutation(n)[:limit])


def split_candidates(set_name: str, split: str, *, threads: int = 2, limit: int = 0, seed: int = 0,
                     rows: Sequence[int] | None = None) -> tuple[Corpus, list[Question], Candidates]:
    """First-stage candidates for one split, cached as .npz (rows padded with -1).
    ``limit`` > 0: a seeded random subset of that many questions (file order kept);
    ``rows``: exactly these question rows."""
    corpus, questions = load_split(set_name, split)
    if rows is None:
        rows = sample_rows(len(questions), limit, seed)
    questions = [questions[i] for i in rows]
    tag = _digest([q.text for q in questions] + list(corpus.keys), set_name + split)
    path = CACHE_DIR / f"cand-{set_name}-{split}-{tag}.npz"
    if path.is_file():
        z = np.load(path)
        unpad = lambda a: [[int(x) for x in row if x >= 0] for row in a]  # noqa: E731
        return corpus, questions, Candidates(unpad(z["lexical"]), unpad(z["vector"]), unpad(z["fused"]))
    cand = first_stage(corpus, questions, threads=threads)

    def pad(rows: list[list[int]]) -> np.ndarray:
        width = max(1, max((len(r) for r in rows), default=1))
        a = np.full((len(rows), width), -1, np.int32)
        for i, r in enumerate(rows):
            a[i, :len(r)] = r
        return a

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    np.savez(path, lexical=pad(cand.lexical), vector=pad(cand.vector), fused=pad(cand.fused))
    return corpus, questions, cand


if __name__ == "__main__":
    import time

    import argparse

    ap = argparse.ArgumentParser(description="precompute first-stage candidates")
    ap.add_argument("--train-limit", type=int, default=1000)
    ap.add_argument("--dev-limit", type=int, default=0)
    a = ap.parse_args()
    for sp in ("train", "dev"):
        for s in SETS:
            t0 = time.perf_counter()
            c, qs, cand = split_candidates(s, sp, limit=a.train_limit if sp == "train" else a.dev_limit)
            r1 = np.mean([recall_at(f, q.gold, 1) for f, q in zip(cand.fused, qs)])
            print(f"{s} {sp}: {len(qs)} questions, hybrid R@1 {r1:.3f} ({time.perf_counter() - t0:.0f}s)",
                  flush=True)
