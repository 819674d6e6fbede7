"""Which units become claims: the best unit of each close passage, then the closest
runners-up, plus the best unit for each part of a compound question."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from engine.answer.scoring import Assessment, ScoredUnit
from engine.answer.units import _CACHE, _embed_text
from engine.config import Config
from engine.lang.cues import asks
from engine.lang.words import terms

MARGIN = 0.03  # claims: units within this of the best score
# passages cited: a passage whose best unit is within the margin of the best one. The margins
# trade passages shown for answers that cite a gold passage; on the klipper-manuals train
# questions (95 answerable; answers over a grid of both margins), passage / runner-up margins
# of 0 / .02 cite a gold passage for .674 of them with 1.5 passages an answer (share of cited
# passages that are gold .60), .04 / .04 .758 with 2.5, .065 / .095 .789 with 3.3 (.40), and
# wider ones add passages, not hits (.13 / .13: .811 with 3.9): these sit where the gain stops.
# The runner-up margin (the second passage cited within .095) no longer cites a gold passage for
# any answer the passage margin misses (2026-12-04, the train splits of klipper-manuals, WLED,
# ZMK, device-pdfs and Meshtastic, 339 answers: cited and first claim identical without it) and
# added 49 claims, 7 of them citing gold (.14; the answers' claims cite gold for about .5);
# without it the share of claims citing gold rises on every train split (klipper .555 -> .558,
# WLED .483 -> .496, ZMK .405 -> .420, device-pdfs .576 -> .581, Meshtastic .487 -> .490).
# Narrower still costs answers that cite gold on the same splits (kept as they are): a passage
# margin of .05 cites gold for 2 answers fewer of 361 (ZMK, Meshtastic), the claims' gold share
# .558 / .496 / .420 / .581 / .490 -> .583 / .582 / .450 / .627 / .529; three passages at most
# instead of four, 6 answers fewer (klipper 2, WLED 2, ZMK 1, Meshtastic 1)
PASSAGE_MARGIN = 0.065
MAX_PASSAGES = 4
_COMPOUND = re.compile(
    r"\s*(?:,\s*)?\b(?:and|as well as|also|et|ainsi que|und|sowie)\b\s*|\s*(?:및|그리고|以及|和|并且|與|和)\s*|[;?？]\s*(?=\S)",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The parts of a compound question (one part when it is not compound)."""
    parts = [p.strip(" ,.?？") for p in _COMPOUND.split(question)]
    parts = [p for p in parts if len(terms(p)) >= 2]
    return parts if len(parts) >= 2 else [question]


def _choose(question: str, a: Assessment, library, config: Config) -> list[ScoredUnit]:
    """The claims' units (``select_units``), and one for each part of a compound question. A
    sentence of the manual that asks a question ("Should I enable it on my printer?") is no
    claim: it echoes the question, the answer is elsewhere."""
    pool = [s for s in a.units if s.unit.kind != "sentence" or (len(s.unit.text) >= 3 and not asks(s.unit.text))]
    limit = max(1, config.answer.max_claims)
    chosen = select_units(pool, limit)
    ranked = sorted(pool, key=lambda s: -s.score)
    if chosen and all(s.flagged for s in chosen):  # never answer from an instruction alone
        clean = [s for s in ranked if not s.flagged]
        if clean:
            chosen = [clean[0]] + chosen
    parts = question_parts(question)
    if len(parts) > 1:
        pv = np.asarray(library.embedder.embed_queries(parts), dtype=np.float32)
        uv = _CACHE.passages(library, [_embed_text(s.unit, s.chunk) for s in a.units])
        per_part = uv @ pv.T  # [units, parts]
        for j in range(len(parts)):
            order = np.argsort(-per_part[:, j])
            for i in order:
                s = a.units[int(i)]
                if not s.flagged:
                    if s not in chosen:
                        chosen.append(s)
                    break
    return chosen


def select_units(pool: Sequence[ScoredUnit], limit: int) -> list[ScoredUnit]:
    """The claims' units: the best unit of each relevant passage, then the closest runners-up.

    A passage is relevant when its best clean unit scores within ``PASSAGE_MARGIN`` of the
    overall best; at most ``MAX_PASSAGES`` of them, by score. Other units of those passages
    within ``MARGIN`` of the best fill the remaining room, up to ``limit`` in all.
    """
    if not pool:
        return []
    ranked = sorted(pool, key=lambda s: -s.score)
    best = ranked[0].score
    per_passage: dict[str, ScoredUnit] = {}
    for s in ranked:
        if not s.flagged and s.chunk.id not in per_passage:
            per_passage[s.chunk.id] = s
    chosen: list[ScoredUnit] = []
    for i, s in enumerate(per_passage.values()):
        gap = best - s.score
        if len(chosen) < min(limit, MAX_PASSAGES) and (i == 0 or gap <= PASSAGE_MARGIN):
            chosen.append(s)
    passages = {s.chunk.id for s in chosen}
    for s in ranked:
        if len(chosen) >= limit or s.score < best - MARGIN:
            break
        if s not in chosen and s.chunk.id in passages:
            chosen.append(s)
    return chosen


def left_out(a: Assessment, shown: Sequence[ScoredUnit]) -> int:
    """Units as close to the best as the claims (within ``MARGIN``), in the passages the answer
    cites, that it does not show (the claim cap, ``answer.max_claims``): it says they are there."""
    units = [s for s in a.units if not s.flagged]
    if not units or not shown:
        return 0
    best = max(s.score for s in units)
    cited = {s.chunk.id for s in shown}
    return sum(1 for s in units if s.score >= best - MARGIN and s.chunk.id in cited and s not in shown)
