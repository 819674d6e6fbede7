"""Text from documents, shown exactly as written: no markup, no terminal escapes.

`[bold]`, `[/` and ANSI sequences in a manual must show literally. Control
characters (ESC above all) are replaced by their visible Unicode "control
pictures", so `\\x1b[31m` reads `␛[31m` and colours nothing.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widgets import Static

_KEEP = {"\n", "\t"}
_PICTURES = {chr(c): chr(0x2400 + c) for c in range(32) if chr(c) not in _KEEP}
_PICTURES["\x7f"] = "\u2421"
_TABLE = str.maketrans(_PICTURES)


def visible(text: str) -> str:
    """`text` with every control character (but newline and tab) made visible.

    Length-preserving, so character spans into `text` stay valid: a CRLF line end
    becomes a space and a newline.
    """
    return text.replace("\r\n", " \n").translate(_TABLE)


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
