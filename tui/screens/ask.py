"""The main screen: ask a question, read the cited answer, open its sources."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import Footer, Input, OptionList, Static

from engine.types import Answer, SearchResult
from tui.screens.base import FieldQAScreen
from tui.screens.viewer import Cited
from tui.widgets.answer_view import AnswerView
from tui.widgets.build_status import BuildStatus
from tui.widgets.question_input import QuestionInput
from tui.widgets.sources_list import SourcesList


class AskScreen(FieldQAScreen):
    SCOPE = "ask"
    BINDINGS = [
        Binding("escape", "back", "Leave the question box", id="back", show=False),
        Binding("enter", "open_citation", "Open source", id="open_citation"),
        *(
            Binding(str(n), f"open_citation_n({n})", f"Open citation [{n}]", id=f"citation_{n}",
                    show=False)
            for n in range(1, 10)
        ),
    ]

    def compose(self) -> ComposeResult:
        yield Static("Loading models and index…", id="status", markup=False)
        yield QuestionInput(
            history_size=self.fq.config.tui.history_size,
            history=self.fq.ui_state.history,
            placeholder="Ask a question about these manuals, then press enter",
            id="question",
        )
        yield BuildStatus(id="startup-build")
        with Container(id="results"):
            yield AnswerView(id="answer")
            yield SourcesList(id="sources")
        yield Footer()

    def on_mount(self) -> None:
        self.sources.border_title = ""  # "Sources" only once an answer is shown
        self.answer_view.show_message(
            "Type a question and press enter. Every claim of the answer cites its passage: "
            "press 1–9 to open one, t for the trace, l for the library, ? for help."
        )
        question = self.query_one(QuestionInput)
        question.cursor_blink = self.fq.cursor_blink
        question.focus()

    @property
    def answer_view(self) -> AnswerView:
        return self.query_one("#answer", AnswerView)

    @property
    def sources(self) -> SourcesList:
        return self.query_one("#sources", SourcesList)

    def set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def show_asking(self, question: str) -> None:
        self.answer_view.show_message(f"Searching for: {question}")
        self.sources.clear()
        self.sources.border_title = ""

    def show_preliminary(self, result: SearchResult) -> None:
        self.answer_view.show_preliminary(result)
        self.sources.show_hits(result.hits)
        self.sources.border_title = "Sources (preliminary)"

    def show_answer(self, answer: Answer) -> None:
        self.answer_view.show_answer(answer)
        self.sources.show_answer(answer)
        self.sources.border_title = "Passages to consult" if answer.abstained else "Sources"

    @on(Input.Submitted, "#question")
    def submit(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        self.query_one(QuestionInput).remember(question)
        self.sources.focus()
        self.fq.ask(question)

    @on(OptionList.OptionSelected, "#sources")
    def selected(self, event: OptionList.OptionSelected) -> None:
        self.action_open_citation()

    def action_back(self) -> None:
        self.sources.focus()

    def action_focus_question(self) -> None:
        self.query_one(QuestionInput).focus()

    def action_open_citation(self) -> None:
        source = self.sources.current
        if source is not None:
            self._open(source)

    def action_open_citation_n(self, n: int) -> None:
        source = self.sources.source(n)
        if source is None:
            self.notify(f"No citation [{n}] in this answer.", severity="warning", markup=False)
            return
        self._open(source)

    def _open(self, source) -> None:
        """The viewer on one source, with every citation of the answer for ``[`` / ``]``."""
        cited = [Cited(s.n, s.chunk_id, s.title, s.marks) for s in self.sources.sources]
        self.fq.open_passage(source.chunk_id, source.marks, f"[{source.n}] {source.title}", cited)
