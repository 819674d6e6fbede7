"""Words: the one tokenizer family and the one stopword list per language.

- :func:`tokenize` gives the terms BM25 counts (the lexical branch, and every query):
  NFKC, then casefold (full-width ``ＡＢＣ１２`` reads as ``abc12``); words keep their combining
  marks (Devanagari and Thai vowel signs); identifiers are kept whole and also split
  (``ERR_CACHE_STALE`` gives ``err_cache_stale``, ``err``, ``cache``, ``stale``; ``12Nm`` gives
  ``12nm``, ``12``, ``nm``; decimals such as ``3.5`` stay whole); Chinese/Japanese (Han, kana)
  and Thai/Lao/Khmer/Myanmar, written without spaces, become character bigrams (a lone
  character stays a unigram); Korean words (eojeol) are emitted whole, as bigrams, and with a
  trailing particle stripped, so ``배터리`` finds ``배터리를``.
- :func:`terms` is the set view the answer uses to compare a question with a passage: the same
  word pattern family, lower-cased, short Latin words dropped, CJK runs as bigrams.
- :data:`STOPWORDS` holds, per language, the function and question words both leave out.

No stemming. Tried 2026-12-03 (PyStemmer 3.1.0's Snowball stemmers on every Latin word of
four letters or more, in BM25's terms and the queries'; the English stemmer for all, or the one
of each text's detected language; fresh indexes, train splits): WLED lexical R@1 / R@5 .653 /
.827 -> .653 / .840 (English) and .627 / .813 (by language), full R@1 .787 either way; ZMK
lexical .480 / .693 -> .480 / .720 and .453 / .693, full R@5 .867 -> .853 both. The learned order
and the answer already read a passage's meaning through the vectors; the stems add little to
BM25 here and cost the full pipeline.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["STOPWORDS", "TOKENIZER_VERSION", "numbers_in", "term_held", "terms", "tokenize"]

# Bump whenever tokenize() output changes: an index built with another version
# must be rebuilt, since query and document terms would no longer agree.
TOKENIZER_VERSION = "fieldqa-tok-1"

def _mark_class() -> str:
    """Every combining mark (categories Mn, Mc, Me) as regex class ranges."""
    ranges: list[tuple[int, int]] = []
    # No combining marks exist above U+1FFFF except the variation selectors supplement.
    for cp in (*range(0x20000), *range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )


_MARKS = _mark_class()
# Han (with extensions and compatibility ideographs), kana, iteration marks.
_CJK = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_SEA = "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
_SPECIAL = _CJK + _SEA + _HANGUL
_W = f"(?:(?![{_SPECIAL}])[\\w{_MARKS}])"
_TOKEN_RE = re.compile(
    f"(?P<cjk>[{_CJK}]+)|(?P<sea>[{_SEA}]+)|(?P<ko>[{_HANGUL}]+)|(?P<w>{_W}+(?:[-.]{_W}+)*)"
)
_CLUSTER_RE = re.compile(f".[{_MARKS}]*", re.S)
_SEP_RE = re.compile(r"[-._]+")
_ALNUM_RE = re.compile(r"\d+|\D+")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")

# Korean particles and a few copula/verb endings, longest first.
_KO_SUFFIXES = tuple(
    sorted(
        {
            "은", "는", "이", "가", "을", "를", "의", "에", "에서", "으로", "로", "와", "과", "도", "만",
            "까지", "부터", "에게", "께서", "이다", "입니다", "이며", "이고", "에서는", "에는", "으로는",
            "로는", "에게서", "한테", "처럼", "보다", "마다", "이나", "나", "랑", "이랑", "하고", "라고",
            "이라고", "란", "이란", "인", "께", "에도", "에서도", "으로도", "로도", "만을", "만이",
            "하는", "하다", "합니다", "하여", "해야", "해서", "했다", "한다", "된다", "되는", "됩니다",
            "하십시오", "하세요", "시오",
        },
        key=len,
        reverse=True,
    )
)

# Function and question words of the Latin-script languages the manuals use, with French
# elisions (l', d', qu'): left out of BM25 terms (query and documents) and of the answer's
# term sets. Measured on eval/multi-dev: French R@1 0.641 -> 0.702 with this filter in BM25.
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("""
        a an and are as at be by for from in is it of on or that the this to was were with do does did
        what which who whom whose how when where why""".split()),
    "fr": frozenset("""
        au aux ce ces cet cette dans de des du elle elles en est et il ils la le les leur leurs lui mais
        nous ou par pas pour qu que qui sa se ses son sont sur un une vous ne ni car donc l d j n s c m t
        y été était ont avait être avoir plus comme aussi très quel quelle quels quelles combien comment
        pourquoi quand quoi où lequel laquelle lesquels""".split()),
    "de": frozenset("""
        der die das den dem des ein eine einer eines einem einen und ist im in zu mit von auf für nicht
        sich als auch es wie was wer wo wann warum welche welcher welches""".split()),
}
_STOPWORDS = frozenset().union(*STOPWORDS.values())


def tokenize(text: str, *, stopwords: bool = True, cjk_unigrams: bool = True) -> list[str]:
    """Terms for BM25: see the module docstring. Deterministic, order-preserving."""
    text = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    emit = out.append
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        tok = m.group()
        if kind == "w":
            _emit_word(tok, out, stopwords)
        elif kind == "cjk":
            n = len(tok)
            if n == 1:
                emit(tok)
                continue
            if cjk_unigrams:
                out.extend(tok)
            out.extend(tok[i : i + 2] for i in range(n - 1))
        elif kind == "sea":
            cl = _CLUSTER_RE.findall(tok)
            if len(cl) == 1:
                emit(tok)
                continue
            out.extend(cl[i] + cl[i + 1] for i in range(len(cl) - 1))
        else:  # Korean eojeol
            emit(tok)
            n = len(tok)
            if n > 2:
                out.extend(tok[i : i + 2] for i in range(n - 1))
            for suf in _KO_SUFFIXES:
                if len(tok) > len(suf) and tok.endswith(suf):
                    stem = tok[: -len(suf)]
                    emit(stem)
                    break
    return out


def _emit_word(tok: str, out: list[str], stopwords: bool) -> None:
    if _NUMBER_RE.fullmatch(tok):
        out.append(tok)
        return
    parts = [p for p in _SEP_RE.split(tok) if p]
    if not parts or (stopwords and tok in _STOPWORDS):
        return  # a bare "_" or "__" carries nothing
    out.append(tok)
    if len(parts) > 1 or parts[0] != tok:
        for p in parts:
            if not (stopwords and p in _STOPWORDS):
                out.append(p)
    for p in parts:
        pieces = _ALNUM_RE.findall(p)
        if len(pieces) > 1:
            out.extend(x for x in pieces if len(x) >= 2)


_TERM_WORD = re.compile(r"\w+", re.UNICODE)
_TERM_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def numbers_in(text: str) -> tuple[str, ...]:
    """The numbers of a text as written, in order ("2.5", "1,000"): what ``terms`` leaves to compare."""
    return tuple(_NUMBER_RE.findall(text))


def terms(text: str) -> set[str]:
    """Lower-cased word tokens; CJK runs as character bigrams (so zh/ko overlap is countable).
    A new set each call (the caller may change it); the same texts recur in every answer, so
    their terms are remembered."""
    return set(_terms(text))


@functools.lru_cache(maxsize=8192)
def _terms(text: str) -> frozenset[str]:
    out: set[str] = set()
    for w in _TERM_WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if _TERM_CJK.search(w):
            chars = [c for c in w]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(w)
        elif len(w) > 2 or w.isdigit():
            out.add(w)
    return frozenset(out - _STOPWORDS)


def term_held(term: str, held: set[str]) -> bool:
    """Whether ``held`` (a text's ``terms``) holds ``term``: as it is, or, for an identifier (with
    ``_`` or ``.``), by each of its words (two or more): a configuration reference explains
    ``proxy_to_client_enabled`` under the heading "Client Proxy Enabled"."""
    if term in held:
        return True
    if "_" not in term and "." not in term:
        return False
    words = terms(term.replace("_", " ").replace(".", " "))
    return len(words) >= 2 and words <= held
