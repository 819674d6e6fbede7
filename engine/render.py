"""An Answer as plain text (terminal), Markdown (work order) or JSON-ready dicts.

Document text is data, never markup or terminal control: :func:`engine.safety.terminal_safe`
removes ANSI escape sequences and shows every other control, C1, bidi and invisible format
character as a visible ``\\xNN`` / ``\\uNNNN`` escape. :func:`markdown_escape` also
backslash-escapes the characters Markdown would interpret, so a ``[bold]`` tag,
a ``|`` or a ``*`` in a manual comes out as written. JSON keeps the exact text
(claims must match their spans byte for byte); :func:`engine.safety.json_dumps` writes the
same unsafe characters as JSON escapes.

The TUI shows document text in markup-off widgets and does not use this module's
text renderer.
"""

from __future__ import annotations

import html
import re
from datetime import date as Date
from typing import Any

from engine.lang.markup import read_shortcodes, without_hidden_tags
from engine.lang.records import record_cells
from engine.lang.tables import table_cells
from engine.lang.text import headings_under
from engine.safety import terminal_safe
from engine.types import Answer, Citation, Claim, Conflict, ConflictSide, Trace

__all__ = [
    "answer_to_dict", "citation_to_dict", "headings_under", "markdown_escape", "render_markdown", "render_text",
    "terminal_safe", "unknown_names_note",
]

_MD_INLINE = re.compile(r"([\\`*\[\]<>|~])")  # what CommonMark + GFM tables read inside a line
_MD_LONE_UNDERSCORE = re.compile(r"(?<!\w)_|_(?!\w)")  # ERR_CACHE_STALE stays as written
_MD_ENTITY = re.compile(r"&(?=#?\w+;)")


_MD_BLOCK_START = re.compile(r"^(\s*)(#|[-+=]|\d{1,9}(?=[.)]))")


def markdown_escape(text: str, *, block_start: bool = False) -> str:
    """Terminal-safe text on one line, with only the characters Markdown would interpret inside a
    line escaped (emphasis, code, links, HTML, table cells, entities), so a manual's ``[bold]``,
    ``|`` or ``*`` comes out as written while ``ERR_CACHE_STALE (firmware 1.3)`` stays readable.
    ``block_start``: the text opens a block (a list item's content), where a leading ``#``, ``-``,
    ``+``, ``=`` or ``1.`` would start a heading or a list, so that one mark is escaped too."""
    text = terminal_safe(text, keep_newlines=False)
    text = _MD_INLINE.sub(r"\\\1", text)
    text = _MD_LONE_UNDERSCORE.sub(r"\\_", text)
    text = _MD_ENTITY.sub(r"\\&", text)
    if block_start:
        m = _MD_BLOCK_START.match(text)
        if m and m.group(2)[0].isdigit():
            end = m.end()
            text = text[:end] + "\\" + text[end:]
        elif m:
            text = text[:m.start(2)] + "\\" + text[m.start(2):]
    return text


# --- plain text -----------------------------------------------------------------------


def _when(d: Date | None) -> str:
    return d.isoformat() if d else "undated"


def side_text(side: ConflictSide) -> str:
    models = f", {', '.join(side.models)}" if side.models else ""
    return (f"{side.doc_id} version {side.version} ({_when(side.date)}, {side.status}{models}) "
            f"says {side.value} [{side.citation}]")


def conflict_text(c: Conflict) -> str:
    return f"{c.subject}: " + "; ".join(side_text(s) for s in c.sides)


CHANGED_NOTE = "changed since indexing: re-index"


# a link's target: a path, after a Jekyll site's Liquid output or made by it ("{{ site.baseurl }}/docs/…",
# "{{ 'pull_1.jpg' | prepend: site.img }}")
_TARGET = r"(?:\{\{[^{}\n]*\}\})?[^)\s]*"
# an image, or one that links to its full size: [![alt](small.webp)](large.webp)
_MD_IMAGE = re.compile(rf"[ \t]*\[!\[[^\]\n]*\]\({_TARGET}\)\]\({_TARGET}\)|[ \t]*!\[[^\]\n]*\]\({_TARGET}\)")
_MD_LINK = re.compile(rf"(?<!!)\[([^\]\n]+)\]\({_TARGET}(?:\s+\"[^\"\n]*\")?\)")
# bold or italic by asterisks ("**Caution**", "*Property, readable*"; not "__": __init__, nor "2 * 3",
# "*.cfg", "X*10"), and one a sentence was cut from: "**Caution.", "Use *two hands." and "Turn it off first.**"
_MD_EMPHASIS = re.compile(r"(?<![\w*\\])(\*\*?)(?=[^\s*])(.+?)(?<=[^\s*])\1(?![\w*])")
_MD_EMPHASIS_OPENED = re.compile(r"(?<!\S)\*\*?(?=[^\W_])")
_MD_EMPHASIS_CLOSED = re.compile(r"(?<=[.!?:;。！？])\*\*?$")
_MD_CODE_SPAN = re.compile(r"((`+)[^`]*?\2)")


def claim_display(cl: Claim) -> str:
    """A claim as shown: verbatim, except a table row with its header, whose cells are shown
    with their columns ("Impeller nut — Size: M16 · Torque (N·m): 38"; engine.lang.tables reads
    the row's cells, however its format writes them), a front matter's record with its fields ("S —
    optional: true · description: Timeout period"; engine.lang.records), and Markdown's inline
    markup in prose: a link shows its text, an image nothing, bold its words, an HTML element's
    tags nothing (``<br/>`` a space; engine.lang.markup.hidden_inline_tag: ``<GND>`` stays), code
    spans keep their backticks and what is in them (a table row needs no pipe at either end), a
    character reference reads as its character outside code spans ("a&#x3C;x": "a<x"), and a
    sentence wrapped over indented lines reads as one line. ``cl.text`` itself stays the verbatim
    span it cites; a code block is shown as it is."""
    if cl.code:
        return cl.text
    if not cl.header:
        fields = record_cells(cl.text)  # a front matter's record (engine.lang.records)
        if fields:
            head, rest = (f"{fields[0][1]} — ", fields[1:]) if len(fields) > 1 else ("", fields)
            return _inline_markup_read(head + " · ".join(f"{k}: {v}" for k, v in rest if v))
        return _inline_markup_read(cl.text)
    head = table_cells(cl.header)
    cells = table_cells(cl.text, len(head))  # a pipe row, a reST list-table or simple table row
    if len(head) != len(cells) or len(cells) < 2:
        return _inline_markup_read(cl.text)
    pairs = [f"{h}: {v}" if h else v for h, v in zip(head[1:], cells[1:]) if v]
    return _inline_markup_read(f"{cells[0]} — " + " · ".join(pairs))


def _unpaired(run: re.Pattern[str], text: str) -> str:
    """``text`` without the emphasis ``run`` when it is the text's only asterisks."""
    m = run.search(text)
    return text[:m.start()] + text[m.end():] if m and text.count("*") == m.end() - m.start() else text


def _inline_markup_read(text: str) -> str:
    shown = re.sub(r"\s+", " ", _MD_LINK.sub(r"\1", _MD_IMAGE.sub("", without_hidden_tags(text)))).strip()
    # a sentence wrapped and indented reads as one line; emphasis outside code spans reads as its words
    parts = _MD_CODE_SPAN.split(shown)  # text, code span, its ticks, text, ...
    plain, code = [_MD_EMPHASIS.sub(r"\2", read_shortcodes(p)) for p in parts[::3]], parts[1::3]
    plain[0] = _unpaired(_MD_EMPHASIS_OPENED, plain[0])
    plain[-1] = _unpaired(_MD_EMPHASIS_CLOSED, plain[-1])
    plain = [html.unescape(p) for p in plain]  # "&#x3C;" reads "<", as Markdown renders it (not in code)
    return "".join(p + c for p, c in zip(plain, code + [""])).strip() or text


def citation_line(c: Citation) -> str:
    heading = " > ".join(headings_under(c.title, c.heading_path))
    parts = [c.title or c.doc_id, f"version {c.version}", _when(c.date), c.status]
    if heading:
        parts.append(heading)
    parts.append(c.location)
    if c.changed:
        parts.append(CHANGED_NOTE)
    return " — ".join(parts)


def _refs(claim: Claim) -> str:
    """A claim's citation marks for a terminal: "1", or "1, 3" when another passage says the same."""
    return ", ".join(str(n) for n in claim.cites)


def _notes(claim: Claim) -> str:
    """A claim's footnote marks in Markdown: "[^1]", or "[^1][^3]"."""
    return "".join(f"[^{n}]" for n in claim.cites)


def render_text(answer: Answer, *, trace: bool = False) -> str:
    """The answer for a terminal: claims with [n], conflicts, then the sources."""
    s = terminal_safe
    lines: list[str] = []
    if answer.abstained:
        lines.append("Not found in these documents.")
        if answer.to_consult:
            lines.append("")
            lines.append("Closest passages to consult (these do not answer the question):")
            for c in answer.to_consult:
                lines.append(f"  - {s(citation_line(c), keep_newlines=False)}")
    else:
        for cl in answer.claims:
            text = s(claim_display(cl), keep_newlines=False)
            if cl.flagged:
                lines.append(f'  (quoted, not followed: {cl.flagged}) "{text}" [{_refs(cl)}]')
            elif cl.code:  # lines of a command or config block, kept as lines
                lines += [f"      {s(ln, keep_newlines=False)}" for ln in cl.text.splitlines()]
                lines[-1] += f" [{_refs(cl)}]"
            elif cl.safety:
                lines.append(f"  SAFETY: {text} [{_refs(cl)}]")
            elif cl.is_condition:
                lines.append(f"  ! {text} [{_refs(cl)}]")
            else:
                lines.append(f"- {text} [{_refs(cl)}]")
        if answer.conflicts:
            lines.append("")
            lines.append("Warning: the sources disagree.")
            for c in answer.conflicts:
                lines.append(f"  * {s(conflict_text(c), keep_newlines=False)}")
        lines.append("")
        lines.append("Sources:")
        for c in answer.citations:
            lines.append(f"  [{c.n}] {s(citation_line(c), keep_newlines=False)}")
    for note in answer.notes:
        lines.append(f"note: {s(note, keep_newlines=False)}")
    if trace and answer.trace is not None:
        lines.append("")
        lines += _trace_lines(answer.trace)
    return "\n".join(lines) + "\n"


def unknown_names_note(t: Trace) -> str:
    """What the question names that no eligible passage mentions, as the trace says it ('' if none)."""
    return f"no eligible passage mentions {', '.join(t.unknown_names)}" if t.unknown_names else ""


def _trace_lines(t: Trace) -> list[str]:
    out = [f"trace: {t.eligible}/{t.total} chunks eligible"]
    if t.unknown_names:
        out[0] += f"; {terminal_safe(unknown_names_note(t), keep_newlines=False)}"
    for st in t.stages:
        note = f"  ({terminal_safe(st.note, keep_newlines=False)})" if st.note else ""
        out.append(f"  {st.name:<8} {len(st.ranked):>4} kept of window {st.window:<4} {st.ms:8.1f} ms{note}")
    return out


# --- Markdown (work order) ---------------------------------------------------------------


def render_markdown(answer: Answer) -> str:
    """A work-order section: the question, the claims with footnote citations ``[^n]``."""
    e = markdown_escape
    out = [f"## {e(answer.question)}", ""]
    if answer.abstained:
        out.append("**Not found in these documents.**")
        if answer.to_consult:
            out += ["", "Closest passages to consult (these do not answer the question):", ""]
            out += [f"- {e(citation_line(c), block_start=True)}" for c in answer.to_consult]
    else:
        for cl in answer.claims:
            text = e(claim_display(cl), block_start=True)
            if cl.flagged:
                out.append(f"- *Quoted, not followed ({e(cl.flagged)}):* “{text}”{_notes(cl)}")
            elif cl.code:  # a fenced block, its fence longer than any backtick run inside
                fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", cl.text)), default=0))
                body = [f"  {terminal_safe(ln, keep_newlines=False)}" for ln in cl.text.splitlines()]
                out += [f"  {fence}text", *body, f"  {fence}", f"  {_notes(cl)}"]
            elif cl.safety:
                out.append(f"- **Safety:** {text}{_notes(cl)}")
            elif cl.is_condition:
                out.append(f"- **Condition:** {text}{_notes(cl)}")
            else:
                out.append(f"- {text}{_notes(cl)}")
        if answer.conflicts:
            titles = {c.n: c.title or c.doc_id for c in answer.citations}
            out += ["", "> **Warning: the sources disagree.**"]
            for c in answer.conflicts:
                out.append(f"> - {e(c.subject)}: " + "; ".join(
                    f"{e(titles.get(s.citation, s.doc_id))} version {e(s.version)} ({_when(s.date)}, "
                    f"{s.status}) says {e(s.value)}[^{s.citation}]" for s in c.sides))
        out.append("")
        for c in answer.citations:
            out.append(f"[^{c.n}]: {e(citation_line(c), block_start=True)}")
    if answer.notes:
        out.append("")
        out += [f"*Note: {e(n)}*" for n in answer.notes]
    return "\n".join(out) + "\n"


# --- JSON -------------------------------------------------------------------------------


def citation_to_dict(c: Citation) -> dict[str, Any]:
    return {
        "n": c.n, "chunk_id": c.chunk_id, "doc_id": c.doc_id, "title": c.title, "version": c.version,
        "date": c.date.isoformat() if c.date else None, "status": c.status,
        "heading_path": list(c.heading_path), "path": c.path, "line": c.start_line,
        "end_line": c.end_line, "page": c.page, "end_page": c.end_page, "location": c.location, "changed": c.changed,
    }


def answer_to_dict(answer: Answer) -> dict[str, Any]:
    """The JSON shape documented in ``fieldqa/commands/answers.py``."""
    return {
        "question": answer.question,
        "abstained": answer.abstained,
        "answerability": None if answer.answerability is None else round(answer.answerability, 4),
        "claims": [
            {"text": c.text, "citation": c.citation, "also": list(c.also), "char_start": c.char_start,
             "char_end": c.char_end, "is_condition": c.is_condition, "flagged": c.flagged, "safety": c.safety,
             "header": c.header, "code": c.code, "display": claim_display(c)}
            for c in answer.claims
        ],
        "citations": [citation_to_dict(c) for c in answer.citations],
        "conflicts": [
            {"subject": c.subject, "sides": [
                {"citation": s.citation, "doc_id": s.doc_id, "version": s.version,
                 "date": s.date.isoformat() if s.date else None, "status": s.status,
                 "models": list(s.models), "value": s.value}
                for s in c.sides]}
            for c in answer.conflicts
        ],
        "to_consult": [citation_to_dict(c) for c in answer.to_consult],
        "notes": list(answer.notes),
        "trace": None if answer.trace is None else trace_to_dict(answer.trace),
    }


def trace_to_dict(t: Trace) -> dict[str, Any]:
    """The one JSON shape of a trace (``ask --json``, ``search --json``, ``trace --json``): each
    stage with its status, window, time, note and every id it kept, with its rank and score."""
    return {"question": t.question, "eligible": t.eligible, "total": t.total, "filters": list(t.filters),
            "unknown_names": list(t.unknown_names),
            "stages": [{"name": s.name, "status": s.status.value, "count": len(s.ranked), "window": s.window,
                        "ms": round(s.ms, 2), "note": s.note,
                        "ranked": [{"chunk_id": r.chunk_id, "rank": r.rank, "score": float(r.score)}
                                   for r in s.ranked]}
                       for s in t.stages]}
