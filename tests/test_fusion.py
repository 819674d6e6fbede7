"""Reciprocal rank fusion: golden values computed by hand, ties, duplicates, window."""

from __future__ import annotations

import pytest

from engine.fusion import fuse_rrf


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
