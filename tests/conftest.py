"""Shared fixtures: a fast config without model files, a hashing test embedder, small libraries.

``HashEmbedder`` (engine.pipeline) is a deterministic stand-in for the ONNX embedder; it
counts its calls so tests can assert what was (not) embedded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import Config
from engine.pipeline import Library
from hash_embedder import HashEmbedder


def _write_library(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` (UTF-8, ``\\n`` line ends)."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def write_library():
    """``write_library(root, {relative path: text}) -> root``."""
    return _write_library


@pytest.fixture
def hash_cli(monkeypatch):
    """The CLI, run in this process, builds the test embedder instead of loading model files
    (subprocess tests run ``tests/fieldqa_hash.py`` for the same)."""
    import engine.models

    monkeypatch.setattr(engine.models, "Embedder", lambda *a, **k: HashEmbedder())


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def fast_config(tmp_path: Path) -> Config:
    """Defaults, but the rerank stage on with no model folder (so it is degraded) and indexes under tmp_path."""
    return Config().replace(**{"models.dir": str(tmp_path / "no-models"), "index_dir": str(tmp_path / "indexes"),
                               "retrieval.rerank": True})


@pytest.fixture
def open_library(tmp_path: Path, fast_config: Config, hash_embedder: HashEmbedder):
    """``open_library(root, **kw)`` -> Library on ``tmp_path/index`` with the hash embedder."""
    opened: list[Library] = []

    def _open(root: Path, **kw) -> Library:
        kw.setdefault("embedder", hash_embedder)
        config = kw.pop("config", fast_config)
        index_dir = kw.pop("index_dir", tmp_path / "index")
        lib = Library.open(root, config, index_dir, **kw)
        opened.append(lib)
        return lib

    yield _open
    for lib in opened:
        lib.close()

