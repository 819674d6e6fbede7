"""Fitted weights shipped as JSON (engine.answer.answerability, engine.search.order): read with
errors that name the file and what is wrong in it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def load_fitted(path: Path, from_json: Callable[[Mapping], T]) -> T:
    """``from_json`` of the file's JSON; ``ValueError`` / ``OSError`` name what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    try:
        return from_json(data)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: {e}") from None
