"""The one output sanitiser (engine.safety) for CLI, export and TUI."""

from __future__ import annotations

import unicodedata

from engine.safety import _KEEP, _UNSAFE, is_unsafe, terminal_safe, visible


def test_every_control_and_format_character_is_covered():
    for c in range(0x110000):
        ch = chr(c)
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf") and ch not in _KEEP:
            assert _UNSAFE.match(ch), hex(c)
        elif _UNSAFE.match(ch):
            assert cat == "Cn", hex(c)  # only code points this Python's Unicode leaves unassigned


HOSTILE = ("ERR\x1b[31mRED\x1b[0m \x1b]0;title\x07 \x9b2J C1\x85 "
           "bidi\u202eevil\u202c zw\u200bsp \ufeffbom ok\u200djoin")


def test_terminal_safe_removes_escapes_and_shows_the_rest():
    out = terminal_safe(HOSTILE)
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "\\x85" in out and "\\u202e" in out and "\\u202c" in out and "\\u200b" in out and "\\ufeff" in out
    assert "\u200d" in out  # ZWJ is kept: scripts need it
    assert all(not _UNSAFE.match(ch) for ch in out)


def test_visible_is_length_preserving_and_inert():
    out = visible(HOSTILE)
    assert len(out) == len(HOSTILE)
    assert all(not _UNSAFE.match(ch) for ch in out)
    assert out.startswith("ERR␛[31mRED")
    assert visible("a\r\nb") == "a \nb"


def test_json_output_escapes_what_a_terminal_would_obey_and_decodes_to_the_same_text():
    import json

    from engine.safety import json_dumps

    text = "Drehmoment 38 N·m \u202eevig\u202c zero\u200bwidth \x9b31m \x1b[2J tag\U000e0041 한국어"
    out = json_dumps({"claim": text}, indent=2)
    assert not any(is_unsafe(ch) for ch in out if ch not in "\n")
    assert "한국어" in out and "N·m" in out  # other scripts stay readable
    assert json.loads(out) == {"claim": text}
