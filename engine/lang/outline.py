"""Outline numbers: how a heading is numbered ("3.1", "IV.", "五、", "第2章") and where it stands.

A document's headings of one rank are numbered alike and on from each other, whatever size a
layout set each in: "V." after "IV." is its sibling, "1." under "12." starts the numbering of its
children. ``Outline`` keeps, per numbering style, the last number seen at each level and tells a
new heading's level from it (the PDF reader's headings come by font size otherwise:
engine.ingest.pdf). The levels the numbering marks itself in text files (제1장, 第二节) are
engine.ingest.text.cjk_heading_level's.
"""

from __future__ import annotations

import re

__all__ = ["Outline", "outline_key"]

# a heading's outline number: decimal ("2 Safety", "3.1." - not "12 V battery"), Roman ("IV.", "Ⅴ、"),
# Chinese ("五、") or a numbered chapter or section ("第2章", "第三节")
_OUTLINE = re.compile(r"\s*(?:(?P<dec>\d{1,2}(?:\.\d{1,2}){0,4})(?:[.)、]|\s+(?=[A-Z][A-Za-z]|[^\x00-\x7f]))"
                      r"|(?P<roman>[IVX]{1,5}|[Ⅰ-Ⅻ])[.、)]"
                      r"|(?P<cjk>[一二三四五六七八九十]{1,3})、"
                      r"|第(?P<nth>[一二三四五六七八九十]{1,3}|\d{1,3})(?P<unit>[章节節部篇]))")


def outline_key(title: str) -> tuple[tuple[str, int], int] | None:
    """A heading's numbering style with its depth, and its number (``(("dec", 2), 1)`` for "3.1
    Procedure", ``(("roman", 1), 5)`` for "V. Notes"), or None. The heading after "IV." numbered "V."
    is its sibling, whatever size each was set in."""
    m = _OUTLINE.match(title)
    if not m:
        return None
    if m.group("dec"):
        parts = m.group("dec").split(".")
        return ("dec", len(parts)), int(parts[-1])
    if m.group("roman"):
        return ("roman", 1), _roman(m.group("roman"))
    if m.group("cjk"):
        return ("cjk", 1), _cjk_number(m.group("cjk"))
    nth = m.group("nth")
    return (m.group("unit"), 1), int(nth) if nth.isdigit() else _cjk_number(nth)


def _roman(numeral: str) -> int:
    if len(numeral) == 1 and "Ⅰ" <= numeral <= "Ⅻ":
        return ord(numeral) - ord("Ⅰ") + 1
    values = [{"I": 1, "V": 5, "X": 10}[c] for c in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")}


def _cjk_number(numeral: str) -> int:
    if "十" not in numeral:
        return _DIGITS.get(numeral[-1], 0)
    tens, _, ones = numeral.partition("十")
    return (_DIGITS.get(tens, 1) if tens else 1) * 10 + (_DIGITS.get(ones, 0) if ones else 0)



class Outline:
    """The numbering seen so far in one document: style -> level -> the last number there."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int], dict[int, int]] = {}

    def level(self, title: str, level: int) -> int:
        """The level of heading ``title``: that of the heading whose number it follows in its
        style, if any, else ``level`` (its level by other means); a heading restarts the numbering
        below it."""
        numbered = outline_key(title)
        if numbered:
            style, number = numbered
            seen = self._seen.setdefault(style, {})
            level = next((lv for lv, n in sorted(seen.items()) if n == number - 1), level)
            seen[level] = number
        for numbers in self._seen.values():
            for lv in [lv for lv in numbers if lv > level]:
                del numbers[lv]
        return level
