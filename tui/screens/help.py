"""Every binding: its id (for `[tui.keymap]`), its keys and what it does."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Static

from tui.commands import key_label
from tui.screens.base import FieldQAScreen


class HelpScreen(FieldQAScreen):
    SCOPE = "help"
    BINDINGS = [Binding("escape", "back", "Back", id="back")]

    def compose(self) -> ComposeResult:
        yield Static(
            "Keys (remap any id in [tui.keymap] of the config; ctrl+p opens the command palette)",
            id="help-title", markup=False,
        )
        yield DataTable(id="bindings", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("where", "id", "keys", "does")
        for info in self.fq.binding_catalogue():
            keys = ", ".join(key_label(self.app, k) for k in info.keys)
            table.add_row(Text(info.scope), Text(info.id), Text(keys), Text(info.description))
        table.focus()
