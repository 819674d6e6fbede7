"""Context assembly: the passages an answer is built from, after reranking.

1. Walk the reranked candidates in order and drop duplicates:
   - by identity (the chunk id encodes source, content version and location);
   - by exact text (whitespace-normalised) from another file or version, *unless* the
     later passage carries a restriction (device models, team visibility) that the kept
     one lacks: a restricted passage is never dropped for an unrestricted twin.
2. Keep the first ``final`` survivors (the primaries), within ``token_budget``
   (the first one always).
3. Expand, while the budget allows, with the *next* chunk of a primary's document when
   - it is in the same section and holds a condition or warning ("only", "do not",
     "Warnung", "注意"…), since a step cut from its caveat is a wrong answer; or
   - it starts the next section, that section is short (<= ``SHORT_SECTION_TOKENS``)
     and a sibling of the primary's section (e.g. a "Note" right after a procedure).
   Expansions come after all primaries, so primaries keep their ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.lang.cues import is_condition as has_condition  # one list of condition cues
from engine.types import Chunk, DocumentMeta

__all__ = ["ContextItem", "assemble_context", "has_condition", "SHORT_SECTION_TOKENS"]

SHORT_SECTION_TOKENS = 80


@dataclass(frozen=True, slots=True)
class ContextItem:
    chunk: Chunk
    score: float
    role: Literal["primary", "expansion"]
    anchor: str = ""  # for an expansion: the primary's chunk id


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _restrictions(meta: DocumentMeta) -> frozenset[tuple[str, str]]:
    return frozenset({("model", m.casefold()) for m in meta.models}
                     | {("team", t.casefold()) for t in meta.visibility})


def _tokens(c: Chunk) -> int:
    return c.tokens if c.tokens > 0 else max(1, len(c.text) // 4)


def assemble_context(
    ranked: Sequence[tuple[Chunk, float]],
    *,
    final: int,
    token_budget: int,
    meta_of: Callable[[Chunk], DocumentMeta],
    next_chunk: Callable[[Chunk], Chunk | None],
    section_tokens: Callable[[Chunk], int] | None = None,
) -> list[ContextItem]:
    """Primaries then expansions, duplicates removed; see the module docstring."""
    kept: list[ContextItem] = []
    seen_ids: set[str] = set()
    seen_text: dict[str, list[frozenset]] = {}  # normalised text -> restrictions of kept twins
    used = 0
    for chunk, score in ranked:
        if len(kept) >= final:
            break
        if chunk.id in seen_ids:
            continue
        key = _norm(chunk.text)
        mine = _restrictions(meta_of(chunk))
        twins = seen_text.get(key)
        if twins is not None and any(mine <= theirs for theirs in twins):
            continue
        cost = _tokens(chunk)
        if kept and used + cost > token_budget:
            continue  # a shorter later passage may still fit
        kept.append(ContextItem(chunk, score, "primary"))
        seen_ids.add(chunk.id)
        seen_text.setdefault(key, []).append(mine)
        used += cost
    expansions: list[ContextItem] = []
    for item in list(kept):
        nxt = next_chunk(item.chunk)
        if nxt is None or nxt.id in seen_ids or nxt.path != item.chunk.path:
            continue
        same_section = nxt.section_id == item.chunk.section_id
        if same_section:
            wanted = has_condition(nxt.text)
        else:
            size = section_tokens(nxt) if section_tokens is not None else _tokens(nxt)
            wanted = (size <= SHORT_SECTION_TOKENS
                      and nxt.heading_path[:-1] == item.chunk.heading_path[:-1])
        cost = _tokens(nxt)
        if wanted and used + cost <= token_budget:
            expansions.append(ContextItem(nxt, item.score, "expansion", item.chunk.id))
            seen_ids.add(nxt.id)
            used += cost
    return kept + expansions
