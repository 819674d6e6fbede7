"""A banner naming what the cited documents disagree on, side by side."""

from __future__ import annotations

from typing import Sequence

from textual.content import Content
from textual.widgets import Static

from engine.types import Conflict
from tui.widgets.literal import visible


def conflict_content(conflicts: Sequence[Conflict]) -> Content:
    parts: list[str | tuple[str, str]] = []
    for i, conflict in enumerate(conflicts):
        if i:
            parts.append("\n")
        parts.append((f"⚠ Conflict: {visible(conflict.subject)}", "bold"))
        for side in conflict.sides:
            date = side.date.isoformat() if side.date else "undated"
            models = f" · {', '.join(side.models)}" if side.models else ""
            parts.append(f"\n  [{side.citation}] v{visible(side.version)} · {date} · ")
            parts.append((side.status, "bold" if side.status == "active" else "italic"))
            parts.append(visible(models) + ": ")
            parts.append((visible(side.value), "bold"))
    return Content.assemble(*parts)


class ConflictBanner(Static):
    DEFAULT_CSS = """
    ConflictBanner { display: none; height: auto; padding: 0 1; margin-bottom: 1; }
    ConflictBanner.-shown { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)

    def show_conflicts(self, conflicts: Sequence[Conflict]) -> None:
        self.set_class(bool(conflicts), "-shown")
        self.update(conflict_content(conflicts) if conflicts else "")
