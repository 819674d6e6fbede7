"""Which chunks a query may see: a hard filter applied inside both retrieval branches.

Rules (a chunk inherits its document's metadata):

- a document whose visibility, status or date could not be read (``DocumentMeta.invalid``)
  is excluded for everyone, whatever the filters: invalid metadata fails closed;
- superseded versions are excluded unless ``include_superseded``;
- a document with a non-empty ``visibility`` is seen only by one of those teams;
- with a ``device_model`` set, a document that lists ``models`` must list it
  (case-insensitive); a document that lists none applies to every model;
- with ``as_of`` set, a dated document must be dated on or before it (undated ones pass).

The mask is computed once per distinct document, then spread to rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date as Date

import numpy as np

from engine.config import FilterConfig
from engine.types import DocumentMeta

__all__ = ["Eligibility"]


@dataclass(frozen=True, slots=True)
class Eligibility:
    include_superseded: bool = False
    teams: tuple[str, ...] = ()
    device_model: str = ""
    as_of: Date | None = None

    @classmethod
    def from_filters(cls, f: FilterConfig) -> Eligibility:
        as_of = None
        if f.as_of:
            try:
                as_of = Date.fromisoformat(f.as_of)
            except ValueError as e:
                raise ValueError(f"filters.as_of: {f.as_of!r} is not an ISO date (YYYY-MM-DD)") from e
        return cls(bool(f.include_superseded), tuple(t for t in f.teams if t), f.device_model.strip(), as_of)

    def reason(self, meta: DocumentMeta) -> str | None:
        """Why a document's chunks are excluded, or None when they are eligible."""
        if meta.invalid:
            return f"invalid metadata ({', '.join(meta.invalid)}): fix the file and re-index"
        if meta.status == "superseded" and not self.include_superseded:
            return "superseded version"
        if meta.visibility and not {t.casefold() for t in meta.visibility} & {t.casefold() for t in self.teams}:
            return f"restricted to teams {', '.join(meta.visibility)}"
        if self.device_model and meta.models and self.device_model.casefold() not in {
                m.casefold() for m in meta.models}:
            return f"applies to models {', '.join(meta.models)}, not {self.device_model}"
        if self.as_of is not None and meta.date is not None and meta.date > self.as_of:
            return f"dated after as_of ({meta.date.isoformat()} > {self.as_of.isoformat()})"
        return None

    def allows(self, meta: DocumentMeta) -> bool:
        return self.reason(meta) is None

    def allows_as_conflict_side(self, meta: DocumentMeta) -> bool:
        """May another version of an answered document be shown inside a version-conflict
        warning? Only when the one rule it breaks is being superseded: a restricted, dated-out,
        other-model or invalid version never reaches the user, not even as a warning."""
        return self.allows(meta) or (
            meta.status == "superseded" and replace(self, include_superseded=True).allows(meta))

    def mask(self, metas: Sequence[DocumentMeta]) -> np.ndarray:
        """Boolean array: ``mask[row]`` is true when the chunk at ``row`` is eligible."""
        verdict: dict[int, bool] = {}
        out = np.empty(len(metas), dtype=bool)
        for row, meta in enumerate(metas):
            key = id(meta)
            ok = verdict.get(key)
            if ok is None:
                ok = verdict[key] = self.allows(meta)
            out[row] = ok
        return out

    def describe(self) -> tuple[str, ...]:
        rules = ["superseded versions included" if self.include_superseded else "superseded versions excluded",
                 f"teams: {', '.join(self.teams)}" if self.teams else "teams: none (restricted documents hidden)"]
        if self.device_model:
            rules.append(f"device model: {self.device_model}")
        if self.as_of:
            rules.append(f"as of {self.as_of.isoformat()}")
        return tuple(rules)
