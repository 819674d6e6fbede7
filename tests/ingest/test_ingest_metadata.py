"""Metadata precedence: defaults < sidecar fieldqa.toml < the file's own values."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from engine.config import ChunkingConfig
from engine.ingest import iter_library
from engine.types import IngestIssue

SIDECAR = """
[[documents]]
glob = "en/*.md"
version = "9"
status = "superseded"
models = ["HY-400"]
visibility = ["field", "lab"]

[[documents]]
glob = "**/*.txt"
doc_id = "from-sidecar"
date = 2025-02-01
"""


def test_sidecar_then_own_values_win(lib: Path) -> None:
    (lib / "fieldqa.toml").write_text(SIDECAR)
    (lib / "en").mkdir()
    (lib / "en" / "own.md").write_text("---\nversion: '2'\nlanguage: en\n---\n# Own Title\n\nText.\n")
    (lib / "en" / "bare.md").write_text("Plain words about the pump and the valve.\n")
    (lib / "notes.txt").write_text("Le moteur est arrêté et la pompe est vidée pour la maintenance.\n")
    docs = {i[0].path: i[0].meta for i in iter_library(lib, ChunkingConfig()) if not isinstance(i, IngestIssue)}
    own, bare, notes = docs["en/own.md"], docs["en/bare.md"], docs["notes.txt"]
    assert (own.version, own.status, own.models, own.title) == ("2", "superseded", ("HY-400",), "Own Title")
    assert (bare.doc_id, bare.title, bare.version, bare.visibility) == ("en/bare", "bare", "9", ("field", "lab"))
    assert (notes.doc_id, notes.date, notes.status, notes.language) == (
        "from-sidecar", dt.date(2025, 2, 1), "active", "fr")
    assert "fieldqa.toml" not in docs


def test_broken_sidecar_is_a_warning_not_a_crash(lib: Path) -> None:
    (lib / "fieldqa.toml").write_text("[[documents]\nglob = ")
    (lib / "a.md").write_text("# A\n\nText.\n")
    items = list(iter_library(lib, ChunkingConfig()))
    assert any(isinstance(i, IngestIssue) and i.path == "fieldqa.toml" and i.severity == "warning" for i in items)
    assert any(not isinstance(i, IngestIssue) and i[0].path == "a.md" for i in items)


def test_sidecar_exclude_globs_are_not_indexed(tmp_path):
    from engine.config import ChunkingConfig
    from engine.ingest import iter_library

    (tmp_path / "fieldqa.toml").write_text('exclude = ["README.md", "tools/*.py"]\n')
    (tmp_path / "README.md").write_text("# About this folder\n\nNot a manual.\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "gen.py").write_text("print('x')\n")
    (tmp_path / "pump.md").write_text("# Pump\n\n## Oil\n\nChange the oil every 500 h.\n")
    items = list(iter_library(tmp_path, ChunkingConfig()))
    paths = [it[0].path if isinstance(it, tuple) else it.path for it in items]
    assert paths == ["pump.md"]
