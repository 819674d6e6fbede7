"""Values with units, subjects and conflicts (engine.answer.conflicts)."""

from __future__ import annotations

from datetime import date

import pytest

from engine.answer.conflicts import differences, find_conflicts, header_units, statement, values_in
from engine.lang.units import split_units
from engine.types import Chunk, DocumentMeta


def _chunk(path, text, heading=("S",), doc_id="d", version="1"):
    return Chunk(id=f"{path}#{version}", doc_id=doc_id, version=version, path=path, start_line=1,
                 end_line=text.count("\n") + 1, heading_path=heading, char_start=0, char_end=len(text),
                 kind="prose", section_id=f"{path}#s", language="en", text=text)


def _meta(doc_id="d", version="1", status="active", models=("X-1",), d=date(2025, 1, 1)):
    return DocumentMeta(doc_id=doc_id, title=doc_id, version=version, date=d, models=models, status=status)


def _st(text, path="a.md", meta=None, heading=("S",), flagged=False):
    meta = meta or _meta()
    c = _chunk(path, text, heading, meta.doc_id, meta.version)
    u = split_units(c)[-1]
    return statement(u, c, meta, flagged)


@pytest.mark.parametrize("text,number,unit", [
    ("tighten to 25 N·m", 25, "N·m"), ("tighten to 28 Nm", 28, "N·m"), ("(12Nm on reassembly)", 12, "N·m"),
    ("every 2,000 h", 2000, "h"), ("à 2,4 m³/min", 2.4, "m³/min"), ("Toutes les 500 h", 500, "h"),
    ("every 12 months", 12, "months"), ("alle 100 Betriebsstunden", 100, "h"),
    ("6개월마다 확인", 6, "months"), ("每 12 个月", 12, "months"), ("at −20 °C", -20, "°C"),
    ("gap 0,7 mm", 0.7, "mm"), ("1 000 h", 1000, "h"),
])
def test_values_are_normalised(text, number, unit):
    vals = values_in(text)
    assert [(v.number, v.unit) for v in vals] == [(number, unit)]


def test_table_cells_take_the_header_unit():
    units = header_units("| Fastener | Size | Torque (N·m) | Tool |")
    assert units == ("", "", "N·m", "")
    vals = values_in("| Impeller nut | M16 | 38 | 24 mm socket |", units)
    assert {(v.number, v.unit) for v in vals} == {(38, "N·m"), (24, "mm")}


def test_conflict_between_versions_with_units():
    old = _st("Change the oil every 500 h.", "v1.md", _meta(version="1.0", status="superseded", d=date(2024, 1, 1)))
    new = _st("Change the oil every 750 h.", "v2.md", _meta(version="2.0", d=date(2026, 1, 1)))
    conflicts, used = find_conflicts([(new, 1)], [(old, 2)])
    assert used == {0}
    (c,) = conflicts
    assert [(s.version, s.value, s.status) for s in c.sides] == [("1.0", "500 h", "superseded"),
                                                                   ("2.0", "750 h", "active")]
    assert "(h)" in c.subject


def test_torque_spellings_conflict_and_agree():
    a = _st("Tighten the flange bolts to 25 N·m.", "a.md", _meta("a"))
    b = _st("Tighten the flange bolts to 28 Nm.", "b.md", _meta("b"))
    same = _st("Tighten the flange bolts to 25Nm.", "c.md", _meta("c"))
    assert [(d.a_value, d.b_value) for d in differences(a, b)] == [("25 N·m", "28 Nm")]
    assert differences(a, same) == []
    conflicts, used = find_conflicts([(a, 1)], [(same, 2)])
    assert conflicts == [] and used == set()


def test_no_conflict_between_documents_for_other_models():
    a = _st("Tighten the flange bolts to 25 N·m.", "a.md", _meta("a", models=("X-1",)))
    b = _st("Tighten the flange bolts to 28 N·m.", "b.md", _meta("b", models=("Y-2",)))
    assert find_conflicts([(a, 1)], [(b, 2)]) == ([], set())


def test_manuals_without_models_are_compared_by_the_devices_their_titles_name():
    def titled(doc_id, title):
        return DocumentMeta(doc_id=doc_id, title=title, version="1", date=None, models=(), status="active")

    a = _st("Input Voltage: DC12V-DC24V 9A, fan output 1.5 A.", "a.pdf", titled("a", "EBB42 CAN V1.1 User Manual"))
    other_board = _st("Input Voltage: DC12V-DC24V 6A, fan output 1 A.", "b.pdf", titled("b", "EBB36 CAN V1.0"))
    assert find_conflicts([(a, 1)], [(other_board, 2)]) == ([], set())
    older = _st("Input Voltage: DC12V-DC24V 6A, fan output 1 A.", "c.pdf", titled("c", "EBB42 CAN V1.0"))
    assert len(find_conflicts([(a, 1)], [(older, 2)])[0]) == 1  # the board's two editions disagree
    general = _st("Input Voltage: DC12V-DC24V 6A, fan output 1 A.", "d.pdf", titled("d", "Wiring guide"))
    assert len(find_conflicts([(a, 1)], [(general, 2)])[0]) == 1  # a manual about no device named


def test_no_conflict_between_unrelated_sentences():
    a = _st("Tighten the flange bolts to 25 N·m.", "a.md", _meta("a"))
    b = _st("The battery lasts about 5 years at 20 °C.", "b.md", _meta("b"))
    assert find_conflicts([(a, 1)], [(b, 2)]) == ([], set())


def test_flagged_statement_is_never_a_side():
    a = _st("The impeller nut torque is 38 N·m.", "a.md", _meta("a"))
    b = _st("The impeller nut torque is 99 N·m.", "b.md", _meta("b"), flagged=True)
    assert find_conflicts([(a, 1)], [(b, 2)]) == ([], set())


def test_part_reference_conflict():
    a = _st("Fit seal kit REF27-ALPHA on the pump.", "a.md", _meta("a"))
    b = _st("Fit seal kit REF27-BETA on the pump.", "b.md", _meta("b"))
    (d,) = differences(a, b)
    assert (d.a_value, d.b_value) == ("REF27-ALPHA", "REF27-BETA")


def test_error_code_meaning_conflict_in_tables():
    a = _st("| ERR_X | The card is full. | Format it. |", "a.md", _meta("a"))
    b = _st("| ERR_X | The modem is offline. | Check the SIM. |", "b.md", _meta("b"))
    (d,) = differences(a, b)
    assert d.subject.startswith("ERR_X") and d.b_value == "The modem is offline."
