"""What the TUI remembers between runs: question history, the last filters, the theme.

One small JSON file under the user's state folder (platformdirs), written atomically (a
temporary file, then a rename). A missing or unreadable file means a fresh start, never an
error: the state is a convenience, the manuals and the index are what matter.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import platformdirs

from engine.config import FilterConfig

__all__ = ["UiState", "default_state_path", "load_state", "save_state"]

MAX_HISTORY = 500


@dataclass(slots=True)
class UiState:
    history: list[str] = field(default_factory=list)  # oldest first
    filters: FilterConfig | None = None
    theme: str = ""


def default_state_path() -> Path:
    return Path(platformdirs.user_state_dir("fieldqa")) / "tui-state.json"


def load_state(path: Path | None) -> UiState:
    if path is None or not path.is_file():
        return UiState()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        history = [q for q in data.get("history", []) if isinstance(q, str) and q.strip()][-MAX_HISTORY:]
        f = data.get("filters")
        filters = None
        if isinstance(f, dict):
            filters = FilterConfig(include_superseded=bool(f.get("include_superseded", False)),
                                   teams=tuple(str(t) for t in f.get("teams", ()) if str(t).strip()),
                                   device_model=str(f.get("device_model", "")), as_of=str(f.get("as_of", "")))
        theme = data.get("theme", "")
        return UiState(history, filters, theme if isinstance(theme, str) else "")
    except (OSError, ValueError, TypeError, AttributeError):
        return UiState()


def save_state(path: Path | None, state: UiState) -> None:
    """Write the state; a failure (read-only home, full disk) is ignored: nothing else depends on it."""
    if path is None:
        return
    data = {"history": state.history[-MAX_HISTORY:], "theme": state.theme,
            "filters": asdict(state.filters) if state.filters is not None else None}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
