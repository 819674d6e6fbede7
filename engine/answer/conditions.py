"""Warnings and restrictions that travel with a claim: those next to it in its passage, those at
the head of its section, and those of the next section when the passage of the most direct answer
points forward to it.

The next section's conditions come with the best claim's passage only, not with each runner-up
passage cited beside it: they govern the steps of that next section, which the answer shows for
its main passage's procedure, never for a runner-up's. Measured (2026-12-04, train splits of
klipper-manuals, WLED, ZMK, Meshtastic and device-pdfs, 339 answers): the conditions that travel
beside the claims (those next to them and the next section's) were 315 claims, .36 of them citing
a gold passage; limited to the best passage, 293 and .38. Claims per answer 7.85 / 6.77 / 6.71 ->
7.69 / 6.70 / 6.44 on the first three sets (Meshtastic and device-pdfs unchanged), the share
citing gold .549 / .480 / .389 -> .555 / .483 / .405: about 38 claims fewer for 4 gold ones;
cited, first claim and abstention unchanged."""

from __future__ import annotations

from engine.answer.scoring import Assessment, ScoredUnit, _score_extra, _unscored
from engine.lang.cues import refers_forward
from engine.types import Chunk

NEAR_UNITS = 2  # a condition travels when within this many units of a chosen one
MAX_CONDITIONS = 4
MAX_FORWARD_CONDITIONS = 2
MAX_SECTION_CONDITIONS = 2  # conditions from the head of the chosen units' sections


def _conditions(a: Assessment, chosen: list[ScoredUnit], question: str, library) -> list[ScoredUnit]:
    """Warnings and restrictions that travel with the chosen units: those next to them, those
    at the head of their section (a "lock out the breaker first" above the step it governs,
    even in an earlier chunk of the section), and the next section's when the best claim's section
    points forward."""
    by_chunk: dict[str, list[ScoredUnit]] = {}
    for s in a.units:
        by_chunk.setdefault(s.chunk.id, []).append(s)
    out: list[ScoredUnit] = []
    seen = {s.key for s in chosen}
    for s in chosen:
        near = [o for o in by_chunk.get(s.chunk.id, [])
                if o.condition and not o.flagged and abs(o.unit.order - s.unit.order) <= NEAR_UNITS
                and o.key not in seen]
        for o in sorted(near, key=lambda o: -o.score)[:2]:
            out.append(o)
            seen.add(o.key)
    for o in _section_head_conditions(chosen, by_chunk, library, seen):
        out.append(o)
        seen.add(o.key)
    if chosen:  # the best claim's section, when it points forward, brings the next section's conditions
        out += _forward_conditions(chosen[0], by_chunk, question, library, a, seen)
    return out[:MAX_CONDITIONS + MAX_FORWARD_CONDITIONS + MAX_SECTION_CONDITIONS]


def _forward_conditions(s: ScoredUnit, by_chunk: dict[str, list[ScoredUnit]], question: str, library,
                        a: Assessment, seen: set[tuple[str, int]]) -> list[ScoredUnit]:
    """When ``s``'s section points forward ("the next section must be completed first"): the
    statement that does, and the next section's conditions, ``MAX_FORWARD_CONDITIONS`` at most."""
    section = _section_units(s.chunk, by_chunk, library)
    pointer = next((o for o in section if refers_forward(o.unit.text) and not o.flagged), None)
    if pointer is None:
        return []
    out = []
    if pointer.key not in seen:
        out.append(pointer)
        seen.add(pointer.key)
    nxt = _next_section_chunk(s.chunk, library)
    if nxt is None:
        return out
    cands = _score_extra(question, nxt, s.rank, library, by_chunk, a.query_vector)
    conds = [o for o in cands if o.condition and not o.flagged and o.key not in seen]
    for o in sorted(conds, key=lambda o: -o.score)[:MAX_FORWARD_CONDITIONS]:
        out.append(o)
        seen.add(o.key)
    return out


def _section_head_conditions(chosen: list[ScoredUnit], by_chunk: dict[str, list[ScoredUnit]], library,
                             seen: set[tuple[str, int]]) -> list[ScoredUnit]:
    """For each chosen unit, the first condition stated before it in its section (its own chunk
    or an earlier chunk of the same section), ``MAX_SECTION_CONDITIONS`` in all."""
    out: list[ScoredUnit] = []
    for s in chosen:
        if s.flagged or len(out) >= MAX_SECTION_CONDITIONS:
            continue
        section = [c for c in library.chunks_of(s.chunk.path)
                   if c.section_id == s.chunk.section_id and c.ordinal <= s.chunk.ordinal]
        for c in sorted(section, key=lambda c: c.ordinal):
            units = by_chunk.get(c.id) or _unscored(c, s.rank)
            head = next((o for o in units if o.condition and not o.flagged
                         and (c.id != s.chunk.id or o.unit.order < s.unit.order)), None)
            if head is not None:
                if head.key not in seen:
                    out.append(head)
                    seen.add(head.key)
                break
    return out


def _section_units(chunk: Chunk, by_chunk: dict[str, list[ScoredUnit]], library) -> list[ScoredUnit]:
    """Units of ``chunk`` and of the following chunks of the same section (two at most)."""
    units = list(by_chunk.get(chunk.id, []))
    cur = chunk
    for _ in range(2):
        nxt = library.neighbours(cur.id)[1]
        if nxt is None or nxt.section_id != chunk.section_id or nxt.path != chunk.path:
            break
        units += by_chunk.get(nxt.id) or _unscored(nxt, 0)
        cur = nxt
    return units


def _next_section_chunk(chunk: Chunk, library) -> Chunk | None:
    cur = chunk
    for _ in range(4):
        nxt = library.neighbours(cur.id)[1]
        if nxt is None or nxt.path != chunk.path:
            return None
        if nxt.section_id != chunk.section_id:
            return nxt
        cur = nxt
    return None
