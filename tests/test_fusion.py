"""Reciprocal rank fusion: golden values computed by hand, ties, duplicates, window."""

from __future__ import annotations

import pytest

from engine.search.fusion import RerankBlend, fuse_rrf


def test_golden_example():
    # lexical: a b c ; vector: b d a    (c = 60)
    # a: 1/61 + 1/63   b: 1/62 + 1/61   c: 1/63   d: 1/62
    fused = fuse_rrf([["a", "b", "c"], ["b", "d", "a"]])
    assert [i for i, _ in fused] == ["b", "a", "d", "c"]
    expected = {"a": 1 / 61 + 1 / 63, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 62}
    for i, s in fused:
        assert s == pytest.approx(expected[i], abs=1e-15)


def test_small_c():
    fused = dict(fuse_rrf([["x", "y"], ["y"]], c=0))
    assert fused == {"x": pytest.approx(1.0), "y": pytest.approx(1 / 2 + 1)}


def test_ties_best_rank_then_first_appearance():
    # p: 1/61 + 1/63 ; q: 1/62 + 1/62 -> different sums; r and s tie exactly
    fused = fuse_rrf([["r", "s"], ["s", "r"]])
    assert [i for i, _ in fused] == ["r", "s"]  # same score, same best rank: first appearance
    fused = fuse_rrf([["u", "w", "v"], ["v", "w", "u"]])
    # u, v: 1/61 + 1/63 each; w: 2/62 (smaller); u before v by first appearance
    assert [i for i, _ in fused] == ["u", "v", "w"]
    fused = fuse_rrf([["m", "n"], ["n"], ["m"]], c=1)
    # m: 1/2 + 1/2 ; n: 1/3 + 1/2
    assert fused[0][0] == "m"


def test_tie_broken_by_best_rank():
    # c=0: x, y, b score 1/1 at rank 1; a scores 1/2 + 1/2 = 1 at best rank 2 and,
    # although it appears before b, it goes last: best single rank wins the tie.
    fused = fuse_rrf([["x", "a"], ["y", "a"], ["b"]], c=0)
    assert [s for _, s in fused] == pytest.approx([1.0] * 4)
    assert [i for i, _ in fused] == ["x", "y", "b", "a"]


def test_duplicates_count_once_at_best_rank():
    fused = dict(fuse_rrf([["a", "b", "a", "a"]]))
    assert fused == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62)}


def test_window_and_empty():
    fused = fuse_rrf([list("abcdef"), list("fedcba")], window=2)
    assert len(fused) == 2
    assert fuse_rrf([]) == []
    assert fuse_rrf([[], []]) == []
    assert fuse_rrf([["a"]], window=0) == []


def test_weights():
    plain = fuse_rrf([["a", "b"], ["b", "a"]])
    assert plain[0][1] == plain[1][1]
    weighted = fuse_rrf([["a", "b"], ["b", "a"]], weights=[1.0, 0.5])
    assert [i for i, _ in weighted] == ["a", "b"]
    assert dict(weighted)["a"] == pytest.approx(1 / 61 + 0.5 / 62)
    muted = fuse_rrf([["a"], ["b", "a"]], weights=[1.0, 0.0])
    assert [i for i, _ in muted] == ["a", "b"] and dict(muted)["b"] == 0.0
    with pytest.raises(ValueError):
        fuse_rrf([["a"], ["b"]], weights=[1.0])
    with pytest.raises(ValueError):
        fuse_rrf([["a"]], weights=[-1.0])


def test_never_uses_raw_scores_order_only():
    # the same ids in the same order give the same fusion whatever they were scored
    assert fuse_rrf([("a", "b")]) == fuse_rrf([["a", "b"]])


# ---------------------------------------------------------------- RerankBlend

def test_rerank_blend_weighted_rrf_of_four_orders_by_hand():
    fused = ["a", "b", "c"]
    blend = RerankBlend(c=1, cross_encoder=1.0, fused=0.0, lexical=0.5, vector=0.5)
    # ce order c, a, b; lexical: x (not a candidate), b, a; vector: c only at rank 4
    order = blend.order(fused, ["c", "a", "b"], ["x", "b", "a"], ["y", "z", "w", "c"])
    # a: 1/3 + .5/4 = .458; b: 1/4 + .5/3 = .417; c: 1/2 + .5/5 = .600
    assert order == ["c", "a", "b"]
    # lexical weighted up: b overtakes a (b: .25 + 2/3 = .917, a: .333 + .5 = .833, c: .5 + .1 = .6)
    heavy = RerankBlend(c=1, cross_encoder=1.0, fused=0.0, lexical=2.0, vector=0.5)
    assert heavy.order(fused, ["c", "a", "b"], ["x", "b", "a"], ["y", "z", "w", "c"]) == ["b", "a", "c"]


def test_rerank_blend_keeps_exactly_the_candidates():
    blend = RerankBlend(c=1, cross_encoder=1.0, fused=1.0, lexical=1.0, vector=1.0)
    out = blend.order(["a", "b"], ["b", "a"], ["q", "a", "r"], ["s"])
    assert sorted(out) == ["a", "b"]


@pytest.mark.parametrize("only, expect", [("cross_encoder", ["c", "a", "b"]), ("fused", ["a", "b", "c"])])
def test_rerank_blend_single_weight_gives_that_order(only, expect):
    w = {k: 0.0 for k in RerankBlend.ORDERS} | {only: 1.0}
    assert RerankBlend(c=1, **w).order(["a", "b", "c"], ["c", "a", "b"], [], []) == expect


def test_rerank_blend_from_manifest():
    assert RerankBlend.from_manifest({}) is None
    assert RerankBlend.from_manifest({"name": "x"}) is None
    b = RerankBlend.from_manifest({"blend": {"c": 1, "weights": {
        "cross_encoder": 0.8, "fused": 0, "lexical": 1, "vector": 0.6}, "fitted_on": "..."}})
    assert b == RerankBlend(1, 0.8, 0.0, 1.0, 0.6)
    assert "weighted RRF c=1" in b.describe() and "cross-encoder 0.8" in b.describe()
    with pytest.raises(ValueError, match="malformed blend"):
        RerankBlend.from_manifest({"blend": {"c": 1, "weights": {"fused": 1}}})
    with pytest.raises(ValueError, match=">= 0"):
        RerankBlend.from_manifest({"blend": {"c": 1, "weights": {
            "cross_encoder": -1, "fused": 0, "lexical": 1, "vector": 0.6}}})
