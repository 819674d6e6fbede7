#!/usr/bin/env python3
"""Generate samples/en/corvid-cv60-maintenance.pdf (fictional device) with fpdf2.

Deterministic: fixed creation date and producer, core fonts only (Latin-1 text),
so running it again gives byte-identical output with the same fpdf2 version.

    .venv/bin/python samples/make_pdf.py
"""
from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF

OUT = Path(__file__).resolve().parent / "en" / "corvid-cv60-maintenance.pdf"
TITLE = "Corvid CV-60 Air Handling Unit - Maintenance Guide"

# Each page: list of ("h1"|"h2"|"p"|"li"|"table", content). One add_page() per entry,
# so page numbers used in questions.tsv (p1, p2, p3) stay stable.
PAGES = [
    [
        ("h1", TITLE),
        ("p", "Document CV60-MG, version 1.2, 2025-09-01. Applies to models CV-60 and CV-60H."),
        ("h2", "1 Overview"),
        ("p", "The Corvid CV-60 is a compact air handling unit for plant rooms and small "
              "workshops. It moves up to 6,000 m³/h of air with a belt-driven centrifugal fan "
              "powered by a 4 kW motor. The CV-60H version adds an electric heater bank of 18 kW."),
        ("p", "The unit has a G4 panel pre-filter and an F7 bag filter. A differential pressure "
              "switch monitors each filter stage and reports a dirty filter to the building "
              "controller."),
        ("h2", "2 Safety"),
        ("p", "Attention: switch off the unit at the local isolator and wait 3 minutes before "
              "opening any access door. The fan keeps running down after power is removed, and "
              "the heater elements of the CV-60H stay hot for several minutes."),
        ("li", "Never open the fan section door while the fan is turning."),
        ("li", "Do not remove the door interlock switch, unless the unit is being commissioned "
               "by an authorised engineer."),
        ("li", "Wear a dust mask (FFP2) when removing used bag filters."),
    ],
    [
        ("h2", "3 Filter replacement"),
        ("p", "Replace a filter when its pressure drop reaches the final value in the table "
              "below, or at the latest after 12 months of operation. Always replace all bags of "
              "an F7 filter set together; never wash or blow out a bag filter."),
        ("table", [
            ["Filter stage", "Class", "Part number", "Initial drop (Pa)", "Replace at (Pa)"],
            ["Pre-filter panel", "G4", "CV-FP4", "40", "150"],
            ["Bag filter", "F7", "CV-FB7", "90", "250"],
        ]),
        ("h2", "3.1 Procedure"),
        ("li", "1. Switch off the unit at the isolator and wait 3 minutes."),
        ("li", "2. Open the filter door and release the clamping lever."),
        ("li", "3. Slide out the old filters and put them straight into a plastic bag."),
        ("li", "4. Clean the filter frame seals with a damp cloth."),
        ("li", "5. Slide in the new filters with the pockets vertical and the arrow in the "
               "direction of air flow."),
        ("li", "6. Close the clamping lever, close the door and reset the filter alarm on the "
               "controller (menu F-1)."),
    ],
    [
        ("h2", "4 Fan belt"),
        ("p", "Check the belt tension every 3 months. Press the belt at the middle of the span "
              "with a force of 25 N: the deflection must be 8 mm. A new belt (part CV-BELT-SPA) "
              "must be re-tensioned after 24 hours of operation. Tighten the motor slide bolts "
              "to 25 N·m after adjusting the tension."),
        ("h2", "5 Fault indications"),
        ("p", "The controller shows the following codes:"),
        ("li", "ERR_FILTER_DP - filter pressure drop above the final value: replace the filter "
               "stage shown on the display."),
        ("li", "ERR_BELT_SLIP - fan speed below 80 % of the set speed while the motor runs: "
               "check the belt tension and wear."),
        ("li", "ERR_HEATER_OVERTEMP (CV-60H only) - the manual-reset thermostat at 90 °C has "
               "tripped. Only reset it after the cause (fan stopped, air flow blocked) is found."),
    ],
]


def build() -> bytes:
    pdf = FPDF(format="A4")
    pdf.set_creation_date(datetime(2025, 9, 1, 8, 0, 0, tzinfo=timezone.utc))
    pdf.set_producer("fieldqa samples/make_pdf.py")
    pdf.set_creator("fieldqa samples/make_pdf.py")
    pdf.set_title(TITLE)
    pdf.set_author("Corvid Air Systems (fictional)")
    pdf.set_subject("doc_id corvid-cv60-maintenance")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_margins(20, 20, 20)
    for page in PAGES:
        pdf.add_page()
        for kind, content in page:
            if kind == "h1":
                pdf.set_font("Helvetica", "B", 18)
                pdf.multi_cell(0, 9, content, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(3)
            elif kind == "h2":
                pdf.ln(2)
                pdf.set_font("Helvetica", "B", 14)
                pdf.multi_cell(0, 8, content, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1)
            elif kind == "p":
                pdf.set_font("Helvetica", "", 11)
                pdf.multi_cell(0, 6, content, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            elif kind == "li":
                pdf.set_font("Helvetica", "", 11)
                text = content if content[:1].isdigit() else "- " + content
                pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1)
            elif kind == "table":
                pdf.set_font("Helvetica", "", 10)
                with pdf.table(first_row_as_headings=True, line_height=7) as table:
                    for row in content:
                        r = table.row()
                        for cell in row:
                            r.cell(cell)
                pdf.ln(3)
    return bytes(pdf.output())


def main() -> None:
    data = build()
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
