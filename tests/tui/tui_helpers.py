"""Helpers for the TUI tests: the app on the fake engine, waiting for workers, asking."""

from __future__ import annotations

import asyncio

from fake_engine import FakeEngine
from textual.worker import WorkerState

from engine.config import Config
from tui.app import FieldQAApp


def make_app(engine: FakeEngine | None = None, config: Config | None = None) -> FieldQAApp:
    """The app on a fake engine, with default config (never the user's) and no cursor blink."""
    engine = engine if engine is not None else FakeEngine()
    return FieldQAApp(lambda: engine, config or Config(), library_name="samples", cursor_blink=False)


async def settle(pilot, timeout: float = 10.0) -> None:
    """Let every worker finish (or fail, or be cancelled) and its messages be handled."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        assert loop.time() < deadline, f"workers still running: {list(app.workers)}"
        await pilot.pause(0.01)
    await pilot.pause()
    await pilot.pause()


async def ask(pilot, question: str) -> None:
    await settle(pilot)
    await pilot.press("slash")
    pilot.app.ask_screen.query_one("#question").value = question
    await pilot.press("enter")
    await settle(pilot)


async def open_citation(pilot, question: str = "lid torque", n: int = 1):
    """Ask ``question``, open citation [n]; returns the viewer screen."""
    await ask(pilot, question)
    await pilot.press(str(n))
    await settle(pilot)
    return pilot.app.screen
