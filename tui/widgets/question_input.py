"""The question box: an Input with a bounded history (up/down)."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import Input


class QuestionInput(Input):
    BINDINGS = [
        Binding("up", "history_prev", "Previous question", id="history_prev", show=False),
        Binding("down", "history_next", "Next question", id="history_next", show=False),
    ]

    def __init__(self, history_size: int = 100, history: list[str] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history_size = max(1, history_size)
        self.history: list[str] = list(history or [])[-self.history_size:]  # remembered from earlier runs
        self._cursor: int | None = None  # index into history while browsing

    def _on_key(self, event: events.Key) -> None:
        # "/" is the key that brings the cursor here: pressed in an empty box (the box has the focus
        # at launch) it only means "question", and is not typed. Input's own handler runs after this
        # one unless it is prevented.
        if event.character == "/" and not self.value:
            event.prevent_default()
            event.stop()

    def remember(self, question: str) -> None:
        question = question.strip()
        if not question:
            return
        if question in self.history:
            self.history.remove(question)
        self.history.append(question)
        del self.history[: -self.history_size]
        self._cursor = None

    def action_history_prev(self) -> None:
        if not self.history:
            return
        self._cursor = len(self.history) - 1 if self._cursor is None else max(0, self._cursor - 1)
        self._show(self.history[self._cursor])

    def action_history_next(self) -> None:
        if self._cursor is None:
            return
        if self._cursor >= len(self.history) - 1:
            self._cursor = None
            self._show("")
            return
        self._cursor += 1
        self._show(self.history[self._cursor])

    def _show(self, text: str) -> None:
        self.value = text
        self.cursor_position = len(text)
