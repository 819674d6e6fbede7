"""What every fieldqa screen shares: focus keys with ids, access to the app state."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.screen import Screen

if TYPE_CHECKING:
    from tui.app import FieldQAApp


class FieldQAScreen(Screen):
    BINDINGS = [
        Binding("tab", "app.focus_next", "Next pane", id="focus_next", show=False),
        Binding("shift+tab", "app.focus_previous", "Previous pane", id="focus_previous", show=False),
    ]

    @property
    def fq(self) -> "FieldQAApp":
        return cast("FieldQAApp", self.app)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:  # the default screen and the Ask screen stay
            self.app.pop_screen()
