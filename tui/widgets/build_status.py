"""Index build progress: phase, a ProgressBar and the engine's ETA."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar


def format_eta(eta_s: float | None) -> str:
    if eta_s is None:
        return ""
    eta = int(round(eta_s))
    return f"ETA {eta // 60}:{eta % 60:02d}" if eta >= 60 else f"ETA {eta} s"


class BuildStatus(Horizontal):
    DEFAULT_CSS = """
    BuildStatus { height: 1; display: none; padding: 0 1; }
    BuildStatus.-active { display: block; }
    BuildStatus #build-phase { width: auto; min-width: 12; padding-right: 1; }
    BuildStatus #build-eta { width: auto; padding-left: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label("", id="build-phase", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="build-bar")
        yield Label("", id="build-eta", markup=False)

    @property
    def bar(self) -> ProgressBar:
        return self.query_one("#build-bar", ProgressBar)

    def show_progress(self, phase: str, done: int, total: int, eta_s: float | None) -> None:
        self.add_class("-active")
        label = "answer units (searchable)" if phase == "units" else phase
        self.query_one("#build-phase", Label).update(f"Indexing: {label}")
        self.bar.update(total=max(total, 1), progress=min(done, max(total, 1)))
        count = f"{done}/{total}" if total else f"{done}"  # a scan counts files before it knows how many
        self.query_one("#build-eta", Label).update(f"{count} {format_eta(eta_s)}".rstrip())

    def finish(self, summary: str) -> None:
        bar = self.bar
        if bar.total is None:
            bar.update(total=1)
        bar.update(progress=bar.total)
        self.query_one("#build-phase", Label).update("Indexed")
        self.query_one("#build-eta", Label).update(summary)

    def fail(self, reason: str) -> None:
        self.query_one("#build-phase", Label).update("Indexing failed")
        self.query_one("#build-eta", Label).update(reason)
