"""The rerank stage: the cross-encoder over the top fused candidates, its order blended with the
fused and branch orders (engine.search.fusion), on a worker thread with a time limit.

``Reranker`` owns the model's state, typed: a loaded ``CrossEncoder``, or the reason there is
none (``unavailable``), loaded on first use. It remembers the last pairs' logits, so the
answerability features of an answer (engine.answer.abstention) reuse what its rerank stage scored. Switched off (``retrieval.rerank = false``), without
a model, on error or past ``rerank_timeout_ms`` the fused order is kept and the stage's status
says ``off`` or ``degraded``, never silently.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.config import Config
from engine.search.fusion import blend_orders
from engine.types import Chunk, StageStatus

__all__ = ["Reranker"]

Pairs = list[tuple[str, float]]
RECENT_PAIRS = 256  # (question, passage) logits remembered: a rerank's 20 are reused by its answer


class Reranker:
    def __init__(self, config: Config, model: Any = None):
        self.config = config
        self._model = model  # a cross-encoder, injected or loaded on first use
        self.unavailable = ""  # why there is no model ('' = not tried yet, or loaded)
        self._lock = threading.Lock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._recent: OrderedDict[tuple[str, str], float] = OrderedDict()  # (question, text) -> logit

    def model(self) -> Any | None:
        """The cross-encoder, loaded on first use; None when unavailable (``unavailable`` says why)."""
        with self._lock:
            if self._model is None and not self.unavailable:
                self._model, self.unavailable = _load(self.config)
            return self._model

    @property
    def status(self) -> str:
        if not self.config.retrieval.rerank:
            return "off: retrieval.rerank = false"
        m = self.model()
        return f"ready: {m.model_id}" if m is not None else f"degraded: {self.unavailable}"

    def checksum(self) -> str | None:
        m = self.model()
        return None if m is None else m.checksum

    def scores(self, question: str, chunks: Sequence[Chunk]) -> np.ndarray | None:
        """The cross-encoder's logits for (question, chunk) pairs, whether or not the stage is on."""
        m = self.model()
        if m is None or not chunks:
            return None
        return self._score(m, question, [c.search_text for c in chunks])

    def _score(self, model: Any, question: str, texts: Sequence[str]) -> np.ndarray:
        """Logits for (question, text) pairs; pairs scored lately are not scored again."""
        with self._lock:
            known = {t: self._recent[(question, t)] for t in texts if (question, t) in self._recent}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            logits = np.asarray(model.score(question, missing), dtype=np.float64)
            with self._lock:
                for t, v in zip(missing, logits):
                    known[t] = self._recent[(question, t)] = float(v)
                while len(self._recent) > RECENT_PAIRS:
                    self._recent.popitem(last=False)
        return np.array([known[t] for t in texts], dtype=np.float64)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def rerank(self, question: str, cands: Sequence[tuple[Chunk, float]],
               branches: tuple[Sequence[str], Sequence[str]] = ((), ()),
               name: str = "fused") -> tuple[Pairs, str, StageStatus]:
        """``cands`` in the order of the stage before (``name`` names it: "fused", "learned");
        ``branches``: the lexical and vector id lists (for a model that carries a learned blend,
        engine.search.fusion.RerankBlend)."""
        kept = [(c.id, s) for c, s in cands]
        off, degraded = StageStatus.OFF, StageStatus.DEGRADED
        if not cands:
            return kept, "", StageStatus.RAN
        if not self.config.retrieval.rerank:
            return kept, f"off (retrieval.rerank = false); {name} order kept", off
        model = self.model()
        if model is None:
            return kept, f"degraded: {self.unavailable}; {name} order kept", degraded
        limit_ms = self.config.retrieval.rerank_timeout_ms
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rerank")
        fut = self._pool.submit(self._score, model, question, [c.search_text for c, _ in cands])
        try:
            scores = np.asarray(fut.result(timeout=limit_ms / 1000.0), dtype=np.float64)
        except concurrent.futures.TimeoutError:
            return kept, f"degraded: reranker exceeded {limit_ms} ms; {name} order kept", degraded
        except Exception as e:  # a failing model must not take search down: visible, not silent
            return kept, f"degraded: reranker failed ({type(e).__name__}: {e}); {name} order kept", degraded
        blended, note = self._blend(model, cands, scores, branches)
        return [(cands[i][0].id, float(scores[i])) for i in blended], note, StageStatus.RAN

    def _blend(self, model: Any, cands: Sequence[tuple[Chunk, float]], scores: np.ndarray,
               branches: tuple[Sequence[str], Sequence[str]]) -> tuple[list[int], str]:
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))
        c = self.config.retrieval.rerank_blend_c
        blend = getattr(model, "blend", None) if self.config.retrieval.rerank_learned_blend else None
        note = f"cross-encoder {model.model_id}"
        if c < 0:
            return order, note
        if blend is not None:
            ids = [ch.id for ch, _ in cands]
            at = {cid: i for i, cid in enumerate(ids)}
            blended = [at[cid] for cid in blend.order(ids, [ids[i] for i in order], *branches)]
            return blended, note + f", blended with the fused and branch orders ({blend.describe()})"
        # the candidates come in fused order
        return blend_orders(range(len(cands)), order, c), note + f", blended with the fused order (RRF c={c})"


def _load(config: Config) -> tuple[Any, str]:
    d = config.reranker_dir
    if d is None:
        return None, "no reranker configured (models.reranker = '')"
    if not (d / "model.onnx").is_file():
        return None, f"no reranker model at {d}"
    from engine.models import CrossEncoder, ModelError

    try:
        return CrossEncoder(d, threads=config.models.threads, max_length=config.models.rerank_max_length), ""
    except ModelError as e:
        return None, f"reranker unavailable ({e})"
