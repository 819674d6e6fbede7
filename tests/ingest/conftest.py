"""Fixtures for the ingestion tests (helpers live in ingest_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    root.mkdir()
    return root
