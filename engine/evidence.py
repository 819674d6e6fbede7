"""Evidence units: the sentences, list items and table rows a passage is made of.

A :class:`Unit` is a span of the *document* text (``char_start``/``char_end``),
found inside one chunk's span, so a claim built from it is verbatim by
construction: ``document.text[unit.char_start:unit.char_end] == unit.text``.

This module also reads each unit for what it *is*, without a language model:
a condition (warning, restriction: :func:`is_condition`), an instruction aimed
at the system (:func:`injection_reason`: shown as quoted evidence, never acted
on), and the exact tokens it names (:func:`codes_in`: error codes, part
references, thread sizes, numbers with units).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from engine.types import Chunk

UnitKind = Literal["sentence", "list_item", "table_row"]


@dataclass(frozen=True, slots=True)
class Unit:
    """One claimable piece of a chunk, as a span of the document text."""

    chunk_id: str
    kind: UnitKind
    char_start: int  # in the document text, end exclusive
    char_end: int
    text: str
    order: int  # position inside the chunk (document order)
    line: int  # 1-based line of the unit's start in the document
    heading: str = ""  # the nearest heading line above the unit inside the chunk ('' = none)


# --- splitting -------------------------------------------------------------------

_LIST_MARK = re.compile(r"[ \t]*(?:[-*+•·]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+")
_TABLE_ROW = re.compile(r"[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_QUOTE_MARK = re.compile(r"[ \t]*(?:>[ \t]*)+")
# a sentence ends at . ! ? (followed by space and not by a lower-case letter or a digit,
# so "2.5 N·m", "e.g. the" and "ca. 3" stay whole) or right after a CJK full stop
_SENT_END = re.compile(r"(?<=[.!?])[\"'”’»)]*\s+(?=[^\sa-z0-9])|(?<=[。！？])[\"'”’»）)]*\s*")


def split_units(chunk: Chunk) -> tuple[Unit, ...]:
    """Split a chunk's text into claimable units, in document order.

    Lines are read one by one: a table row (not the ``|---|`` rule) or a list item
    is one unit (its list marker left out of the span); other lines are gathered
    into paragraphs (a blank line, a heading, a list item or a row ends one) and a
    paragraph is cut into sentences. Headings and code fences are not claims.
    """
    text = chunk.text
    out: list[tuple[UnitKind, int, int, str]] = []
    para: list[tuple[int, int]] = []  # (start, end) of consecutive prose lines
    heading = ""

    def flush() -> None:
        if para:
            start, end = para[0][0], para[-1][1]
            for s, e in _sentences(text, start, end):
                out.append(("sentence", s, e, heading))
            para.clear()

    pos = 0
    in_fence = False
    for raw in text.splitlines(keepends=True):
        line_start, line_end = pos, pos + len(raw.rstrip("\r\n"))
        pos += len(raw)
        line = text[line_start:line_end]
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line.strip() or _HEADING.match(line):
            flush()
            if line.strip():
                heading = line.strip().lstrip("#").strip()
            continue
        if _TABLE_ROW.match(line):
            flush()
            if not _TABLE_RULE.match(line):
                s, e = _strip(text, line_start, line_end)
                if e > s:
                    out.append(("table_row", s, e, heading))
            continue
        m = _LIST_MARK.match(line)
        if m:
            flush()
            s, e = _strip(text, line_start + m.end(), line_end)
            if e > s:
                out.append(("list_item", s, e, heading))
            continue
        q = _QUOTE_MARK.match(line)
        start = line_start + (q.end() if q else 0)
        para.append((start, line_end))
    flush()
    return _units(chunk, out)


def _units(chunk: Chunk, spans: list[tuple[UnitKind, int, int, str]]) -> tuple[Unit, ...]:
    """Units from (kind, start, end, heading) spans of ``chunk.text``, in order."""
    text, base = chunk.text, chunk.char_start
    return tuple(Unit(chunk_id=chunk.id, kind=kind, char_start=base + s, char_end=base + e, text=text[s:e],
                      order=i, line=chunk.start_line + text.count("\n", 0, s), heading=head)
                 for i, (kind, s, e, head) in enumerate(spans))


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    s = start
    for m in _SENT_END.finditer(text, start, end):
        if m.start() > s:
            spans.append(_strip(text, s, m.start()))
        s = m.end()
    spans.append(_strip(text, s, end))
    out = []
    for a, b in spans:
        while a < b and text[a] in "> \t":  # quote markers of a continued line
            a += 1
        if b > a and any(ch.isalnum() for ch in text[a:b]):
            out.append((a, b))
    return out


# --- conditions ------------------------------------------------------------------

_CONDITION_WORDS = [
    # en
    r"only", r"unless", r"except", r"never", r"do not", r"don't", r"does not", r"must not",
    r"mustn't", r"may not", r"cannot", r"not (?:be|to|even)", r"warning", r"caution", r"attention",
    r"danger", r"no longer",
    # fr
    r"sauf", r"uniquement", r"seulement", r"jamais", r"ne\b[^.;:]{0,40}\b(?:pas|plus|jamais)",
    r"n['’][^.;:]{0,40}\b(?:pas|plus|jamais)", r"avertissement", r"danger", r"interdit",
    r"tant que",
    # de
    r"nur", r"nicht", r"niemals", r"nie", r"kein(?:e|en|er)?", r"außer", r"es sei denn",
    r"achtung", r"warnung", r"vorsicht", r"gefahr", r"erst (?:wenn|nach|dann)",
]
_CONDITION_CJK = [
    # ko
    "주의", "경고", "반드시", "위험", "금지", "않는다", "않도록", "안 된다", "안된다", "말 것",
    "말아야", "하지 마", "경우에만",
    # zh
    "注意", "警告", "不得", "禁止", "只有", "只能", "必须", "不要", "切勿", "严禁", "危险", "除非", "不可", "不能",
]
_CONDITION_RE = re.compile(r"(?<!\w)(?:" + "|".join(_CONDITION_WORDS) + r")(?!\w)", re.IGNORECASE)


def is_condition(text: str) -> bool:
    """Does the unit state a warning, a restriction or a precondition?"""
    return bool(_CONDITION_RE.search(text)) or any(w in text for w in _CONDITION_CJK)


# a unit that points at another section for a step that belongs with it
_FORWARD_REF = re.compile(
    r"(?:next|following) (?:section|chapter|step)|see below|described below|"
    r"section suivante|chapitre suivant|ci-dessous|nächsten? (?:Abschnitt|Kapitel)|siehe unten|"
    r"다음 (?:절|장|항목)|아래|下一(?:节|章|步)|下文|以下",
    re.IGNORECASE,
)


def refers_forward(text: str) -> bool:
    return bool(_FORWARD_REF.search(text))


# --- instructions aimed at the system -----------------------------------------------

_INJECTION = re.compile(
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier) (?:instructions|prompts?|rules)|"
    r"disregard (?:the |all |any )?(?:above|previous|prior|instructions)|"
    r"forget (?:all |your |the )?(?:previous |prior )?instructions|"
    r"you are now\b|system prompt|\bcall the tool|\buse the tool|\bexecute (?:the|this|a|following)|"
    r"\brun (?:the|this) command|tell the user|say to the user|\bas an ai\b|"
    # fr
    r"ignore[zr]? (?:les |toutes les )?instructions|oublie[zr]? (?:les |toutes les )?instructions|"
    r"tu es maintenant|vous êtes maintenant|invite système|dites à l['’]utilisateur|dis à l['’]utilisateur|"
    r"exécute[zr]? (?:la|cette|les) commande|"
    # de
    r"ignoriere (?:alle |die )?(?:vorherigen |obigen )?anweisungen|vergiss (?:alle |die )?anweisungen|"
    r"du bist jetzt|systemprompt|system-prompt|sag(?:e|en sie)? dem benutzer|führe (?:den|diesen) befehl",
    re.IGNORECASE,
)
_INJECTION_CJK = (
    # zh
    "忽略之前", "忽略以上", "忽略上述", "忽略所有", "无视之前", "你现在是", "系统提示", "调用工具", "执行命令",
    "告诉用户", "忽略先前",
    # ko
    "이전 지시", "지시를 무시", "지침을 무시", "너는 이제", "당신은 이제", "시스템 프롬프트", "도구를 호출",
    "명령을 실행", "사용자에게 말", "사용자에게 알려",
)

INJECTION_NOTE = "reads as an instruction to the system; shown as quoted evidence, not followed"


def injection_reason(text: str) -> str:
    """Why a unit reads as an instruction to the system ('' when it does not)."""
    if _INJECTION.search(text) or any(w in text for w in _INJECTION_CJK):
        return INJECTION_NOTE
    return ""


# --- exact tokens ------------------------------------------------------------------

# ERR_SD_FULL, REF27-ALPHA, HY-400S, KX-7, M8, G 1/4 is left out (too loose)
_CODE = re.compile(r"(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+|M\d{1,2}|[A-Z]{1,4}-?\d{1,4}[A-Z]{0,2})(?![\w-])")
_CODE_STOP = {"CE", "PE", "DC", "AC", "USB", "LED", "SD", "OK"}


def codes_in(text: str) -> set[str]:
    """Error codes, part references, model names and thread sizes in a text (upper case)."""
    out = set()
    for m in _CODE.finditer(unicodedata.normalize("NFKC", text)):
        tok = m.group(0).upper()
        if tok in _CODE_STOP:
            continue
        if any(ch.isdigit() for ch in tok) or "_" in tok or "-" in tok:
            out.add(tok)
    return out


_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def terms(text: str) -> set[str]:
    """Lower-cased word tokens; CJK runs as character bigrams (so zh/ko overlap is countable)."""
    out: set[str] = set()
    for w in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK.search(w):
            chars = [c for c in w]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(w)
        elif len(w) > 2 or w.isdigit():
            out.add(w)
    return out - _STOPWORDS


_STOPWORDS = set(
    "the and for with what which when how why who does are was were this that from into after before "
    "can must should will have has not its their your you les des une est que qui dans pour par sur "
    "avec quel quelle quels quelles comment pourquoi der die das und ist mit für von wie was welche "
    "wann den dem ein eine einer nach bei".split()
)
