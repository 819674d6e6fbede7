"""The TUI on the real engine, models and samples (slow: builds an index first)."""

from __future__ import annotations

import time

import pytest
from tui_helpers import settle

from engine.config import REPO_ROOT, Config
from tui.app import FieldQAApp
from tui.engine_port import library_opener
from tui.screens.viewer import ViewerScreen
from tui.widgets.passage_view import PassageView

SAMPLES = REPO_ROOT / "samples"
ANSWER_WITHIN_S = 20.0  # after the models and index are loaded; generous for a busy 2-core CI box


@pytest.mark.slow
async def test_cited_answer_on_samples(tmp_path):
    cfg = Config().replace(**{"index_dir": str(tmp_path / "indexes")})
    assert (cfg.embedder_dir / "model.onnx").exists(), f"model missing: build {cfg.embedder_dir} first"
    app = FieldQAApp(library_opener(SAMPLES, cfg, None), cfg, library_name="samples", cursor_blink=False)
    async with app.run_test(size=(100, 30)) as pilot:
        deadline = time.monotonic() + 900
        status = ""
        while "· ready ·" not in status:  # opens the models, then builds the empty index
            assert time.monotonic() < deadline, status
            await settle(pilot, timeout=900)
            await pilot.pause(0.1)
            status = app.ask_screen.query_one("#status").visual.plain
        start = time.monotonic()
        app.ask("What does the Kestrel KX-7 error ERR_CACHE_STALE mean?")
        await settle(pilot, timeout=ANSWER_WITHIN_S)
        elapsed = time.monotonic() - start
        answer = app.last_answer
        assert answer is not None and not answer.abstained, app.ask_screen.answer_view.body.visual.plain
        assert elapsed < ANSWER_WITHIN_S
        body = app.ask_screen.answer_view.body.visual.plain
        assert "[1]" in body
        assert any(c.path == "en/kestrel-manual-v2.md" for c in answer.citations)
        await pilot.press("escape", "1")  # leave the question box, open citation [1]
        await settle(pilot)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.query_one(PassageView).passage_text.strip()
