"""The fieldqa TUI: one App that owns the engine and every worker.

All engine calls run in thread workers owned by the app (so one
`on_worker_state_changed` handler sees every failure); results come back as
messages, to the app or to the screen that asked.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Sequence

import platformdirs
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState, get_current_worker

from engine.config import Config, FilterConfig
from engine.types import IngestIssue
from tui.commands import BindingCommands, BindingInfo, catalogue
from tui.engine_port import DocumentRow, EngineOpener, EnginePort, library_opener
from tui.messages import (
    AnswerReady,
    BuildFinished,
    BuildProgressed,
    DiagnosisReady,
    EngineReady,
    PassageLoaded,
    SearchReady,
    TraceRowsReady,
)
from tui.screens.ask import AskScreen
from tui.screens.base import FieldQAScreen
from tui.screens.help import HelpScreen
from tui.screens.library import LibraryScreen
from tui.screens.trace import TraceScreen
from tui.screens.viewer import ViewerScreen
from tui.state import default_state_path, load_state, save_state
from tui.widgets.build_status import BuildStatus
from tui.widgets.question_input import QuestionInput

WORKER_LABELS = {
    "open": "Opening the library",
    "query": "The question",
    "build": "Indexing",
    "passage": "Loading the passage",
    "trace": "Loading the trace",
    "diagnose": "Diagnosis",
    "document": "Opening the document",
}


class FieldQAApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "fieldqa"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    COMMANDS = App.COMMANDS | {BindingCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        Binding("ctrl+p", "command_palette", "Commands", id="command_palette", priority=True,
                show=False),
        Binding("slash", "focus_question", "Question", id="focus_question"),
        Binding("t", "open_trace", "Trace", id="open_trace"),
        Binding("l", "open_library", "Library", id="open_library"),
        Binding("question_mark,f1", "open_help", "Help", id="open_help"),
        Binding("d", "toggle_dark", "Light/dark", id="toggle_dark", show=False),
        Binding("0", "reset_scope", "Reset scope", id="reset_scope", show=False),
        Binding("ctrl+k", "clear_history", "Clear question history", id="clear_history", show=False),
        Binding("w", "export", "Work order", id="export"),
    ]

    def __init__(
        self,
        opener: EngineOpener,
        config: Config,
        *,
        library_name: str = "",
        cursor_blink: bool = True,
        state_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.state_path = state_path  # None: nothing is remembered between runs (tests)
        self.ui_state = load_state(state_path)
        self.opener = opener
        self.config = config
        self.library_name = library_name
        self.cursor_blink = cursor_blink
        self.engine: EnginePort | None = None
        self.documents: Sequence[DocumentRow] = ()
        self.ingest_issues: tuple[IngestIssue, ...] = ()
        self.filters: FilterConfig = self.ui_state.filters or config.filters
        self.seq = 0  # number of the latest question; older results are dropped
        self.question = ""
        self.pending_question: str | None = None
        self.last_result = None
        self.last_answer = None
        self.building = False
        self._switched = False  # the running build has switched to its new generation
        self.cancel_build = threading.Event()
        self.theme = self.ui_state.theme or config.tui.theme or "textual-dark"
        self.set_keymap(dict(config.tui.keymap))

    # ----------------------------------------------------------------- structure

    def binding_scopes(self) -> list[tuple[str, type]]:
        return [
            ("global", type(self)), ("screens", FieldQAScreen), ("ask", AskScreen),
            ("question", QuestionInput), ("passage", ViewerScreen), ("trace", TraceScreen),
            ("library", LibraryScreen), ("help", HelpScreen),
        ]

    def binding_catalogue(self) -> list[BindingInfo]:
        return catalogue(self.binding_scopes(), self._keymap)

    @property
    def ask_screen(self) -> AskScreen:
        for screen in self.screen_stack:
            if isinstance(screen, AskScreen):
                return screen
        raise LookupError("the Ask screen is not mounted")

    def on_mount(self) -> None:
        self.push_screen(AskScreen())
        # the library (and its models) load once the first screen is painted: the loading thread
        # would otherwise hold the interpreter while the screen is being drawn
        self.call_after_refresh(self.set_status, "opening the library and its models…")
        self.call_after_refresh(self.open_engine)
        known = {info.id for info in self.binding_catalogue()}
        unknown = sorted(set(self.config.tui.keymap) - known)
        if unknown:
            self.notify(f"[tui.keymap] names no binding: {', '.join(unknown)} (F1 lists every id)",
                        severity="warning", markup=False)

    def on_unmount(self) -> None:
        self.cancel_build.set()  # a running build stops at its next check; the old index stays
        if self.engine is not None:
            self.engine.close()

    @property
    def searchable(self) -> bool:
        """A generation is live: the library had documents, or the running build has switched to
        its new one (it then embeds the answer units: questions need not wait for that)."""
        return self.engine is not None and (bool(self.documents) or self._switched)

    def set_status(self, text: str) -> None:
        name = f"{self.library_name} · " if self.library_name else ""
        self.ask_screen.set_status(f"fieldqa · {name}{text}")

    # ------------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="open", name="open")
    def open_engine(self) -> None:
        engine = self.opener()
        self.post_message(EngineReady(engine, list(engine.documents()), list(engine.issues())))

    @work(thread=True, exclusive=True, exit_on_error=False, group="query", name="query")
    def run_query(self, seq: int, question: str, filters: FilterConfig) -> None:
        engine = self.engine
        assert engine is not None
        worker = get_current_worker()
        result = engine.search(question, mode="full", filters=filters)  # one search per question
        if worker.is_cancelled:
            return
        self.post_message(SearchReady(seq, result))
        answer = engine.answer(result, filters=filters)
        if not worker.is_cancelled:
            self.post_message(AnswerReady(seq, answer))

    @work(thread=True, exclusive=True, exit_on_error=False, group="build", name="build")
    def run_build(self) -> None:
        engine = self.engine
        assert engine is not None

        def progress(p) -> None:
            self.post_message(BuildProgressed(p.phase, p.done, p.total, p.eta_s))

        report = engine.build(progress=progress, cancel=self.cancel_build)
        self.post_message(BuildFinished(report, list(engine.documents()), list(engine.issues())))

    @work(thread=True, exclusive=True, exit_on_error=False, group="passage", name="passage")
    def load_passage(self, target: MessagePump, chunk_id: str, step: int) -> None:
        engine = self.engine
        assert engine is not None
        chunk = engine.chunk(chunk_id)
        if chunk is None:
            raise LookupError(f"no chunk {chunk_id} in the index")
        if step:
            prev, nxt = engine.neighbours(chunk_id)
            moved = nxt if step > 0 else prev
            if moved is None:
                self.call_from_thread(
                    self.notify, "No next chunk." if step > 0 else "No previous chunk.",
                    severity="warning",
                )
                return
            chunk = moved
        text = engine.document_text(chunk.path)
        section = engine.section(chunk.id)
        target.post_message(PassageLoaded(chunk, text, list(section), list(engine.chunks_of(chunk.path))))

    @work(thread=True, exclusive=True, exit_on_error=False, group="trace", name="trace")
    def load_trace_rows(self, target: MessagePump, ids: tuple[str, ...]) -> None:
        engine = self.engine
        assert engine is not None
        chunks = {}
        for cid in ids:
            chunk = engine.chunk(cid)
            if chunk is not None:
                chunks[cid] = chunk
        target.post_message(TraceRowsReady(chunks))

    @work(thread=True, exclusive=True, exit_on_error=False, group="diagnose", name="diagnose")
    def diagnose(self, target: MessagePump, question: str, expect: str) -> None:
        engine = self.engine
        assert engine is not None
        target.post_message(DiagnosisReady(expect, engine.diagnose(question, expect, self.filters)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place where a failed worker becomes a visible notice."""
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        label = WORKER_LABELS.get(worker.name, worker.name or "A task")
        error = worker.error
        self.notify(f"{label} failed: {type(error).__name__}: {error}", severity="error",
                    timeout=10, markup=False)
        if worker.name == "open":
            self.set_status("could not open the library (see the notice)")
            self.ask_screen.answer_view.show_message(
                f"Could not open the library.\n{type(error).__name__}: {error}")
        elif worker.name == "build":
            self.building = False
            for status in self._build_statuses():
                status.fail(f"{type(error).__name__}: {error}")
            if self.documents:
                self.show_ready()  # the previous index is still the current one
            else:
                self.set_status("indexing failed (see the notice)")
        elif worker.name == "query":
            self.ask_screen.answer_view.show_message(
                f"{label} failed: {type(error).__name__}: {error}")

    # ------------------------------------------------------------- engine events

    def on_engine_ready(self, message: EngineReady) -> None:
        self.engine = message.engine
        self.documents = message.documents
        self.ingest_issues = tuple(message.issues)
        if not self.documents:
            self.set_status("building the index…")
            self.reindex()
            return
        self.show_ready()

    def show_ready(self) -> None:
        chunks = sum(d.chunks for d in self.documents)
        # the scope first: at 80 columns it is what must stay visible
        self.set_status(f"{scope_text(self.filters)} · ready · {_count(len(self.documents), 'document')}"
                        f" · {_count(chunks, 'chunk')}")
        if self.pending_question is not None and self.searchable:
            question, self.pending_question = self.pending_question, None
            self.ask(question)

    def reindex(self) -> None:
        if self.engine is None:
            self.notify("The library is still loading.", severity="warning")
            return
        if self.building:
            self.notify("Already indexing.", severity="warning")
            return
        self.building = True
        self._switched = False
        self.cancel_build.clear()
        for status in self._build_statuses():
            status.add_class("-active")
        self.run_build()

    def _build_statuses(self) -> list[BuildStatus]:
        return [w for screen in self.screen_stack for w in screen.query(BuildStatus)]

    def on_build_progressed(self, message: BuildProgressed) -> None:
        for status in self._build_statuses():
            status.show_progress(message.phase, message.done, message.total, message.eta_s)
        if message.phase == "units" and not self._switched:  # the new index is live: answer now
            self._switched = True
            if self.pending_question is not None:
                question, self.pending_question = self.pending_question, None
                self.ask(question)
        if self.engine is not None and not self.documents:
            count = f"{message.done}/{message.total}" if message.total else f"{message.done}"
            self.set_status(f"building the index: {message.phase} {count}")

    def on_build_finished(self, message: BuildFinished) -> None:
        self.building = False
        report = message.report
        self.documents = message.documents
        self.ingest_issues = tuple(dict.fromkeys((*report.issues, *message.issues)))
        summary = (f"{report.documents} documents, {report.chunks} chunks, "
                   f"{len(report.issues)} issues")
        for status in self._build_statuses():
            status.finish(summary)
            if status.screen is self.ask_screen:
                status.remove_class("-active")  # the Ask screen shows it only while building
        for screen in self.screen_stack:
            if isinstance(screen, LibraryScreen):
                screen.show_documents(self.documents)
        self.notify(f"Indexed: {summary}", markup=False)
        self.show_ready()

    # ------------------------------------------------------------------ queries

    def ask(self, question: str) -> None:
        self._remember(question)
        self.seq += 1
        self.question = question
        self.last_result = self.last_answer = None
        if self.engine is None or not self.searchable:
            self.pending_question = question
            self.ask_screen.answer_view.show_message(
                "The library is still loading; your question will run as soon as it is ready.")
            return
        self.ask_screen.show_asking(question)
        self.run_query(self.seq, question, self.filters)

    def on_search_ready(self, message: SearchReady) -> None:
        if message.seq != self.seq or self.last_answer is not None:
            return  # an older question, or the answer already arrived
        self.last_result = message.result
        self.ask_screen.show_preliminary(message.result)

    def on_answer_ready(self, message: AnswerReady) -> None:
        if message.seq != self.seq:
            return
        self.last_answer = message.answer
        self.ask_screen.show_answer(message.answer)

    def set_filters(self, filters: FilterConfig) -> None:
        self.filters = filters
        self.ui_state.filters = filters
        save_state(self.state_path, self.ui_state)
        if self.documents and not self.building:
            self.show_ready()

    # ------------------------------------------------------------------ actions

    @work(thread=True, exclusive=True, exit_on_error=False, group="passage", name="document")
    def open_document(self, path: str) -> None:
        """The viewer on a document's first passage (from the library screen)."""
        engine = self.engine
        assert engine is not None
        chunks = engine.chunks_of(path)
        if not chunks:
            self.call_from_thread(self.notify, f"{path} has no passages in the index.", severity="warning",
                                  markup=False)
            return
        self.call_from_thread(self.open_passage, chunks[0].id, (), path)

    def open_passage(self, chunk_id: str, marks=(), label: str = "", citations=()) -> None:
        """The viewer on ``chunk_id``; ``citations`` (viewer.Cited, the answer's) for ``[`` / ``]``."""
        if self.engine is None:
            return
        self.push_screen(ViewerScreen(chunk_id, marks, label, citations))

    def _top_is(self, cls: type) -> bool:
        return isinstance(self.screen, cls)

    def action_focus_question(self) -> None:
        while len(self.screen_stack) > 2 and not self._top_is(AskScreen):
            self.pop_screen()
        self.ask_screen.action_focus_question()

    def action_open_trace(self) -> None:
        if self._top_is(TraceScreen):
            return
        answer, result = self.last_answer, self.last_result
        trace = (answer.trace if answer is not None else None) or (result.trace if result else None)
        if trace is None:
            self.notify("Ask a question first: the trace belongs to the last question.",
                        severity="warning")
            return
        self.push_screen(TraceScreen(trace))

    def action_open_library(self) -> None:
        if not self._top_is(LibraryScreen):
            self.push_screen(LibraryScreen())

    def action_open_help(self) -> None:
        if not self._top_is(HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"
        self.ui_state.theme = self.theme
        save_state(self.state_path, self.ui_state)

    def action_export(self) -> None:
        """Write the answer on screen as a work-order section (Markdown: claims, citations with
        title, version, date and path:line, conflict warnings, the abstention reason)."""
        answer = self.last_answer
        if answer is None:
            self.notify("No answer to export yet.", severity="warning")
            return
        try:
            path = export_answer(answer, self.config.tui.export_dir or default_export_dir())
        except OSError as e:
            self.notify(f"Could not write the work order: {e}", severity="error", markup=False)
            return
        self.notify(f"Work order written: {path}", markup=False, timeout=8)

    def action_reset_scope(self) -> None:
        """Back to the configured scope: every filter the user set is dropped."""
        self.set_filters(self.config.filters)
        self.notify(f"Scope reset: {scope_text(self.filters)}", markup=False)

    def action_clear_history(self) -> None:
        self.ui_state.history.clear()
        save_state(self.state_path, self.ui_state)
        for box in self.query(QuestionInput):
            box.history.clear()
        self.notify("Question history cleared.")

    def _remember(self, question: str) -> None:
        question = question.strip()
        if not question:
            return
        history = self.ui_state.history
        if question in history:
            history.remove(question)
        history.append(question)
        del history[: -max(1, self.config.tui.history_size)]
        save_state(self.state_path, self.ui_state)


def default_export_dir() -> Path:
    return Path(platformdirs.user_documents_dir()) / "fieldqa-work-orders"


def export_answer(answer, folder: Path) -> Path:
    """The answer as Markdown (engine.render.render_markdown, the same writer as
    ``fieldqa ask --export md``) in a new file named after the date and the question."""
    from engine.render import render_markdown

    folder.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^\w]+", "-", answer.question.casefold()).strip("-")[:60] or "answer"
    stem = f"{time.strftime('%Y-%m-%d-%H%M%S')}-{slug}"
    path = folder / f"{stem}.md"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.md"
    path.write_text(render_markdown(answer), encoding="utf-8")
    return path


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def scope_text(f: FilterConfig) -> str:
    """The active scope in a few words, for the status line: what a question can see."""
    parts = []
    if f.device_model:
        parts.append(f"model {f.device_model}")
    parts.append(f"team {','.join(f.teams)}" if f.teams else "no team")
    if f.as_of:
        parts.append(f"as of {f.as_of}")
    parts.append("+superseded" if f.include_superseded else "current")
    return "scope: " + ", ".join(parts)


HANGUP_GRACE_S = 1.0  # after a hang-up, the app has this long to close cleanly before it is ended


def end_on_hangup(app: App) -> None:
    """SIGHUP (the terminal closed, an SSH link dropped) and SIGTERM end the app: it is asked to
    exit (workers cancelled, index closed), and if the dead terminal blocks that, the process
    ends after ``HANGUP_GRACE_S`` anyway: never a process spinning on a deleted terminal."""
    def on_signal(signum: int, _frame) -> None:
        timer = threading.Timer(HANGUP_GRACE_S, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()
        try:
            app.exit(return_code=128 + signum)
        except Exception:  # noqa: BLE001 - the process must end whatever state the app is in
            os._exit(128 + signum)

    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, on_signal)
    watch_terminal(lambda: on_signal(signal.SIGHUP, None))


def watch_terminal(on_lost, fd: int | None = None, every_s: float = 0.5) -> None:
    """Call ``on_lost`` once the controlling terminal is gone even though no SIGHUP came (a pty
    deleted under the app, a signal ignored somewhere): the terminal's foreground process group
    can no longer be read. Nothing is watched when the app does not run on a terminal."""
    fd = sys.__stdin__.fileno() if fd is None and sys.__stdin__ is not None else fd
    if fd is None or not os.isatty(fd):
        return

    def watch() -> None:
        while True:
            time.sleep(every_s)
            try:
                os.tcgetpgrp(fd)
            except OSError:
                on_lost()
                return

    threading.Thread(target=watch, name="terminal-watch", daemon=True).start()


def run_app(folder: Path, cfg: Config, index_dir: Path | None) -> int:
    """Open the TUI on `folder`; returns the process exit code."""
    app = FieldQAApp(library_opener(folder, cfg, index_dir), cfg, library_name=folder.name,
                     state_path=default_state_path())
    end_on_hangup(app)
    app.run()
    return int(app.return_code or 0)
