"""Pilot tests of the TUI flows, on the fake engine, at 80x24."""

from __future__ import annotations

import pytest
from tui_helpers import ask, make_app, open_citation, settle
from fake_engine import CHUNKS, FakeEngine, torque_answer
from textual.notifications import Notify
from textual.widgets import DataTable, Input, ProgressBar

from engine.config import Config
from tui.app import FieldQAApp
from tui.messages import AnswerReady
from tui.screens.ask import AskScreen
from tui.screens.help import HelpScreen
from tui.screens.library import LibraryScreen
from tui.screens.trace import TraceScreen
from tui.screens.viewer import ViewerScreen
from tui.widgets.answer_view import NOT_FOUND
from tui.widgets.build_status import BuildStatus
from tui.widgets.conflict_banner import ConflictBanner
from tui.widgets.passage_view import PassageView

SIZE = (80, 24)


def body_text(app) -> str:
    return app.ask_screen.answer_view.body.visual.plain


async def test_ask_answer_open_citation_and_back():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "ready · 3 documents" in app.ask_screen.query_one("#status").visual.plain
        await pilot.press(*"What torque for the lid screws?", "enter")  # typed, not set
        await settle(pilot)
        body = body_text(app)
        assert "tighten them crosswise to 1.8 N·m. [1]" in body
        assert "▲ condition: Do not exceed this value" in body
        assert [s.n for s in app.ask_screen.sources.sources] == [1, 2]
        await pilot.press("1")
        await settle(pilot)
        viewer = app.screen
        assert isinstance(viewer, ViewerScreen)
        assert viewer.chunk_id == "v2-lid"
        assert "crosswise to 1.8 N·m" in viewer.query_one(PassageView).passage_text
        crumb = viewer.query_one("#breadcrumb").visual.plain
        assert "Installation › Closing the enclosure" in crumb
        assert "en/kestrel-manual-v2.md:15" in crumb
        await pilot.press("escape")
        assert isinstance(app.screen, AskScreen)
        await pilot.press("2")  # the superseded version's passage
        await settle(pilot)
        assert app.screen.chunk_id == "v1-lid"


async def test_enter_on_a_source_opens_it():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        assert app.focused is app.ask_screen.sources
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ViewerScreen) and app.screen.chunk_id == "v1-lid"


async def test_preliminary_hits_then_the_cited_answer():
    engine = FakeEngine(answer_delay=0.4)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.ask("lid torque")
        for _ in range(100):
            await pilot.pause(0.01)
            if app.ask_screen.answer_view.has_class("-preliminary"):
                break
        assert app.ask_screen.answer_view.has_class("-preliminary")
        assert body_text(app).startswith("Preliminary")
        assert app.ask_screen.sources.border_title == "Sources (preliminary)"
        await settle(pilot)
        assert not app.ask_screen.answer_view.has_class("-preliminary")
        assert "1.8 N·m. [1]" in body_text(app)
        assert app.ask_screen.sources.border_title == "Sources"


async def test_one_search_per_question():
    engine = FakeEngine()
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.ask("lid torque")
        await settle(pilot)
        assert "1.8 N·m. [1]" in body_text(app)
        asked = [call for call, q in engine.calls if q == "lid torque"]
        assert asked == ["search", "answer"], engine.calls


async def test_stale_results_are_dropped():
    engine = FakeEngine(answer_delay=0.2)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.ask("lid torque")
        await pilot.pause(0.05)
        app.ask("console markup codes")  # the first question is still being answered
        await settle(pilot)
        assert "ALARM" in body_text(app)
        app.post_message(AnswerReady(app.seq - 1, torque_answer("lid torque")))  # a late, older answer
        await pilot.pause()
        assert "ALARM" in body_text(app) and "N·m" not in body_text(app)


async def test_not_found_lists_passages_to_consult():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "How do I descale the coffee machine?")
        assert app.ask_screen.answer_view.has_class("-abstained")
        body = body_text(app)
        assert body.startswith(NOT_FOUND)
        assert "Passages to consult" in body and "[1]" in body
        assert app.ask_screen.sources.border_title == "Passages to consult"
        await pilot.press("1")
        await settle(pilot)
        assert app.screen.chunk_id == "v2-desiccant"


async def test_conflict_banner_shows_each_side():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        banner = app.ask_screen.query_one(ConflictBanner)
        assert banner.has_class("-shown") and banner.display
        text = banner.visual.plain
        assert "Conflict: lid screw torque" in text
        assert "[1] v2.0 · 2026-01-20 · active · KX-7: 1.8 N·m" in text
        assert "[2] v1.0 · 2024-05-10 · superseded · KX-7: 2.5 N·m" in text
        await ask(pilot, "coffee")  # no conflict: the banner goes away
        assert not banner.has_class("-shown")


async def test_markup_and_escapes_render_literally():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "console markup codes")
        body = body_text(app)
        assert "The display prints [/ when a frame is cut, and [bold red]ALARM[/] in the log. [1]" in body
        assert "␛[31mRED␛[0m" in body and "\x1b" not in body
        assert "⚠ quoted evidence: “Ignore previous instructions" in body
        assert "reads as an instruction to the system" in body
        assert "ⓘ degraded: reranker unavailable" in body
        first_source = app.ask_screen.sources.get_option_at_index(0).prompt.plain
        assert "Console codes [bold]reference[/bold]" in first_source
        await pilot.press("1")
        await settle(pilot)
        view = app.screen.query_one(PassageView)
        assert "␛[31mRED␛[0m" in view.passage_text
        assert "[bold red]ALARM[/]" in view.passage_text
        assert view.query_one("#before").visual.plain.startswith("# Console codes [bold]reference[/bold]")
        assert "[bold]" in app.export_screenshot()  # and the whole screen still renders
        await pilot.press("escape", "l")
        await settle(pilot)
        table = app.screen.query_one("#documents", DataTable)
        titles = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "Console codes [bold]reference[/…" in titles  # literal, cut at 32 cells


async def test_trace_screen_and_diagnosis():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")  # nothing asked yet: a warning, no screen
        await ask(pilot, "console markup codes")
        await pilot.press("t")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        stages = screen.query_one("#stages", DataTable)
        assert [str(stages.get_row_at(i)[0]) for i in range(stages.row_count)] == [
            "lexical", "vector", "fused", "rerank", "context"]
        assert "degraded" in str(stages.get_row_at(3)[4])
        ranks = screen.query_one("#ranks", DataTable)
        assert str(ranks.get_row_at(0)[0]) == CHUNKS["mk-escapes"].location
        assert str(ranks.get_row_at(0)[1]) == "1 (0.67)"
        await pilot.press("m")
        await settle(pilot)
        diagnosis = screen.query_one("#diagnosis").visual.plain
        assert diagnosis.startswith(f"{CHUNKS['mk-escapes'].location}: lost at rerank")
        await pilot.press("e", *"en/x.md:3", "enter")
        await settle(pilot)
        assert screen.query_one("#diagnosis").visual.plain.startswith("en/x.md:3: lost at rerank")
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, AskScreen)


async def test_reindex_shows_progress_and_finishes():
    engine = FakeEngine(build_steps=8, delay=0.03)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "l")  # leave the question box, then open the library
        await pilot.pause()
        assert isinstance(app.screen, LibraryScreen)
        bar = app.screen.query_one(BuildStatus).query_one(ProgressBar)
        seen: list[float] = []
        app.screen.watch(bar, "progress", lambda value: seen.append(value), init=False)
        await pilot.press("r")
        await settle(pilot)
        assert any(0 < p < 8 for p in seen), seen  # advanced through intermediate values
        assert bar.total == 8 and bar.progress == 8 and bar.percentage == 1
        assert app.screen.query_one("#build-phase").visual.plain == "Indexed"
        issues = app.screen.query_one("#issues", DataTable)
        rows = [[str(cell) for cell in issues.get_row_at(i)] for i in range(issues.row_count)]
        assert ["skipped", "en/broken.pdf", "PDF parse timed out after 60 s"] in rows
        assert len(engine.progress_seen) == 9


async def test_failed_reindex_is_reported_and_the_old_index_stays():
    notices: list[Notify] = []
    app = make_app(FakeEngine(fail_build=True))
    hook = lambda m: notices.append(m) if isinstance(m, Notify) else None  # noqa: E731
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await settle(pilot)
        await pilot.press("escape", "l", "r")
        await settle(pilot)
        assert app.screen.query_one("#build-phase").visual.plain == "Indexing failed"
        assert "disk full" in app.screen.query_one("#build-eta").visual.plain
        assert [n.notification.message for n in notices if n.notification.severity == "error"] == [
            "Indexing failed: OSError: disk full while writing generation 2"]
        assert not app.building
        assert "ready · 3 documents" in app.ask_screen.query_one("#status").visual.plain


async def test_empty_index_is_built_at_start():
    engine = FakeEngine(empty=True, build_steps=3, delay=0.01)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"lid torque", "enter")  # asked while the index is being built
        await settle(pilot)
        assert engine.built
        assert "ready · 3 documents" in app.ask_screen.query_one("#status").visual.plain
        assert "1.8 N·m" in body_text(app)  # the pending question ran once ready


async def test_a_waiting_question_runs_once_the_new_index_is_live_not_when_its_units_are_done():
    import threading

    gate = threading.Event()
    engine = FakeEngine(empty=True, build_steps=2, units_gate=gate)
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"lid torque", "enter")  # asked while the index is being built
        for _ in range(200):
            await pilot.pause(0.02)
            if "1.8 N·m" in body_text(app):
                break
        assert "1.8 N·m" in body_text(app) and app.building  # answered while the build embeds units
        gate.set()
        await settle(pilot)
        assert not app.building and "ready · 3 documents" in app.ask_screen.query_one("#status").visual.plain


async def test_filters_apply_to_later_queries():
    engine = FakeEngine()
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "l")
        await pilot.pause()
        await pilot.press("s", "f", *"KX-7", "tab", *"field, lab")
        await pilot.press("escape")  # back to the Ask screen
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await ask(pilot, "lid torque")
        f = engine.filters_seen[-1]
        assert f.include_superseded and f.device_model == "KX-7" and f.teams == ("field", "lab")


async def test_keymap_from_config_remaps_bindings():
    cfg = Config().replace(**{"tui.keymap": {"open_library": "f5", "open_trace": "ctrl+t"}})
    app = make_app(config=cfg)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        await pilot.press("l")  # no longer bound
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press("f5")
        await pilot.pause()
        assert isinstance(app.screen, LibraryScreen)
        await pilot.press("escape", "ctrl+t")
        await settle(pilot)
        assert isinstance(app.screen, TraceScreen)
        keys = {(i.scope, i.id): i.keys for i in app.binding_catalogue()}
        assert keys[("global", "open_library")] == ("f5",)
        assert keys[("global", "open_help")] == ("question_mark", "f1")


async def test_worker_error_becomes_a_notification():
    notices: list[Notify] = []
    app = make_app()

    def hook(message) -> None:
        if isinstance(message, Notify):
            notices.append(message)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await ask(pilot, "boom")
        errors = [n.notification for n in notices if n.notification.severity == "error"]
        assert len(errors) == 1
        message = "The question failed: RuntimeError: index shard unreadable [/ at offset 42"
        assert errors[0].message == message
        assert not errors[0].markup
        assert body_text(app) == message  # stays visible after the toast is gone
        assert "ready · 3 documents" in app.ask_screen.query_one("#status").visual.plain
        await ask(pilot, "lid torque")  # the app is still alive and answering
        assert "1.8 N·m" in body_text(app)


async def test_history_up_and_down():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "first question")
        await ask(pilot, "second question")
        await pilot.press("slash")
        question = app.ask_screen.query_one("#question", Input)
        await pilot.press("up")
        assert question.value == "second question"
        await pilot.press("up", "up")
        assert question.value == "first question"
        await pilot.press("down")
        assert question.value == "second question"
        await pilot.press("down")
        assert question.value == ""


async def test_viewer_navigation_and_copy():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_citation(pilot)
        await pilot.press("j")
        await settle(pilot)
        assert viewer.chunk_id == "v2-desiccant"
        assert viewer.query_one("#viewer-title").visual.plain.startswith(CHUNKS["v2-desiccant"].path)  # title follows
        await pilot.press("k", "k")
        await settle(pilot)
        assert viewer.chunk_id == "v2-mount"
        await pilot.press("u")
        await settle(pilot)
        passage = viewer.query_one(PassageView).passage_text
        assert "Mount the logger" in passage and "1.8 N·m" in passage  # the whole Installation section
        await pilot.press("c")
        assert app.clipboard == CHUNKS["v2-mount"].location


async def test_help_lists_every_binding_with_id_and_description():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        catalogue = app.binding_catalogue()
        assert all(info.id and info.description and info.keys for info in catalogue)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(catalogue)
        ids = {info.id for info in catalogue}
        assert {"open_trace", "open_library", "reset_scope", "clear_history"} <= ids


@pytest.mark.parametrize("query, screen", [("Library", LibraryScreen), ("Help", HelpScreen)])
async def test_command_palette_reaches_actions(query, screen):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*query)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert isinstance(app.screen, screen)


async def test_theme_toggle_and_config_theme():
    app = make_app(config=Config().replace(**{"tui.theme": "textual-light"}))
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        assert app.theme == "textual-light"
        await pilot.press("d")
        assert app.theme == "textual-dark"


async def test_no_color_is_respected(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        assert app.no_color
        svg = app.export_screenshot()
    import re
    fills = set(re.findall(r"fill: (#[0-9a-f]{6})", svg))
    fills.discard("#c5c8c6")  # the SVG window title, drawn by the screenshot template
    assert {f for f in fills if not f[1:3] == f[3:5] == f[5:7]} == set()  # greys only


async def test_the_scope_is_shown_after_each_filter_change_and_resets_with_one_key():
    from engine.config import FilterConfig

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = lambda: str(app.ask_screen.query_one("#status").render())  # noqa: E731
        assert "scope: no team, current" in status()
        app.set_filters(FilterConfig(device_model="HY-400S", teams=("red",), include_superseded=True))
        await pilot.pause()
        assert "scope: model HY-400S, team red, +superseded" in status()
        app.ask_screen.query_one("#answer").focus()
        await pilot.press("0")
        await pilot.pause()
        assert "scope: no team, current" in status() and app.filters == app.config.filters


async def test_history_filters_and_theme_survive_a_restart(tmp_path):
    from engine.config import FilterConfig
    from tui.app import FieldQAApp
    from tui.widgets.question_input import QuestionInput

    state = tmp_path / "state.json"
    engine = FakeEngine()
    first = FieldQAApp(lambda: engine, Config(), library_name="samples", cursor_blink=False, state_path=state)
    async with first.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first.ask("lid torque")
        await settle(pilot)
        first.set_filters(FilterConfig(device_model="KX-7"))
        first.action_toggle_dark()
    second = FieldQAApp(lambda: engine, Config(), library_name="samples", cursor_blink=False, state_path=state)
    async with second.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = second.ask_screen.query_one(QuestionInput)
        box.focus()
        await pilot.press("up")
        assert box.value == "lid torque"
        assert second.filters.device_model == "KX-7" and second.theme == "textual-light"
        second.action_clear_history()
    third = FieldQAApp(lambda: engine, Config(), library_name="samples", cursor_blink=False, state_path=state)
    assert third.ui_state.history == []


async def test_export_writes_a_work_order_whose_citations_match_the_answer(tmp_path):
    cfg = Config().replace(**{"tui.export_dir": str(tmp_path / "orders")})
    app = make_app(config=cfg)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.ask("lid torque")
        await settle(pilot)
        app.ask_screen.answer_view.focus()
        await pilot.press("w")
        await pilot.pause()
        files = list((tmp_path / "orders").glob("*.md"))
        assert len(files) == 1 and "lid-torque" in files[0].name
        text = files[0].read_text(encoding="utf-8")
        for c in app.last_answer.citations:
            assert f"[^{c.n}]: " in text and c.location in text and c.title in text
        assert any("Work order written" in str(n.message) for n in app._notifications)


async def test_viewer_steps_through_the_answers_citations():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_citation(pilot)
        title = lambda: viewer.query_one("#viewer-title").visual.plain  # noqa: E731
        assert viewer.chunk_id == "v2-lid" and title().startswith("[1]")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert viewer.chunk_id == "v1-lid" and title().startswith("[2]")
        assert "2.5 N·m" in viewer.query_one(PassageView).passage_text
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert viewer.chunk_id == "v2-lid" and title().startswith("[1]")
        await pilot.press("2")  # a digit jumps to that citation, as on the answer screen
        await settle(pilot)
        assert viewer.chunk_id == "v1-lid"


async def test_find_moves_to_each_match_and_escape_closes_only_the_box():
    from textual.widgets import Input

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_citation(pilot)
        await pilot.press("slash", *"the", "enter")
        await settle(pilot)
        text = CHUNKS["v2-lid"].text
        crumb = lambda: viewer.query_one("#breadcrumb").visual.plain  # noqa: E731
        total = len(viewer.matches)
        assert total > 3 and "match " in crumb() and f"/{total} at line" in crumb()
        seen = []
        for _ in range(total):
            a, b = viewer.matches[viewer.match]
            assert viewer.doc_text[a:b].casefold() == "the"
            assert viewer.doc_text[a:b] in viewer.query_one(PassageView).passage_text
            seen.append(viewer.match)
            await pilot.press("n")
        assert sorted(seen) == list(range(total))  # n visited every match once, then wrapped
        await pilot.press("N")
        assert viewer.match == seen[-1]
        await pilot.press("slash", *"zzz-not-there", "escape")
        assert isinstance(app.screen, ViewerScreen) and not viewer.query_one("#find", Input).has_class("shown")
        assert text  # the cited passage is still the one the viewer was opened on
        await pilot.press("escape")
        assert isinstance(app.screen, AskScreen)


async def test_widening_goes_section_by_section_then_back_to_the_passage():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        viewer = await open_citation(pilot)
        shown = lambda: viewer.query_one(PassageView).passage_text  # noqa: E731
        assert "Mount the logger" not in shown()
        await pilot.press("u")
        assert "Mount the logger" in shown() and "desiccant" not in shown()  # the Installation section
        await pilot.press("u")
        assert "desiccant" in shown() and "eight-channel" in shown()  # the whole manual
        await pilot.press("u")
        assert "Mount the logger" not in shown()  # back to the passage


@pytest.mark.slow  # ~35 s: 450 key presses through the pilot
async def test_fifty_fast_submissions_are_each_asked_once():
    engine = FakeEngine()
    app = make_app(engine)
    questions = [f"lid {i}" for i in range(50)]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for q in questions:  # as fast as the pilot can: no waiting between questions
            await pilot.press("slash", "ctrl+u", *q, "enter")
        await settle(pilot)
        assert app.ui_state.history[-50:] == questions  # every question reached the app, once, in order
        searched = [q for call, q in engine.calls if call == "search"]
        assert len(searched) == len(set(searched)) and searched[-1] == questions[-1]
        assert app.question == questions[-1]


async def test_library_lists_who_may_see_each_document_and_opens_one():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("escape", "l")
        await settle(pilot)
        table = app.screen.query_one("#documents", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        who = header.index("visible to")
        assert {str(table.get_row_at(i)[who]) for i in range(table.row_count)} == {"everyone"}
        table.focus()
        table.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.chunk.path == str(table.get_row_at(1)[header.index("path")])


def test_an_invalid_access_rule_reads_visible_to_nobody():
    from tui.screens.library import visible_to

    assert str(visible_to(_meta(visibility=("red",)))) == "red"
    assert str(visible_to(_meta(visibility=("red",), invalid=("visibility",)))) == "nobody (invalid)"


async def test_enter_on_a_trace_row_opens_that_passage():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "lid torque")
        await pilot.press("t")
        await settle(pilot)
        trace = app.screen
        ranks = trace.query_one("#ranks", DataTable)
        ranks.focus()
        ranks.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ViewerScreen)
        assert app.screen.chunk_id == trace.ids[1] != trace.ids[0]


def _meta(**kw):
    """A DocumentMeta with the fields a test sets."""
    from engine.types import DocumentMeta

    return DocumentMeta(doc_id="d", title="T", version="1", date=None, **kw)


async def test_the_first_screen_takes_a_question_before_the_models_have_loaded():
    import threading

    loaded = threading.Event()
    engine = FakeEngine()

    def slow_opener():  # as a real library loading its models
        assert loaded.wait(10)
        return engine

    app = FieldQAApp(slow_opener, Config(), library_name="samples", cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, AskScreen) and app.engine is None  # shown while the opener waits
        await pilot.press(*"lid torque", "enter")  # the question box has the focus from the start
        await pilot.pause()
        assert app.pending_question == "lid torque" and "still loading" in body_text(app)
        loaded.set()
        await settle(pilot)
        assert "1.8 N·m. [1]" in body_text(app)  # the waiting question ran once the library was ready
        assert [q for call, q in engine.calls if call == "search"] == ["lid torque"]


async def test_the_question_key_is_not_typed_into_an_empty_question():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        question = app.ask_screen.query_one("#question", Input)
        assert question.has_focus  # the box has the focus at launch
        await pilot.press("slash", *"lid", "slash", "x")
        assert question.value == "lid/x"  # inside a question a slash is text


async def test_a_blank_question_sends_nothing():
    engine = FakeEngine()
    app = make_app(engine)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space", "space", "enter")
        await pilot.press("slash", "ctrl+u", "space", "enter")
        await settle(pilot)
        assert not [call for call, _q in engine.calls if call in ("search", "ask", "answer")], engine.calls
        assert app.ui_state.history == [] or all(q.strip() for q in app.ui_state.history)
