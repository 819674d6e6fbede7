"""Names: the products, brands, boards and identifiers a question names, found by their shape.

A question that names something ("the BTT EBB36", "a Creality Sonic Pad", "Telegram") asks about
*that* thing; when no passage of the library mentions it at all, the library cannot answer, however
close its passages about the neighbouring topic are (engine.answer.answerability reads it as one
feature). A name is a Latin-script word that is shaped like one, in any language:

- mixed case inside the word or two capitals at least (``GitHub``, ``MicroProbe``, ``PINDA``, ``BTT``),
  or letters and digits together (``EBB36``, ``M8P``, ``SV06``);
- a capitalised word that does not start its sentence, in a language that does not capitalise
  its common nouns (German does: ``Hotend`` there is a noun, not a name, and so is each part of
  ``Y-Achse``: there a joined word's part must be name-shaped itself, as in ``GT2-Riemen``);
- any Latin-script word in a question written in Chinese, Japanese or Korean script (a brand or an
  identifier kept as the user types it).

A single letter ("I", "a") or a function word ("the" in a Chinese question) is never a name.

Nothing here lists a name: whether a name is *known* is a fact about the library (the lexical
index's vocabulary, engine.index.lexical), never about this module.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from engine.lang.codes import device_code_spans
from engine.lang.language import question_language
from engine.lang.words import tokenize

__all__ = ["joined", "name_parts", "name_terms", "question_names"]

_L = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"  # Latin letters, accented ones included
# a Latin word, joined by - _ . ("SD-Karte", "printer.cfg"), wherever the next script begins ("发Telegram通知")
_LATIN_WORD = re.compile(f"(?<![{_L}0-9])[{_L}][{_L}0-9]*(?:[-_.][{_L}0-9]+)*(?![{_L}0-9])")
_WIDE_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_SENTENCE_END = ".?!¿¡:;\"'«»“”()[]`*"
_PART = re.compile(r"[-_.]+")
NOUNS_CAPITALISED = frozenset({"de"})  # languages whose common nouns start with a capital


def question_names(text: str, devices: Collection[str] = ()) -> tuple[str, ...]:
    """The name-shaped words of ``text`` (a question), in order, each once. A word right before a
    device code among ``devices`` (engine.lang.codes' normalised form: the devices the library's
    documents are about) is that device's brand, which its manual may spell in another script
    ("Haram HR-5" for a manual in Korean): it is left out."""
    text = unicodedata.normalize("NFKC", text)
    wide = bool(_WIDE_SCRIPT.search(text))
    capital_nouns = question_language(text) in NOUNS_CAPITALISED
    # where the word before each device code ends (spaces between them skipped)
    brand_ends = {len(text[:start].rstrip()) for start, _end, code in device_code_spans(text) if code in devices}
    out: dict[str, None] = {}
    for m in _LATIN_WORD.finditer(text):
        word = m.group()
        if len(word) < 2 or m.end() in brand_ends or not name_terms(word):  # "I", "a", "the": not names
            continue
        before = text[: m.start()].rstrip()
        starts = not before or before[-1] in _SENTENCE_END
        # where nouns are capitalised, a compound's parts each start with a capital ("Y-Achse",
        # "Axis-Twist-Kompensation"): a part must be name-shaped by itself ("GT2-Riemen")
        strong = any(_strong(p) for p in _PART.split(word)) if capital_nouns else _strong(word)
        if wide or strong or (word[0].isupper() and not starts and not capital_nouns):
            out.setdefault(word, None)
    return tuple(out)


def _strong(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return (sum(c.isupper() for c in letters) >= 2 or any(c.isupper() for c in word[1:])
            or (any(c.isdigit() for c in word) and bool(letters)))


def name_parts(name: str) -> tuple[str, ...]:
    """The pieces of a joined name that could each be what a passage calls it (``SD-Karte`` ->
    ``SD``, ``Karte``): two characters at least, not a bare number."""
    return tuple(p for p in _PART.split(name) if len(p) >= 2 and not p.isdigit())


def joined(term: str) -> str:
    """A term without its joining marks: "wi-fi", "wi.fi" and "wifi" are one spelling."""
    return _PART.sub("", term)


def name_terms(name: str) -> tuple[str, ...]:
    """The lexical terms (engine.lang.words.tokenize) of which a passage that mentions ``name``
    holds one at least: the name as one term and each of its parts (``SD-Karte`` is mentioned by a
    passage about the ``SD`` card)."""
    out: dict[str, None] = {}
    for piece in (name, *name_parts(name)):
        toks = tokenize(piece)
        if toks:
            out.setdefault(toks[0], None)
    return tuple(out)
