"""A build killed with SIGKILL leaves the previous generation usable.

The subprocess cannot take an injected embedder, so it runs the CLI through
``tests/fieldqa_hash.py`` (the test embedder), slowed down per passage so the kill lands in the
middle of the embedding phase.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.pipeline import Library
from hash_embedder import HashEmbedder

REPO = Path(__file__).resolve().parent.parent


def _start_index(root: Path, index: Path, tmp: Path) -> tuple[subprocess.Popen, list[bytes]]:
    env = dict(os.environ, FIELDQA_TEST_EMBED_DELAY_MS="40",
               XDG_CONFIG_HOME=str(tmp / "xdg-config"), XDG_DATA_HOME=str(tmp / "xdg-data"),
               PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fieldqa_hash.py"), "index", str(root),
                             "--index", str(index), "--progress"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err: list[bytes] = []

    def pump() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(4096):
            err.append(chunk)

    threading.Thread(target=pump, daemon=True).start()
    return proc, err


def test_sigkill_mid_build_keeps_previous_generation(tmp_path, fast_config):
    root = tmp_path / "lib"
    root.mkdir()
    (root / "base.md").write_text("# Base\n\n## Reset\n\nHold the reset key for ten seconds.\n", encoding="utf-8")
    index = tmp_path / "index"
    lib = Library.open(root, fast_config, index, embedder=HashEmbedder())
    lib.build()
    lib.close()
    for i in range(300):  # ~300 passages x 40 ms: the new build needs ~12 s of embedding
        (root / f"extra{i:03d}.md").write_text(f"# Extra {i}\n\n## Part\n\nFiller passage number {i} about "
                                               f"gaskets and valves.\n", encoding="utf-8")
    proc, err = _start_index(root, index, tmp_path)
    deadline = time.monotonic() + 60
    try:
        while not re.search(rb"embedding chunks: [1-9]", b"".join(err)):  # a batch is in the cache
            assert proc.poll() is None, b"".join(err).decode(errors="replace")
            assert time.monotonic() < deadline, "the build never reached the embedding phase"
            time.sleep(0.05)
        assert proc.poll() is None, "the build finished before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL

    emb = HashEmbedder()
    again = Library.open(root, fast_config, index, embedder=emb)
    try:
        assert again.generation == 1
        assert {d.path for d in again.documents()} == {"base.md"}
        hits = again.search("reset key seconds").hits
        assert hits and hits[0].chunk.path == "base.md"
        assert again.store.embedding_count() > 1  # what the killed build embedded was kept
        again.build()  # and the next build finishes, reusing those embeddings
        from engine.answer.units import unit_texts

        units = {t for c in again.all_chunks() for t in unit_texts(c)}  # embedded after the switch
        assert emb.passages_embedded - len(units) < 300
        assert len(again.documents()) == 301
        gens = [p.name for p in index.iterdir() if p.name.startswith("gen-")]
        assert gens == [f"gen-{again.generation:04d}"]
    finally:
        again.close()
