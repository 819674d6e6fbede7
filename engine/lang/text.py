"""Text positions shared by ingestion, chunking and answers: lines, sentences, words, token estimates.

Everything here works on spans (``start, end`` offsets into a string) so callers can
cut the original text exactly; nothing rewrites the text it is given.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence

_SENTENCE_END = re.compile(
    r"""(?:[.!?]+["'»”’)\]*]*\s+)   # Latin end mark, closing quotes or emphasis, then whitespace
      |(?:[。！？]+[」』”’）)]*\s*)   # CJK end mark: no space needed after it
    """,
    re.VERBOSE,
)
# "e.g. ", "z.B. ", "No. 3", "1. ": not sentence ends
_NOT_AN_END = re.compile(r"\b(?:e\.g|i\.e|z\.B|vs|No|Nr|Fig|Abb|cf|ca|approx|env|bzw|Dr|Mr|Mrs|Ref|réf|Art|Kap)\.$")


def wide(ch: str) -> bool:
    """A wide character (Chinese, Japanese, Korean, full-width forms): set a whole em wide, and
    written with no spaces between words."""
    return unicodedata.east_asian_width(ch) in "WF"


def headings_under(title: str, heading_path: Sequence[str]) -> tuple[str, ...]:
    """The heading path below its document's title: a first heading that only repeats the title
    (a Markdown page's ``# Title``, a PDF's title line; case and runs of whitespace aside) left out.
    A source shows it after the title (engine.render), "Hydra-400 Pump — Service Manual — … — Error
    codes > ERR_SEAL_PRESSURE", the title once; the chunk keeps its whole path."""
    path = tuple(heading_path)
    if path and title and " ".join(path[0].split()).casefold() == " ".join(title.split()).casefold():
        return path[1:]
    return path


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts (line i, 0-based, starts at result[i]); lines end at '\\n'."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def line_at(starts: list[int], offset: int) -> int:
    """1-based line number of ``offset`` given ``line_starts``."""
    return bisect.bisect_right(starts, offset)


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_ITEM_NUMBER = re.compile(r"\d{1,3}[.)]")
_ITEM_START = re.compile(r"\d{1,3}[.)][ \t]")
_ONE_WORD = re.compile(r"[^\s\w]*[^\W\d_]+[^\s\w]*")  # one word of letters: "**Warning!**", "No." (not "RT-90).")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as spans (whitespace trimmed), in order: the one
    sentence splitter (chunking cuts long paragraphs with it, answers cut units with it).

    Ends at ``.!?`` (with any closing quotes or emphasis, ``.**``) followed by whitespace, unless the next word starts
    with a lower-case letter or a digit ("2.5 N·m", "e.g. the", "ca. 3") or the word before is a
    known abbreviation ("z.B.", "No.") and no line break follows, or the sentence would be only an
    item's number opening a line ("10." over a PDF list item's text) or one word ("**Warning!**",
    "Important!", "No.": a label or a reply, which says nothing without the sentence after it); at
    CJK ``。！？`` no space is needed.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    for m in _SENTENCE_END.finditer(text, start, end):
        cut = m.end()
        if text[m.start()] in ".!?":
            after = text[cut] if cut < end else ""
            if (after.isdigit() or after.islower()) and not ("\n" in m.group() and _ITEM_START.match(text, cut)):
                continue  # (a line opening with an item's number, "\n10. Equipped", starts one)
            head = text[max(pos, m.start() - 8) : m.start() + 1]
            if text[m.start()] == "." and _NOT_AN_END.search(head) and "\n" not in m.group():
                continue
            s, e = strip_span(text, pos, cut)
            if _ITEM_NUMBER.fullmatch(text, s, e) and (s == 0 or text[s - 1] == "\n"):
                continue  # "10." opening a line: the number of the item that follows, no sentence
            if _ONE_WORD.fullmatch(text, s, e) and cut < end:
                continue  # "**Warning!** It is not advisable ...": a label, its sentence follows
        s, e = strip_span(text, pos, cut)
        if s < e:
            spans.append((s, e))
        pos = cut
    s, e = strip_span(text, pos, end)
    if s < e:
        spans.append((s, e))
    return spans


def word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Whitespace-separated words of ``text[start:end]`` as spans."""
    return [(start + m.start(), start + m.end()) for m in _NONSPACE.finditer(text[start:end])]


_NONSPACE = re.compile(r"\S+")


# --- token estimate ----------------------------------------------------------

_TOKENISH = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf\u3040-\u30ff\uac00-\ud7af]"  # one CJK/kana/Hangul char
    r"|\d{1,3}"
    r"|[^\W\d_]+"
    r"|[^\w\s]"
)


def approx_token_count(text: str) -> int:
    """A tokenizer-free estimate, close to a multilingual subword tokenizer (XLM-R style).

    For tests and for the CLI before the model is built; production counts with the
    embedder's tokenizer.
    """
    n = 0
    for m in _TOKENISH.finditer(text):
        w = m.group()
        n += 1 + len(w) // 6 if len(w) > 1 and w[0].isalpha() else 1
    return n
