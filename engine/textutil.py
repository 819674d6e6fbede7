"""Text helpers shared by ingestion and chunking: lines, sentences, scripts, token estimates.

Everything here works on spans (``start, end`` offsets into a string) so callers can
cut the original text exactly; nothing rewrites the text it is given.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter

_SENTENCE_END = re.compile(
    r"""(?:[.!?]+["'»”’)\]]*\s+)   # Latin end mark, closing quotes, then whitespace
      |(?:[。！？]+[」』”’）)]*\s*)   # CJK end mark: no space needed after it
    """,
    re.VERBOSE,
)
# "e.g. ", "z.B. ", "No. 3", "1. ": not sentence ends
_NOT_AN_END = re.compile(r"\b(?:e\.g|i\.e|z\.B|vs|No|Nr|Fig|Abb|cf|ca|approx|env|bzw|Dr|Mr|Mrs|Ref|réf|Art|Kap)\.$")


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


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as spans (whitespace trimmed), in order.

    Ends at ``.!?`` followed by whitespace and at CJK ``。！？`` (no space needed).
    A few abbreviations ("e.g.", "z.B.", "No.") do not end one unless a line break follows.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    for m in _SENTENCE_END.finditer(text, start, end):
        cut = m.end()
        head = text[max(pos, m.start() - 8) : m.start() + 1]
        if text[m.start()] == "." and _NOT_AN_END.search(head) and "\n" not in m.group():
            continue
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


# --- scripts and languages -------------------------------------------------

_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WORD = re.compile(r"[a-zà-öø-ÿß]+")

_STOPWORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "for", "with", "on", "be", "this", "that", "are", "before"},
    "fr": {"le", "la", "les", "des", "et", "du", "est", "une", "dans", "pour", "sur", "avec", "au", "pas"},
    "de": {"der", "die", "das", "und", "ist", "mit", "nicht", "den", "ein", "eine", "für", "auf", "vor", "zu"},
    "es": {"el", "los", "las", "y", "del", "es", "una", "para", "con", "por", "que", "se", "antes"},
    "it": {"il", "gli", "e", "di", "che", "è", "una", "per", "con", "non", "della", "sono", "prima"},
    "nl": {"de", "het", "een", "en", "van", "is", "niet", "met", "voor", "op", "te", "zijn"},
    "pt": {"o", "os", "as", "e", "do", "da", "é", "uma", "para", "com", "não", "em", "dos"},
}


def detect_language(text: str, sample: int = 20000) -> str:
    """A best guess from the script (Hangul→ko, kana→ja, Han→zh) or Latin stopwords; "" if unsure."""
    t = text[:sample]
    hangul = len(_HANGUL.findall(t))
    kana = len(_KANA.findall(t))
    han = len(_HAN.findall(t))
    latin = len(_LATIN.findall(t))
    cyr = len(_CYRILLIC.findall(t))
    if hangul + kana + han + latin + cyr == 0:
        return ""
    if hangul >= max(han, kana, latin / 4) and hangul:
        return "ko"
    if kana and kana >= 0.05 * (han + kana) and kana + han >= latin / 4:
        return "ja"
    if han and han >= latin / 4:
        return "zh"
    if cyr > latin:
        return "ru"
    words = Counter(_WORD.findall(t.lower()))
    scores = {lang: sum(words[w] for w in sw) for lang, sw in _STOPWORDS.items()}
    best = max(scores, key=lambda k: scores[k])
    total = sum(words.values())
    if scores[best] < 3 or scores[best] < 0.05 * total:
        return ""
    return best


_QUESTION_WORDS = {
    "en": set("what how which when where why who does do did is are was the a an of to in for on with can could "
              "should my i it and after before must much many often there this that".split()),
    "fr": set("quel quelle quels quelles comment pourquoi quand où est sont le la les des du une un de et faut "
              "dois doit je mon ma mes avec pour sur dans combien qu que ce cette il elle peut".split()),
    "de": set("wie was welche welcher welches wann wo warum ist sind der die das den dem des ein eine einen und "
              "muss soll ich mein meine mit für auf im zu oft viel kann bei nach vor".split()),
    "es": set("qué cómo cuál cuáles cuándo dónde por qué el la los las es son un una y del con para mi debo puedo "
              "cuánto cuántos se hay".split()),
}
_LATIN_WORD = re.compile(r"[a-zà-öø-ÿ]+")


def question_language(text: str) -> str:
    """The language of a short text such as a question ("" when unsure): the script decides for
    Korean, Japanese and Chinese; Latin-script text by its function and question words
    (en, fr, de, es), the clear winner only."""
    hangul, kana, han = (len(p.findall(text)) for p in (_HANGUL, _KANA, _HAN))
    if hangul:
        return "ko"
    if kana:
        return "ja"
    if han:
        return "zh"
    words = _LATIN_WORD.findall(text.lower().replace("'", " ").replace("’", " "))
    scores = sorted(((sum(w in vocab for w in words), lang) for lang, vocab in _QUESTION_WORDS.items()),
                    reverse=True)
    (best, lang), (second, _) = scores[0], scores[1]
    return lang if best >= 1 and best > second else ""


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
