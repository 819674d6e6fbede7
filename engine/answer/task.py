"""Answers shaped for the task the question names.

- A how-to question gets the procedure of the best section whole and in order: every list item
  of that section (numbered or bulleted steps keep their values: torques, sizes), and those of
  the next section when the section points forward to it ("the next section must be completed
  first"); a section with no list gives its statements in order (a procedure written as
  paragraphs), with the commands they announce; of a longer one than ``MAX_STEPS`` statements,
  the ``READ_ON`` statements from the best claim on (a task's intro, then its steps). A section's
  statements are counted once each (its chunks overlap by whole units). Measured (2026-12-03, the
  121 how-to answerable questions of the seven manual sets' train splits): claims citing gold 682
  -> 742 of 1,197 -> 1,289, first claims unchanged (87); reading on alone for 4 / 6 / 8 / 10 / 15
  statements adds +14 / +28 / +41 / +49 / +60 of +24 / +42 / +61 / +76 / +100 claims (an added
  claim cites gold more often than the average one, most often at 6 to 8); counting each once
  then adds +19 of +31 (five questions whose section was long only counted twice). Dev splits
  (57, reported): 301 -> 355 of 519 -> 601.
  A section whose list defines terms, two thirds of its items or more ("**Reset** — a switch that
  resets the timer", "`debounce-press-ms`: …"), is a reference (a menu's fields), not steps: the
  answer is its closest items, not the whole list. Measured (2026-12-07, train splits, answers as
  claims per answer / share citing gold): klipper-manuals 7.52 / .559 -> 7.48 / .562, ZMK 6.22 / .420
  -> 6.18 / .416 (the three items left out, of the gold passage, are the other debounce settings of
  a question about one), WLED, Meshtastic and device-pdfs unchanged; cited and first claim unchanged.
  How-to is read from the question's form in each language ("how do I…", "comment…", "wie…",
  "cómo…", "어떻게/방법", "如何/怎么", "どうやって/手順"), never from a list of questions; "how
  often / how much / wie viel…" ask for a value, not a procedure.
  The section is the best claim's, list or not. Preferring, when that section has no list, the
  section of one of the first two or three context passages that has one (2 to ``MAX_STEPS``
  items) was measured (2026-12-03, the procedural answerable questions of the seven manual sets'
  train splits, 121): first claim cites gold 87 -> 79 (two) / 74 (three), claims citing gold 682
  -> 653 / 619 of ~1,195; a manual's lists near a how-to question are often another task's.
- Any other question, unless it asks for an attribute (engine.answer.answertype) or names a code,
  gets what follows the best claim in its section, as far as the claims' cap allows, when the
  section is short (``SHORT_SECTION`` statements or fewer, and not a list of defined fields): a
  troubleshooting entry's "**Problem**: the probe deploys but won't move down" is followed by its
  "**Solution**: …", a symptom by its cause, a setting by its consequence.
  Measured (2026-12-07, train splits, claims per answer / share citing gold, for sections of at
  most 0 / 3 / 4 / 6 statements): klipper-manuals 7.48 / .562, 7.52 / .563, 7.61 / .569, 7.80 / .579;
  WLED 6.46 / .493, 6.49 / .493, 6.58 / .500, 6.90 / .523; ZMK 6.18 / .416, 6.31 / .427, 6.43 / .434,
  6.63 / .438; Meshtastic 6.29 / .497, 6.38 / .501, 6.51 / .512, 6.63 / .516; device-pdfs 4.45 / .562,
  4.50 / .567, 4.53 / .570, 4.53 / .570 (the claims added at 6 cite gold for .57 to 1.0 of them,
  against about half of all claims); cited, first claim and abstention unchanged. Those figures
  read on past the claims' cap and after a named code too; as shipped, within the cap (a user's
  ``answer.max_claims``) and not for a question naming a code (a list of error codes reads on into
  the next code's line): klipper-manuals 7.60 / .568, WLED 6.59 / .499, ZMK 6.40 / .434,
  Meshtastic 6.46 / .507, device-pdfs 4.47 / .565.
  A how-to answer drawn from one of a page's numbered sections ("3. Flashing the firmware") notes
  the numbered sections around it, in order (``numbered_sections``): the steps it does not read
  out are named, not guessed at.
- A question naming an error code gets the code's meaning with its remedy: the units that
  follow the one naming the code on the same line ("ERR_X: meaning. Remedy.").
- A claim that announces what follows ("…issue the following command:", or a list's lead-in closed
  by a semicolon: "there are a few things that can be done;") brings it: the short
  code block after it (engine.lang.units.code_after), a command set as a paragraph of its own
  (one code span: "`BED_MESH_PROFILE REMOVE=default`"), a short table's rows ("PWM0 can be routed
  to gpio12 and gpio18:" over a table of pins), or else the list that follows it, in its
  chunk or, where the chunker cut right after the claim, at the head of the next one.
- Safety statements (warning, danger, caution and their equivalents, or any statement inside
  the manual's own warning markup: engine.lang.units reads Docusaurus, GitHub, MkDocs and reST
  admonitions) among the claims and their conditions are marked, and lead the statements of their
  passage (the passage of the most direct answer leads the answer).
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import takewhile

from engine.answer.scoring import Assessment, ScoredUnit, _unscored
from engine.lang.codes import exact_codes
from engine.lang.cues import announces, injection_reason, is_safety, refers_forward
from engine.lang.markup import code_span_only
from engine.lang.units import SAFETY_ADMONITIONS, code_after

__all__ = ["MAX_STEPS", "SHORT_SECTION", "code_remedies", "is_procedural", "is_safety", "lead_ins",
           "numbered_sections", "procedure_steps", "section_rest", "span", "states_safety"]

MAX_STEPS = 15  # a longer list is a reference table, not a procedure to read out
SHORT_SECTION = 6  # statements: a section this short is read on from the best claim (section_rest)
READ_ON = 8  # a longer section written as prose is read from the best claim on, this many statements

_PROCEDURAL = re.compile(
    r"(?:^|[,;:]\s*)(?:how\s+(?!(?:often|much|many|long|far|big|high|old|hot|cold|fast|heavy|large|small)\b)"
    r"(?:do|can|could|should|would|to|does|is|are)\b|what\s+are\s+the\s+steps|steps\s+to\b)"
    r"|\bhow\s+to\b|\bprocedure\b|\bwalk\s+(?:me|us)\s+through\b"
    r"|^\s*comment\b|\bétapes?\b|\bprocédure\b|\bmarche\s+à\s+suivre\b"
    r"|^\s*wie\s+(?!(?:viel|viele|oft|lange|groß|hoch|schwer|weit|alt|warm|schnell)\b)|\banleitung\b|\bschritte\b"
    r"|^\s*¿?\s*cómo\b|\bpasos\b|\bprocedimiento\b"
    r"|어떻게|방법|절차|如何|怎么|怎样|步骤|どうやって|どのように|手順|方法",
    re.IGNORECASE,
)


def is_procedural(question: str) -> bool:
    """Does the question ask how to do something (a procedure), by its form?"""
    return bool(_PROCEDURAL.search(question))


def states_safety(unit) -> bool:
    """Is the unit a safety statement: a signal word, or inside a warning admonition? Code is one
    only inside the admonition: ``alarm_text = "[red]warning[/red]"`` is a line to copy."""
    return unit.admonition in SAFETY_ADMONITIONS or (unit.kind != "code" and is_safety(unit.text))


def procedure_steps(chosen: list[ScoredUnit], a: Assessment, library) -> list[ScoredUnit]:
    """The list items of the best claim's section, in document order (and of the next section
    when that section points forward), ``MAX_STEPS`` at most; a section without a list (a
    procedure written as paragraphs, as much software documentation is) gives its statements
    instead, on the same bound, or ``READ_ON`` of them from the best claim on when there are more
    (``_read_on``). None for a longer list. Each step takes the best claim's rank, so the
    procedure reads as one in document order (engine.answer.compose orders claims by rank)."""
    best = _best_claim(chosen)
    if best is None:
        return []
    chunks = _section_chunks(library, best.chunk)
    units = _assessed(a, chunks, best.rank)
    if any(refers_forward(u.unit.text) for u in units):
        following = [c for c in library.chunks_of(best.chunk.path) if c.ordinal > max(x.ordinal for x in chunks)]
        if following:
            units += _assessed(a, [c for c in following if c.section_id == following[0].section_id], best.rank)
    units = _once(units)
    steps = [u for u in units if u.unit.kind == "list_item" and not u.flagged]
    if _reference(steps):
        return []  # a list of settings or fields, each defined: a reference, not steps to read out
    if not steps:  # a procedure written as prose: the section's statements, when short enough to read out
        steps = [u for u in units if u.unit.kind == "sentence" and not u.flagged]
        if len(steps) > MAX_STEPS:
            steps = _read_on(steps, best)
    return [replace(u, rank=best.rank) for u in steps] if len(steps) <= MAX_STEPS else []


# a list item that defines a term: the term in bold or as code, a qualifier in brackets at most, then a
# dash or a colon ("**Reset** — a switch that resets the timer", "`ssid`: the network's name")
_DEFINES = re.compile(r"\s*(?:\*\*[^*\n]{1,60}\*\*|__[^_\n]{1,60}__|`[^`\n]{1,60}`)"
                      r"\s*(?:\([^()\n]{0,40}\)\s*)?[—–:]")
MIN_REFERENCE_ITEMS = 3
REFERENCE_SHARE = 2 / 3  # of a section's list items defining terms: a reference list (a menu's fields)


def _reference(items: list[ScoredUnit]) -> bool:
    """Do the list items define terms, most of them (a menu's fields, not steps)?"""
    return len(items) >= MIN_REFERENCE_ITEMS and sum(map(_defines, items)) >= REFERENCE_SHARE * len(items)


def _defines(s: ScoredUnit) -> bool:
    return bool(_DEFINES.match(s.unit.text))


def _best_claim(chosen: list[ScoredUnit]) -> ScoredUnit | None:
    """The best claim the answer has: the first chosen unit that is no instruction to the system."""
    return next((s for s in chosen if not s.flagged), None)


def _section_chunks(library, chunk) -> list:
    """The chunks of ``chunk``'s section, in document order."""
    return [c for c in library.chunks_of(chunk.path) if c.section_id == chunk.section_id]


def _assessed(a: Assessment, chunks, rank: int) -> list[ScoredUnit]:
    """The units of ``chunks`` in document order, as the assessment scored them where it did
    (else unscored, at ``rank``)."""
    scored = {s.key: s for s in a.units}
    return [scored.get(u.key, u) for c in chunks for u in _unscored(c, rank)]


def span(s: ScoredUnit) -> tuple[str, int, int]:
    """Where a unit stands in its document: the same statement whichever overlapping chunk holds it."""
    return s.chunk.path, s.unit.char_start, s.unit.char_end


def _once(units: list[ScoredUnit]) -> list[ScoredUnit]:
    """Each span once (the chunks of a long section overlap by whole units), as first met."""
    seen: dict[tuple[str, int, int], ScoredUnit] = {}
    for u in units:
        seen.setdefault(span(u), u)
    return list(seen.values())


def _read_on(sentences: list[ScoredUnit], best: ScoredUnit) -> list[ScoredUnit]:
    """A long section's statements from the best claim on, ``READ_ON`` at most, in document order."""
    ordered = sorted(sentences, key=lambda s: s.unit.char_start)
    at = next((i for i, s in enumerate(ordered) if s.unit.char_start >= best.unit.char_start), None)
    return [] if at is None else ordered[at:at + READ_ON]


def section_rest(chosen: list[ScoredUnit], a: Assessment, library, room: int) -> list[ScoredUnit]:
    """The statements after the best claim in its section (module docstring), when the section
    holds ``SHORT_SECTION`` statements or fewer, ``room`` at most (the claims' cap less those
    chosen); each takes the best claim's rank, so they read after it in document order."""
    best = _best_claim(chosen)
    if best is None or room <= 0:
        return []
    said = [u for u in _once(_assessed(a, _section_chunks(library, best.chunk), best.rank))
            if u.unit.kind in ("sentence", "list_item") and not u.flagged]
    if len(said) > SHORT_SECTION or _reference([u for u in said if u.unit.kind == "list_item"]):
        return []  # a long section, or a list of fields (the closest is the answer, not those after it)
    have = {span(s) for s in chosen}
    after = [u for u in said if u.unit.char_start > best.unit.char_start and span(u) not in have]
    return [replace(u, rank=best.rank) for u in after[:room]]


# a heading that numbers its section: "3. Flashing the firmware", "Step 2: Building the package", "1) Wiring"
_NUMBERED = re.compile(r"\s*(?:step\s+)?(\d{1,2})\s*[.):]\s+\S", re.IGNORECASE)


def numbered_sections(chosen: list[ScoredUnit], library) -> str:
    """A note for a how-to answer drawn from one of a page's numbered sections ("3. Flashing the
    firmware bin files"): the numbered sections around it, in order ("1. Downloading … · 2. … ·
    3. …"), so the steps the answer does not read out are named; '' when its section is not one
    of two or more sections numbered in sequence under the same heading."""
    best = _best_claim(chosen)
    if best is None or not best.chunk.heading_path or not _NUMBERED.match(best.chunk.heading_path[-1]):
        return ""
    parent, here = best.chunk.heading_path[:-1], best.chunk.heading_path[-1]
    titles = list(dict.fromkeys(c.heading_path[-1] for c in library.chunks_of(best.chunk.path)
                                if len(c.heading_path) == len(parent) + 1 and c.heading_path[:-1] == parent))
    run: list[str] = []  # the run of sections numbered in sequence that holds the answer's
    for t in titles:
        m = _NUMBERED.match(t)
        if m and run and int(m.group(1)) == int(_NUMBERED.match(run[-1]).group(1)) + 1:
            run.append(t)
        elif here in run:
            break
        else:
            run = [t] if m else []
    if here not in run or len(run) < 2:
        return ""
    return f"the page numbers its sections: {' · '.join(run)} (this answer is from {_NUMBERED.match(here).group(1)})"


def code_remedies(question: str, chosen: list[ScoredUnit], a: Assessment) -> list[ScoredUnit]:
    """For each chosen unit naming a code the question names, the units after it on its line."""
    named = exact_codes(question)
    if not named:
        return []
    by_chunk = _units_by_chunk(a)
    out: list[ScoredUnit] = []
    for s in chosen:
        if not named & exact_codes(s.unit.text):
            continue
        for o in by_chunk.get(s.chunk.id, []):
            if o.unit.order > s.unit.order and o.unit.line == s.unit.line and not o.flagged:
                out.append(o)
    return out


def lead_ins(chosen: list[ScoredUnit], a: Assessment, library=None) -> list[ScoredUnit]:
    """For each chosen unit ending with a colon, what it announces: the code block right after it
    in its chunk, or the statement after it when that is one code span (a command set as its own
    paragraph), or the table that follows it (``MAX_STEPS`` rows at most, all of it), or else the
    list items that follow it there (``MAX_STEPS`` at most); for one ending with a semicolon
    ("there are a few things that can be done;"), the list items. When the unit ends its chunk,
    the chunker may have cut between the two: then what opens the next chunk of the same section
    (``library.neighbours``), at the unit's rank."""
    by_chunk = _units_by_chunk(a)
    out: list[ScoredUnit] = []
    for s in chosen:
        colon = announces(s.unit.text)
        if s.flagged or not (colon or s.unit.text.rstrip().endswith((";", "；"))):
            continue
        code = code_after(s.chunk, s.unit) if colon else None  # a semicolon leads into a list only
        later = [o for o in by_chunk.get(s.chunk.id) or _unscored(s.chunk, s.rank) if o.unit.order > s.unit.order]
        if code is None and not later and library is not None:
            nxt = library.neighbours(s.chunk.id)[1]
            if nxt is not None and nxt.path == s.chunk.path and nxt.section_id == s.chunk.section_id:
                code = code_after(nxt, s.unit) if colon else None
                if code is None:  # (at the claim's rank: they read right after it, not with their own chunk)
                    later = [replace(o, rank=s.rank) for o in by_chunk.get(nxt.id) or _unscored(nxt, s.rank)
                             if o.unit.char_start >= s.unit.char_end]
        if code is not None:
            chunk = s.chunk if code.chunk_id == s.chunk.id else nxt
            out.append(ScoredUnit(code, chunk, s.rank, 0.0, 0.0, 0, s.score, False, injection_reason(code.text)))
            continue
        if colon and later and later[0].unit.kind == "sentence" and code_span_only(later[0].unit.text):
            if not later[0].flagged:  # a command written as a paragraph of its own: `BED_MESH_PROFILE REMOVE=default`
                out.append(later[0])
            continue
        if colon and later and later[0].unit.kind == "table_row":  # "… can be routed to these pins:" then a table
            rows = list(takewhile(lambda o: o.unit.kind == "table_row", later))
            if len(rows) <= MAX_STEPS and not (len(rows) == len(later) and _rows_run_on(rows, s, library)):
                out += [o for o in rows if not o.flagged]
            continue
        items = []
        for o in later:
            if o.unit.kind != "list_item":
                break
            items.append(o)
        out += [o for o in items[:MAX_STEPS] if not o.flagged]
    return out


def _rows_run_on(rows: list[ScoredUnit], lead: ScoredUnit, library) -> bool:
    """Does the table of ``rows``, which ends their chunk, go on in the next chunk of the section
    (so that they are not all of it)? Its first statement after the last of them is a row too."""
    chunk = rows[-1].chunk
    if library is None:
        return False
    nxt = library.neighbours(chunk.id)[1]
    if nxt is None or nxt.path != chunk.path or nxt.section_id != chunk.section_id:
        return False
    after = [o for o in _unscored(nxt, lead.rank) if o.unit.char_start >= rows[-1].unit.char_end]
    return bool(after) and after[0].unit.kind == "table_row"


def _units_by_chunk(a: Assessment) -> dict[str, list[ScoredUnit]]:
    """The assessed units of each chunk, in document order."""
    out: dict[str, list[ScoredUnit]] = {}
    for s in sorted(a.units, key=lambda s: s.unit.order):
        out.setdefault(s.chunk.id, []).append(s)
    return out
