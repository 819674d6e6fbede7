"""The blend fit of models/reranker/select_blend.py on synthetic questions: it must find the
order that knows the answer, and the learned blend must rank as RerankBlend does."""

from __future__ import annotations

import random

from model_scripts import load_script

sb = load_script("reranker/select_blend.py", "select_blend")


def _questions(n: int, informed: str, seed: int = 0) -> list[dict]:
    """20 candidates each; the ``informed`` order puts the gold first 80 % of the time, the
    others are shuffles that know nothing."""
    rng = random.Random(seed)
    out = []
    for q in range(n):
        ids = [f"q{q}c{i}" for i in range(20)]
        gold = rng.choice(ids)
        orders = {}
        for name in ("ce", "ids", "lexical", "vector"):
            o = ids[:]
            rng.shuffle(o)
            if name == informed and rng.random() < 0.8:
                o.remove(gold)
                o.insert(0, gold)
            orders[name] = o
        out.append(orders | {"gold": {gold}, "article": f"a{q % 17}"})
    return out


def test_fit_finds_the_informed_order():
    recs = _questions(300, informed="lexical")
    w = sb.fit(recs, c=1)
    assert w.max() == 1.0 and min(w) >= 0.0
    lexical = sb.RerankBlend.ORDERS.index("lexical")
    assert w.argmax() == lexical and all(w[i] < 0.5 for i in range(4) if i != lexical)
    blend = sb.as_blend(1, w)
    assert sb.metrics([sb.ranked(r, blend) for r in recs])["R@1"] > 0.7
    # held at zero, the informed order cannot help: chance again
    cv = sb.metrics(sb.cross_validated(recs, 1, without=("lexical",)))
    assert cv["R@1"] < 0.2 and sb.metrics(sb.cross_validated(recs, 1))["R@1"] > 0.7


def test_features_are_reciprocal_ranks_zero_when_absent():
    rec = {"ids": ["a", "b"], "ce": ["b", "a"], "lexical": ["x", "a"], "vector": []}
    x = sb.features(rec, c=1)
    cols = {n: i for i, n in enumerate(sb.RerankBlend.ORDERS)}
    assert x[0, cols["cross_encoder"]] == 1 / 3 and x[1, cols["cross_encoder"]] == 1 / 2
    assert x[0, cols["fused"]] == 1 / 2 and x[0, cols["lexical"]] == 1 / 3 and x[1, cols["lexical"]] == 0
    assert not x[:, cols["vector"]].any()
