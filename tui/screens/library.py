"""The library: documents (who may see each; Enter opens one), every ingestion issue in a
scrollable list, re-index with progress, query filters."""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Checkbox, DataTable, Footer, Input, Static

from engine.config import FilterConfig
from engine.ingest.formats import folded
from tui.engine_port import DocumentRow
from tui.screens.base import FieldQAScreen
from tui.widgets.build_status import BuildStatus
from tui.widgets.literal import literal_text


def visible_to(meta) -> Text:
    """Who may see a document: everyone, its teams, or nobody while its access rule is invalid."""
    if "visibility" in meta.invalid:
        return Text("nobody (invalid)", style="bold reverse")
    return literal_text(", ".join(meta.visibility)) if meta.visibility else Text("everyone")


class LibraryScreen(FieldQAScreen):
    SCOPE = "library"
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("r", "reindex", "Re-index", id="reindex"),
        Binding("s", "toggle_superseded", "Include superseded", id="toggle_superseded"),
        Binding("f", "focus_filters", "Edit filters", id="focus_filters"),
    ]

    def compose(self) -> ComposeResult:
        yield Static("", id="library-summary", markup=False)
        yield DataTable(id="documents", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="issues", cursor_type="row", zebra_stripes=True)
        yield BuildStatus(id="reindex-status")
        with Horizontal(id="filters"):
            yield Checkbox("Include superseded", id="include-superseded", compact=True)
            yield Input(placeholder="device model", id="device-model", compact=True)
            yield Input(placeholder="teams (comma-separated)", id="teams", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#documents", DataTable)
        table.add_column("title", width=32)  # long titles are cut here; the path column follows
        table.add_columns("version", "status", "visible to", "lang", "chunks", "issues", "date", "path")
        self.query_one("#issues", DataTable).add_columns("", "file", "reason")
        f = self.fq.filters
        self.query_one("#include-superseded", Checkbox).value = f.include_superseded
        self.query_one("#device-model", Input).value = f.device_model
        self.query_one("#teams", Input).value = ", ".join(f.teams)
        for inp in self.query(Input):
            inp.cursor_blink = self.fq.cursor_blink
        self.show_documents(self.fq.documents)
        if self.fq.building:
            self.query_one(BuildStatus).add_class("-active")
        table.focus()

    def show_documents(self, documents: Sequence[DocumentRow]) -> None:
        table = self.query_one("#documents", DataTable)
        table.clear()
        issues = []
        for d in documents:
            m = d.meta
            title = literal_text(m.title)
            title.truncate(32, overflow="ellipsis")
            table.add_row(
                title, literal_text(m.version),
                Text(m.status, style="bold" if m.status == "active" else "italic"),
                visible_to(m), literal_text(m.language or "?"), Text(str(d.chunks)),
                Text(str(len(d.issues)) if d.issues else ""),
                Text(m.date.isoformat() if m.date else "—"), literal_text(d.path), key=d.path,
            )
            issues.extend(d.issues)
        issues = folded(list(dict.fromkeys((*issues, *self.fq.ingest_issues))))
        chunks = sum(d.chunks for d in documents)
        self.query_one("#library-summary", Static).update(
            f"{len(documents)} documents · {chunks} chunks · {len(issues)} ingestion issues"
            " · r re-index · s superseded · f filters"
        )
        listed = self.query_one("#issues", DataTable)
        listed.clear()
        for i in issues:
            listed.add_row(Text(i.severity, style="bold" if i.severity == "skipped" else ""),
                           literal_text(i.path), literal_text(i.reason))
        listed.display = bool(issues)

    @on(DataTable.RowSelected, "#documents")
    def open_document(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.fq.open_document(str(event.row_key.value))

    def action_reindex(self) -> None:
        self.fq.reindex()

    def action_toggle_superseded(self) -> None:
        box = self.query_one("#include-superseded", Checkbox)
        box.value = not box.value

    def action_focus_filters(self) -> None:
        self.query_one("#device-model", Input).focus()

    @on(Checkbox.Changed)
    @on(Input.Changed)
    def filters_changed(self) -> None:
        teams = tuple(t.strip() for t in self.query_one("#teams", Input).value.split(",") if t.strip())
        self.fq.set_filters(
            FilterConfig(
                include_superseded=self.query_one("#include-superseded", Checkbox).value,
                teams=teams,
                device_model=self.query_one("#device-model", Input).value.strip(),
                as_of=self.fq.filters.as_of,
            )
        )
