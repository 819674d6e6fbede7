"""Conflicting statements among the claims, the rest of the context and the same section in
other versions of the answered document (engine.answer.conflicts compares them).

Other versions are looked up under the query's eligibility rule: a version it excludes only
for being superseded may be a side of a conflict warning (cited, never a claim); any other
excluded version never appears. A unit of a versioned section whose value changed becomes a
claim even when another unit of the section scored higher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from engine.answer.conflicts import find_conflicts, statement, values_in
from engine.answer.scoring import Assessment, ScoredUnit
from engine.lang.cues import injection_reason
from engine.lang.units import Unit, split_units
from engine.search.eligibility import Eligibility
from engine.types import Chunk, Conflict, DocumentMeta

CLAIM_KINDS = ("sentence", "list_item", "table_row")


class MetaCache:
    """``library.meta_of`` per document path, looked up once per answer."""

    def __init__(self, library):
        self.library = library
        self.data: dict[str, DocumentMeta] = {}

    def __call__(self, chunk: Chunk) -> DocumentMeta:
        if chunk.path not in self.data:
            self.data[chunk.path] = self.library.meta_of(chunk)
        return self.data[chunk.path]


@dataclass(slots=True)
class VersionConflicts:
    """What the conflict search found: ``raw`` conflicts whose sides carry provisional per-chunk
    keys (``keys``), the units compared (``units``: unit, chunk, anchor rank) and which of them
    a conflict used (``used``), and the chunks shown inside a warning only (``warning_only``)."""

    raw: list[Conflict]
    keys: dict[str, int]
    units: list[tuple[Unit, Chunk, int]]
    used: set[int] = field(default_factory=set)
    warning_only: set[str] = field(default_factory=set)

    def used_units(self) -> list[tuple[Unit, Chunk, int]]:
        return [self.units[i] for i in sorted(self.used)]

    def renumbered(self, numbers: dict[str, int]) -> list[Conflict]:
        """The conflicts with their sides' citation numbers (``numbers``: chunk id -> n)."""
        by_key = {k: numbers[cid] for cid, k in self.keys.items() if cid in numbers}
        return [Conflict(c.subject, tuple(replace(side, citation=by_key[side.citation]) for side in c.sides))
                for c in self.raw]


def find_version_conflicts(a: Assessment, chosen: list[ScoredUnit], library, rule: Eligibility,
                           meta: MetaCache) -> VersionConflicts:
    """Compare the chosen units with the context and other versions; ``chosen`` gains each unit
    of a versioned section whose value changed."""
    anchors = [s for s in chosen if s.unit.kind in CLAIM_KINDS]
    other_chunks = other_versions(library, [s.chunk for s in anchors], rule)
    anchor_rank = {s.chunk.id: s.rank for s in anchors}
    units = [(s.unit, s.chunk, s.rank) for s in a.units]
    for anchor_id, c in other_chunks:
        units += [(u, c, anchor_rank.get(anchor_id, 99)) for u in split_units(c)]
    found = VersionConflicts([], {}, units,
                             warning_only={c.id for _a, c in other_chunks if not rule.allows(meta(c))})

    def key(c: Chunk) -> int:
        return found.keys.setdefault(c.id, len(found.keys))

    other_st = [(statement(u, c, meta(c), bool(injection_reason(u.text))), key(c)) for u, c, _ in units]
    versioned = {anchor_id for anchor_id, _ in other_chunks}
    chosen_keys = {s.key for s in chosen}
    for s in a.units:
        if (s.chunk.id in versioned and s.key not in chosen_keys and not s.flagged
                and s.unit.kind in CLAIM_KINDS and values_in(s.unit.text)):
            probe = [(statement(s.unit, s.chunk, meta(s.chunk), False), key(s.chunk))]
            if find_conflicts(probe, other_st)[0]:
                chosen.append(s)
                anchors.append(s)
                chosen_keys.add(s.key)
    anchor_st = [(statement(s.unit, s.chunk, meta(s.chunk), bool(s.flagged)), key(s.chunk)) for s in anchors]
    found.raw, found.used = find_conflicts(anchor_st, other_st)
    return found


def other_versions(library, chunks: Sequence[Chunk], rule: Eligibility) -> list[tuple[str, Chunk]]:
    """(anchor chunk id, chunk) for the same section in other versions of each anchor's document,
    only those versions ``rule`` lets be a conflict side (``Eligibility.allows_as_conflict_side``)."""
    out: list[tuple[str, Chunk]] = []
    seen: set[str] = {c.id for c in chunks}
    records = None
    for c in chunks:
        if records is None:
            records = [rec for rec in library.documents() if rule.allows_as_conflict_side(rec.meta)]
        found = []
        for rec in records:
            if rec.meta.doc_id == c.doc_id and rec.path != c.path:
                found += [o for o in library.chunks_of(rec.path) if o.heading_path == c.heading_path]
        for o in found:
            if o.id not in seen:
                seen.add(o.id)
                out.append((c.id, o))
    return out
