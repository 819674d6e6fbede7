"""The answer pane: conflict banner, claims with [n] markers, abstention, notes."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from engine.render import claim_display, headings_under
from engine.types import Answer, Citation, SearchResult
from tui.widgets.conflict_banner import ConflictBanner
from tui.widgets.literal import visible

NOT_FOUND = "Not found in these documents."
SNIPPET = 160


def _snippet(text: str) -> str:
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _where(c: Citation) -> str:
    heading = " › ".join(headings_under(c.title, c.heading_path))
    return f"{heading} · {c.location}" if heading else c.location


def answer_content(answer: Answer) -> Content:
    parts: list[str | tuple[str, str]] = []
    if answer.abstained:
        parts.append((NOT_FOUND, "bold reverse"))
        parts.append("\nNo passage answers this question well enough.")
        if answer.to_consult:
            parts.append(" Passages to consult:")
            for c in answer.to_consult:
                parts.append(f"\n [{c.n}] ")
                parts.append((visible(c.title), "bold"))
                parts.append(f" v{visible(c.version)}\n     {visible(_where(c))}")
    else:
        for i, claim in enumerate(answer.claims):
            if i:
                parts.append("\n")
            if claim.flagged:
                parts.append(("• ⚠ quoted evidence: ", "bold"))
                parts.append((f"“{visible(claim.text)}”", "italic"))
            elif claim.code:  # a command or config block, as lines
                parts.append("  ")
                parts.append((visible(claim.text).replace("\n", "\n  "), "italic"))
            elif claim.safety:
                parts.append(("⚠ SAFETY: ", "bold reverse"))
                parts.append(visible(claim_display(claim)))
            elif claim.is_condition:
                parts.append(("  ▲ condition: ", "bold"))
                parts.append(visible(claim_display(claim)))
            else:
                parts.append("• " + visible(claim_display(claim)))
            parts.append((f" [{', '.join(str(n) for n in claim.cites)}]", "bold"))
            if claim.flagged:
                parts.append((f"\n    ⚠ {visible(claim.flagged)}", "dim"))
        if not answer.claims:
            parts.append(("No claim could be taken from the passages.", "italic"))
    for note in answer.notes:
        parts.append((f"\nⓘ {visible(note)}", "dim"))
    return Content.assemble(*parts)


def preliminary_content(result: SearchResult) -> Content:
    parts: list[str | tuple[str, str]] = [
        ("Preliminary: best passages while the answer is prepared…", "italic"),
    ]
    if not result.hits:
        parts.append("\nNo passage matched.")
    for hit in result.hits:
        chunk = hit.chunk
        title = hit.title or chunk.doc_id
        parts.append(f"\n[{hit.rank}] ")
        parts.append((visible(title), "bold"))
        parts.append(f" · {visible(chunk.location)}\n    {_snippet(chunk.text)}")
    return Content.assemble(*parts)


class AnswerView(VerticalScroll):
    """Everything about one answer except its sources list."""

    def compose(self) -> ComposeResult:
        yield ConflictBanner(id="conflicts")
        yield Static("", markup=False, id="answer-body")

    @property
    def body(self) -> Static:
        return self.query_one("#answer-body", Static)

    def show_message(self, text: str) -> None:
        self.query_one(ConflictBanner).show_conflicts(())
        self.body.update(Content(text))
        self.set_class(False, "-abstained")

    def show_preliminary(self, result: SearchResult) -> None:
        self.query_one(ConflictBanner).show_conflicts(())
        self.body.update(preliminary_content(result))
        self.set_class(False, "-abstained")
        self.add_class("-preliminary")

    def show_answer(self, answer: Answer) -> None:
        self.remove_class("-preliminary")
        self.set_class(answer.abstained, "-abstained")
        self.query_one(ConflictBanner).show_conflicts(answer.conflicts)
        self.body.update(answer_content(answer))
        self.scroll_home(animate=False)
