"""Fast tests for engine/models.py, fieldqa/modelbuild.py and `fieldqa models` (no real model).

Each test builds its own tiny ONNX graph (onnx.helper) and tiny tokenizer (tokenizers)."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, processors  # noqa: E402

from engine import models as em  # noqa: E402
from engine.models import CrossEncoder, Embedder, ModelError  # noqa: E402

WORDS = ("query passage : how do i reset the valve pump filter oil change press button wait "
         "zero gauge reads main switch off red three seconds torque wheel nuts . , a b c d e f g").split()
DIM = 8


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# ------------------------------------------------------------------------- fixtures
def make_tokenizer(path: Path, bert: bool = False) -> Tokenizer:
    if bert:
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    else:
        specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + sorted(set(WORDS)))}
    unk = "[UNK]" if bert else "<unk>"
    tok = Tokenizer(models.WordLevel(vocab, unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if bert:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    else:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])])
    tok.save(str(path))
    return tok


def embed_graph(vocab_size: int, dim: int = DIM, seed: int = 0) -> onnx.ModelProto:
    """Gather -> mean over attention_mask -> L2 normalise (same I/O as the real model)."""
    table = np.random.default_rng(seed).standard_normal((vocab_size, dim)).astype(np.float32)
    i64 = lambda v: numpy_helper.from_array(np.asarray(v, np.int64))  # noqa: E731
    inits = [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.asarray([1], np.int64), "ax1"),
             numpy_helper.from_array(np.asarray([-1], np.int64), "axm1"),
             numpy_helper.from_array(np.asarray(1e-9, np.float32), "tiny")]
    del i64
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["x"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mf", "axm1"], ["m3"]),
        helper.make_node("Mul", ["x", "m3"], ["xm"]),
        helper.make_node("Identity", ["xm"], ["token_embeddings"]),
        helper.make_node("ReduceSum", ["xm", "ax1"], ["s"], keepdims=0),
        helper.make_node("ReduceSum", ["m3", "ax1"], ["c0"], keepdims=0),
        helper.make_node("Max", ["c0", "tiny"], ["c"]),
        helper.make_node("Div", ["s", "c"], ["mean"]),
        helper.make_node("Mul", ["mean", "mean"], ["sq"]),
        helper.make_node("ReduceSum", ["sq", "axm1"], ["ss"], keepdims=1),
        helper.make_node("Sqrt", ["ss"], ["nrm"]),
        helper.make_node("Div", ["mean", "nrm"], ["sentence_embedding"]),
    ]
    g = helper.make_graph(
        nodes, "tiny_embed",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["b", dim]),
         helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["b", "s", dim])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m


def write_manifest(d: Path, name: str = "tiny-e5", **extra) -> dict:
    files = {f: sha(d / f) for f in ("model.onnx", "tokenizer.json") if (d / f).exists()}
    man = {"format": 1, "name": name, "files": files, "dim": DIM, "max_length": 512, "pooling": "mean",
           "normalize": True, "prefixes": {"query": "query: ", "passage": "passage: "}, "precision": "fp32",
           "pad_id": 1} | extra
    (d / "manifest.json").write_text(json.dumps(man), encoding="utf-8")
    return man


@pytest.fixture
def tiny_embedder_dir(tmp_path: Path) -> Path:
    d = tmp_path / "tiny-e5"
    d.mkdir()
    tok = make_tokenizer(d / "tokenizer.json")
    onnx.save(embed_graph(tok.get_vocab_size()), str(d / "model.onnx"))
    write_manifest(d)
    return d


class RecordingSession:
    """Wraps an InferenceSession and records each batch's feed."""

    def __init__(self, inner):
        self.inner, self.feeds = inner, []

    def run(self, names, feed):
        self.feeds.append({k: v.copy() for k, v in feed.items()})
        return self.inner.run(names, feed)

    def __getattr__(self, item):
        return getattr(self.inner, item)


TEXTS = ["how do i reset the valve", "press the red button", "a", "oil change", "wait",
         "the main switch off . wait three seconds , press button", "pump filter", "b c d e f g a b c"]


# --------------------------------------------------------------------------- embedder
def test_embedder_loads_and_reports_attributes(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=1, batch_size=3)
    assert e.dim == DIM
    assert e.model_id == "tiny-e5"
    assert e.checksum == sha(tiny_embedder_dir / "model.onnx")
    assert e.max_length == 512
    v = e.embed_passages(TEXTS)
    assert v.shape == (len(TEXTS), DIM) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e.embed_queries([]).shape == (0, DIM)
    with pytest.raises(TypeError):
        e.embed_queries("not a list")  # type: ignore[arg-type]


def test_embedder_matches_numpy_and_prefixes(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=1)
    table = numpy_helper.to_array(onnx.load(str(tiny_embedder_dir / "model.onnx")).graph.initializer[0])
    for prefix, fn in (("query: ", e.embed_queries), ("passage: ", e.embed_passages)):
        ids = e.tokenizer.encode(prefix + TEXTS[0]).ids
        assert ids[0] == 0 and ids[-1] == 2
        want = table[ids].mean(0)
        want /= np.linalg.norm(want)
        np.testing.assert_allclose(fn([TEXTS[0]])[0], want, atol=1e-6)
    assert not np.allclose(e.embed_queries(TEXTS[:1]), e.embed_passages(TEXTS[:1]))


def test_a_question_embedded_by_its_search_is_not_embedded_again_by_its_answer(tiny_embedder_dir: Path):
    emb = Embedder(tiny_embedder_dir)
    runs = []
    real = emb._session.run
    emb._session = type("Counting", (), {"run": lambda self, *a: runs.append(1) or real(*a)})()
    first = emb.embed_queries(["oil type?", "torque"])
    again = emb.embed_queries(["torque", "oil type?"])
    assert len(runs) == 1 and np.array_equal(again, first[::-1])
    emb.embed_queries([f"q{i}" for i in range(100)])  # more than it remembers
    seen = len(runs)
    emb.embed_queries(["oil type?"])  # forgotten by now: embedded again
    assert len(runs) == seen + 1


def test_batches_sorted_by_length_and_order_restored(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=1, batch_size=3)
    alone = np.concatenate([e.embed_passages([t]) for t in TEXTS])
    rec = RecordingSession(e._session)
    e._session = rec
    batched = e.embed_passages(TEXTS)
    np.testing.assert_allclose(batched, alone, atol=1e-6)  # original order restored
    widths = [f["input_ids"].shape[1] for f in rec.feeds]
    assert widths == sorted(widths, reverse=True)
    assert [f["input_ids"].shape[0] for f in rec.feeds] == [3, 3, 2]
    for f in rec.feeds:  # padded to the longest in the batch only, pad id 1 on the right
        lens = f["attention_mask"].sum(1)
        assert lens.max() == f["input_ids"].shape[1]
        for row, n in zip(f["input_ids"], lens):
            assert (row[n:] == 1).all() and row[n - 1] == 2
    lengths = sorted((len(x) for x in e.encode_ids(TEXTS, "passage: ")), reverse=True)
    assert [int(w) for w in widths] == [lengths[0], lengths[3], lengths[6]]


def test_determinism_across_batch_compositions(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=2, batch_size=16)
    alone = np.concatenate([e.embed_passages([t]) for t in TEXTS])
    ids = e.encode_ids(TEXTS, "passage: ")
    rng = np.random.default_rng(1)
    for _ in range(5):
        perm = rng.permutation(len(TEXTS))
        for bs in (1, 2, 3, 5, 16):
            for sort in (True, False):
                v = e.embed_ids([ids[i] for i in perm], sort=sort, batch_size=bs)
                assert np.abs(v - alone[perm]).max() <= 1e-5


def test_truncation_keeps_final_special(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=1, max_length=6)
    (ids,) = e.encode_ids(["a b c d e f g a b c"], "passage: ")
    assert len(ids) == 6 and ids[0] == 0 and ids[-1] == 2
    assert e.count_tokens("a b c d e f g a b c") == 10  # no truncation, no specials, no prefix
    assert e.embed_passages(["a b c d e f g a b c" * 3]).shape == (1, DIM)


def test_load_tokenizer_and_count_tokens(tiny_embedder_dir: Path):
    tok = em.load_tokenizer(tiny_embedder_dir)
    assert em.load_tokenizer(tiny_embedder_dir) is tok  # cached
    assert em.count_tokens("press the red button", tiny_embedder_dir) == 4
    assert em.count_tokens("press the red button", tok) == 4
    assert em.token_counter(tiny_embedder_dir)("oil change") == 2
    with pytest.raises(ModelError, match="fieldqa models build"):
        em.load_tokenizer(tiny_embedder_dir.parent / "nope")


@pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json", "manifest.json"])
def test_missing_files_name_the_fix(tiny_embedder_dir: Path, missing: str):
    (tiny_embedder_dir / missing).unlink()
    with pytest.raises(ModelError) as ei:
        Embedder(tiny_embedder_dir)
    msg = str(ei.value)
    assert "fieldqa models build" in msg and "make models" in msg and str(tiny_embedder_dir) in msg


def test_checksum_mismatch_names_the_fix(tiny_embedder_dir: Path):
    Embedder(tiny_embedder_dir, verify=True)  # intact: fine
    with open(tiny_embedder_dir / "tokenizer.json", "a") as f:
        f.write(" ")
    with pytest.raises(ModelError, match=r"checksum mismatch.*fieldqa models build.*make models"):
        Embedder(tiny_embedder_dir, verify=True)


def test_corrupt_model_names_the_fix(tiny_embedder_dir: Path):
    (tiny_embedder_dir / "model.onnx").write_bytes(b"not an onnx file")
    with pytest.raises(ModelError, match="fieldqa models build"):
        Embedder(tiny_embedder_dir)


# ----------------------------------------------------------------------- cross-encoder
def classifier_graph(vocab_size: int, *, type_ids: bool, out_shape: str, seed: int = 3) -> onnx.ModelProto:
    """logit = mean_t(table[id] * mask) . w  (+ sum(type_ids) * 0.5 when type_ids)."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((vocab_size, 4)).astype(np.float32)
    ncls = 2 if out_shape == "n2" else 1
    w = rng.standard_normal((4, ncls)).astype(np.float32)
    inits = [numpy_helper.from_array(table, "table"), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.asarray([1], np.int64), "ax1"),
             numpy_helper.from_array(np.asarray([-1], np.int64), "axm1"),
             numpy_helper.from_array(np.asarray(0.5, np.float32), "half")]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["x"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mf", "axm1"], ["m3"]),
        helper.make_node("Mul", ["x", "m3"], ["xm"]),
        helper.make_node("ReduceSum", ["xm", "ax1"], ["s"], keepdims=0),
        helper.make_node("ReduceSum", ["m3", "ax1"], ["c"], keepdims=0),
        helper.make_node("Div", ["s", "c"], ["mean"]),
        helper.make_node("MatMul", ["mean", "w"], ["lg0"]),
    ]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"])]
    last = "lg0"
    if type_ids:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["b", "s"]))
        nodes += [helper.make_node("Cast", ["token_type_ids"], ["tf"], to=TensorProto.FLOAT),
                  helper.make_node("ReduceSum", ["tf", "axm1"], ["ts"], keepdims=1),
                  helper.make_node("Mul", ["ts", "half"], ["tsh"]),
                  helper.make_node("Add", ["lg0", "tsh"], ["lg1"])]
        last = "lg1"
    if out_shape == "n":
        nodes.append(helper.make_node("Squeeze", [last, "axm1"], ["logits"]))
        oshape = ["b"]
    else:
        nodes.append(helper.make_node("Identity", [last], ["logits"]))
        oshape = ["b", ncls]
    g = helper.make_graph(nodes, "tiny_ce", inputs,
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, oshape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m


def ce_expected(d: Path, pairs_ids, pairs_types, type_ids: bool, out_shape: str) -> np.ndarray:
    g = onnx.load(str(d / "model.onnx")).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    out = []
    for ids, types in zip(pairs_ids, pairs_types):
        lg = inits["table"][ids].mean(0) @ inits["w"]
        if type_ids:
            lg = lg + 0.5 * sum(types)
        out.append(lg[-1])
    return np.asarray(out, np.float32)


@pytest.mark.parametrize("bert,out_shape", [(False, "n1"), (False, "n"), (True, "n1"), (True, "n2")])
def test_cross_encoder_scores(tmp_path: Path, bert: bool, out_shape: str):
    d = tmp_path / "ce"
    d.mkdir()
    tok = make_tokenizer(d / "tokenizer.json", bert=bert)
    onnx.save(classifier_graph(tok.get_vocab_size(), type_ids=bert, out_shape=out_shape), str(d / "model.onnx"))
    ce = CrossEncoder(d, threads=1, batch_size=2)
    assert ce.model_id == "ce"
    assert ce.checksum == sha(d / "model.onnx")  # computed without a manifest
    assert ("token_type_ids" in ce.input_names) == bert
    q = "how do i reset the valve"
    passages = TEXTS
    got = ce.score(q, passages)
    assert got.shape == (len(passages),) and got.dtype == np.float32
    pairs = [ce.encode_pair(q, p) for p in passages]
    ids0, types0 = pairs[0]
    if bert:
        assert tok.id_to_token(ids0[0]) == "[CLS]" and types0[-1] == 1 and types0[0] == 0
    else:  # XLM-R template <s> q </s></s> p </s>
        toks = [tok.id_to_token(i) for i in ids0]
        assert toks[0] == "<s>" and toks.count("</s>") == 3 and toks[-1] == "</s>"
    want = ce_expected(d, [p[0] for p in pairs], [p[1] for p in pairs], bert, out_shape)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose([ce.score(q, [p])[0] for p in passages], got, atol=1e-5)
    assert ce.score(q, []).shape == (0,)


def test_cross_encoder_truncates_passage_first(tmp_path: Path):
    d = tmp_path / "ce"
    d.mkdir()
    tok = make_tokenizer(d / "tokenizer.json")
    onnx.save(classifier_graph(tok.get_vocab_size(), type_ids=False, out_shape="n1"), str(d / "model.onnx"))
    write_manifest(d, name="tiny-ce")
    ce = CrossEncoder(d, max_length=12, verify=True)
    assert ce.model_id == "tiny-ce" and ce.checksum == sha(d / "model.onnx")
    q = "reset the valve"  # 3 tokens
    ids, _ = ce.encode_pair(q, "a b c d e f g a b c d e f g")
    assert len(ids) == 12
    toks = [tok.id_to_token(i) for i in ids]
    assert toks[:5] == ["<s>", "reset", "the", "valve", "</s>"]  # query intact
    long_q = "a b c d e f g a b c d e f g"
    ids, _ = ce.encode_pair(long_q, "pump filter oil change")
    toks = [tok.id_to_token(i) for i in ids]
    assert len(ids) == 12
    assert toks[-5:] == ["pump", "filter", "oil", "change", "</s>"]  # short passage kept whole
    assert toks[1:5] == ["a", "b", "c", "d"]  # over-long query cut


def test_cross_encoder_missing_and_mismatch(tmp_path: Path):
    d = tmp_path / "ce"
    with pytest.raises(ModelError, match="fieldqa models build"):
        CrossEncoder(d)
    d.mkdir()
    tok = make_tokenizer(d / "tokenizer.json")
    with pytest.raises(ModelError, match=r"model\.onnx.*fieldqa models build"):
        CrossEncoder(d)
    onnx.save(classifier_graph(tok.get_vocab_size(), type_ids=False, out_shape="n1"), str(d / "model.onnx"))
    write_manifest(d)
    (d / "model.onnx").write_bytes((d / "model.onnx").read_bytes() + b"\0")
    with pytest.raises(ModelError, match=r"checksum mismatch.*fieldqa models build"):
        CrossEncoder(d, verify=True)


# ------------------------------------------------------------------ modelbuild pieces
def test_q4_repack_matches_matmulnbits():
    """Q4_0 (byte j -> weights j, j+16) repacked for MatMulNBits equals numpy dequant."""
    from fieldqa import modelbuild as mb

    rng = np.random.default_rng(0)
    nout, nin = 24, 64
    blocks = np.zeros(nout * nin // 32, mb.Q4_BLOCK)
    blocks["d"] = rng.uniform(0.01, 0.1, blocks.shape).astype(np.float16).view(np.uint16)
    blocks["qs"] = rng.integers(0, 256, (blocks.shape[0], 16), dtype=np.uint8)
    W = mb.q4_dequant(blocks, nout, nin)
    # independent reference for the nibble order
    q = blocks["qs"].reshape(nout, nin // 32, 16)
    d = blocks["d"].view(np.float16).astype(np.float32).reshape(nout, nin // 32)
    ref = np.empty((nout, nin // 32, 32), np.float32)
    ref[..., :16] = (q & 15).astype(np.float32) - 8
    ref[..., 16:] = (q >> 4).astype(np.float32) - 8
    np.testing.assert_array_equal(W, (ref * d[..., None]).reshape(nout, nin))
    packed, scales = mb.q4_to_matmulnbits(blocks, nout, nin)
    node = helper.make_node("MatMulNBits", ["A", "B", "S"], ["Y"], domain="com.microsoft",
                            K=nin, N=nout, bits=4, block_size=32)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["m", nin])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", nout])],
                          [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "S")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 9
    sess = mb.ort_session(m.SerializeToString(), 1)
    A = rng.standard_normal((5, nin)).astype(np.float32)
    np.testing.assert_allclose(sess.run(None, {"A": A})[0], A @ W.T, rtol=1e-5, atol=1e-5)


def test_outputs_ok_detects_tampering(tiny_embedder_dir: Path):
    from fieldqa import modelbuild as mb

    assert mb.outputs_ok(tiny_embedder_dir)
    (tiny_embedder_dir / "model.onnx").write_bytes(b"x")
    assert not mb.outputs_ok(tiny_embedder_dir)


# ------------------------------------------------------------------- pack / unpack CLI
def _args(models_dir: Path, **kw) -> argparse.Namespace:
    return argparse.Namespace(config=None, **kw)


@pytest.fixture
def cli_models_dir(tmp_path: Path, tiny_embedder_dir: Path, monkeypatch) -> Path:
    from fieldqa.commands import models as cmd

    md = tiny_embedder_dir.parent
    monkeypatch.setattr(cmd, "_models_cfg", lambda args: (md, md / "tiny-e5", None, None))
    return md


def test_pack_unpack_roundtrip(tmp_path: Path, cli_models_dir: Path):
    from fieldqa.commands import models as cmd

    for name in ("answerability", "passage_order"):  # fitted weights travel with the models
        (cli_models_dir / name).mkdir()
        (cli_models_dir / name / f"{name}.json").write_text("{}")
        files = {f"{name}.json": sha(cli_models_dir / name / f"{name}.json")}
        (cli_models_dir / name / "manifest.json").write_text(json.dumps({"name": name, "files": files}))
    archive = tmp_path / "models.tar.gz"
    assert cmd.cmd_pack(_args(cli_models_dir, file=archive)) == 0
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"tiny-e5/model.onnx", "tiny-e5/tokenizer.json", "tiny-e5/manifest.json",
            "answerability/answerability.json", "passage_order/passage_order.json"} <= names
    before = sha(cli_models_dir / "tiny-e5" / "model.onnx")
    (cli_models_dir / "tiny-e5" / "model.onnx").unlink()
    assert cmd.cmd_unpack(_args(cli_models_dir, file=archive)) == 0
    assert sha(cli_models_dir / "tiny-e5" / "model.onnx") == before
    assert not [p for p in cli_models_dir.iterdir() if p.name.startswith(".unpack")]


def _tar_with(path: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@pytest.mark.parametrize("bad", ["../evil.txt", "/abs/evil.txt", "tiny-e5/../../evil.txt", "link"])
def test_unpack_refuses_traversal(tmp_path: Path, cli_models_dir: Path, bad: str, capsys):
    from fieldqa.commands import models as cmd

    info = tarfile.TarInfo(bad)
    if bad == "link":
        info.name = "tiny-e5/link"
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        data = None
    else:
        data = b"pwned"
        info.size = len(data)
    archive = _tar_with(tmp_path / "bad.tar.gz", [(info, data)])
    assert cmd.cmd_unpack(_args(cli_models_dir, file=archive)) == 1
    assert "refusing" in capsys.readouterr().err
    assert not (tmp_path / "evil.txt").exists() and not Path("/abs/evil.txt").exists()


def test_unpack_rejects_checksum_mismatch(tmp_path: Path, cli_models_dir: Path, capsys):
    from fieldqa.commands import models as cmd

    man = json.loads((cli_models_dir / "tiny-e5" / "manifest.json").read_text())
    entries = []
    for name, data in (("manifest.json", json.dumps(man).encode()), ("model.onnx", b"tampered"),
                       ("tokenizer.json", (cli_models_dir / "tiny-e5" / "tokenizer.json").read_bytes())):
        info = tarfile.TarInfo(f"tiny-e5/{name}")
        info.size = len(data)
        entries.append((info, data))
    archive = _tar_with(tmp_path / "tampered.tar.gz", entries)
    before = sha(cli_models_dir / "tiny-e5" / "model.onnx")
    assert cmd.cmd_unpack(_args(cli_models_dir, file=archive)) == 1
    assert "checksum mismatch" in capsys.readouterr().err
    assert sha(cli_models_dir / "tiny-e5" / "model.onnx") == before  # untouched


def test_unpack_of_a_missing_archive_is_an_input_error(tmp_path: Path, cli_models_dir: Path, capsys):
    from fieldqa.commands import models as cmd

    before = sorted(p.name for p in cli_models_dir.iterdir())
    assert cmd.cmd_unpack(_args(cli_models_dir, file=tmp_path / "missing.tar.gz")) == 2  # as any missing input
    assert "no such file" in capsys.readouterr().err
    assert sorted(p.name for p in cli_models_dir.iterdir()) == before


def test_register_sets_func():
    from fieldqa.commands import models as cmd

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    cmd.register(sub)
    for argv, fn in ((["models", "build", "--force"], cmd.cmd_build), (["models", "check"], cmd.cmd_check),
                     (["models", "pack", "x.tgz"], cmd.cmd_pack), (["models", "unpack", "x.tgz"], cmd.cmd_unpack)):
        args = parser.parse_args(argv)
        assert args.func is fn


def test_spans_are_pooled_from_the_passage_pass(tiny_embedder_dir: Path):
    """Late chunking: one pass gives the passage vector and each span's (its tokens averaged)."""
    e = Embedder(tiny_embedder_dir, threads=1, batch_size=2)
    table = numpy_helper.to_array(onnx.load(str(tiny_embedder_dir / "model.onnx")).graph.initializer[0])
    texts = ["press the red button . wait three seconds", "oil change", "reset the valve"]
    spans = [[(0, 20), (23, 41), (8, 10)], [(0, 3)], [(6, 6)]]  # (8, 10): inside "the"; (6, 6): empty
    runs = []
    real = e._session.run
    e._session = type("Counting", (), {"run": lambda self, *a: runs.append(1) or real(*a)})()
    vecs, pooled = e.embed_passages_pooled(texts, spans)
    assert len(runs) == 2  # one pass per batch, no pass per span
    np.testing.assert_allclose(vecs, e.embed_passages(texts), atol=1e-6)
    words = [["press", "the", "red", "button"], ["wait", "three", "seconds"], ["the"]], [["oil"]], [None]
    for want_words, got in zip(words, pooled):
        for w, v in zip(want_words, got):
            if w is None:
                assert v is None
                continue
            want = table[[e.tokenizer.token_to_id(x) for x in w]].mean(0)
            np.testing.assert_allclose(v, want / np.linalg.norm(want), atol=1e-6)
    short = Embedder(tiny_embedder_dir, threads=1, max_length=6)  # <s> passage : + 2 words + </s>
    runs.clear()
    short._session = type("Counting", (), {"run": lambda self, *a: runs.append(1) or real(*a)})()
    _vecs, pooled = short.embed_passages_pooled([texts[0]], [[(0, 5), (23, 41), (29, 34)]])
    # past the window: pooled from one more pass over "wait three seconds", whose window holds two words
    assert len(runs) == 2
    for got, w in zip(pooled[0], (["press"], ["wait", "three"], ["three"])):
        want = table[[short.tokenizer.token_to_id(x) for x in w]].mean(0)
        np.testing.assert_allclose(got, want / np.linalg.norm(want), atol=1e-6)


def test_a_graph_without_token_vectors_cannot_pool(tiny_embedder_dir: Path):
    e = Embedder(tiny_embedder_dir, threads=1)
    e.pools_spans = False
    with pytest.raises(ModelError, match="token_embeddings"):
        e.embed_passages_pooled(["oil change"], [[(0, 3)]])


def test_models_check_says_whether_the_passage_order_will_run(tmp_path: Path):
    """The search turns a passage order fitted with other models off; check names it."""
    from engine.search.order import ORDER_FEATURES, OrderModel
    from fieldqa.commands.models import order_status

    n = len(ORDER_FEATURES)
    model = OrderModel(ORDER_FEATURES, np.zeros(n), np.ones(n), np.ones(n), 5.0, "emb", "test",
                       question_vector="query_encoder", query_encoder_checksum="delta-1")
    path = tmp_path / "passage_order.json"
    path.write_text(json.dumps(model.to_json()))
    assert order_status(path, "emb", "delta-1")["ok"]
    for emb, query, why in (("other", "delta-1", "another embedder"), ("emb", "delta-2", "another query encoder"),
                            ("emb", "", "which is off")):
        got = order_status(path, emb, query)
        assert not got["ok"] and why in got["error"], got
    assert "no passage order model" in order_status(tmp_path / "absent.json", "emb", "delta-1")["error"]
