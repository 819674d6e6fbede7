"""Output safety: document text is data, never terminal control, markup or a hidden reordering.

One module for every place that shows text from a manual (CLI, Markdown export, TUI):

- :func:`terminal_safe` (CLI, export): ANSI escape sequences (CSI ``\\x1b[…``, OSC ``\\x1b]…``,
  DCS/SOS/PM/APC strings, other ``ESC x``, the 8-bit CSI ``\\x9b``) are removed; every other C0
  control but newline and tab, DEL, every C1 control (U+0080–U+009F), the bidirectional controls
  (U+200E/U+200F, U+202A–U+202E, U+2066–U+2069) and the invisible format characters (zero-width
  space, word joiner, BOM, …; ZWJ/ZWNJ and the soft hyphen are kept: scripts need them) become a
  visible ``\\xNN`` / ``\\uNNNN`` escape.
- :func:`json_dumps` (``--json`` output): the exact text (claims must match their spans once
  decoded), with the same characters written as ``\\uNNNN`` escapes, so a terminal showing the
  JSON is not driven or reordered by it either.
- :func:`visible` (TUI): the same characters replaced one for one by a visible stand-in (C0
  controls by their Unicode "control pictures" ``␛``, the others by ``�``), so character spans
  into the text stay valid for highlighting; nothing is removed.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["terminal_safe", "visible", "is_unsafe", "json_dumps"]

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (title, hyperlink), BEL or ST terminated
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # other escapes (ESC c, ESC ( B, lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_KEEP = frozenset("\n\t\u200c\u200d\u00ad")  # newline, tab, ZWNJ, ZWJ, soft hyphen


def is_unsafe(ch: str) -> bool:
    """A character that could drive a terminal or hide/reorder text when shown as is."""
    if ch in _KEEP:
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


# every Cc and Cf character but _KEEP (Unicode 15; tests/test_safety.py checks it against
# unicodedata), as ranges: building it from unicodedata at import would cost a start-up delay
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]")


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """Text that cannot drive a terminal: escapes removed, controls made visible as escapes."""
    text = _ANSI.sub("", text).replace("\r\n", "\n")

    def show(m: re.Match) -> str:
        code = ord(m.group(0))
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    text = _UNSAFE.sub(show, text)
    return text if keep_newlines else text.replace("\n", " ")


_PICTURES = {c: 0x2400 + c for c in range(32) if chr(c) not in _KEEP}
_PICTURES[0x7F] = 0x2421


def visible(text: str) -> str:
    """``text`` with every unsafe character replaced by one visible character (length-preserving:
    a CRLF line end becomes a space and a newline)."""
    text = text.replace("\r\n", " \n")
    return _UNSAFE.sub(lambda m: chr(_PICTURES.get(ord(m.group(0)), 0xFFFD)), text)


def json_dumps(obj: object, **kw) -> str:
    """``json.dumps(obj, ensure_ascii=False, **kw)`` with every unsafe character escaped; the
    decoded JSON is unchanged (the escapes are JSON's own)."""
    import json

    def escape(m: re.Match) -> str:
        code = ord(m.group(0))
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return _UNSAFE.sub(escape, json.dumps(obj, ensure_ascii=False, **kw))
