"""Snapshots of the main screens on the fake engine, at 80x24 and 120x40.

Regenerate after an intended change with `pytest tests/tui --snapshot-update`
and review the SVGs in `__snapshots__/`.
"""

from __future__ import annotations

import pytest
from tui_helpers import ask, make_app, settle

SIZES = [(80, 24), (120, 40)]


def steps(question: str | None, *keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        if question is not None:
            await ask(pilot, question)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


SCREENS = {
    "ask_answer": steps("What torque for the lid screws?"),
    "not_found": steps("How do I descale the coffee machine?"),
    "passage": steps("What torque for the lid screws?", "1"),
    "passage_markup": steps("console markup codes", "1"),
    "trace": steps("console markup codes", "t"),
    "library": steps(None, "escape", "l"),
    "help": steps(None, "f1"),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", list(SCREENS))
def test_screen(snap_compare, name, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=SCREENS[name])
