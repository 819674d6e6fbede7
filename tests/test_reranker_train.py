"""The training model's delta round trip (models/reranker/encoder.py), used by
``train.py --init-from``: what ``delta_arrays`` writes, ``load_delta`` restores exactly.
Needs torch (the `train` extra; CI installs it), so it skips without."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "models" / "reranker"))

from encoder import LAYER_LINEARS, CrossEncoderModel  # noqa: E402

from fieldqa.modelbuild import Q4_BLOCK, E5Weights  # noqa: E402

H, NH, FF, VOC, MAXP = 32, 2, 64, 40, 16


def _weights(seed: int, layers: int = 2) -> E5Weights:
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.1  # noqa: E731
    word = np.zeros(VOC * H // 32, Q4_BLOCK)
    word["qs"] = rng.integers(0, 256, (len(word), 16), dtype=np.uint8)
    word["d"] = np.full(len(word), 0.01, np.float16).view(np.uint16)
    t = {"emb.word": word, "emb.pos": f(MAXP * H), "emb.type": f(2 * H), "emb.ln.w": 1 + f(H), "emb.ln.b": f(H)}
    dims = {"H": H, "FF": FF}
    for li in range(layers):
        for n, o, i in LAYER_LINEARS:
            t[f"l{li}.{n}.w"] = f(dims[o] * dims[i])
            t[f"l{li}.{n}.b"] = f(dims[o])
        for n in ("aln", "oln"):
            t[f"l{li}.{n}.w"] = 1 + f(H)
            t[f"l{li}.{n}.b"] = f(H)
    header = {"H": H, "NH": NH, "FF": FF, "eps": 1e-12, "VOC": VOC, "MAXP": MAXP, "TVS": 2, "NL": layers}
    return E5Weights(header, t, {k: 0 for k in t}, 0)


def test_delta_round_trip_restores_every_trained_tensor():
    trained = CrossEncoderModel(_weights(1), 2)
    fresh = CrossEncoderModel(_weights(2), 2)  # other starting weights
    ids = torch.tensor([[0, 5, 6, 2, 2, 7, 8, 9, 2]])
    mask = torch.ones_like(ids)
    with torch.no_grad():
        assert not torch.allclose(trained(ids, mask), fresh(ids, mask))
    fresh.load_delta(trained.delta_arrays())
    for k, v in trained.delta_arrays().items():
        np.testing.assert_array_equal(fresh.delta_arrays()[k], v)
    # the frozen word table is not part of the delta: same word table -> same scores
    fresh.encoder.word.copy_(trained.encoder.word)
    with torch.no_grad():
        torch.testing.assert_close(trained(ids, mask), fresh(ids, mask))


def test_load_delta_refuses_another_shape_of_model():
    arrays = CrossEncoderModel(_weights(1, layers=2), 2).delta_arrays()
    with pytest.raises(ValueError, match="differ"):
        CrossEncoderModel(_weights(1, layers=1), 1).load_delta(arrays)
    arrays["head.scale"] = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="head.scale"):
        CrossEncoderModel(_weights(1, layers=2), 2).load_delta(arrays)
