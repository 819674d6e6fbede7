"""Document text is shown literally: markup characters and escapes included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.widgets.literal import literal, visible
from tui.widgets.passage_view import passage_bounds, passage_content


def test_escape_and_control_characters_become_visible():
    assert visible("a\x1b[31mred\x1b[0m") == "a␛[31mred␛[0m"
    assert visible("bell\x07 del\x7f tab\tnl\n") == "bell␇ del␡ tab\tnl\n"
    assert visible("crlf\r\nline") == "crlf \nline"


def test_markup_is_not_parsed():
    text = "Console [bold]codes[/bold] and [/ and [link=x]y[/link] \x1b[1m"
    content = literal(text)
    assert content.plain == visible(text)
    assert not content.spans


@settings(max_examples=200)
@given(st.text())
def test_visible_keeps_offsets_and_removes_every_control(text):
    shown = visible(text)
    assert len(shown) == len(text)  # claim spans stay valid
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in shown)
    assert "\x7f" not in shown


def test_passage_is_widened_to_whole_lines_and_claims_are_marked():
    text = "first line\nsecond line has the claim\nthird"
    start = text.index("has")
    a, b = passage_bounds(text, start, start + 3)
    assert text[a:b] == "second line has the claim"
    content = passage_content(text, a, b, [(start, start + 3)])
    assert content.plain == "second line has the claim"
    (span,) = content.spans
    assert content.plain[span.start:span.end] == "has"


def test_a_command_claim_is_shown_as_its_lines_and_markup_in_it_is_not_parsed():
    from engine.types import Answer, Citation, Claim
    from tui.widgets.answer_view import answer_content

    code = "SET_VELOCITY_LIMIT ACCEL=500\nTUNING_TOWER [bold]x[/bold]"
    cit = Citation(1, "c1", "pa", "Pressure advance", "1", None, "active", ("Tuning",), "pa.md", 3, 8)
    a = Answer("q", (Claim("Issue the following command:", 1, 0, 28), Claim(code, 1, 30, 30 + len(code), code=True)),
               (cit,))
    content = answer_content(a)
    assert "Issue the following command: [1]\n  SET_VELOCITY_LIMIT ACCEL=500\n  TUNING_TOWER [bold]x[/bold] [1]" \
        in content.plain
