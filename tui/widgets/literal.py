"""Text from documents, shown exactly as written: no markup, no terminal escapes.

`[bold]`, `[/` and ANSI sequences in a manual must show literally. Control
characters (ESC above all) are replaced by their visible Unicode "control
pictures", so `\\x1b[31m` reads `␛[31m` and colours nothing; C1 controls, bidi
overrides and zero-width format characters by `�` (engine.safety.visible).
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from engine.safety import visible  # the one sanitiser, length-preserving variant

__all__ = ["LiteralStatic", "literal", "literal_text", "visible"]


def literal(text: str, style: str = "") -> Content:
    """A Content of `text` taken literally (never parsed as markup)."""
    content = Content(visible(text))
    return content.stylize(style) if style else content


def literal_text(text: str, style: str = "") -> Text:
    """The same for places that need a Rich Text (DataTable cells)."""
    return Text(visible(text), style=style, no_wrap=False)


class LiteralStatic(Static):
    """A Static that shows document text literally."""

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(literal(text), markup=False, id=id, classes=classes)

    def set_text(self, text: str) -> None:
        self.update(literal(text))
