"""HTML and plain-text ingestion: dropped elements, line numbers, headings in several scripts."""

from __future__ import annotations

from pathlib import Path

from ingest_support import chunks_of, line_text, read

from engine.types import IngestIssue

PAGE = """<!doctype html>
<html lang="de">
<head><title>Pumpe &amp; Co</title>
<meta name="doc_id" content="pumpe-html"><meta name="models" content="P1, P2">
<script>document.write("<p>script text</p>")</script>
<style>p { color: red }</style>
</head>
<body>
<header><p>Site header text</p></header>
<nav><ul><li>Home</li><li>Docs</li></ul></nav>
<h1>Pumpe P1</h1>
<h2>Drehmomente</h2>
<p>Die Schrauben &uuml;ber Kreuz
anziehen.</p>
<table>
<caption>Tabelle 2 &ndash; Anzugsmomente</caption>
<tr><th>Schraube</th><th>Moment (N&middot;m)</th></tr>
<tr><td>Gehäuse</td><td>55</td></tr>
<tr><td>Laufrad</td><td>38</td></tr>
</table>
<h2>Wartung</h2>
<ol>
<li>Motor abschalten.</li>
<li>Gehäuse entleeren.</li>
</ol>
<footer>Copyright footer text</footer>
</body></html>
"""


def test_html_drops_script_style_nav_header_footer_and_decodes_entities(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "p.html", PAGE)
    assert doc.format == "html"
    for gone in ("script text", "color: red", "Site header", "Home", "Copyright footer"):
        assert gone not in doc.text
    assert "Die Schrauben über Kreuz anziehen." in doc.text
    assert doc.meta.doc_id == "pumpe-html" and doc.meta.title == "Pumpe & Co"
    assert doc.meta.models == ("P1", "P2") and doc.meta.language == "de"


def test_html_lines_point_into_the_html_file(lib: Path) -> None:
    _, chunks = chunks_of(lib, "p.html", PAGE, max_tokens=30)
    para = next(c for c in chunks if "über Kreuz" in c.text)
    assert "<h1>Pumpe P1</h1>" in line_text(lib / "p.html", para.start_line)  # heading-only merged
    assert line_text(lib / "p.html", para.end_line) == "anziehen.</p>"
    table = next(c for c in chunks if "Laufrad | 38" in c.text)
    assert table.kind == "table"
    assert "Tabelle 2 – Anzugsmomente" in table.context and "Schraube | Moment (N·m)" in table.context
    assert "<td>Laufrad</td>" in line_text(lib / "p.html", table.end_line)
    steps = next(c for c in chunks if "Motor abschalten." in c.text)
    assert "Gehäuse entleeren." in steps.text and steps.heading_path == ("Pumpe P1", "Wartung")
    assert line_text(lib / "p.html", steps.start_line) == "<h2>Wartung</h2>"


def test_an_html_table_row_is_one_claim_with_its_header_and_the_header_row_none(lib: Path) -> None:
    from engine.answer.conflicts import table_header
    from engine.lang.units import split_units
    from engine.render import claim_display
    from engine.types import Claim

    _, chunks = chunks_of(lib, "p.html", PAGE)
    table = next(c for c in chunks if "Laufrad | 38" in c.text)
    units = split_units(table)
    rows = [u for u in units if u.kind == "table_row"]
    assert [u.text for u in rows] == ["Gehäuse | 55", "Laufrad | 38"]  # not one sentence of the whole table
    assert "Schraube | Moment (N·m)" not in [u.text for u in units]  # the header row says nothing of its own
    header = table_header(table, rows[1])
    assert header == "Schraube | Moment (N·m)"
    shown = claim_display(Claim(text=rows[1].text, citation=1, char_start=0, char_end=8, header=header))
    assert shown == "Laufrad — Moment (N·m): 38"


def test_a_page_laid_out_in_a_table_is_read_sentence_by_sentence(lib: Path) -> None:
    from engine.lang.units import split_units

    page = ("<html><body><h1>Pump P1</h1><table><tr><td>Safety</td><td>Switch the pump off. Wait until it "
            "has cooled. Then open the casing.</td></tr></table></body></html>")
    _, chunks = chunks_of(lib, "layout.html", page)
    units = [u for c in chunks for u in split_units(c)]
    assert not [u for u in units if u.kind == "table_row"]
    assert "Wait until it has cooled." in [u.text for u in units]


def test_a_pipe_in_the_pages_title_is_no_table_header(lib: Path) -> None:
    # the context's first line is the heading path under the title (<title>Pump setup | Acme Docs</title>):
    # its pipe neither heads a table of prose cells nor stands as the header of a table's rows
    from engine.answer.conflicts import table_header
    from engine.answer.units import unit_texts
    from engine.lang.units import split_units

    page = ("<html><head><title>Pump setup | Acme Docs</title></head><body><h1>Pump setup</h1><h2>Layout</h2>"
            "<table><tr><td>Open the valve first. Then start the pump.</td><td>Check the seal.</td></tr></table>"
            "<h2>Limits</h2><p>Flow by model.</p><table><tr><td>P-10</td><td>12 l/min</td></tr></table></body></html>")
    _, chunks = chunks_of(lib, "setup.html", page)
    layout, limits = chunks
    assert "|" in layout.context.splitlines()[0]
    assert "Then start the pump." in [u.text for u in split_units(layout)]
    row = next(u for u in split_units(limits) if u.kind == "table_row")
    assert table_header(limits, row) == ""
    assert "Pump setup > Limits\nP-10 | 12 l/min" in unit_texts(limits)


def test_a_headed_table_keeps_rows_whose_cells_hold_several_sentences(lib: Path) -> None:
    from engine.lang.units import split_units

    page = ("<html><body><h1>P1125</h1><table><thead><tr><th>LED</th><th>Meaning</th></tr></thead>"
            "<tr><td>Off</td><td>Shutdown, power can be removed</td></tr>"
            "<tr><td>Amber blink</td><td>Hotspot mode. Connect with a phone.</td></tr></table></body></html>")
    _, chunks = chunks_of(lib, "led.html", page)
    rows = [u.text for c in chunks for u in split_units(c) if u.kind == "table_row"]
    assert rows == ["Off | Shutdown, power can be removed", "Amber blink | Hotspot mode. Connect with a phone."]


SPHINX = """<html><head><title>Power profiler</title></head><body>
<div class="related" role="navigation"><ul><li><a href="genindex.html">index</a></li><li>next |</li></ul></div>
<div role="navigation" aria-label="breadcrumbs"><div><a href="index.html">Docs</a> / Specifications</div></div>
<div class="body" role="main">
<h1>Specifications<a class="headerlink" href="#spec" title="Permalink to this heading">¶</a></h1>
<h2>Power<a class="headerlink" href="#power"><i class="fa fa-link"></i></a></h2>
<ul><li>Peak current per motor: 120 Amps</li><li>Max continuous current depends on cooling.
<ol start="3"><li>Heatsink in still air: 40A</li><li>With a fan: 75A</li></ol></li></ul>
<div hidden><p>Search results template</p></div>
<p style="display: none">No results matching</p>
<span aria-hidden="true">☰</span>
</div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><div><ul><li>Previous topic</li></ul></div></div>
<div role="contentinfo"><p>© Copyright 2022.</p></div>
<p>Last line of the page.</p>
</body></html>"""


def test_html_reads_what_a_reader_sees_of_the_page(lib: Path) -> None:
    # a documentation theme's navigation, hidden templates, icon glyphs and permalink marks are no
    # text; list items read after their bullet or number, so two items are two statements
    from engine.lang.units import split_units

    doc, chunks = chunks_of(lib, "spec.html", SPHINX)
    assert doc.text.splitlines() == [
        "Specifications", "Power", "• Peak current per motor: 120 Amps", "• Max continuous current depends on cooling.",
        "3. Heatsink in still air: 40A", "4. With a fan: 75A"]  # "Last line of the page.": outside role=main
    units = [u.text for c in chunks for u in split_units(c)]
    assert "Peak current per motor: 120 Amps" in units and "Max continuous current depends on cooling." in units
    assert chunks[0].heading_path == ("Specifications", "Power")


def test_a_page_that_marks_its_main_content_is_read_there_unless_that_would_lose_its_text(lib: Path) -> None:
    # a theme's sidebar, theme switch and "on this page" list sit beside <main> in elements no mark
    # names (furo's <aside class="sidebar-drawer">); a main element left nearly empty (an early
    # close) is no reason to lose the page
    side = "<aside class='sidebar'><a href='#c'>Skip to content</a><ul>" + "".join(
        f"<li><a href='{n}.html'>{n.title()}</a></li>" for n in ("install", "wiring", "menus")) + "</ul></aside>"
    page = (f"<html><body>{side}<main><h1>Wiring</h1><p>Connect the sensor to port J3 before power-on.</p>"
            "<p>Use shielded cable longer than two metres.</p></main><div>Light Dark</div></body></html>")
    doc, _chunks = chunks_of(lib, "wiring.html", page)
    assert doc.text.splitlines() == ["Wiring", "Connect the sensor to port J3 before power-on.",
                                     "Use shielded cable longer than two metres."]
    early = ('<html><body><div role="main"><h1>Wiring</h1></div><p>Connect the sensor to port J3 '
             'before power-on.</p><p>Use shielded cable longer than two metres.</p></body></html>')
    doc, _chunks = chunks_of(lib, "early.html", early)
    assert "Use shielded cable longer than two metres." in doc.text


def test_an_html_code_block_reads_as_code_and_a_bare_pre_as_text(lib: Path) -> None:
    from engine.lang.units import code_after, split_units

    page = ("<html><body><h1>Flashing</h1><p>Put these lines in settings.txt:</p>"
            '<div class="highlight"><pre><span></span>bootloaderNameOffset=0x0\n# the app\nappOffset=0x10000</pre></div>'
            "<pre>Keep the board powered while it flashes.</pre></body></html>")
    doc, chunks = chunks_of(lib, "flash.html", page)
    assert "```\nbootloaderNameOffset=0x0\n# the app\nappOffset=0x10000\n```" in doc.text
    units = [u for c in chunks for u in split_units(c)]
    assert [u.text for u in units if u.kind == "code"] == ["bootloaderNameOffset=0x0", "# the app\nappOffset=0x10000"]
    lead = next(u for u in units if u.text == "Put these lines in settings.txt:")
    chunk = next(c for c in chunks if "settings.txt" in c.text)
    assert code_after(chunk, lead) is not None  # the statement brings its block
    assert "Keep the board powered while it flashes." in [u.text for u in units]


def test_a_heading_inside_a_section_heads_that_section_only(lib: Path) -> None:
    page = ("<html><body><h1>Player guide</h1>"
            "<section><div class='title'>Portal</div><h3>Navigation</h3><p>Use the menu on the left.</p></section>"
            "<section><div class='title'>Account</div><p>Create an account first.</p>"
            "<h4>Open the portal</h4><p>Go to the portal address.</p></section>"
            "<p>Contact support if it fails.</p></body></html>")
    got = read(lib, "guide.html", page)
    assert not isinstance(got, IngestIssue)
    doc, blocks = got
    paths = {doc.text[b.char_start:b.char_end]: b.heading_path for b in blocks if b.kind == "paragraph"}
    assert paths["Use the menu on the left."] == ("Player guide", "Navigation")
    assert paths["Create an account first."] == ("Player guide",)  # not under the last section's h3
    assert paths["Go to the portal address."] == ("Player guide", "Open the portal")
    assert paths["Contact support if it fails."] == ("Player guide",)


def test_navigation_and_hidden_marks_never_lose_a_page(lib: Path) -> None:
    # a page saved while a dialog covered it hides everything; a navigation element left open
    # would take the rest of the page: read again without those marks, the text is kept
    covered = ('<html><body><div id="app" aria-hidden="true"><h1>Pump P1</h1><p>Close the valve.</p></div>'
               '<div role="dialog"></div></body></html>')
    got = read(lib, "covered.html", covered)
    assert not isinstance(got, IngestIssue) and "Close the valve." in got[0].text
    unclosed = ('<html><body><h1>Pump P1</h1><div role="navigation"><a href="a.html">Home</a>'
                '<p>Open the drain.</p><p>Refill with water.</p></body></html>')
    got = read(lib, "unclosed.html", unclosed)
    assert not isinstance(got, IngestIssue) and "Refill with water." in got[0].text


def test_html_with_only_script_is_skipped(lib: Path) -> None:
    got = read(lib, "s.html", "<html><head><script>alert(1)</script></head><body><nav>x</nav></body></html>")
    assert isinstance(got, IngestIssue) and "no text" in got.reason



GENINDEX = """<html><head><title>Index</title></head><body><div class="body" role="main">
<h1 id="index">Index</h1>
<div class="genindex-jumpbox"><a href="#A"><strong>A</strong></a> | <a href="#C"><strong>C</strong></a></div>
<h2 id="A">A</h2>
<table class="indextable genindextable"><tr><td><ul><li><a href="p1125.html#index-0">A0</a>, <a href="p1125.html#index-3">[1]</a></li>
<li><a href="quick.html#index-1">Acquire address</a></li></ul></td>
<td><ul><li><a href="p1125.html#index-2">analog input</a></li><li><a href="kit.html#index-0">antenna</a></li></ul></td></tr></table>
<h2 id="C">C</h2>
<table class="indextable genindextable"><tr><td><ul><li><a href="cal.html#index-0">calibration</a></li>
<li><a href="faqs.html#index-1">Chrome</a></li></ul></td></tr></table>
</div></body></html>"""


def test_a_page_of_links_is_skipped_and_says_why(lib: Path) -> None:
    # a generated index or a contents page names what other pages hold: as passages, its short
    # lists of terms would outrank those pages and be cited as evidence
    got = read(lib, "genindex.html", GENINDEX)
    assert isinstance(got, IngestIssue) and "a page of links" in got.reason and "links to other pages" in got.reason
    contents = ('<html><body><h1>P1125 Instruction Manual</h1><p>Contents:</p><ul>'
                + "".join(f'<li><a href="{n}.html">{t}</a></li>' for n, t in
                          [("quick", "Quick Start"), ("kit", "Kit contents"), ("cal", "Calibration"),
                           ("faq", "Frequently asked questions"), ("trouble", "Troubleshooting")])
                + "</ul></body></html>")
    assert isinstance(read(lib, "index.html", contents), IngestIssue)


def test_a_table_of_contents_inside_a_page_is_no_text_but_dot_leaders_before_values_are(lib: Path) -> None:
    # a word processor's HTML export: contents paragraphs (title, dot leader, page number) before
    # the text; a specification list set with dot leaders is text
    toc = "".join(f'<p class=MsoToc1>{t}{"." * 40} {n}</p>' for t, n in
                  [("1 Operation", 11), ("1.1 Warnings", 11), ("1.2 Flags", 12), ("2 Memory", 17)])
    specs = "".join(f"<p>{t}{'.' * 20} {v}</p>" for t, v in [("Nozzle", 210), ("Bed", 60), ("Fan speed", 100)])
    page = (f"<html><body><h1>Splint Manual</h1><p>Contents</p>{toc}<h2>Operation</h2>"
            f"<p>Run the checker on every source file.</p>{specs}</body></html>")
    doc, _chunks = chunks_of(lib, "manual.htm", page)
    assert "Warnings" not in doc.text and "1 Operation" not in doc.text
    assert "Run the checker on every source file." in doc.text
    assert f"Nozzle{'.' * 20} 210" in doc.text and f"Fan speed{'.' * 20} 100" in doc.text


def test_a_list_of_links_to_the_pages_own_sections_is_no_text(lib: Path) -> None:
    # a FAQ's index of its questions would answer for them, above the answers it points to; links
    # to anchors out of order, or back up the page, are text
    qs = ["Can I include Splint in my distribution?", "Which compilers does Splint support?",
          "Does Splint handle C++?"]
    index = "<ul>" + "".join(f'<li><a href="#q{k}">{q}<br/></a></li>' for k, q in enumerate(qs)) + "</ul>"
    body = "".join(f'<h3 id="q{k}">{q}</h3><p>Answer {k}: see the licence notes.</p>' for k, q in enumerate(qs))
    doc, _chunks = chunks_of(lib, "faq.html", f"<html><body><h1>FAQ</h1>{index}{body}</body></html>")
    assert doc.text.count("Which compilers does Splint support?") == 1  # the heading, not the index entry
    assert "Answer 2: see the licence notes." in doc.text
    shuffled = "<ul>" + "".join(f'<li><a href="#q{k}">{qs[k]}</a></li>' for k in (2, 0, 1)) + "</ul>"
    doc, _chunks = chunks_of(lib, "faq2.html", f"<html><body><h1>FAQ</h1>{shuffled}{body}</body></html>")
    assert doc.text.count("Which compilers does Splint support?") == 2
    back = "<ul>" + "".join(f'<li><a href="#q{k}">Back to question {k}</a></li>' for k in range(3)) + "</ul>"
    doc, _chunks = chunks_of(lib, "faq3.html", f"<html><body><h1>FAQ</h1>{body}{back}</body></html>")
    assert "Back to question 2" in doc.text


def test_a_page_with_links_in_its_text_is_read(lib: Path) -> None:
    # links inside prose, and one anchor left open over the rest of the page, are not a page of links
    prose = ('<html><body><h1>Calibration</h1><p>Connect the probe (see <a href="kit.html">Kit</a>). '
             'Zero the offset with the <a href="menu.html">Main Menu</a>, then read <a href="a.html">A0</a>, '
             '<a href="b.html">A1</a> and <a href="c.html">A2</a> against the reference.</p></body></html>')
    got = read(lib, "cal.html", prose)
    assert not isinstance(got, IngestIssue) and "against the reference." in got[0].text
    unclosed = ('<html><body><h1>Pump P1</h1>' + "".join(f'<a href="{n}.html">{n}</a> ' for n in "abcd")
                + '<a href="e.html"><p>Open the drain and wait until no more water runs out of the pump.</p>'
                '<p>Refill with clean water up to the mark on the casing.</p></body></html>')
    got = read(lib, "open.html", unclosed)
    assert not isinstance(got, IngestIssue) and "Refill with clean water" in got[0].text

TEXT_KO = """하람 HR-5 설명서

제1장 개요
제1절 제품 설명
하람 HR-5는 충전 컨트롤러이다.

제2절 안전
모듈은 항상 전압을 발생시킨다.
"""

TEXT_ZH = """第一章 安全
第一节 总则
本设备必须接地。

第二节 维护
每月检查一次。
"""

TEXT_NUM = """Pump manual
===========

1 Safety

Isolate the motor first.

1.2 Torques

Casing bolts: 55 N·m.

Procedure
---------

1. Lock out the motor.
2. Drain the casing.
"""


def test_text_headings_korean(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "ko.txt", TEXT_KO)
    assert doc.meta.language == "ko"
    c = next(c for c in chunks if "충전 컨트롤러" in c.text)
    assert c.heading_path == ("제1장 개요", "제1절 제품 설명") and c.start_line == 3
    c2 = next(c for c in chunks if "전압" in c.text)
    assert c2.heading_path == ("제1장 개요", "제2절 안전") and c2.start_line == 7


def test_text_headings_chinese(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "zh.txt", TEXT_ZH)
    assert doc.meta.language == "zh"
    assert [c.heading_path for c in chunks] == [("第一章 安全", "第一节 总则"), ("第一章 安全", "第二节 维护")]
    assert [c.start_line for c in chunks] == [1, 5]


def test_text_headings_numbered_and_underlined_and_lists(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "n.txt", TEXT_NUM)
    paths = [c.heading_path for c in chunks]
    # "===" and "1 " are both level 1, "---" and "1.2" both level 2
    assert paths == [("1 Safety",), ("1 Safety", "1.2 Torques"), ("1 Safety", "Procedure")]
    assert doc.meta.title == "Pump manual" and chunks[0].start_line == 1
    proc = next(c for c in chunks if "Lock out" in c.text)
    assert proc.kind == "list" and "2. Drain the casing." in proc.text
    assert line_text(lib / "n.txt", proc.start_line) == "Procedure"


def test_a_table_of_contents_in_a_text_manual_is_blanked_and_every_line_keeps_its_place(lib: Path) -> None:
    text = ("PUMP P1 SERVICE MANUAL\n\nContents\n1 Safety ........................ 3\r\n"
            "2 Installation .................. 5\n2.1 Wiring ...................... 6\n"
            "Introduction\nThe P1 moves clean water.\n\n1 Safety\n\nSwitch the pump off first.\n\n"
            "Rated values\nFlow .......... 40\nHead .......... 12\nPower .......... 3\n")
    doc, chunks = chunks_of(lib, "manual.txt", text)
    assert "Safety ....." not in doc.text and "Wiring" not in doc.text
    assert len(doc.text) == len(text) and doc.text.count("\n") == text.count("\n")
    intro = next(c for c in chunks if "moves clean water" in c.text)
    assert "Installation" not in intro.text
    assert line_text(lib / "manual.txt", intro.end_line) == "The P1 moves clean water."
    assert "Flow .......... 40" in doc.text  # rated values, not page numbers in order


import pytest as _pytest  # noqa: E402


@_pytest.mark.parametrize("line, level", [
    ("제1장 개요", 1), ("제2절 오류 코드", 2), ("1장 개요", 1), ("1.1절 점검", 2), ("3절 보관", 2),
    ("第一章 概述", 1), ("第二节 维护", 2), ("第3章 設置", 1), ("第4節 点検", 2),
    ("1장은 중요하다고 생각합니다. 그래서 이 문장은 길게 이어지는 본문입니다.", 0),
])
def test_cjk_chapter_and_section_headings(line, level):
    from engine.ingest.markdown import parse_markdown
    from engine.ingest.text import cjk_heading_level, parse_text

    assert cjk_heading_level(line) == level
    for parse in (parse_text, parse_markdown):
        blocks = parse(f"{line}\n\n본문 내용입니다.\n").blocks
        heads = [b for b in blocks if b.kind == "heading"]
        assert (len(heads) == 1 and heads[0].level == level) if level else not heads, (parse, blocks)


def test_headings_over_nothing_are_a_chunk_of_their_own_where_headings_are_not_marked_up(lib: Path) -> None:
    from engine.lang.units import split_units

    page = ("<html><body><h1>Probe manual</h1><h2>Dimensions</h2><img src='d.png'>"
            "<h2>Pin description</h2><img src='p.png'><h2>Wiring</h2><p>Connect the probe to the USB port.</p>"
            "</body></html>")
    _doc, chunks = chunks_of(lib, "probe.html", page)
    assert [c.heading_path for c in chunks] == [("Probe manual", "Dimensions"), ("Probe manual", "Pin description"),
                                                ("Probe manual", "Wiring")]
    assert [u.text for c in chunks for u in split_units(c)] == ["Connect the probe to the USB port."]
    # Markdown marks its headings up: stacked ones stay with the section after them, as their author set them
    md = "# Probe manual\n\n## Dimensions\n\n## Pin description\n\n## Wiring\n\nConnect the probe to the USB port.\n"
    _doc, chunks = chunks_of(lib, "probe.md", md)
    assert [c.heading_path for c in chunks] == [("Probe manual", "Wiring")]
