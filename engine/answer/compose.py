"""``compose_answer``: a search result's final context -> a cited Answer (or an abstention)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.answer.abstention import (
    Verdict, _names, _typed_candidates, abstain_threshold, abstains, answerability,
)
from engine.answer.conditions import _conditions
from engine.answer.conflicts import table_header
from engine.answer.scoring import Assessment, ScoredUnit, assess, states_condition
from engine.answer.selection import PASSAGE_MARGIN, _choose, left_out
from engine.answer.task import (
    code_remedies, is_procedural, lead_ins, numbered_sections, procedure_steps, section_rest, span, states_safety,
)
from engine.answer.versions import MetaCache, VersionConflicts, find_version_conflicts
from engine.config import Config
from engine.lang.codes import exact_codes
from engine.lang.cues import announces, injection_reason
from engine.lang.markup import code_span_only
from engine.lang.units import Unit
from engine.lang.words import numbers_in, terms
from engine.search.eligibility import Eligibility
from engine.types import Answer, Chunk, Citation, Claim, DocumentMeta, SearchResult, StageStatus

INSTRUCTION_NOTE = ("text that reads as an instruction to the system is shown as quoted evidence "
                    "and was not followed")


def citation_for(n: int, chunk: Chunk, meta: DocumentMeta) -> Citation:
    return Citation(
        n=n, chunk_id=chunk.id, doc_id=chunk.doc_id, title=meta.title, version=meta.version,
        date=meta.date, status=meta.status, heading_path=chunk.heading_path, path=chunk.path,
        start_line=chunk.start_line, end_line=chunk.end_line, page=chunk.page, end_page=chunk.end_page,
    )


NO_WORDS = "the question holds no word to look for (no letter or digit)"


def holds_words(question: str) -> bool:
    """Whether ``question`` holds a letter or a digit, in any script ("???" holds none)."""
    return any(ch.isalnum() for ch in question)


def compose_answer(question: str, result: SearchResult, library, config: Config,
                   eligibility: Eligibility | None = None) -> Answer:
    """The cited answer for ``question`` built from ``result``'s final context.

    ``library`` is an ``engine.answer.AnswerSource``. ``eligibility`` is the rule the search ran
    under (default: the config's filters); other versions of an answered document are looked up
    under it (engine.answer.versions).
    """
    rule = eligibility if eligibility is not None else Eligibility.from_filters(config.filters)
    notes = [f"{s.name}: {s.note}" for s in result.trace.stages
             if s.status is StageStatus.DEGRADED] if result.trace else []
    if not holds_words(question):  # nothing to answer, whatever the search brought back
        return Answer(question, (), (), abstained=True, trace=result.trace,
                      notes=tuple(notes + [NO_WORDS]))
    if not result.hits:
        return Answer(question, (), (), abstained=True, trace=result.trace,
                      notes=tuple(notes + ["no passage passed the filters"]))
    a = _assess_looking_past_context(question, result, library, config, notes)
    verdict = answerability(question, result, library, a, config)
    if abstains(a, abstain_threshold(config)) if verdict is None else (verdict.abstain or not a.units):
        return _abstention(question, result, library, config, a, verdict, notes)  # its reason says the score
    if verdict is not None:
        notes.append(verdict.note)
    chosen = _choose(question, a, library, config)
    related = _conditions(a, chosen, question, library)
    _add_task_units(question, chosen, a, library, related, config)
    steps_note = numbered_sections(chosen, library) if is_procedural(question) else ""
    meta = MetaCache(library)
    found = find_version_conflicts(a, chosen, library, rule, meta)
    claims, citations, numbers = _claims(result, chosen, related, found, meta)
    if steps_note:
        notes.append(steps_note)
    if a.unanswered:
        notes.append(f"not found in these documents: the {_names(a.unanswered)} asked for")
    unknown = _unknown_names(result)
    if unknown:  # the answer is about what the documents do say
        notes.append(_unknown_note(unknown))
    more = left_out(a, [*chosen, *related])
    if more:
        notes.append(f"{more} more statement{'s' if more > 1 else ''} as close to the question in the cited "
                     "passages: open them to read on")
    if any(cl.flagged for cl in claims):
        notes.append(INSTRUCTION_NOTE)
    return Answer(question, tuple(claims), tuple(citations), tuple(found.renumbered(numbers)),
                  trace=result.trace, notes=tuple(notes),
                  answerability=verdict.probability if verdict else None)


def _assess_looking_past_context(question: str, result: SearchResult, library, config: Config,
                                 notes: list[str]) -> Assessment:
    """The assessment of the final context; when the question asks for an attribute it lacks,
    passages past the final context that give it are added when a unit giving it would be a
    claim (about the question, not any value of the right unit: "15 g of grease" does not give
    a pump's weight)."""
    a = assess(question, result, library, config)
    if not a.unanswered:
        return a
    typed = _typed_candidates(question, a, result, library)
    if not typed:
        return a
    b = assess(question, result, library, config, extra=typed)
    ids = {c.id for c, _ in typed}
    best = max((s.score for s in b.units if not s.flagged), default=-1.0)
    if any(s.typed and s.chunk.id in ids and not s.flagged and s.score >= best - PASSAGE_MARGIN
           for s in b.units):
        found = [t for t in b.expected if t not in b.unanswered and t in a.unanswered]
        notes.append(f"the {_names(found)} asked for was found past the final context "
                     f"(rank {', '.join(str(r) for c, r in typed)})")
        return b
    return a


def _add_task_units(question: str, chosen: list[ScoredUnit], a: Assessment, library,
                    related: list[ScoredUnit], config: Config) -> None:
    """A how-to question's whole procedure, the rest of a short section, a named error code's
    remedy and what a claim ending with a colon announces (a claim's or a condition's shown with
    it) join the claims (engine.answer.task). A code block brought whole replaces its entries
    chosen on their own."""
    steps = procedure_steps(chosen, a, library) if is_procedural(question) else []
    if steps:  # a step chosen on its own (from any chunk holding it) reads in the procedure's place
        rank = {span(s): s.rank for s in steps}
        chosen[:] = [replace(s, rank=rank.get(span(s), s.rank)) for s in chosen]
    extra = steps + code_remedies(question, chosen, a)
    if not steps and not a.expected and not exact_codes(question):
        extra += section_rest(chosen, a, library, config.answer.max_claims - len(chosen))
    extra += lead_ins(chosen + extra + related, a, library)  # the rest of a section announces too
    have = {s.key for s in chosen}
    for s in extra:
        if s.key not in have:
            have.add(s.key)
            chosen.append(s)
    blocks = [s for s in extra if s.unit.kind == "code"]
    for units in (chosen, related):  # (the same block brought from two overlapping chunks stays: one span, one claim)
        units[:] = [u for u in units if any(u is b for b in blocks) or not any(_within(u, b) for b in blocks)]


def _within(unit: ScoredUnit, block: ScoredUnit) -> bool:
    """An entry whose lines lie inside ``block``'s (same document)."""
    u, b = unit.unit, block.unit
    return (u.kind == "code" and (unit.chunk.id, u.order) != (block.chunk.id, b.order)
            and unit.chunk.path == block.chunk.path
            and b.char_start <= u.char_start and u.char_end <= b.char_end)


def _abstention(question: str, result: SearchResult, library, config: Config, a: Assessment,
                verdict: Verdict | None, notes: list[str]) -> Answer:
    """"Not found in these documents", why, and the closest passages to consult."""
    consult = tuple(citation_for(i + 1, h.chunk, library.meta_of(h.chunk))
                    for i, h in enumerate(result.hits[: config.answer.to_consult]))
    if verdict is not None:
        why = verdict.why
        if a.type_missing:
            why += f"; no passage gives the {_names(a.unanswered)} asked for"
    elif a.type_missing:
        why = f"no passage gives the {_names(a.unanswered)} asked for"
    else:
        why = f"evidence {a.evidence:.3f} below threshold {abstain_threshold(config):.3f}"
    unknown = _unknown_names(result)
    named = {u.upper() for u in unknown}  # a code no document mentions is said once, with the names
    codes = [c for c in a.missing_codes if c not in named]
    if codes:
        why += f"; not in these passages: {', '.join(codes)}"
    if unknown:
        why += f"; {_unknown_note(unknown)}"
    return Answer(question, (), (), abstained=True, to_consult=consult, trace=result.trace,
                  notes=tuple(notes + [f"not found in these documents ({why})"]),
                  answerability=verdict.probability if verdict else None)


def _unknown_names(result: SearchResult) -> tuple[str, ...]:
    return result.trace.unknown_names if result.trace else ()


def _unknown_note(names: tuple[str, ...]) -> str:
    return f"no document searched mentions {', '.join(names)}"


Entry = tuple[Unit, Chunk, int, bool, str]  # unit, chunk, rank, is a condition, flagged


def _announced_by(prev: Entry, entry: Entry, follower: bool = False) -> bool:
    """Is ``entry`` a list item, a table row or code (a block, or a statement that is one code
    span) that ``prev`` announces (it ends with a colon), or that goes on a list, table or block
    ``prev`` belongs to (``follower``): the next span of the same passage?"""
    (pu, pc, prank, _c, pflag), (u, c, rank, _c2, _f) = prev, entry
    shown_under = u.kind in ("list_item", "code", "table_row") or code_span_only(u.text)
    return (shown_under and rank == prank and c.path == pc.path
            and u.char_start >= pu.char_end and not pflag
            and (announces(pu.text) or (follower and pu.kind == u.kind)))


def _one_per_span(entries: dict[tuple[str, int], Entry]) -> dict[tuple[str, int], Entry]:
    """One claim per span of one document version: chunks of a section overlap
    (chunking.section_overlap_tokens), so two context passages can hold the same statement. The
    first one met (the chosen claims come first) says how it is marked; the best-ranked passage
    holding it cites it, so that it reads with that passage's statements ("Follow these steps to
    calibrate `tap_threshold`:" chosen in the section's first chunk, ranked eighth, reads before
    its steps, brought from the chunk ranked first that holds it too)."""
    first: dict[tuple[str, str, str, int, int], tuple[str, int]] = {}
    out: dict[tuple[str, int], Entry] = {}
    for key, e in entries.items():
        u, c = e[0], e[1]
        where = (c.doc_id, c.version, c.path, u.char_start, u.char_end)
        if where not in first:
            first[where] = key
            out[key] = e
        elif e[2] < out[first[where]][2]:  # held by a better-ranked passage: cited there, marked as first met
            out[first[where]] = (u, c, e[2], *out[first[where]][3:])
    return out


def _claims(result: SearchResult, chosen: list[ScoredUnit], related: list[ScoredUnit],
            found: VersionConflicts, meta: MetaCache) -> tuple[list[Claim], list[Citation], dict[str, int]]:
    """Claims in reading order, their citations, and each cited chunk's number.

    Passages come by their best chosen claim (the most direct answer first), then by rank; a
    related passage (next section, other version) shares its anchor's rank and follows it;
    inside a passage, safety statements first, then document order (by position in the document:
    a section read whole spans chunks, some in the context and some not). Versions shown inside a
    warning only are cited after. (Leading with the first-ranked passage instead, 2026-12-03: on
    the klipper-manuals, WLED, ZMK and Meshtastic train splits this order's first claim misses a
    gold passage ranked first on 8 questions and finds one ranked lower on 8, a draw; WLED, run
    both ways, 59 -> 58 first claims on gold of 75.)"""
    entries: dict[tuple[str, int], Entry] = {}
    for s in chosen:
        entries[s.key] = (s.unit, s.chunk, s.rank, False, s.flagged)
    for s in related:
        entries.setdefault(s.key, (s.unit, s.chunk, s.rank, True, s.flagged))
    for u, c, rank in found.used_units():
        if c.id not in found.warning_only:
            entries.setdefault((c.id, u.order), (u, c, rank, states_condition(u, c), injection_reason(u.text)))
    entries = _one_per_span(entries)
    in_context = {h.chunk.id for h in result.hits}
    best_at_rank: dict[int, float] = {}
    for s in chosen:
        best_at_rank[s.rank] = max(best_at_rank.get(s.rank, -np.inf), s.score)
    # at one rank a document of the context comes before one brought (another version), and a
    # document's statements read in its order, whichever of its overlapping chunks holds each
    shown = {(e[2], e[1].path) for e in entries.values() if e[1].id in in_context}
    ordered = sorted(entries.values(), key=lambda e: (-best_at_rank.get(e[2], -np.inf), e[2],
                                                      (e[2], e[1].path) not in shown, e[1].path,
                                                      e[0].char_start, e[0].order))
    numbers: dict[str, int] = {}
    citations: list[Citation] = []

    def number(c: Chunk) -> int:
        if c.id not in numbers:
            numbers[c.id] = len(numbers) + 1
            citations.append(citation_for(numbers[c.id], c, meta(c)))
        return numbers[c.id]

    # a passage's safety statements lead its statements (stable sort); the passage of the most
    # direct answer still leads the answer, so a warning about another step does not come first
    # (what a statement announces, its list or code, moves with it)
    group = {r: i for i, r in enumerate(dict.fromkeys(e[2] for e in ordered))}
    safe = [states_safety(e[0]) and not e[4] for e in ordered]
    leads, follows = list(safe), [False] * len(ordered)
    for i in range(1, len(ordered)):
        if _announced_by(ordered[i - 1], ordered[i], follower=follows[i - 1]):
            leads[i], follows[i] = leads[i - 1], True
    marked = sorted(zip(ordered, safe, leads), key=lambda m: (group[m[0][2]], not m[2]))
    claims = [Claim(text=u.text, citation=number(c), char_start=u.char_start, char_end=u.char_end,
                    is_condition=cond, flagged=flag, safety=safety, header=table_header(c, u),
                    code=u.kind == "code")
              for (u, c, _, cond, flag), safety, _lead in marked]
    for _u, c, _r in found.used_units():
        if c.id in found.warning_only:
            number(c)
    return _fold_repeats(claims), citations, numbers


def _fold_repeats(claims: list[Claim]) -> list[Claim]:
    """A claim another passage already made (an edition of the manual, another manual: the same
    words and numbers, "Set the speed for CANBus at 1M (which must be ...)" and "... 1M (must be
    ...)") is not shown twice: the first one cites both (``Claim.also``). A table row folds only into
    a row under the same header, a marked claim (safety, condition, flagged, code) only into one
    marked alike. Nor is a claim whose whole text (runs of whitespace aside) an earlier claim of
    another passage already shows, marked alike but for code: the same option's description
    repeated for another driver, cut a line later ("#   when the stepper is not moving. ..."), or
    the command ``ls /dev/serial/by-id/*`` a sentence before it gives ("run `ls /dev/serial/by-id/*`")."""
    out: list[Claim] = []
    first: dict[tuple, int] = {}
    shown: list[str] = []  # out's texts, whitespace folded
    for cl in claims:
        words = frozenset(terms(cl.text))
        key = (words, numbers_in(cl.text), cl.header, cl.code, cl.safety, cl.is_condition, cl.flagged)
        flat = " ".join(cl.text.split())
        at = first.get(key) if words else None
        if at is None and words:
            marks = (cl.header, cl.safety, cl.is_condition, cl.flagged)  # all but code
            at = next((i for i, o in enumerate(out) if flat in shown[i]
                       and (o.header, o.safety, o.is_condition, o.flagged) == marks), None)
        if at is not None and cl.citation not in out[at].cites:
            out[at] = replace(out[at], also=(*out[at].also, cl.citation))
            continue
        if words and key not in first:
            first[key] = len(out)
        out.append(cl)
        shown.append(flat)
    return out
