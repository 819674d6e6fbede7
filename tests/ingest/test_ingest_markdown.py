"""Markdown ingestion and the chunking rules, on small golden documents."""

from __future__ import annotations

from pathlib import Path

from ingest_support import chunks_of, line_text, read

from engine.config import ChunkingConfig
from engine.ingest.chunking import chunk_document
from engine.lang.text import approx_token_count

MANUAL = """\
---
doc_id: pump-x
title: Pump X manual
version: "2.0"
date: 2026-01-05
models: [PX-1, PX-2]
status: superseded
visibility: [field]
language: en
---
# Pump X

## Torques

Table 3 — Tightening torques (dry threads)

| Fastener | Size | Torque (N·m) |
|---|---|---|
| Casing bolts | M12 | 55 |
| Impeller nut | M16 | 38 |

## Replacing the seal

1. Lock out the motor.
2. Drain the casing.
3. Remove the guard.

## Empty heading
## Filled heading

Some text under the second heading.

```
code line 1
code line 2
```
"""


def test_front_matter_is_metadata_and_lines_stay_those_of_the_file(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "pump.md", MANUAL)
    m = doc.meta
    assert (m.doc_id, m.title, m.version, str(m.date), m.models, m.status, m.visibility, m.language) == (
        "pump-x", "Pump X manual", "2.0", "2026-01-05", ("PX-1", "PX-2"), "superseded", ("field",), "en")
    assert all("doc_id:" not in c.text for c in chunks)
    first = chunks[0]
    assert line_text(lib / "pump.md", first.start_line) == "# Pump X"  # heading-only section merged
    assert first.heading_path == ("Pump X", "Torques")


def test_table_chunk_carries_header_units_and_caption(lib: Path) -> None:
    _, chunks = chunks_of(lib, "pump.md", MANUAL)
    table = next(c for c in chunks if c.kind == "table")
    assert "| Impeller nut | M16 | 38 |" in table.text
    assert "Table 3 — Tightening torques (dry threads)" in table.context
    assert "| Fastener | Size | Torque (N·m) |" in table.context
    # under the front matter's title, which the page's first heading does not repeat
    assert table.context.startswith("Pump X manual > Pump X > Torques\n")
    assert table.heading_path == ("Pump X", "Torques")


def test_table_rows_split_over_chunks_each_keep_header_and_caption(lib: Path) -> None:
    rows = "\n".join(f"| Bolt {i} on the outer flange ring | M{i} | {i * 3} |" for i in range(1, 40))
    text = f"# T\n\nTable 1 — Flange torques\n\n| Fastener | Size | Torque (N·m) |\n|---|---|---|\n{rows}\n"
    _, chunks = chunks_of(lib, "t.md", text, max_tokens=80)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) > 3
    for c in tables:
        assert c.tokens <= 80
        assert "| Fastener | Size | Torque (N·m) |" in c.context and "Table 1 — Flange torques" in c.context
    assert "| Bolt 39 on the outer flange ring | M39 | 117 |" in tables[-1].text


def test_procedure_stays_whole_when_it_fits(lib: Path) -> None:
    _, chunks = chunks_of(lib, "pump.md", MANUAL, max_tokens=40)
    proc = [c for c in chunks if "Lock out" in c.text]
    assert len(proc) == 1 and "3. Remove the guard." in proc[0].text
    assert proc[0].kind == "list"


def test_heading_only_section_merges_with_the_next(lib: Path) -> None:
    _, chunks = chunks_of(lib, "pump.md", MANUAL)
    c = next(c for c in chunks if "Some text under" in c.text)
    assert c.text.startswith("## Empty heading\n## Filled heading")
    assert line_text(lib / "pump.md", c.start_line) == "## Empty heading"
    assert c.heading_path == ("Pump X", "Filled heading")


def test_no_chunk_crosses_a_level_2_heading(lib: Path) -> None:
    _, chunks = chunks_of(lib, "pump.md", MANUAL, max_tokens=2000)
    assert len(chunks) == 3
    for c in chunks:  # headings of level <= 2 only at the top of a chunk, before any content
        lines = [ln for ln in c.text.split("\n") if ln.strip()]
        tops = [i for i, ln in enumerate(lines) if ln.startswith(("# ", "## "))]
        assert tops == list(range(len(tops)))


def test_every_heading_starts_a_chunk_and_empty_headings_merge_forward(lib: Path) -> None:
    text = "# A\n\n## B\n\n### C\n\nOne.\n\n### D\n\nTwo.\n"
    _, chunks = chunks_of(lib, "a.md", text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 7), (9, 11)]
    assert [c.heading_path[-1] for c in chunks] == ["C", "D"]


def test_long_paragraph_splits_at_sentences_with_overlap(lib: Path) -> None:
    sentences = [f"Sentence number {i} tells the technician to check valve {i} carefully." for i in range(60)]
    text = "# Long\n\n## Part\n\n" + " ".join(sentences) + "\n"
    doc, chunks = chunks_of(lib, "long.md", text, max_tokens=60, overlap_tokens=16)
    assert len(chunks) > 3
    for c in chunks:
        assert c.tokens <= 60
        assert c.text.rstrip().endswith(".")
    assert chunks[0].text.startswith("# Long")  # the heading belongs to the first piece
    for a, b in zip(chunks, chunks[1:]):
        assert b.char_start < a.char_end  # overlap ...
        assert approx_token_count(doc.text[b.char_start:a.char_end]) <= 16  # ... within the configured one
        assert b.char_start > a.char_start


def test_chunks_of_one_section_overlap_by_whole_units(lib: Path) -> None:
    paras = [f"Paragraph {i} says to check valve {i} and record its pressure reading." for i in range(12)]
    text = "# Pump\n\n## Checks\n\n" + "\n\n".join(paras) + "\n\n## Next\n\nOther text here.\n"
    doc, plain = chunks_of(lib, "o.md", text, max_tokens=60, section_overlap_tokens=0)
    _, chunks = chunks_of(lib, "o.md", text, max_tokens=60, section_overlap_tokens=20)
    checks = [c for c in chunks if c.heading_path[-1] == "Checks"]
    assert len(checks) > len([c for c in plain if c.heading_path[-1] == "Checks"]) > 1
    assert all(a.char_end <= b.char_start for a, b in zip(plain, plain[1:]))  # 0: no overlap
    for a, b in zip(checks, checks[1:]):
        shared = doc.text[b.char_start:a.char_end]
        assert b.char_start < a.char_end and shared in paras  # exactly the last whole paragraph
        assert approx_token_count(shared) <= 20 and b.char_end > a.char_end
    assert checks[0].text.startswith("# Pump")
    nxt = [c for c in chunks if c.heading_path[-1] == "Next"]
    assert nxt[0].text.startswith("## Next")  # no overlap across a section boundary


def test_cjk_sentences_split_without_spaces(lib: Path) -> None:
    text = "# 说明\n\n" + "".join(f"第{i}步检查阀门是否关闭并记录压力值。" for i in range(80)) + "\n"
    _, chunks = chunks_of(lib, "zh.md", text, max_tokens=50, overlap_tokens=0)
    assert len(chunks) > 3
    assert all(c.tokens <= 50 and c.text.endswith("。") for c in chunks)
    assert all(c.language == "zh" for c in chunks)


def test_code_block_is_a_code_chunk_and_ids_are_stable(lib: Path) -> None:
    doc, chunks = chunks_of(lib, "pump.md", MANUAL, max_tokens=12)
    code = [c for c in chunks if c.kind == "code"]
    assert code and "code line 2" in code[0].text
    again = chunk_document(doc, _blocks(lib), __import__("engine.ingest.chunking").ingest.chunking.approx_counter(),
                           ChunkingConfig(max_tokens=12))
    assert [c.id for c in again] == [c.id for c in chunks]
    assert len({c.id for c in chunks}) == len(chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def _blocks(lib: Path):
    from engine.ingest import read_document

    return read_document(lib, lib / "pump.md", ChunkingConfig())[1]


def test_section_ids_group_chunks_of_one_section(lib: Path) -> None:
    sentences = " ".join(f"Step {i} of the long section is described here." for i in range(40))
    text = f"# A\n\n## One\n\n{sentences}\n\n## Two\n\nShort.\n"
    _, chunks = chunks_of(lib, "s.md", text, max_tokens=40)
    one = {c.section_id for c in chunks if "Step" in c.text}
    two = {c.section_id for c in chunks if "Short." in c.text}
    assert len(one) == 1 and len(two) == 1 and one != two


def test_eval_corpus_hit_rule_lines(lib: Path) -> None:
    """The gold `## ` line of a section lies inside the first chunk of that section."""
    text = "# Titre\n\n## Titre — 1\n\nPremier paragraphe.\n\n## Titre — 2\n\nDeuxième paragraphe.\n"
    _, chunks = chunks_of(lib, "f.md", text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 5), (7, 9)]
    assert chunks[0].language == "fr" or chunks[0].language == ""


MDX_PAGE = """\
---
title: Channels
---
import Tabs from "@theme/Tabs";
import { Icon } from "@iconify/react";

# Channels

The channel index begins at 0 and ends at 7.

<Tabs
  groupId="settings"
  values={[
    { label: (<><Icon icon="mdi:android" /> Android</>), value: "android" },
  ]}>

<TabItem value="android">

## Android

Open the app and go to Settings > Channels.

</TabItem>
</Tabs>

<details>
<summary>Advanced</summary>
The secondary channels keep their own keys.
</details>

A reading of voltage<12V means the battery is low.
"""


def test_mdx_markup_is_no_text_and_the_text_between_tags_keeps_its_lines(lib: Path) -> None:
    from engine.ingest.markdown import parse_markdown

    from engine.lang.units import split_units

    doc, chunks = chunks_of(lib, "channels.mdx", MDX_PAGE)
    units = [u.text for c in chunks for u in split_units(c)]
    for markup in ("import", "<Tabs", "groupId", "mdi:android", "<TabItem", "</Tabs>", "<details>"):
        assert not any(markup in u for u in units), (markup, units)
    assert "Open the app and go to Settings > Channels." in units
    assert "The secondary channels keep their own keys." in " ".join(units)
    blocks = {MDX_PAGE[b.char_start:b.char_end]: b for b in parse_markdown(MDX_PAGE).blocks}
    kept = ["The channel index begins at 0 and ends at 7.", "Open the app and go to Settings > Channels.",
            "<summary>Advanced</summary>\nThe secondary channels keep their own keys.",
            "A reading of voltage<12V means the battery is low."]
    for t in kept:
        b = blocks[t]
        assert MDX_PAGE.split("\n")[b.start_line - 1] == t.split("\n")[0] and b.end_line - b.start_line == t.count("\n")
    assert [c.heading_path for c in chunks if "Settings > Channels" in c.text] == [("Channels", "Android")]


def test_an_mdx_file_is_read_as_markdown(tmp_path: Path) -> None:
    from engine.ingest.formats import FORMATS, holds_manuals

    (tmp_path / "page.mdx").write_text("# Page\n\nText.\n", encoding="utf-8")
    assert FORMATS[".mdx"] == "markdown" and holds_manuals(tmp_path)


def test_a_headings_html_tags_are_not_its_text_but_its_placeholders_are(lib: Path) -> None:
    page = ("# MQTT<a id=\"mqtt\"></a>\n\n"
            "## Status <a id=\"status\" />\n\nThe state topic holds the status.\n\n"
            "## Reset<br/>the <span class=\"x\">consumable</span> <!-- keep short -->\n\nSend the reset.\n\n"
            "## Wire `<PIN>` to <GND>\n\nUse the ground pin.\n")
    _doc, chunks = chunks_of(lib, "mqtt.md", page)
    paths = {c.heading_path for c in chunks}
    assert ("MQTT", "Status") in paths
    assert ("MQTT", "Reset the consumable") in paths
    assert ("MQTT", "Wire <PIN> to <GND>") in paths  # code and a writer's placeholder stay
    assert not any("<a" in h or "<span" in h or "<!--" in h for p in paths for h in p)


def test_a_headings_attribute_list_is_not_its_text(lib: Path) -> None:
    # MkDocs' attr_list, Pandoc and Hugo set a heading's id after it; the reader never sees it, and
    # in the heading path it put "vario" twice into every passage's words and citations
    page = ("# General\n\n## Vario {: #vario }\n\nThe vario beeps on climb.\n\n"
            "## Storage location (X20 Pro) {#storage .wide}\n\nFiles go on the SD card.\n\n"
            "## Links {target=\"_blank\"}\n\nSee the site.\n\n## 4. Receiver {: #4-configure-the-receiver }\n\nBind it.\n\n"
            "## The {name} placeholder\n\nReplace it.\n\n## Rounding {:.2f}\n\nTwo places.\n")
    _doc, chunks = chunks_of(lib, "general.md", page)
    paths = {c.heading_path for c in chunks}
    assert {("General", "Vario"), ("General", "Storage location (X20 Pro)"), ("General", "Links"),
            ("General", "4. Receiver")} <= paths
    assert ("General", "The {name} placeholder") in paths  # braces that hold text are the heading's
    assert ("General", "Rounding {:.2f}") in paths  # a format spec a writer shows


def test_a_paragraph_of_pictures_only_is_no_text_but_a_described_picture_is(lib: Path) -> None:
    from engine.ingest.markdown import parse_markdown
    from engine.lang.units import split_units

    shots = "\n".join(f'[<img src="https://example.org/shot-{k}.png" width=250>](https://example.org/shot-{k}.png)'
                      for k in range(1, 6))
    page = (f"# App\n\nIt lists the robots.\n\n## Screenshots\n\n{shots}\n\n## Wiring\n\n"
            "![Wiring of the fan header](fan.png)\n\n![](logo.png) [![](badge.svg)](https://example.org)\n\n"
            "Connect the fan.\n\n:::\n")
    blocks = [page[b.char_start:b.char_end] for b in parse_markdown(page).blocks if b.kind != "heading"]
    assert blocks == ["It lists the robots.", "![Wiring of the fan header](fan.png)", "Connect the fan.", ":::"]
    _doc, chunks = chunks_of(lib, "app.md", page)
    units = [u.text for c in chunks for u in split_units(c)]
    assert not any("shot-" in u or "badge.svg" in u or "logo.png" in u for u in units), units
    assert not any("shot-1.png" in c.text for c in chunks if c.heading_path[-1] == "Screenshots")


def test_a_table_whose_rows_have_no_outer_pipes_gives_one_row_per_line_with_its_header(lib: Path) -> None:
    from engine.answer.conflicts import table_header
    from engine.lang.units import split_units
    from engine.render import claim_display
    from engine.types import Claim

    page = ("# API\n\n## State object\n\n| JSON key | Value range | Description\n| --- | --- | --- |\n"
            "on | bool | On/Off state of the light.\nbri | 0 to 255 | Brightness of the light.\n"
            "udpn.nn | bool | Don't send a broadcast packet. Not included in state response.\n\n"
            "Send the state as JSON. It updates the light.\n")
    _doc, chunks = chunks_of(lib, "api.md", page)
    units = [(u, c) for c in chunks for u in split_units(c)]
    rows = [u.text for u, _c in units if u.kind == "table_row"]
    assert rows == ["on | bool | On/Off state of the light.",  # the header is no row: each row carries it
                    "bri | 0 to 255 | Brightness of the light.",
                    "udpn.nn | bool | Don't send a broadcast packet. Not included in state response."]
    assert [u.text for u, _c in units if u.kind == "sentence"] == ["Send the state as JSON.", "It updates the light."]
    u, c = next((u, c) for u, c in units if u.text.startswith("bri"))
    header = table_header(c, u)
    assert header == "| JSON key | Value range | Description"
    shown = claim_display(Claim(text=u.text, citation=1, char_start=0, char_end=len(u.text), header=header))
    assert shown == "bri — Value range: 0 to 255 · Description: Brightness of the light."


MDX_EXPORTS = """\
---
title: Hardware Issues
---

import Tabs from "@theme/Tabs";

export const PinTabs = (props) => (
    <Tabs
    groupId="pin-approaches"
    values={[
      { label: "Tester Shield", value: "shield" },
    ]}
  >
    {/* eslint-disable-next-line */}
    {props.children}
  </Tabs>

);

## Electrical Net Connections

Check every solder joint with a multimeter.
"""


def test_an_mdx_module_statement_over_several_paragraphs_is_no_text(lib: Path) -> None:
    from engine.ingest.markdown import parse_markdown
    from engine.lang.units import split_units

    doc, chunks = chunks_of(lib, "hardware.mdx", MDX_EXPORTS)
    text = " ".join(u.text for c in chunks for u in split_units(c))
    for markup in ("export const", "groupId", "props.children", "eslint", ");"):
        assert markup not in text, (markup, text)
    blocks = [MDX_EXPORTS[b.char_start:b.char_end] for b in parse_markdown(MDX_EXPORTS).blocks]
    assert blocks == ["## Electrical Net Connections", "Check every solder joint with a multimeter."]


def test_a_module_statement_ends_where_its_brackets_close_and_text_is_never_one():
    from engine.lang.markup import module_end

    page = "export const A = (props) => (\n  <B>\n\n  {props.children}</B>\n);\n\nText after.\n"
    assert page[:module_end(page, 0)].endswith(");") and "Text" not in page[:module_end(page, 0)]
    assert module_end('import Tabs from "@theme/Tabs";\nText', 0) is None  # one line: module_lines' case
    assert module_end("export const x = (\n  don't\n);\n", 0) is None  # an apostrophe in text: no string
    assert module_end("export const x = (\n\n# A heading\n", 0) is None  # the page's text again
    assert module_end("export const x = (\n  ]\n", 0) is None  # a bracket that does not match
    assert module_end("Export the config (see below)\nand more)\n", 0) is None  # prose, no statement


GCODE_PAGE = """\
---
title: Hotend Idle Timeout
brief: Set the idle timeout
codes: [ M86 ]
category: [ features, gcode ]
description: A page of the G-code reference
notes:
  - Requires `HOTEND_IDLE_TIMEOUT`.
  - View the current setting with `M503` at any time.
parameters:
  - tag: S
    optional: true
    description: Timeout period. Temperatures drop after it.
    values:
    - tag: seconds
      type: int
  - tag: B
    description: Bed idle temperature.
---

Use this command to set the idle time before the heaters are turned down.
"""


def test_a_static_sites_front_matter_records_are_text_under_their_key(lib: Path) -> None:
    # Jekyll's Marlin documentation keeps a G-code's parameters and notes in the front matter,
    # which its layout prints as the page's tables; labels (codes, category) and single values stay metadata
    from engine.lang.units import split_units
    from engine.render import claim_display
    from engine.types import Claim

    doc, chunks = chunks_of(lib, "M086.md", GCODE_PAGE)
    assert doc.meta.title == "Hotend Idle Timeout"
    by_path = {c.heading_path: c for c in chunks}
    assert set(by_path) == {("Hotend Idle Timeout", "notes"), ("Hotend Idle Timeout", "parameters"), ()}
    assert by_path[()].text.startswith("Use this command")  # the body is under no record's heading
    assert line_text(lib / "M086.md", by_path[("Hotend Idle Timeout", "parameters")].start_line) == "parameters:"
    assert not any("M86 ]" in c.text or "features, gcode" in c.text or "A page of" in c.text for c in chunks)
    records = [u for u in split_units(by_path[("Hotend Idle Timeout", "parameters")])]
    assert [u.kind for u in records] == ["table_row", "table_row"]  # one claim a record, its nested values in it
    shown = [claim_display(Claim(text=u.text, citation=1, char_start=0, char_end=1)) for u in records]
    assert shown == ["S — optional: true · description: Timeout period. Temperatures drop after it. "
                     "· values: tag: seconds, type: int", "B — description: Bed idle temperature."]
    notes = [u.text for u in split_units(by_path[("Hotend Idle Timeout", "notes")])]
    assert notes == ["Requires `HOTEND_IDLE_TIMEOUT`.", "View the current setting with `M503` at any time."]  # no "notes:"


def test_a_list_that_only_looks_like_records_is_read_as_markdown(lib: Path) -> None:
    from engine.lang.units import split_units

    page = "# Setup\n\n## parameters\n\n- tag: S is the timeout\n- Set it low.\n\nThen restart.\n"
    _doc, chunks = chunks_of(lib, "setup.md", page)
    units = [(u.kind, u.text) for c in chunks for u in split_units(c)]
    assert ("sentence", "Then restart.") in units and all(k != "table_row" for k, _ in units)


def test_record_lines_are_told_from_a_markdown_list():
    from engine.lang.records import record_cells, record_roles

    entries = ["parameters:", "  - tag: S", "    values:", "    - tag: seconds", "", "  - tag: B"]
    assert record_roles(entries, ("Idle", "parameters")) == ["title", "row", "row+", "row+", "row+", "row"]
    assert record_roles(entries[1:], ("Idle", "parameters")) == ["row", "row+", "row+", "row+", "row"]  # a later chunk
    assert record_roles(["- tag: S is the timeout", "- Set it low.", "Then restart."], ("parameters",)) is None
    assert record_roles(entries, ()) is None
    assert record_roles(["notes:", "- Requires `X`.", "- Save with `M500`."], ("notes",)) == ["title", "", ""]
    assert record_roles(["- Linux: use apt", "- Mac: use brew"], ("Install",)) is None  # one line each
    assert record_cells("- Check the fuse: it may be blown") is None  # a list item's colon, no record
    assert record_cells("- tag: [unclosed\n  more: x") is None
    assert record_cells("- Mode: off") is None  # one line: the writer's list item
    assert record_cells('- pre: "Home all axes:"\n  code: G28') == [("pre", "Home all axes:"), ("code", "G28")]
    assert record_cells("- tag: S\n  optional: off") == [("tag", "S"), ("optional", "off")]  # as written


SPEC_PAGE = """\
# Robot

## Hardware Specifications

<table>
    <thead>
        <tr>
            <th>Feature</th>
            <th>Lite</th>
            <th>Standard</th>
        </tr>
    </thead>
    <tbody>
        <tr>
            <td>Weight</td>
            <td>3270 g</td>
            <td>3945 g</td>
        </tr>
        <tr><td>Maximum payload</td><td>9 kg</td><td><b>9</b> kg</td></tr>
        <tr>
            <td>User Power</td>
            <td>VBAT @1.9A<br>5V @ Low current</td>
            <td>VBAT @ 300 mA</td>
        </tr>
    </tbody>
</table>

<figure class="aligncenter">
    <img src="media/robot.png" alt="Robot" style="width: 60%;"/>
    <figcaption>The robot on its dock</figcaption>
</figure>
"""


def test_an_html_table_in_markdown_gives_rows_with_their_header(lib: Path) -> None:
    # a spec sheet written in HTML inside a Markdown page (TurtleBot 4's manual): one row a claim,
    # shown with its columns; its tags, its header row and its figure's markup no claim of their own
    from engine.answer.conflicts import table_header
    from engine.lang.units import split_units
    from engine.render import claim_display
    from engine.types import Claim

    _doc, chunks = chunks_of(lib, "features.md", SPEC_PAGE)
    units = [(u, c) for c in chunks for u in split_units(c)]
    rows = [claim_display(Claim(text=u.text, citation=1, char_start=0, char_end=1, header=table_header(c, u)))
            for u, c in units if u.kind == "table_row"]
    assert rows == ["Weight — Lite: 3270 g · Standard: 3945 g", "Maximum payload — Lite: 9 kg · Standard: 9 kg",
                    "User Power — Lite: VBAT @1.9A 5V @ Low current · Standard: VBAT @ 300 mA"]
    others = [claim_display(Claim(text=u.text, citation=1, char_start=0, char_end=1)) for u, c in units
              if u.kind != "table_row"]
    assert others == ["The robot on its dock"]
    assert all("Feature | Lite | Standard" in c.context for c in chunks if c.kind == "table")


def test_html_table_rows_are_read_by_their_tags():
    from engine.lang.tables import html_row_roles, html_table_rows, is_html_row, table_cells

    html = "<table><tr><th>A</th><th>B</th></tr><tr><td>1<td>2</tr><tr><td><table><tr><td>x</td></tr></table></td><td>3</td></tr></table>"
    rows = html_table_rows(html)
    assert [(r.cells, r.header) for r in rows] == [(("A", "B"), True), (("1", "2"), False), (("x", "3"), False)]
    assert table_cells("<tr><td>Weight</td>\n<td>3270 g</td></tr>") == ["Weight", "3270 g"]
    assert is_html_row("  <tr>") and not is_html_row("| <td> | cell |")  # a pipe row that shows a tag
    lines = ["<table>", "<tr><th>A</th><th>B</th></tr>", "<tr>", "<td>1</td>", "<td>2</td>", "</tr>", "</table>", "Text."]
    assert html_row_roles(lines, "Robot\nA | B") == ["hidden", "header", "row", "row+", "row+", "row+", "hidden", ""]
    assert html_row_roles(["Plain text.", "- an item"], "") is None


def test_an_html_table_on_one_line_gives_one_row_a_tr(lib: Path) -> None:
    # GitBook saves a table on one line: each <tr> is still one claim, the header row none
    from engine.answer.conflicts import table_header
    from engine.lang.units import split_units
    from engine.render import claim_display
    from engine.types import Claim

    page = ("# Switches\n\n<table><thead><tr><th>Expression</th><th>Description</th></tr></thead><tbody>"
            "<tr><td>a=x</td><td>True when V1 equals V2.</td></tr><tr><td>a&#x3C;x</td><td>True when V1 is less.</td></tr>"
            "</tbody></table>\n\nText after.\n")
    _doc, chunks = chunks_of(lib, "ls.md", page)
    units = [(u, c) for c in chunks for u in split_units(c)]
    shown = [claim_display(Claim(text=u.text, citation=1, char_start=0, char_end=1, header=table_header(c, u)))
             for u, c in units]
    assert shown == ["a=x — Description: True when V1 equals V2.", "a<x — Description: True when V1 is less.",
                     "Text after."]


def test_a_sentence_naming_the_row_tag_is_no_row():
    from engine.lang.tables import html_row_roles

    assert html_row_roles(["Wrap each row in `<tr>` and each cell in `<td>`.", "Then close the table."], "") is None
    assert html_row_roles(["<table><thead><tr><th>A</th></tr></thead></table>"], "")[0] == "row"


def test_title_is_a_heading_that_heads_the_page_else_the_file_name(tmp_path: Path) -> None:
    # a static site's page titled by its file name: its first heading is one of its sections
    sections = "description: Tasmota FAQ\n\n## Wi-Fi\n\nJoin the AP.\n\n## MQTT\n\nSet the broker.\n"
    assert chunks_of(tmp_path, "FAQ.md", sections)[0].meta.title == "FAQ"
    assert chunks_of(tmp_path, "Getting-Started.md", sections)[0].meta.title == "Getting Started"
    # a sole heading above its subsections, or a top-level one, titles the page
    sole = "## Pump care\n\n### Seals\n\nReplace yearly.\n\n### Belts\n\nCheck tension.\n"
    assert chunks_of(tmp_path, "care.md", sole)[0].meta.title == "Pump care"
    tops = "# Pump care\n\nIntro.\n\n# Seals\n\nReplace yearly.\n"
    assert chunks_of(tmp_path, "care2.md", tops)[0].meta.title == "Pump care"


def test_context_reads_the_heading_path_under_the_document_title(tmp_path: Path) -> None:
    # two pages titled in their front matter, each with a "Kconfig" section: the context tells them apart
    page = "---\ntitle: {}\n---\n\nSee the overview.\n\n## Kconfig\n\n| Option | Default |\n|---|---|\n| `{}` | n |\n"
    _, bt = chunks_of(tmp_path, "bluetooth.md", page.format("Bluetooth Configuration", "CONFIG_BT"))
    _, bat = chunks_of(tmp_path, "battery.md", page.format("Battery  Configuration", "CONFIG_BAT"))
    rows = [next(c for c in chunks if c.heading_path == ("Kconfig",)) for chunks in (bt, bat)]
    assert [r.context.split("\n")[0] for r in rows] == ["Bluetooth Configuration > Kconfig",
                                                          "Battery Configuration > Kconfig"]
    assert "| Option | Default |" in rows[0].context  # the table's header still on the next line
    assert bt[0].heading_path == () and bt[0].context == "Bluetooth Configuration"  # text before any heading
    # a first heading that is the title is not read twice (case and spacing aside)
    _, h1 = chunks_of(tmp_path, "seals.md", "---\ntitle: Seal care\n---\n# Seal  CARE\n\n## Seals\n\nReplace yearly.\n")
    assert h1[-1].context == "Seal CARE > Seals" and h1[-1].heading_path == ("Seal CARE", "Seals")
    # a page with no title of its own reads under its file's name, as its site shows it
    _, named = chunks_of(tmp_path, "Getting-Started.md", "## Wi-Fi\n\nJoin the AP.\n\n## MQTT\n\nSet the broker.\n")
    assert [c.context for c in named] == ["Getting Started > Wi-Fi", "Getting Started > MQTT"]


def test_a_heading_reads_its_emoji_shortcodes_and_drops_its_icons(tmp_path: Path) -> None:
    doc, chunks = chunks_of(tmp_path, "Berry.md", "# Berry Scripting :material-cpu-32-bit:\n\n## :warning: Limits\n\nNo more than 16.\n")
    assert doc.meta.title == "Berry Scripting"
    assert chunks[-1].heading_path == ("Berry Scripting", "⚠️ Limits")
    assert "## :warning: Limits" in chunks[-1].text  # the text a chunk cites stays the source's


TABBED = """# Configuration procedure

Follow the steps for your chip.

=== "ESP8266"
    ## Finding relays

    ### Step 1.
    Disable power state saves first.

    ```
    SetOption0 0
    ```

=== "ESP32"

    ### Step 1.
    Disable boot loop control.

    - keep GPIO0 free
    - keep GPIO2 free

## Finishing

Save the configuration.
"""


def test_a_content_tabs_label_heads_its_body_and_the_body_is_not_code(tmp_path: Path) -> None:
    doc, blocks = read(tmp_path, "Procedure.md", TABBED)
    by_text = {doc.text[b.char_start:b.char_end].strip(): b for b in blocks}
    step = by_text["Disable power state saves first."]
    assert step.kind == "paragraph"  # not an indented code block
    assert step.heading_path == ("Configuration procedure", "ESP8266", "Finding relays", "Step 1.")
    assert by_text["Disable boot loop control."].heading_path == ("Configuration procedure", "ESP32", "Step 1.")
    assert by_text["- keep GPIO0 free"].kind == "list_item"
    assert by_text["```\n    SetOption0 0\n    ```"].kind == "code"
    # the tab ends where its body does: the next heading is the title's again
    assert by_text["Save the configuration."].heading_path == ("Configuration procedure", "Finishing")
    lines = TABBED.split("\n")
    for b in blocks:  # a block's lines are the file's lines
        assert doc.text[b.char_start:b.char_end].strip() == "\n".join(lines[b.start_line - 1:b.end_line]).strip()
    _doc, chunks = chunks_of(tmp_path, "Procedure.md", TABBED)
    esp32 = next(c for c in chunks if "boot loop" in c.text)
    assert esp32.heading_path[:2] == ("Configuration procedure", "ESP32")
    assert esp32.text.startswith('=== "ESP32"')


def test_a_content_tabs_opening_line_is_no_claim_but_its_bodys_heading(tmp_path: Path) -> None:
    from engine.lang.units import split_units

    text = '# Flashing\n\n=== "Web installer"\n    Open the installer page in Chrome.\n\n=== "esptool"\n    Run esptool.py with the image.\n'
    _doc, chunks = chunks_of(tmp_path, "Flash.md", text)
    units = [u for c in chunks for u in split_units(c)]
    assert [(u.heading, u.text) for u in units] == [
        ("Web installer", "Open the installer page in Chrome."), ("esptool", "Run esptool.py with the image.")]


def test_an_admonitions_body_after_a_blank_line_is_its_text_and_an_example_in_code_stays_code(tmp_path: Path) -> None:
    text = ('# Wiring\n\n??? info "Compiling tools"\n\n    You need PlatformIO.\n\n    - Python 3\n\n'
            'Back to the wiring.\n\n```\n!!! note\n\n    not a container\n```\n')
    doc, blocks = read(tmp_path, "Wiring.md", text)
    kinds = {doc.text[b.char_start:b.char_end].strip(): b.kind for b in blocks}
    assert kinds["You need PlatformIO."] == "paragraph"
    assert kinds["- Python 3"] == "list_item"
    assert kinds["Back to the wiring."] == "paragraph"
    assert kinds["```\n!!! note\n\n    not a container\n```"] == "code"


def test_a_liquid_tabs_label_heads_its_body(tmp_path: Path) -> None:
    from engine.lang.units import split_units

    text = ("# Basic setup\n\n## Installing ROS 2 {#ros}\n\n{% tabs install %}\n{% tab install galactic %}\n"
            "Required OS: Ubuntu 20.04.\n{% endtab %}\n{% tab title=\"Humble\" %}\nRequired OS: Ubuntu 22.04.\n"
            "{% endtab %}\n{% endtabs %}\n\nThen install the desktop package.\n")
    doc, blocks = read(tmp_path, "basic.md", text)
    paths = {doc.text[b.char_start:b.char_end].strip(): b.heading_path for b in blocks if b.kind != "heading"}
    assert paths == {"Required OS: Ubuntu 20.04.": ("Basic setup", "Installing ROS 2", "galactic"),
                     "Required OS: Ubuntu 22.04.": ("Basic setup", "Installing ROS 2", "Humble"),
                     "Then install the desktop package.": ("Basic setup", "Installing ROS 2")}
    _doc, chunks = chunks_of(tmp_path, "basic.md", text)
    units = [(u.heading, u.text) for c in chunks for u in split_units(c)]
    assert ("galactic", "Required OS: Ubuntu 20.04.") in units and ("Humble", "Required OS: Ubuntu 22.04.") in units
    # a unit's heading reads as the chunk's: no attribute list
    assert all(h != "Installing ROS 2 {#ros}" for h, _t in units)


def test_a_fenced_admonition_is_its_text_with_its_kind_and_code_inside_stays_code(tmp_path: Path) -> None:
    from engine.lang.units import split_units

    text = ("# Setup\n\n```{warning}\nDisconnect the battery first.\n\n- Remove the fuse.\n```\n\n"
            "````{note} Listing\nRun:\n```bash\nls -l\n```\n````\n\n```python\nprint(1)\n```\n")
    doc, blocks = read(tmp_path, "setup.md", text)
    kinds = [(b.kind, doc.text[b.char_start:b.char_end].splitlines()[0]) for b in blocks]
    assert ("paragraph", "```{warning}") in kinds and ("list_item", "- Remove the fuse.") in kinds
    assert ("code", "```bash") in kinds and ("code", "```python") in kinds
    _doc, chunks = chunks_of(tmp_path, "setup.md", text)
    units = [(u.kind, u.admonition, u.text) for c in chunks for u in split_units(c)]
    assert units == [("sentence", "warning", "Disconnect the battery first."), ("list_item", "warning", "Remove the fuse."),
                     ("sentence", "note", "Run:"), ("code", "note", "ls -l"), ("code", "", "print(1)")]


def test_a_docusaurus_tabs_label_heads_its_body_unless_the_body_says_it(tmp_path: Path) -> None:
    from engine.answer.units import unit_texts

    text = ('import Tabs from "@theme/Tabs";\nimport TabItem from "@theme/TabItem";\n\n## Install uv\n\n'
            '<Tabs values={[\n  { label: "Linux", value: "linux" },\n  { value: "win", label: "Windows" },\n]}>\n'
            '<TabItem value="linux">\n\nRun the install script.\n\n</TabItem>\n<TabItem value="win">\n\n'
            'Run winget.\n\n</TabItem>\n<TabItem value="android">\n\n### Android\n\nOpen the app.\n\n</TabItem>\n'
            '</Tabs>\n\nThen check the version.\n')
    doc, blocks = read(tmp_path, "setup.mdx", text)
    paths = {doc.text[b.char_start:b.char_end].strip(): b.heading_path for b in blocks if b.kind != "heading"}
    assert paths == {"Run the install script.": ("Install uv", "Linux"), "Run winget.": ("Install uv", "Windows"),
                     "Open the app.": ("Install uv", "Android"), "Then check the version.": ("Install uv",)}
    _doc, chunks = chunks_of(tmp_path, "setup.mdx", text)
    texts = [t for c in chunks for t in unit_texts(c)]
    assert "Install uv > Windows\nRun winget." in texts  # the unit reads the label the <Tabs> gives


def test_containers_read_the_same_with_windows_line_ends(tmp_path: Path) -> None:
    text = ('# T\n\n=== "ESP32"\n\n    Step one here.\n\n    - item\n\n```{warning}\nHot.\n```\n\n'
            '<TabItem value="win">\n\nRun it.\n\n</TabItem>\n{% tab x humble %}\nGo.\n{% endtab %}\n')
    _doc, u_blocks = read(tmp_path, "unix.md", text)
    _doc, d_blocks = read(tmp_path, "dos.md", text.replace("\n", "\r\n"))
    assert [(b.kind, b.heading_path, b.start_line) for b in u_blocks] == [
        (b.kind, b.heading_path, b.start_line) for b in d_blocks]
    assert ("paragraph", ("T", "humble"), 19) in [(b.kind, b.heading_path, b.start_line) for b in u_blocks]


def test_a_gitbook_hints_style_is_its_admonitions_kind(tmp_path: Path) -> None:
    from engine.lang.units import SAFETY_ADMONITIONS, split_units

    text = ('# Battery\n\n{% hint style="danger" %}\nNever charge a swollen pack.\n{% endhint %}\n\n'
            '{% hint style="info" %}\nThe radio shows the voltage.\n{% endhint %}\n\nCharge at 1C.\n')
    _doc, chunks = chunks_of(tmp_path, "battery.md", text)
    kinds = {u.text: u.admonition for c in chunks for u in split_units(c)}
    assert kinds == {"Never charge a swollen pack.": "danger", "The radio shows the voltage.": "info",
                     "Charge at 1C.": ""}
    assert "danger" in SAFETY_ADMONITIONS  # so the answer shows it as a safety statement
