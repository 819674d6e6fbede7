#!/usr/bin/env python3
"""Embedder throughput and latency.

    python bench/embed.py [--model-dir models/multilingual-e5-small] [--n 48] [--json]

Reports passages/s for ~200-token passages at 1 and 2 threads, query latency
p50/p95, and the speed-up of length-sorted batching over naive unsorted
batching (same batch size) on a mixed-length set.  Runs in well under 3 minutes
on 2 cores.
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

from engine.models import Embedder, ModelError  # noqa: E402

PARAGRAPHS = [
    "Before any maintenance work, switch the machine off at the main switch, disconnect the power "
    "supply and secure it against being switched on again. Wait until all moving parts have come to "
    "a complete stop and the hydraulic pressure gauge reads zero. Wear protective gloves and goggles.",
    "Pour remplacer le filtre à huile, vidangez d'abord le moteur, dévissez l'ancien filtre à l'aide "
    "de la clé fournie et huilez légèrement le joint du nouveau filtre avant de le visser à la main. "
    "Remplissez ensuite le moteur avec l'huile recommandée et vérifiez l'absence de fuites.",
    "Der Luftfilter muss alle 500 Betriebsstunden oder mindestens einmal im Jahr gewechselt werden. "
    "Bei staubiger Umgebung verkürzt sich das Intervall. Prüfen Sie die Dichtung auf Risse und "
    "ersetzen Sie sie gegebenenfalls, bevor Sie den Deckel wieder verschließen.",
    "校准温度传感器时，请先将设备预热十分钟，然后在菜单中选择校准并按确认键。如果显示的温度与参考温度"
    "相差超过两度，请重复校准过程；若问题仍然存在，请联系售后服务部门更换传感器。",
    "배터리는 완전히 방전되기 전에 충전하고, 충전 중에는 장비를 사용하지 마십시오. 충전이 완료되면 "
    "표시등이 녹색으로 바뀝니다. 장기간 보관할 때는 배터리를 분리하여 서늘하고 건조한 곳에 두십시오.",
    "La presión máxima de trabajo de la bomba es de 6 bar; no la supere nunca. Compruebe el manómetro "
    "antes de cada uso y sustituya las mangueras que presenten grietas o abultamientos.",
]
QUERIES = [
    "how do I reset the pressure relief valve", "comment remplacer le filtre à huile",
    "Wie oft muss der Luftfilter gewechselt werden?", "如何校准温度传感器", "배터리를 어떻게 충전하나요?",
    "¿cuál es la presión máxima de trabajo?", "what torque for the wheel nuts", "oil capacity of the engine",
]


def make_passages(emb: Embedder, n: int, target: int, rng: np.random.Generator) -> list[list[int]]:
    """Token id lists of about ``target`` tokens (incl. prefix/specials), built from the paragraphs."""
    pool = [emb.tokenizer.encode(p, add_special_tokens=False).ids for p in PARAGRAPHS]
    out = []
    for i in range(n):
        ids: list[int] = []
        k = i
        while len(ids) < target:
            ids += pool[(k + int(rng.integers(0, len(pool)))) % len(pool)]
            k += 1
        text = emb.tokenizer.decode(ids[:target - 5])
        out.append(emb.encode_ids([text], emb.passage_prefix)[0])
    return out


def throughput(emb: Embedder, seqs: list[list[int]], sort: bool = True, repeats: int = 1) -> float:
    emb.embed_ids(seqs[: emb.batch_size], sort=sort)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        emb.embed_ids(seqs, sort=sort)
        best = min(best, time.perf_counter() - t)
    return len(seqs) / best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", type=Path, default=ROOT / "models" / "multilingual-e5-small")
    ap.add_argument("--n", type=int, default=48, help="passages per measurement")
    ap.add_argument("--tokens", type=int, default=200, help="tokens per passage")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--queries", type=int, default=40, help="single-query calls for latency")
    ap.add_argument("--compare-precisions", action="store_true",
                    help="also build (cached under models/.cache/variants) and time the q4-int8, fp32 and "
                         "dynamic-int8 variants: 2-thread passages/s and max abs diff across batch compositions")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    try:
        embs = {t: Embedder(a.model_dir, threads=t, batch_size=a.batch_size) for t in (1, 2)}
    except ModelError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    e2 = embs[2]
    fixed = make_passages(e2, a.n, a.tokens, rng)
    lens = rng.integers(16, a.tokens + 50, a.n)
    mixed = [make_passages(e2, 1, int(L), rng)[0] for L in lens]
    res: dict = {"model": e2.model_id, "precision": e2.manifest.get("precision"), "batch_size": a.batch_size,
                 "passage_tokens": float(np.mean([len(s) for s in fixed])), "n": a.n}
    for t, e in embs.items():
        res[f"passages_per_s_{t}t"] = throughput(e, fixed)
    res["mixed_sorted_per_s_2t"] = throughput(e2, mixed, sort=True)
    res["mixed_unsorted_per_s_2t"] = throughput(e2, mixed, sort=False)
    res["sorted_speedup"] = res["mixed_sorted_per_s_2t"] / res["mixed_unsorted_per_s_2t"]
    lat = []
    e2.embed_queries(QUERIES[:1])
    for i in range(a.queries):
        t = time.perf_counter()
        e2.embed_queries([QUERIES[i % len(QUERIES)]])
        lat.append((time.perf_counter() - t) * 1000)
    res["query_ms_p50_2t"] = float(np.percentile(lat, 50))
    res["query_ms_p95_2t"] = float(np.percentile(lat, 95))
    variants = {}
    if a.compare_precisions:
        half = fixed[: max(a.batch_size, a.n // 2)]
        for name, d in [(e2.manifest.get("precision"), a.model_dir)] + build_variants(a.model_dir):
            e = Embedder(d, threads=2, batch_size=a.batch_size)
            variants[name] = {"passages_per_s_2t": throughput(e, half), "max_abs_diff": determinism(e, mixed[:24])}
        res["precisions"] = variants
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{res['model']} precision={res['precision']} batch={a.batch_size} "
          f"passages={a.n} x ~{res['passage_tokens']:.0f} tokens")
    rows = [
        ("passages/s, 1 thread", f"{res['passages_per_s_1t']:.1f}"),
        ("passages/s, 2 threads", f"{res['passages_per_s_2t']:.1f}"),
        ("mixed lengths, sorted, 2t", f"{res['mixed_sorted_per_s_2t']:.1f}/s"),
        ("mixed lengths, unsorted, 2t", f"{res['mixed_unsorted_per_s_2t']:.1f}/s"),
        ("sorted / unsorted", f"{res['sorted_speedup']:.2f}x"),
        ("query latency p50 (2t)", f"{res['query_ms_p50_2t']:.1f} ms"),
        ("query latency p95 (2t)", f"{res['query_ms_p95_2t']:.1f} ms"),
    ]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{w}}  {v:>10}")
    if variants:
        print("  precision      passages/s (2t)   max abs diff across batch compositions")
        for name, v in variants.items():
            print(f"  {name:<14} {v['passages_per_s_2t']:>15.1f}   {v['max_abs_diff']:.2e}")
    return 0


def determinism(emb: Embedder, seqs: list[list[int]]) -> float:
    """Max abs diff between each sequence embedded alone and inside shuffled batches."""
    alone = np.concatenate([emb.embed_ids([s]) for s in seqs])
    rng = np.random.default_rng(1)
    worst = 0.0
    for bs in (4, 16):
        perm = rng.permutation(len(seqs))
        v = emb.embed_ids([seqs[i] for i in perm], sort=False, batch_size=bs)
        worst = max(worst, float(np.abs(v - alone[perm]).max()))
    return worst


def build_variants(model_dir: Path) -> list[tuple[str, Path]]:
    """q4-int8 and fp32 builds plus a dynamic-int8 quantization of fp32 (cached)."""
    import shutil

    from fieldqa import modelbuild

    base = model_dir.parent / ".cache" / "variants"
    out = []
    for prec in ("q4-int8", "fp32"):
        d = base / prec
        modelbuild.build(d, cache_dir=model_dir.parent / ".cache", precision=prec)
        out.append((prec, d))
    d = base / "int8-dynamic"
    if not (d / "manifest.json").is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = base / "int8-dynamic.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        quantize_dynamic(str(base / "fp32" / "model.onnx"), str(tmp / "model.onnx"),
                         weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                         extra_options={"DefaultTensorType": 1})  # onnx.TensorProto.FLOAT
        shutil.copy(base / "fp32" / "tokenizer.json", tmp / "tokenizer.json")
        man = json.loads((base / "fp32" / "manifest.json").read_text())
        man["precision"] = "int8-dynamic"
        man["files"] = {f: modelbuild.sha256_file(tmp / f) for f in ("model.onnx", "tokenizer.json")}
        (tmp / "manifest.json").write_text(json.dumps(man, indent=2))
        shutil.rmtree(d, ignore_errors=True)
        tmp.rename(d)
    out.append(("int8-dynamic", d))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
