"""Codes: the exact identifiers a technician types, found the same way everywhere.

Three views of one idea, each for its job:

- :func:`device_codes`: device-model-shaped tokens, normalised so spellings meet ("KX-7",
  "kx 7", "ＫＸ７" -> "kx7"): which equipment a question or a document is about (search.devices);
- :func:`exact_codes`: error codes, part references, model names and thread sizes as written,
  upper-cased (ERR_SD_FULL, REF27-ALPHA, HY-400S, M8): what an answer must contain verbatim;
- :func:`model_names`: hyphenated names with a digit part in any case (Hydra-400, BR-20):
  the model a title or a question names, upper-cased.

:func:`content_question` is a question less the devices it names (their codes, and the words
before a code that the device's own manual titles hold: "Borée BR-20"): what it asks of a manual
once the manual is chosen. :func:`title_words` gives those words.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection

from engine.lang.words import terms

__all__ = ["content_question", "device_code_spans", "device_codes", "edition_marks", "exact_codes", "model_names",
           "normalise_code", "title_words"]

# the words that open a version mark whatever follows them ("Ver. 2", "version 3", "Rev 3", "revision 3");
# a bare "v" opens one before a dotted number or a single digit ("V1.1", "v2"), not before "V60", a device
_MARK_WORDS = r"ver|version|rev|revision"
# letters then digits, optionally joined by '-', '_' or a space, optional letter suffix:
# KX-7, HY-400S, Hydra-400, VB 12, CV60, V60; not a version mark, which says which edition of a
# manual or board, not which device (every "… V1.0" manual would share "v1": ``edition_marks``)
_DEVICE = re.compile(rf"(?<![\w])(?!(?i:(?:{_MARK_WORDS})\.?[-_ ]?\d|v[-_ ]?\d(?:\.\d|(?!\w))))"
                     r"([^\W\d_]{1,12})[-_ ]?(\d{1,5}[^\W\d_]{0,2})(?![\w])")


def normalise_code(code: str) -> str:
    return re.sub(r"[-_\s]", "", unicodedata.normalize("NFKC", code)).casefold()


def device_codes(text: str) -> set[str]:
    """Device-code-shaped tokens of a text, normalised ("KX-7" -> "kx7")."""
    text = unicodedata.normalize("NFKC", text)
    return {normalise_code(a + b) for a, b in _DEVICE.findall(text)}


# an edition mark: "V1.1", "v2", "Ver. 2.0", "version 3", "Rev 3", "Rev. B", "revision C"; a letter names a
# revision only after "rev" / "revision" ("V B" is no mark)
_EDITION = re.compile(rf"(?<![\w.])(?i:(?:v|{_MARK_WORDS})\.?[-_ ]?(\d{{1,3}}(?:\.\d{{1,3}}){{0,2}})"
                      r"|(?:rev|revision)\.?[-_ ]?([A-Z]))(?![\w]|\.\d)")


def edition_marks(text: str) -> frozenset[str]:
    """The editions a text names (of a board, a manual), normalised: the number with its trailing
    ".0" parts dropped ("V1.0", "v1" and "Rev 1" -> "1"; "V1.10" -> "1.10"), or the revision letter
    case-folded ("Rev. B" -> "b"). Which edition, never which device (``device_codes``)."""
    out = set()
    for num, letter in _EDITION.findall(unicodedata.normalize("NFKC", text)):
        if letter:
            out.add(letter.casefold())
        else:
            parts = num.split(".")
            while len(parts) > 1 and int(parts[-1]) == 0:
                parts.pop()
            out.add(".".join(str(int(x)) if i == 0 else x for i, x in enumerate(parts)))
    return frozenset(out)


def device_code_spans(text: str) -> list[tuple[int, int, str]]:
    """Where ``text`` (NFKC-normalised by the caller) names device codes: (start, end, normalised)."""
    return [(m.start(), m.end(), normalise_code(m.group(1) + m.group(2))) for m in _DEVICE.finditer(text)]


def content_question(question: str, codes: Collection[str], names: Collection[str] = ()) -> str | None:
    """``question`` less the devices it names among ``codes`` (``device_codes``' normalised form),
    or None when it names none of them or nothing else would be left to ask. A device is named by
    its code and by the words right before the code that ``names`` holds (``title_words`` of the
    manuals about those codes): "the Borée BR-20 compressor" loses "Borée BR-20". The device says
    which manual to read, not which of its statements answers (engine.answer.scoring); in another
    language than the manual, its name is all the question and the overview share."""
    text = unicodedata.normalize("NFKC", question)
    cuts = [m.span() for m in _DEVICE.finditer(text) if normalise_code(m.group(1) + m.group(2)) in codes]
    if not cuts:
        return None
    kept, end = [], len(text)
    for start, stop in reversed(cuts):
        while (m := _WORD_BEFORE.search(text, 0, start)) and m.group(1).casefold() in names:
            start = m.start(1)
        kept.append(text[stop:end])
        end = start
    kept.append(text[:end])
    out = re.sub(r"\s{2,}", " ", "".join(reversed(kept))).strip()
    return out if terms(out) else None


_WORD = re.compile(r"[^\W\d_][\w'’]*")
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'’]*)[ \t]+$")  # the word that ends right before a code


def title_words(title: str) -> frozenset[str]:
    """The words of a manual's title, case-folded: what a question may name the device by, next
    to its code."""
    return frozenset(w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", title)))


# ERR_SD_FULL, REF27-ALPHA, HY-400S, KX-7, M8, G 1/4 is left out (too loose)
_EXACT = re.compile(r"(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+|M\d{1,2}|[A-Z]{1,4}-?\d{1,4}[A-Z]{0,2})(?![\w-])")
_EXACT_STOP = {"CE", "PE", "DC", "AC", "USB", "LED", "SD", "OK"}


def exact_codes(text: str) -> set[str]:
    """Error codes, part references, model names and thread sizes in a text (upper case); a new
    set each call, the texts' codes remembered."""
    return set(_exact_codes(text))


@functools.lru_cache(maxsize=8192)
def _exact_codes(text: str) -> frozenset[str]:
    out = set()
    for m in _EXACT.finditer(unicodedata.normalize("NFKC", text)):
        tok = m.group(0).upper()
        if tok in _EXACT_STOP:
            continue
        if any(ch.isdigit() for ch in tok) or "_" in tok or "-" in tok:
            out.add(tok)
    return frozenset(out)


_MODEL_NAME = re.compile(r"(?<![\w-])[^\W\d_]+-\w*\d\w*(?![\w-])")  # Hydra-400, BR-20, KX-7


def model_names(text: str) -> set[str]:
    """Model-like names (letters, a hyphen, then a part with a digit), upper-cased."""
    return {m.upper() for m in _MODEL_NAME.findall(text)}
