"""Cues: what a unit of text *is*, read without a language model, in the manuals' languages.

- :func:`is_condition`: a warning, a restriction or a precondition;
- :func:`is_safety`: a safety warning (its signal word), and :func:`is_safety_label`: a line that is
  only a signal word ("⚠ WARNING"), the label of the statement below it;
- :func:`refers_forward`: a pointer to a later section for a step that belongs here, and
  :func:`announces`: a statement that ends by announcing what follows ("…the following command:");
- :func:`injection_reason`: an instruction aimed at the system (shown as quoted evidence,
  never acted on).
"""

from __future__ import annotations

import functools
import re

__all__ = ["INJECTION_NOTE", "announces", "asks", "injection_reason", "is_condition", "is_safety", "is_safety_label",
           "refers_forward"]


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


# the words that name a warning: a signal word only as a label ("Warning: ...", "**Attention!**",
# "WARNING"), since in running text they name a thing ("a warning beep", "the low-voltage warning",
# "this log message is a warning", "pay attention to"); the other signal words warn wherever they stand
# ("use caution", "risk of electric shock: danger")
_LABEL_WORDS = r"warning|avertissement|attention|warnung|advertencia"
_SAFETY_WORDS = rf"{_LABEL_WORDS}|danger|caution|hazard|vorsicht|achtung|gefahr|peligro|precaución"
_SAFETY_CJK = r"주의|경고|위험|警告|危险|危險|注意|危険"
_SAFETY = re.compile(rf"(?<!\w)(?:{_SAFETY_WORDS})(?!\w)|{_SAFETY_CJK}", re.IGNORECASE)
_LABEL_WORD = re.compile(rf"(?<!\w)(?:{_LABEL_WORDS})(?!\w)", re.IGNORECASE)
_SAFETY_LABEL = re.compile(rf"[\W_]*(?:{_SAFETY_WORDS}|{_SAFETY_CJK})[\W_]*", re.IGNORECASE)


def is_safety(text: str) -> bool:
    """Does the text state a safety warning (by its signal word)? A word that names a warning
    ("warning", "Warnung", "attention") counts as a label only: where the text begins with it, in
    capitals, or right before a colon or an exclamation mark (markup between them aside)."""
    for m in _SAFETY.finditer(text):
        word = m.group(0)
        if not _LABEL_WORD.fullmatch(word):
            return True
        after = text[m.end():].lstrip("*_` \u00a0")
        if not re.search(r"\w", text[:m.start()]) or word.isupper() or after[:1] in (":", "：", "!"):
            return True
    return False


def is_safety_label(line: str) -> bool:
    """Is the line only a safety signal word, with symbols or punctuation ("⚠ WARNING", "Caution:")?"""
    return bool(_SAFETY_LABEL.fullmatch(line.strip()))


# a unit that points at another section for a step that belongs with it
_FORWARD_REF = re.compile(
    r"(?:next|following) (?:section|chapter|step)|see below|described below|"
    r"section suivante|chapitre suivant|ci-dessous|nächsten? (?:Abschnitt|Kapitel)|siehe unten|"
    r"다음 (?:절|장|항목)|아래|下一(?:节|章|步)|下文|以下",
    re.IGNORECASE,
)


def refers_forward(text: str) -> bool:
    return bool(_FORWARD_REF.search(text))


def asks(text: str) -> bool:
    """Is the statement a question ("Should I enable it on my 3D printer?")? A manual's own
    question says what it is about to answer, not the answer."""
    return text.rstrip().endswith(("?", "？"))


def announces(text: str) -> bool:
    """Does the statement end by announcing what follows it ("…issue the following command:")?"""
    return text.rstrip().endswith((":", "："))


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


@functools.lru_cache(maxsize=8192)
def injection_reason(text: str) -> str:
    """Why a unit reads as an instruction to the system ('' when it does not)."""
    if _INJECTION.search(text) or any(w in text for w in _INJECTION_CJK):
        return INJECTION_NOTE
    return ""
