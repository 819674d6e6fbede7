"""The trace of one question: what each stage kept, and where a passage was lost."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Input, Static

from engine.render import unknown_names_note
from engine.types import Chunk, StageStatus, Trace
from tui.messages import DiagnosisReady, TraceRowsReady
from tui.screens.base import FieldQAScreen
from tui.widgets.literal import literal, literal_text

STAGE_ORDER = ("lexical", "vector", "fused", "order", "rerank", "context")


def ordered_ids(trace: Trace) -> list[str]:
    """Every id seen by any stage, best-surviving first (later stages win)."""
    best: dict[str, tuple[int, int]] = {}
    names = [s.name for s in trace.stages]
    for depth, stage in enumerate(trace.stages):
        later = len(names) - depth  # lower = survived further
        for r in stage.ranked:
            key = (later, r.rank)
            if r.chunk_id not in best or key < best[r.chunk_id]:
                best[r.chunk_id] = key
    return sorted(best, key=lambda cid: best[cid])


class TraceScreen(FieldQAScreen):
    SCOPE = "trace"
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("m", "mark_expected", "Mark as expected", id="mark_expected"),
        Binding("e", "type_expected", "Type expected path:line", id="type_expected"),
    ]

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.ids = ordered_ids(trace)
        self.chunks: dict[str, Chunk] = {}

    def compose(self) -> ComposeResult:
        t = self.trace
        filters = f" · filters: {'; '.join(t.filters)}" if t.filters else ""
        if t.unknown_names:
            filters += f" · {unknown_names_note(t)}"
        yield Static(
            literal(f"Trace: {t.question}\n{t.eligible} of {t.total} chunks eligible{filters}"),
            id="trace-summary", markup=False,
        )
        yield DataTable(id="stages", cursor_type="row")
        yield DataTable(id="ranks", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="expected passage path:line, then enter (or m on a row)",
                    id="expect", compact=True)
        yield Static("", id="diagnosis", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        stages = self.query_one("#stages", DataTable)
        stages.add_columns("stage", "kept", "window", "ms", "note")
        for s in self.trace.stages:
            degraded = s.status is StageStatus.DEGRADED
            ms = f"{s.ms:.0f}" if s.ms >= 10 else f"{s.ms:.1f}"
            stages.add_row(
                Text(s.name), Text(str(len(s.ranked))), Text(str(s.window)), Text(ms),
                literal_text(s.note or "", "bold reverse" if degraded else ""),
            )
        self.query_one("#expect", Input).cursor_blink = self.fq.cursor_blink
        ranks = self.query_one("#ranks", DataTable)
        ranks.add_column("passage", key="passage")
        for s in self.trace.stages:
            ranks.add_column(s.name, key=s.name)
        self._fill_ranks()
        ranks.focus()
        self.fq.load_trace_rows(self, tuple(self.ids))

    def _label(self, chunk_id: str) -> Text:
        chunk = self.chunks.get(chunk_id)
        return literal_text(chunk.location if chunk else chunk_id)

    def _fill_ranks(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        ranks.clear()
        for cid in self.ids:
            cells: list[Text] = [self._label(cid)]
            for s in self.trace.stages:
                rank = next((r for r in s.ranked if r.chunk_id == cid), None)
                cells.append(Text(f"{rank.rank} ({rank.score:.2f})" if rank else "—"))
            ranks.add_row(*cells, key=cid)

    def on_trace_rows_ready(self, message: TraceRowsReady) -> None:
        self.chunks = dict(message.chunks)
        cursor = self.query_one("#ranks", DataTable).cursor_row
        self._fill_ranks()
        self.query_one("#ranks", DataTable).move_cursor(row=cursor)

    @on(DataTable.RowSelected, "#ranks")
    def open_row(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens that passage in the viewer."""
        if event.row_key.value is not None:
            self.fq.open_passage(str(event.row_key.value))

    def action_mark_expected(self) -> None:
        ranks = self.query_one("#ranks", DataTable)
        if not self.ids or ranks.cursor_row is None:
            return
        cid = self.ids[ranks.cursor_row]
        chunk = self.chunks.get(cid)
        self._diagnose(chunk.location if chunk else cid)

    def action_type_expected(self) -> None:
        self.query_one("#expect", Input).focus()

    @on(Input.Submitted, "#expect")
    def typed(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self._diagnose(event.value.strip())

    def _diagnose(self, expect: str) -> None:
        self.query_one("#diagnosis", Static).update(literal(f"Diagnosing {expect}…"))
        self.fq.diagnose(self, self.trace.question, expect)

    def on_diagnosis_ready(self, message: DiagnosisReady) -> None:
        d = message.diagnosis
        self.query_one("#diagnosis", Static).update(
            literal(f"{message.expect}: {d.verdict}\n{d.detail}")
        )
