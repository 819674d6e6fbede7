"""engine.lang.units on arbitrary Markdown-like text: every unit (code blocks that a lead-in
announces included) is a verbatim span of its chunk, in document order, and markup lines
(admonition markers, safety labels, fences) are never claims: inside a fenced block a line is
code (an entry), never a fence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lang.units import code_after, split_units
from engine.types import Chunk

LINES = st.sampled_from([
    "", "Plain sentence one. Second sentence!", "- a list item", "1. a numbered step", "| a | b |", "|---|---|",
    ":::danger", ":::tip Title", ":::", "> [!WARNING]", "> quoted warning text.", "!!! caution \"Seal\"",
    "    indented text inside.", ".. note::", "⚠ WARNING", "Caution:", "```", "~~~", "SET_X ACCEL=500",
    "![img](a.png)", "Issue the following command:", "## Heading", "text with [link](x) and **bold**.",
    "!!! WARNING: a statement !!!", "[![alt](small.webp)](large.webp)", "import Tabs from \"@theme/Tabs\";",
])
MARKERS = {":::danger", ":::tip Title", ":::", "> [!WARNING]", "!!! caution \"Seal\"", ".. note::", "⚠ WARNING",
           "Caution:", "```", "~~~", "![img](a.png)", "|---|---|", "## Heading", "[![alt](small.webp)](large.webp)",
           "import Tabs from \"@theme/Tabs\";"}


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=25), st.integers(min_value=0, max_value=40))
def test_units_are_verbatim_ordered_and_never_markup(lines, offset):
    body = "\n".join(lines)
    doc = "x" * offset + body
    chunk = Chunk(id="c", doc_id="d", version="1", path="p.md", start_line=1, end_line=len(lines),
                  heading_path=("S",), char_start=offset, char_end=len(doc), kind="prose", section_id="s",
                  language="en", text=body)
    units = split_units(chunk)
    assert [u.order for u in units] == list(range(len(units)))
    for u in units:
        assert doc[u.char_start:u.char_end] == u.text and offset <= u.char_start < u.char_end <= len(doc)
        if u.kind == "code":  # inside a fence: "## Heading" is a shell comment there, a fence never
            assert not {ln.strip() for ln in u.text.split("\n")} & {"```", "~~~"}
        else:
            assert u.text.strip() not in MARKERS
        code = code_after(chunk, u)
        if code is not None:
            assert doc[code.char_start:code.char_end] == code.text and code.char_start >= u.char_end
            assert code.kind == "code" and u.order < code.order < u.order + 1
    starts = [u.char_start for u in units]
    assert starts == sorted(starts)


def _units_of(body: str, path: str = "p.md") -> list[tuple[str, str]]:
    chunk = Chunk(id="c", doc_id="d", version="1", path=path, start_line=1, end_line=body.count("\n") + 1,
                  heading_path=("S",), char_start=0, char_end=len(body), kind="prose", section_id="s",
                  language="en", text=body)
    return [(u.kind, u.text) for u in split_units(chunk)]


def test_a_wrapped_list_item_is_one_unit_with_its_continuation_lines():
    body = ("## Status\n\n- `max_velocity`, `max_accel`,\n  `square_corner_velocity`: the limits in effect.\n"
            "- `stalls`: the number of\nstalls since the start.\n\nAfter the list. A second sentence.\n")
    assert _units_of(body) == [
        ("list_item", "`max_velocity`, `max_accel`,\n  `square_corner_velocity`: the limits in effect."),
        ("list_item", "`stalls`: the number of\nstalls since the start."),  # a lazy continuation line
        ("sentence", "After the list."), ("sentence", "A second sentence.")]
    # a table row, a heading, a fence or a blank line ends the item
    assert _units_of("- step one\n| a | b |\n- step two\n```\ncode\n```\nprose after.\n") == [
        ("list_item", "step one"), ("table_row", "| a | b |"), ("list_item", "step two"), ("code", "code"),
        ("sentence", "prose after.")]
    # text without blank lines (HTML, PDF: each line a paragraph): only an indented line continues
    assert _units_of("• Open the valve\nThe pump starts.\n• Close it\n   slowly.") == [
        ("list_item", "Open the valve"), ("sentence", "The pump starts."), ("list_item", "Close it\n   slowly.")]


def test_a_pdf_list_item_wrapped_over_printed_lines_is_one_unit():
    # text without blank lines, one line per printed line (PDF): a line in lower case under an item
    # whose sentence has not ended goes on with it; a capital, or an ended sentence, does not
    body = ("This happens for the following reasons:\n1. Thermistor port of nozzle is not plugged into the\n"
            "motherboard, or poor contact;\n2. The thermistor is broken.\nthe spare is in the box.\n"
            "3. Replace the\nSpare thermistor.")
    assert _units_of(body, "guide.pdf") == [
        ("sentence", "This happens for the following reasons:"),
        ("list_item", "Thermistor port of nozzle is not plugged into the\nmotherboard, or poor contact;"),
        ("list_item", "The thermistor is broken."), ("sentence", "the spare is in the box."),
        ("list_item", "Replace the"), ("sentence", "Spare thermistor.")]
    # a prose line of its own ends the item: a later line in lower case does not reach back to it
    assert _units_of("- Open the valve\nThe pump starts when\nthe valve is open.", "guide.pdf") == [
        ("list_item", "Open the valve"), ("sentence", "The pump starts when\nthe valve is open.")]
    # markers as PDF text and Chinese lists set them: a no-break space, a point before a capital, 、
    assert _units_of("1.\u00a0Prepare the bed.\n2.Preheat the nozzle.\n3、设置温度\n1.5 mm is the gap.") == [
        ("list_item", "Prepare the bed."), ("list_item", "Preheat the nozzle."), ("list_item", "设置温度"),
        ("sentence", "1.5 mm is the gap.")]


def test_a_printed_line_the_writer_ended_ends_its_statement_and_a_wrapped_one_goes_on():
    # PDF: "Bootloader is : ..." ends well short of the page's measure and "For" would have fitted on
    # it: the writer ended the line, so two statements; "... in the" is full, "MD Dumper" wraps
    body = ("MD Dumper is based on an STM32F4 so it has an embedded bootloader for firmware update.\n"
            "Bootloader is : WeACT HID Bootloader\n"
            "For starting board in update mode you just need to press Keybutton for 2 seconds and\n"
            "press Reset.\n"
            "You also can see the USB bootloader mode with Usbview tools\n"
            "Now you can make a folder with all the files of the latest release version in the\n"
            "MD Dumper Github Firmware Release")
    assert _units_of(body, "manual.pdf") == [
        ("sentence", "MD Dumper is based on an STM32F4 so it has an embedded bootloader for firmware update."),
        ("sentence", "Bootloader is : WeACT HID Bootloader"),
        ("sentence", "For starting board in update mode you just need to press Keybutton for 2 seconds and\npress Reset."),
        ("sentence", "You also can see the USB bootloader mode with Usbview tools"),
        ("sentence", "Now you can make a folder with all the files of the latest release version in the\n"
                     "MD Dumper Github Firmware Release")]
    # Markdown joins its lines into one paragraph: the same lines are one sentence there
    assert len(_units_of(body.replace("update.\n", "update.\n\n"), "manual.md")) == 3


def test_a_printed_list_item_wrapped_before_a_capital_goes_on_and_a_bullet_against_its_word_opens_one():
    body = ("Quick menu keys of the radio, in channel mode and in VFO mode, as the firmware sets them\n"
            "- Pressing the Orange button twice while in VFO mode quickly toggles between VFO A and\n"
            "VFO B.\n"
            "- Press SK2 to lock the keypad\n"
            "Locking the keypad also locks the PTT button unless the setting allows it.\n"
            "Files in the release folder:\n"
            "-Sega_Dumper.bin is the ARM compiled code for the STM32\n"
            "-flash.bat is the script that flashes it\n"
            "-40 °C is the lowest storage temperature.")
    assert _units_of(body, "radio.pdf") == [
        ("sentence", "Quick menu keys of the radio, in channel mode and in VFO mode, as the firmware sets them"),
        ("list_item", "Pressing the Orange button twice while in VFO mode quickly toggles between VFO A and\nVFO B."),
        ("list_item", "Press SK2 to lock the keypad"),
        ("sentence", "Locking the keypad also locks the PTT button unless the setting allows it."),
        ("sentence", "Files in the release folder:"),
        ("list_item", "Sega_Dumper.bin is the ARM compiled code for the STM32"),
        ("list_item", "flash.bat is the script that flashes it"),
        ("sentence", "-40 °C is the lowest storage temperature.")]
    # a list item piping a command ("dmesg | grep") or naming models ("RD-5R | DM-5R") is no table row
    piped = ("Test the CAN HAT module as follows, from the SSH terminal of the Raspberry Pi host:\n"
             "2. Type and run dmesg | grep -i can to test if the module is connected.\n"
             "• The Baofeng RD-5R | DM-5R has no Orange button\n1 | Car\n2 | e-Bike")
    assert [k for k, _ in _units_of(piped, "radio.pdf")] == ["sentence", "list_item", "list_item", "table_row",
                                                              "table_row"]
    # in Markdown a list marker needs its space: "-flash.bat" is text
    assert ("list_item", "flash.bat is the script that flashes it") not in _units_of(body, "radio.md")


def test_a_heading_line_of_a_pdf_html_or_text_chunk_is_no_claim():
    # PDF, HTML and plain text mark no heading up: the line that is one of the chunk's headings
    # heads the statements below it, it is not glued to the first of them
    body = "2 Safety\nAttention: switch off the unit first.\nWear gloves.\n2.1 Tools\nUse a torque wrench."
    chunk = Chunk(id="c", doc_id="d", version="1", path="guide.pdf", start_line=1, end_line=5,
                  heading_path=("CV-60 Guide", "2 Safety", "2.1 Tools"), char_start=0, char_end=len(body),
                  kind="prose", section_id="s", language="en", text=body)
    assert [(u.kind, u.text, u.heading) for u in split_units(chunk)] == [
        ("sentence", "Attention: switch off the unit first.", "2 Safety"), ("sentence", "Wear gloves.", "2 Safety"),
        ("sentence", "Use a torque wrench.", "2.1 Tools")]
    # a title wrapped in print over two lines: both lines are the heading
    body = "3 Communication between\nmotherboard and PC\nInstall the driver first."
    chunk = Chunk(id="c", doc_id="d", version="1", path="guide.pdf", start_line=1, end_line=3,
                  heading_path=("3 Communication between motherboard and PC",), char_start=0, char_end=len(body),
                  kind="prose", section_id="s", language="en", text=body)
    assert [(u.kind, u.text, u.heading) for u in split_units(chunk)] == [
        ("sentence", "Install the driver first.", "3 Communication between motherboard and PC")]


def test_code_lines_are_entries_an_option_with_its_description():
    block = ("Add the section:\n\n```\n[stepper_x]\nstep_pin: PF13\n#   Step GPIO pin.\n#homing_speed: 5.0\n"
             "#   Maximum velocity (in mm/s) when homing.\n#   The default is 5mm/s.\n\n[gcode_macro HOME]\n"
             "gcode:\n    G28 X0\n    G1 X5\n# home X first\n# then Y\n\n# Example configuration entry\n"
             "web_server:\n  port: 80\n#max_velocity: 300\n[printer]\n```\nAfter it.\n")
    assert _units_of(block) == [
        ("sentence", "Add the section:"), ("code", "[stepper_x]"), ("code", "step_pin: PF13\n#   Step GPIO pin."),
        ("code", "#homing_speed: 5.0\n#   Maximum velocity (in mm/s) when homing.\n#   The default is 5mm/s."),
        ("code", "[gcode_macro HOME]"), ("code", "gcode:\n    G28 X0\n    G1 X5"),
        ("code", "# home X first"), ("code", "# then Y"),  # a comment above a comment is an entry of its own
        ("code", "# Example configuration entry\nweb_server:\n  port: 80"),  # a comment of words heads the line below
        ("code", "#max_velocity: 300"), ("code", "[printer]"),  # a commented-out option heads nothing
        ("sentence", "After it.")]
    # a piece of a block too long for one chunk starts in code: "#   ..." there is no heading
    piece = "#   is 5mm/s.\n#homing_retract_dist: 5.0\n#   Distance to back off.\n```\nAfter the block.\n"
    chunk = Chunk(id="c", doc_id="d", version="1", path="p.md", start_line=1, end_line=5, heading_path=("S",),
                  char_start=0, char_end=len(piece), kind="code", section_id="s", language="en", text=piece,
                  in_code=True)
    assert [(u.kind, u.text) for u in split_units(chunk)] == [
        ("code", "#   is 5mm/s."), ("code", "#homing_retract_dist: 5.0\n#   Distance to back off."),
        ("sentence", "After the block.")]
