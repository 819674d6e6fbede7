"""Reciprocal rank fusion: merge ranked lists by rank alone, never by raw score."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["RerankBlend", "blend_orders", "fuse_rrf"]

T = TypeVar("T", bound=Hashable)


def fuse_rrf(
    rankings: Sequence[Sequence[str]],
    *,
    c: int = 60,
    window: int | None = None,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings (ids, best first) into ``[(id, score)]``, best first.

    score(id) = sum over rankings of weight / (c + rank), ranks from 1; an id
    listed twice in one ranking counts once, at its best rank. Ties are broken
    by the best single rank the id reached, then by first appearance (ranking
    order, then position). ``window`` keeps only the first ``window`` results.
    ``weights`` (one per ranking, default all 1.0) gives weighted RRF; a ranking
    with weight 0 contributes nothing but its ids still appear if listed elsewhere.
    """
    if c < 0:
        raise ValueError(f"c must be >= 0, got {c}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be >= 0")
    score: dict[str, float] = {}
    best: dict[str, int] = {}
    first: dict[str, int] = {}
    order = 0
    for ranking, w in zip(rankings, weights):
        seen: set[str] = set()
        for rank, id_ in enumerate(ranking, start=1):
            if id_ in seen:
                continue
            seen.add(id_)
            if id_ not in first:
                first[id_] = order
                order += 1
                score[id_] = 0.0
                best[id_] = rank
            elif rank < best[id_]:
                best[id_] = rank
            score[id_] += w / (c + rank)
    # round so that sums of the same terms in another order still tie exactly
    fused = sorted(score, key=lambda i: (-round(score[i], 12), best[i], first[i]))
    if window is not None:
        fused = fused[: max(window, 0)]
    return [(i, score[i]) for i in fused]


def blend_orders(fused: Sequence[T], reranked: Sequence[T], c: int) -> list[T]:
    """The rerank stage's order: RRF (this ``c``) of the fused order and the cross-encoder's
    order of the same candidates, ties to the fused order; ``c < 0``: the cross-encoder's alone."""
    if c < 0:
        return list(reranked)
    return [x for x, _ in fuse_rrf([fused, reranked], c=c)]


@dataclass(frozen=True, slots=True)
class RerankBlend:
    """The rerank stage's order as a weighted RRF of four orders of the same candidates:
    the cross-encoder's, the fused one, and the lexical and vector branches' (their ranks in
    the full branch lists; a candidate one branch did not return gets nothing from it).

    The weights are learned with the cross-encoder on held-out train questions
    (models/reranker/select_blend.py) and travel in its manifest (``"blend"``): they are a
    fact about that model, not a setting.  Still ranks only, never raw scores.
    """

    c: int
    cross_encoder: float
    fused: float
    lexical: float
    vector: float

    ORDERS = ("cross_encoder", "fused", "lexical", "vector")

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> RerankBlend | None:
        """The ``"blend"`` entry of a model manifest, or None when it has none (then the
        pipeline falls back to ``blend_orders`` with the configured c)."""
        b = manifest.get("blend")
        if not isinstance(b, Mapping):
            return None
        w = b.get("weights") or {}
        try:
            out = cls(int(b["c"]), *(float(w[k]) for k in cls.ORDERS))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"malformed blend in the model manifest: {b!r}") from e
        if out.c < 0 or any(getattr(out, k) < 0 for k in cls.ORDERS):
            raise ValueError(f"blend c and weights must be >= 0: {b!r}")
        return out

    def order(self, fused: Sequence[T], reranked: Sequence[T], lexical: Sequence[T], vector: Sequence[T]) -> list[T]:
        """The candidates (``fused``, in fused order) in blended order (ties as in ``fuse_rrf``)."""
        keep = set(fused)
        ranked = fuse_rrf([list(fused), list(reranked), list(lexical), list(vector)], c=self.c,
                          weights=[self.fused, self.cross_encoder, self.lexical, self.vector])
        return [x for x, _ in ranked if x in keep]

    def describe(self) -> str:
        return (f"weighted RRF c={self.c}: cross-encoder {self.cross_encoder:g}, fused {self.fused:g}, "
                f"lexical {self.lexical:g}, vector {self.vector:g}")
