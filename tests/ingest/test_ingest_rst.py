"""reStructuredText ingestion (engine.ingest.rst) and its units (engine.lang.rst via
engine.lang.units): titles by adornment, markup no reader sees, literal blocks, admonitions,
lists and tables, every block a run of the file's own lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ingest_support import chunks_of, read

from engine.ingest.formats import FORMATS, holds_manuals
from engine.ingest.rst import parse_rst
from engine.lang.units import code_after, split_units
from engine.types import IngestIssue

MANUAL = """\
:orphan:

.. _pump-manual:

==================
Pump PX-200 manual
==================

.. contents::
   :local:

Safety
======

.. warning::

   Disconnect the mains before opening the cover.

.. note:: The pump weighs 12 kg
   without water.

Installation
============

1. Mount the pump on a level base.
2. Connect the hoses:

   - inlet hose (25 mm)
   - outlet hose (20 mm)

#. Fill the pump with water.

Configuration
-------------

.. This comment is not text.
   Nor is its second line.

Set the pressure in ``config.ini``::

    [pump]
    pressure = 3.5

.. code-block:: ini
   :linenos:

   [motor]
   speed = 1450

.. image:: pump.png
   :alt: the pump

.. figure:: curve.png
   :width: 50%

   Pressure curve of the PX-200.

=========  ======
Part       Torque
=========  ======
Impeller   12 N·m
Cover      8 N·m
=========  ======

+----------+---------+
| Fault    | Remedy  |
+==========+=========+
| E01      | Reset   |
+----------+---------+
| E02      | Call us |
|          | at once |
+----------+---------+

.. list-table:: Spare parts
   :header-rows: 1

   * - Part
     - Number
   * - Seal kit
     - SK-20
"""


def _blocks(text: str):
    return [(b, text[b.char_start:b.char_end]) for b in parse_rst(text).blocks]


def test_rst_is_a_supported_format(tmp_path: Path) -> None:
    (tmp_path / "manual.rst").write_text("Title\n=====\n\nText.\n", encoding="utf-8")
    assert FORMATS[".rst"] == "rst" and holds_manuals(tmp_path)
    got = read(tmp_path, "manual.rst", MANUAL)
    assert not isinstance(got, IngestIssue), got
    doc, blocks = got
    assert doc.format == "rst" and doc.text == MANUAL and blocks


def test_titles_take_their_level_from_the_order_their_adornment_first_appears() -> None:
    heads = [(b.level, b.heading_path, t.splitlines()[1 if t.startswith("=") else 0])
             for b, t in _blocks(MANUAL) if b.kind == "heading"]
    assert heads == [(1, (), "Pump PX-200 manual"), (2, ("Pump PX-200 manual",), "Safety"),
                     (2, ("Pump PX-200 manual",), "Installation"),
                     (3, ("Pump PX-200 manual", "Installation"), "Configuration")]
    assert parse_rst(MANUAL).first_heading == "Pump PX-200 manual"


def test_every_block_is_a_run_of_the_files_own_lines() -> None:
    lines = MANUAL.split("\n")
    for b, text in _blocks(MANUAL):
        assert text == text.strip() and text
        assert MANUAL.count("\n", 0, b.char_start) + 1 == b.start_line
        assert lines[b.start_line - 1].strip().startswith(text.split("\n")[0].strip())
        assert b.end_line == b.start_line + text.count("\n")


def test_markup_no_reader_sees_gives_no_block() -> None:
    texts = " ".join(t for _b, t in _blocks(MANUAL))
    for hidden in (":orphan:", "pump-manual", "contents", "comment", "pump.png", "curve.png", ":linenos:",
                   ":header-rows:", ":alt:"):
        assert hidden not in texts, hidden
    assert "Pressure curve of the PX-200." in texts  # a figure's caption is text


def test_literal_blocks_and_code_directives_are_code() -> None:
    code = [t for b, t in _blocks(MANUAL) if b.kind == "code"]
    assert code == ["[pump]\n    pressure = 3.5", "[motor]\n   speed = 1450"]


def test_an_admonition_starts_at_its_directive_line_and_its_text_warns(tmp_path: Path) -> None:
    blocks = _blocks(MANUAL)
    warn = next(t for b, t in blocks if "Disconnect" in t)
    assert warn.startswith(".. warning::")
    note = next(t for b, t in blocks if "weighs" in t)
    assert note == ".. note:: The pump weighs 12 kg\n   without water."
    _doc, chunks = chunks_of(tmp_path, "pump.rst", MANUAL)
    units = [u for c in chunks for u in split_units(c)]
    disconnect = next(u for u in units if "Disconnect" in u.text)
    assert disconnect.text == "Disconnect the mains before opening the cover."
    assert disconnect.admonition == "warning"
    assert not any(u.text.strip().startswith(".. warning") for u in units)


TEXT_ON_THE_OPENING_LINE = """\
Pump
====

.. warning:: Hot surfaces

    Let the casing cool below 40 °C before you open it.

Open the drain valve slowly.

.. note:: The seal kit ships with two O-rings.
   Keep them in the bag until you fit them.

.. caution:: Never run the pump dry.

Seals
-----

.. tip:: Spare bolts

   Label the bolts as you remove them.

.. figure:: seal.png
   :width: 50%

   Seal kit, version 2

.. figure:: seal-fitted.png

   The lip of the seal faces the pump.

Replace the seal every 4000 hours.
"""


def test_an_admonition_with_text_on_its_opening_line_opens_there_and_a_caption_naming_a_picture_is_no_claim(tmp_path: Path) -> None:
    _doc, chunks = chunks_of(tmp_path, "pump.rst", TEXT_ON_THE_OPENING_LINE)
    units = {u.text: u for c in chunks for u in split_units(c)}
    assert not any(".. " in t for t in units)  # the directive's markup is never said
    assert "Hot surfaces" not in units and "Spare bolts" not in units  # a title line is no claim ...
    hot = units["Let the casing cool below 40 °C before you open it."]
    assert (hot.admonition, hot.heading) == ("warning", "Hot surfaces")  # ... it heads the text it governs
    drain = units["Open the drain valve slowly."]
    assert (drain.admonition, drain.heading) == ("", "Pump")  # the admonition ended, and its title with it
    assert units["The seal kit ships with two O-rings."].admonition == "note"  # a statement on the line
    assert units["Keep them in the bag until you fit them."].admonition == "note"  # and its paragraph goes on
    assert units["Never run the pump dry."].admonition == "caution"
    label = units["Label the bolts as you remove them."]
    assert (label.admonition, label.heading) == ("tip", "Spare bolts")
    assert "Seal kit, version 2" not in units  # a caption that only names its picture is no claim ...
    assert "The lip of the seal faces the pump." in units  # ... one that says something is
    after = units["Replace the seal every 4000 hours."]
    assert (after.admonition, after.heading) == ("", "Seals")


def test_a_list_item_of_cross_references_only_is_no_claim(tmp_path: Path) -> None:
    text = ("Pump\n====\n\nSee :doc:`seals` before you open it.\n\nSee Also\n--------\n\n"
            "- :doc:`seals`\n- :ref:`the torque table <torque>`, :ghedit:`Edit`\n- :doc:`motor` wiring and fuses\n")
    _doc, chunks = chunks_of(tmp_path, "pump.rst", text)
    said = [u.text for c in chunks for u in split_units(c)]
    assert said == ["See :doc:`seals` before you open it.", ":doc:`motor` wiring and fuses"]


ENDPOINT = """\
Files
=====

Upload a file
-------------

.. http:post:: /api/files/(string:location)

   Uploads a file to the pump's storage.

   .. versionadded:: 1.3.10

   :param location: The target location, ``local`` or ``sdcard``
   :form print:     Whether to start printing the file after the upload
                    (``true``) or not (``false``)
   :status 201:     No error
   :status 409:     A print is running on the file
"""


def test_a_domain_directive_is_an_api_entry_and_its_fields_are_items_its_version_note_no_claim(tmp_path: Path) -> None:
    _doc, chunks = chunks_of(tmp_path, "files.rst", ENDPOINT)
    units = [u for c in chunks for u in split_units(c)]
    assert not any(".. " in u.text for u in units)  # the endpoint's signature heads its text, says nothing,
    # and a version's note with no text ("Added in 1.3.10") is no claim either
    assert {u.heading for u in units} == {"POST /api/files/(string:location)"}
    assert [(u.kind, " ".join(u.text.split())) for u in units] == [
        ("sentence", "Uploads a file to the pump's storage."),
        ("list_item", ":param location: The target location, ``local`` or ``sdcard``"),
        ("list_item", ":form print: Whether to start printing the file after the upload (``true``) or not (``false``)"),
        ("list_item", ":status 201: No error"), ("list_item", ":status 409: A print is running on the file")]


RULED_TABLE = "Special pins\n============\n\nThe pins the board uses itself:\n\n" + (
    "=========== ==========================================\n"
    + "".join(f"``GPIO{n}``{' ' * (3 - len(str(n)))}    Flash data line {n}, do not wire it\n"
              "----------- ------------------------------------------\n" for n in range(6, 30))
    + "``GPIO30``  Boot mode; pulled up by the board, keep it\n"
    + "            free of loads at power-on\n"
    + "=========== ==========================================\n\nWire sensors to the other pins.\n")


def test_a_simple_table_ruled_between_its_rows_is_rows_in_every_chunk_cut_from_it(tmp_path: Path) -> None:
    _doc, chunks = chunks_of(tmp_path, "pins.rst", RULED_TABLE, max_tokens=64)
    table = [c for c in chunks if c.kind == "table"]
    assert len(table) >= 3 and not table[1].text.lstrip().startswith("=")  # chunks cut from the table's body
    units = [u for c in chunks for u in split_units(c)]
    rows = [u.text for u in units if u.kind == "table_row"]
    assert not any(set(t) <= set("- \n") for t in rows)  # the rules between the rows are no rows
    assert not any(u.kind == "sentence" and "GPIO" in u.text for u in units)  # no chunk reads rows as prose
    assert {t.split()[0] for t in rows} == {f"``GPIO{n}``" for n in range(6, 31)}
    assert "``GPIO30``  Boot mode; pulled up by the board, keep it\n            free of loads at power-on" in rows
    assert "Wire sensors to the other pins." in {u.text for u in units}


def test_list_items_nested_and_enumerated_are_one_list() -> None:
    items = [(b.level, b.group, t) for b, t in _blocks(MANUAL) if b.kind == "list_item"]
    assert [(lvl, t) for lvl, _g, t in items] == [
        (1, "1. Mount the pump on a level base."), (1, "2. Connect the hoses:"),
        (2, "- inlet hose (25 mm)"), (2, "- outlet hose (20 mm)"), (1, "#. Fill the pump with water.")]
    assert len({g for _l, g, _t in items}) == 1


def test_an_enumerator_running_on_into_a_sentence_is_a_paragraph() -> None:
    kinds = [b.kind for b, _t in _blocks("A. Smith wrote this manual\nfor the service team.\n")]
    assert kinds == ["paragraph"]


def test_table_rows_keep_their_header_and_caption() -> None:
    """Each table's header is its cells joined by " | ", whichever table form it is."""
    rows = [(t, b.context) for b, t in _blocks(MANUAL) if b.kind == "table_row"]
    assert rows == [
        ("Impeller   12 N·m", "Part | Torque"), ("Cover      8 N·m", "Part | Torque"),
        ("| E01      | Reset   |", "Fault | Remedy"),
        ("| E02      | Call us |\n|          | at once |", "Fault | Remedy"),
        ("* - Seal kit\n     - SK-20", "Spare parts\nPart | Number")]


def test_units_of_an_rst_chunk(tmp_path: Path) -> None:
    _doc, chunks = chunks_of(tmp_path, "pump.rst", MANUAL)
    units = [u for c in chunks for u in split_units(c)]
    texts = [u.text for u in units]
    for title in ("Pump PX-200 manual", "Safety", "Installation", "Configuration"):
        assert not any(t.startswith(title) for t in texts), title  # titles are no claims
    assert not any("==" in t or "contents" in t or "comment" in t or "pump.png" in t for t in texts)
    by_text = {u.text: u for u in units}
    assert by_text["[pump]"].kind == "code" and by_text["speed = 1450"].kind == "code"
    assert by_text["Impeller   12 N·m"].kind == "table_row"
    assert by_text["* - Seal kit\n     - SK-20"].kind == "table_row"  # a list-table row is one unit
    assert by_text["Fill the pump with water."].kind == "list_item"
    assert by_text["Mount the pump on a level base."].heading == "Installation"


def test_an_rst_table_row_is_read_with_its_header_and_the_header_is_no_claim(tmp_path: Path) -> None:
    """Simple, grid and list-tables alike: the header rows say nothing of their own; each row is
    embedded and shown with its table's header (its cells, not its markup: "* - ", "|")."""
    from engine.answer.conflicts import table_header
    from engine.lang.tables import table_cells

    _doc, chunks = chunks_of(tmp_path, "pump.rst", MANUAL)
    rows = {u.text: table_header(c, u) for c in chunks for u in split_units(c) if u.kind == "table_row"}
    assert rows == {"Impeller   12 N·m": "Part | Torque", "Cover      8 N·m": "Part | Torque",
                    "| E01      | Reset   |": "Fault | Remedy",
                    "| E02      | Call us |\n|          | at once |": "Fault | Remedy",  # one row, wrapped
                    "* - Seal kit\n     - SK-20": "Part | Number"}
    assert [table_cells(t, 2) for t in rows] == [
        ["Impeller", "12 N·m"], ["Cover", "8 N·m"], ["E01", "Reset"], ["E02", "Call us at once"],
        ["Seal kit", "SK-20"]]


def test_two_rst_tables_in_one_chunk_each_keep_their_own_header(tmp_path: Path) -> None:
    source = ("Wiring\n======\n\n.. list-table:: RJ45\n   :header-rows: 1\n\n   * - Pin\n     - Function\n"
              "   * - 3\n     - TX\n\n.. list-table:: Spare\n\n   * - Seal kit\n     - SK-20\n\n"
              "=====  =========\nPort   Baud rate\n=====  =========\nUART0  115200\n=====  =========\n")
    from engine.answer.conflicts import table_header

    _doc, chunks = chunks_of(tmp_path, "wiring.rst", source)
    rows = {u.text: table_header(c, u) for c in chunks for u in split_units(c) if u.kind == "table_row"}
    assert rows == {"* - 3\n     - TX": "Pin | Function", "* - Seal kit\n     - SK-20": "",
                    "UART0  115200": "Port | Baud rate"}


def test_a_lead_in_ending_with_double_colon_announces_its_literal_block(tmp_path: Path) -> None:
    _doc, chunks = chunks_of(tmp_path, "pump.rst", MANUAL)
    chunk = next(c for c in chunks if "config.ini" in c.text)
    lead = next(u for u in split_units(chunk) if u.text.endswith("::"))
    code = code_after(chunk, lead)
    assert code is not None and code.text == "[pump]\n    pressure = 3.5" and code.kind == "code"


@pytest.mark.parametrize("source", ["Title\n=====\n\n----------\n\nAfter a transition.\n",
                                    "Title\n=====\n\n::\n\n    literal only\n"])
def test_transitions_and_a_lone_double_colon_are_no_text(source: str) -> None:
    texts = [t for b, t in _blocks(source) if b.kind != "heading"]
    assert texts in (["After a transition."], ["literal only"])


_LINES = st.sampled_from([
    "Title", "=====", "-----", "", "   indented text", ".. note::", ".. code-block:: c", "   :linenos:",
    ".. _target:", ".. image:: x.png", "- item", "#. step", "1. step", "Text ending::", "+----+----+",
    "| a  | b  |", "+====+====+", "===  ===", "a    b", ".. list-table:: T", "   * - x", "     - y",
    "\tTabbed", "Ünïcödé text ✓", "..", "::", ".. [1] A footnote.", "    >>> 1 + 1",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINES, max_size=40))
def test_any_rst_like_text_gives_blocks_within_the_text(lines: list[str]) -> None:
    text = "\n".join(lines)
    for b in parse_rst(text).blocks:
        assert 0 <= b.char_start < b.char_end <= len(text)
        assert text[b.char_start:b.char_end].strip() == text[b.char_start:b.char_end]
        assert text.count("\n", 0, b.char_start) + 1 == b.start_line <= b.end_line


def test_a_gold_section_runs_to_the_next_title_of_its_level_or_higher() -> None:
    from engine.search.diagnose import rst_section, rst_titles

    titles = rst_titles(MANUAL)
    lines = MANUAL.split("\n")
    at = {text: n for n, text in enumerate(lines, 1)}
    last = MANUAL.count("\n") + 1
    assert rst_section(titles, at["Safety"]) == (at["Safety"], at["Installation"] - 1)
    assert rst_section(titles, at["Installation"]) == (at["Installation"], last)  # holds its sub-section
    assert rst_section(titles, at["Configuration"]) == (at["Configuration"], last)
    assert rst_section(titles, at["Pump PX-200 manual"]) == (at["Pump PX-200 manual"] - 1, last)  # overlined
    assert rst_section(titles, at["#. Fill the pump with water."]) is None


def test_lists_nested_past_what_the_reader_follows_are_plain_text_with_a_warning() -> None:
    text = "\n".join(" " * i + "- item" for i in range(3000))  # every line one item deeper
    parsed = parse_rst(text)
    assert parsed.warnings and "nested deeper" in parsed.warnings[0]
    assert max(b.level for b in parsed.blocks) <= 24 + 1
    assert parsed.blocks[-1].end_line == 3000  # nothing lost: the deepest levels are one block


API = """\
class UART
==========

Methods
-------

.. method:: UART.init(baudrate=9600, bits=8)
            UART.deinit()

   Initialise the UART bus with the given parameters.

.. py:method:: UART.read([nbytes])

   Read characters. Returns None on timeout.

.. class:: Pin(id)

   A pin object.

   .. method:: Pin.value([x])

      Get or set the pin's value.

.. admonition:: Difference to CPython

   Only the Unix port uses the same epoch.
"""


def test_an_api_entry_is_a_title_its_signature_under_the_section_holding_it(tmp_path: Path) -> None:
    heads = [(b.level, b.heading_path[-1:], API[b.char_start:b.char_end].split("\n")[0])
             for b, _t in _blocks(API) if b.kind == "heading"][2:]
    assert heads == [(3, ("Methods",), ".. method:: UART.init(baudrate=9600, bits=8)"),
                     (3, ("Methods",), ".. py:method:: UART.read([nbytes])"),
                     (3, ("Methods",), ".. class:: Pin(id)"),
                     (4, ("Pin(id)",), ".. method:: Pin.value([x])")]
    para = next(b for b, t in _blocks(API) if t.startswith("Initialise"))
    assert para.heading_path[-1] == "UART.init(baudrate=9600, bits=8) / UART.deinit()"
    _doc, chunks = chunks_of(tmp_path, "uart.rst", API)
    units = [u for c in chunks for u in split_units(c)]
    assert not any(".. " in u.text or "UART.deinit()" == u.text.strip() for u in units)  # signatures: no claims
    read = next(u for u in units if u.text.startswith("Read characters"))
    assert read.heading == "UART.read([nbytes])"
    epoch = next(u for u in units if u.text.startswith("Only the Unix port"))
    assert epoch.heading == "Difference to CPython"  # a custom admonition's title heads its text


def test_a_literal_block_cut_over_chunks_is_code_in_every_piece(tmp_path: Path) -> None:
    code = "\n".join(f"    uart.write(b'line {i:03d} of the long example')" for i in range(120))
    text = f"Serial\n======\n\nA long example::\n\n{code}\n\nAfter the example, a sentence.\n"
    _doc, chunks = chunks_of(tmp_path, "long.rst", text, max_tokens=120, section_overlap_tokens=0)
    assert len(chunks) > 3
    later = [c for c in chunks if "A long example" not in c.text and "uart.write" in c.text]
    assert later and all(c.in_code for c in later)
    for c in later:
        units = split_units(c)
        assert all(u.kind == "code" for u in units if "uart.write" in u.text), [u.kind for u in units]
    last = split_units(chunks[-1])
    assert any(u.kind == "sentence" and u.text == "After the example, a sentence." for u in last)


def test_a_piece_cut_from_a_literal_block_in_a_note_reads_the_notes_text_after_it(tmp_path: Path) -> None:
    intro = " ".join(f"Step {i} of the lint checks runs in the container as the others do." for i in range(9))
    text = (f"Lint\n====\n\n.. note::\n\n    {intro}\n\n    .. code-block:: bash\n\n"
            "        # the whole suite\n        docker run --rm -it lint script/fulltest\n\n"
            "        # changed files only\n        docker run --rm -it lint script/quicklint\n\n\n"
            "    If you are using Windows the volume is written differently.\n\n    .. code-block:: yaml\n\n"
            "        lint:\n          volume: c/edev/esphome\n\n        fast: true\n")
    _doc, chunks = chunks_of(tmp_path, "lint.rst", text, max_tokens=120, section_overlap_tokens=0)
    cut = [c for c in chunks if c.in_code]  # the piece that starts at the bash block, the note's text after it
    assert cut and "If you are using Windows" in cut[0].text
    units = [u for c in cut for u in split_units(c)]
    assert any(u.kind == "sentence" and u.text.startswith("If you are using Windows") for u in units)
    assert [u.kind for u in units if "docker" in u.text or "volume:" in u.text or "fast:" in u.text] == ["code"] * 4


def test_an_rst_manual_answers_with_cited_lines_and_its_warning_marked_first(
        tmp_path: Path, write_library, open_library, fast_config) -> None:
    root = write_library(tmp_path / "lib", {"pump.rst": MANUAL})
    # the test embedder's scores are no evidence scores: abstention is not what is tested here
    lib = open_library(root, config=fast_config.replace(**{"answer.abstain_threshold": -1.0}))
    lib.build()
    answer = lib.ask("What must I do before opening the cover of the pump?")
    assert not answer.abstained and answer.claims
    by_n = {c.n: c for c in answer.citations}
    for claim in answer.claims:  # every claim is the file's own text, inside the passage it cites
        cite = by_n[claim.citation]
        assert cite.path == "pump.rst" and MANUAL[claim.char_start:claim.char_end] == claim.text
        assert cite.start_line <= MANUAL.count("\n", 0, claim.char_start) + 1 <= cite.end_line
    first = answer.claims[0]
    assert first.safety and first.text == "Disconnect the mains before opening the cover."
    assert not any(c.text.lstrip().startswith((".. ", ":alt:", "==")) for c in answer.claims)
