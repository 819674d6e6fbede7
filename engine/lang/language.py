"""Which language a text is in: a document (script, then its function words) and a short
question (script, then its question words). The cue words here identify a language; they are
not the stopwords of engine.lang.words, which are left out of terms.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["detect_language", "question_language"]

_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WORD = re.compile(r"[a-zà-öø-ÿß]+")

_CUE_WORDS = {
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
    scores = {lang: sum(words[w] for w in sw) for lang, sw in _CUE_WORDS.items()}
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
              "muss soll ich mein meine mit für auf im zu oft viel kann bei nach vor viele wieviel wieso weshalb "
              "welchen welchem gibt es man einem einer nicht kein keine sich wird werden hat habe haben zum zur "
              "vom beim dass oder auch noch nur".split()),
    "es": set("qué cómo cuál cuáles cuándo dónde por qué el la los las es son un una y del con para mi debo puedo "
              "cuánto cuántos cuánta cuántas se hay tengo tiene tienen está están después también al lo su sus "
              "mis hasta desde sin pero".split()),
}
# Spanish alone opens a question or an exclamation with an inverted mark: as good as two of its words
_INVERTED_MARKS = re.compile("[¿¡]")
_LATIN_WORD = re.compile(r"[a-zà-öø-ÿ]+")


def question_language(text: str) -> str:
    """The language of a short text such as a question ("" when unsure): the script decides for
    Korean, Japanese and Chinese; Latin-script text by its function and question words
    (en, fr, de, es; Spanish also by its inverted marks ¿ ¡), the clear winner only."""
    hangul, kana, han = (len(p.findall(text)) for p in (_HANGUL, _KANA, _HAN))
    if hangul:
        return "ko"
    if kana:
        return "ja"
    if han:
        return "zh"
    words = _LATIN_WORD.findall(text.lower().replace("'", " ").replace("’", " "))
    inverted = 2 if _INVERTED_MARKS.search(text) else 0
    scores = sorted(((sum(w in vocab for w in words) + (inverted if lang == "es" else 0), lang)
                     for lang, vocab in _QUESTION_WORDS.items()), reverse=True)
    (best, lang), (second, _) = scores[0], scores[1]
    return lang if best >= 1 and best > second else ""
