"""Answer-level evaluation: do answers cite the gold passage, abstain when they should?

``fieldqa eval QUESTIONS.tsv --corpus DIR --answers --json`` adds an ``"answers"``
object to the evaluation JSON through :class:`AnswerEval`, an
``engine.eval.retrieval.EvalHook``::

    "answers": {
      "questions": n, "answerable": n, "noanswer": n,
      "cited_rate": x,              # answerable questions whose answer cites a gold passage
      "abstain_rate_answerable": x, # answerable questions answered "not found"
      "abstain_rate_noanswer": x,   # no-answer questions (expected "-") answered "not found"
      "claims_outside_span": n,     # claims whose text is not document_text[start:end] inside
                                    # the cited chunk (must be 0)
      "first_claim_hit": x,         # answerable questions whose first claim cites a gold passage
      "claims_per_answer": x,       # claims shown per answered answerable question
      "gold_claim_share": x,        # of those claims, the share citing a gold passage
      "lead_ins": n,                # claims ending with a colon ("…issue the following command:")
      "lead_ins_open": n,           # of those, not followed by what they announce (lead_in_counts)
      "brier": x,                   # Brier score of the answerability probability against
                                    # "answerable" (null when the hand rule decided)
      "threshold": x,               # the hand rule's threshold (used when no model is fitted)
      "by_family": {FAMILY: {same rate keys, "questions": n}}
    }

Hit rule (as for retrieval, ``engine.search.diagnose.GoldResolver``): a citation hits when
its chunk comes from the gold file and overlaps the gold section's lines (or page).
Rates over an empty group are ``null``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.answer import abstain_threshold, compose_answer
from engine.config import Config, FilterConfig
from engine.lang.cues import announces
from engine.types import Answer, SearchResult

__all__ = ["AnswerEval", "AnswerOutcome", "claims_outside_span", "evaluate_answers", "lead_in_counts"]


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    family: str
    answerable: bool
    abstained: bool
    cited: bool  # a citation hits a gold passage
    outside: int  # claims outside their cited span
    first_hit: bool = False  # the first claim cites a gold passage
    probability: float | None = None  # Answer.answerability
    lead_ins: int = 0  # claims ending with a colon
    lead_ins_open: int = 0  # of those, not followed by what they announce (lead_in_counts)
    claims: int = 0  # claims shown
    gold_claims: int = 0  # of those, citing a gold passage


def claims_outside_span(answer: Answer, library) -> int:
    """Claims whose text is not exactly their document span, inside the cited chunk."""
    cited = {c.n: c for c in answer.citations}
    bad = 0
    texts: dict[str, str] = {}
    for cl in answer.claims:
        c = cited.get(cl.citation)
        if c is None:
            bad += 1
            continue
        if c.path not in texts:
            texts[c.path] = library.document_text(c.path)
        chunk = library.chunk(c.chunk_id)
        if (texts[c.path][cl.char_start:cl.char_end] != cl.text
                or not chunk.char_start <= cl.char_start < cl.char_end <= chunk.char_end):
            bad += 1
    return bad


@dataclass
class AnswerEval:
    """EvalHook: composes the answer for each searched question and scores it."""

    library: Any
    config: Config | None = None
    outcomes: list[AnswerOutcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        from engine.search.diagnose import GoldResolver

        self._gold = GoldResolver(self.library)

    def observe(self, question, result: SearchResult) -> None:
        cfg = self.config or self.library.config
        answer = compose_answer(question.text, result, self.library, cfg)
        self.outcomes.append(self.score(question, answer))

    def score(self, question, answer: Answer) -> AnswerOutcome:
        gold = self._gold.hit_ids(question.targets) if question.targets else set()
        cited = any(c.chunk_id in gold for c in answer.citations)
        by_n = {c.n: c for c in answer.citations}
        first = answer.claims[0] if answer.claims else None

        def on(cl) -> bool:  # the claim cites a gold passage (its own or one saying the same)
            return any(n in by_n and by_n[n].chunk_id in gold for n in cl.cites)

        first_hit = first is not None and on(first)
        leads, open_ = lead_in_counts(answer, self.library)
        on_gold = sum(1 for cl in answer.claims if on(cl))
        return AnswerOutcome(question.family, bool(question.targets), answer.abstained, cited,
                             claims_outside_span(answer, self.library), first_hit, answer.answerability,
                             leads, open_, len(answer.claims), on_gold)

    def summary(self) -> tuple[str, Any]:
        cfg = self.config or self.library.config
        return "answers", summarise(self.outcomes, abstain_threshold(cfg))


def lead_in_counts(answer: Answer, library=None) -> tuple[int, int]:
    """(claims ending with a colon, those the next claim does not continue): a claim that
    announces a command or a list and shows nothing after it leaves the technician without it.
    The next claim continues it when it comes after it in the same document and, where the
    document's text is at hand (``library``), nothing the reader would miss lies between them:
    no words but a fence's or a code directive's, a table's header row or its rule ("The profile
    is removed as follows:" then "Any other profile ..." skips the command between them)."""
    by_n = {c.n: c for c in answer.citations}
    texts: dict[str, str] = {}
    leads = open_ = 0
    for i, cl in enumerate(answer.claims):
        if cl.flagged or cl.code or not announces(cl.text):
            continue
        leads += 1
        nxt = answer.claims[i + 1] if i + 1 < len(answer.claims) else None
        same = (nxt is not None and nxt.citation in by_n and cl.citation in by_n
                and by_n[nxt.citation].path == by_n[cl.citation].path and nxt.char_start >= cl.char_end)
        if same and library is not None:
            path = by_n[cl.citation].path
            if path not in texts:
                texts[path] = library.document_text(path)
            same = _nothing_between(texts[path][cl.char_end:nxt.char_start], nxt.header)
        open_ += not same
    return leads, open_


# a fence (with its info string: ```bash), a reST code directive (.. code-block:: bash), a table's rule
_FENCE_OR_RULE = re.compile(r"[ \t>]*(?:(?:```|~~~).*|\.\.[ \t]+[\w:-]+::.*|[|:\- \t]*)")
_ITEM_MARK = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)])\s*")  # a list item's or a quote's mark, opening a line


def _nothing_between(gap: str, header: str) -> bool:
    """Does ``gap`` (the text between two claims) hold no words but markup: fences, a table's rule,
    the header row ``header`` of the table the next claim is a row of, list and quote marks?"""
    rows = " ".join(header.split())
    for line in gap.splitlines():
        if _FENCE_OR_RULE.fullmatch(line) or (rows and " ".join(line.split()) == rows):
            continue
        if re.search(r"\w", _ITEM_MARK.sub("", line, count=1)):
            return False
    return True


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _rates(outs: Sequence[AnswerOutcome]) -> dict[str, Any]:
    ans = [o for o in outs if o.answerable]
    no = [o for o in outs if not o.answerable]
    answered = [o for o in ans if not o.abstained]
    shown = sum(o.claims for o in answered)
    return {
        "questions": len(outs), "answerable": len(ans), "noanswer": len(no),
        "cited_rate": _rate(sum(o.cited for o in ans), len(ans)),
        "abstain_rate_answerable": _rate(sum(o.abstained for o in ans), len(ans)),
        "abstain_rate_noanswer": _rate(sum(o.abstained for o in no), len(no)),
        "claims_outside_span": sum(o.outside for o in outs),
        "first_claim_hit": _rate(sum(o.first_hit for o in ans), len(ans)),
        "claims_per_answer": _rate(shown, len(answered)),
        "gold_claim_share": _rate(sum(o.gold_claims for o in answered), shown),
        "lead_ins": sum(o.lead_ins for o in outs), "lead_ins_open": sum(o.lead_ins_open for o in outs),
        "brier": _brier(outs),
    }


def _brier(outs: Sequence[AnswerOutcome]) -> float | None:
    scored = [(o.probability, o.answerable) for o in outs if o.probability is not None]
    return round(sum((p - y) ** 2 for p, y in scored) / len(scored), 4) if scored else None


def summarise(outcomes: Sequence[AnswerOutcome], threshold: float) -> dict[str, Any]:
    out = _rates(outcomes)
    out["threshold"] = threshold
    fams = sorted({o.family for o in outcomes})
    out["by_family"] = {f: _rates([o for o in outcomes if o.family == f]) for f in fams}
    return out


def evaluate_answers(library, questions: Sequence, *, config: Config | None = None,
                     filters: FilterConfig | None = None) -> dict[str, Any]:
    """Search and answer every question (``engine.eval.retrieval.Question`` rows); the "answers" object."""
    hook = AnswerEval(library, config)
    for q in questions:
        hook.observe(q, library.search(q.text, mode="full", filters=filters))
    return hook.summary()[1]
