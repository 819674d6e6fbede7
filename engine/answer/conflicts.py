"""Conflicting statements: the same subject, two sources, different values.

Two units are *about the same thing* when they are table rows with the same first
cell, or sentences whose words (numbers left out) mostly agree, or both name the
same error code. Two such units *conflict* when, for one unit of measure, the
values they give differ (``500 h`` vs ``750 h``; ``25 N·m`` vs ``28 Nm`` is a
conflict, ``12Nm`` vs ``12 N·m`` is not), when they name different part
references of one family (``REF27-ALPHA`` vs ``REF27-BETA``), or when they give
an error code different meanings in a code table.

Sources compared: two versions of one document (same ``doc_id``), or two
documents whose applicability (device models, else their titles' device codes)
overlaps. Units flagged as instructions to the system are never a side of a
conflict.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from engine.lang.codes import exact_codes
from engine.lang.rst import table_header_cells
from engine.lang.tables import table_cells, table_context
from engine.lang.units import Unit, is_rst
from engine.lang.words import terms
from engine.search.devices import document_codes
from engine.types import Chunk, Conflict, ConflictSide, DocumentMeta


@dataclass(frozen=True, slots=True)
class Value:
    """A number with its unit: ``number`` and ``unit`` normalised, ``written`` as in the text."""

    number: float
    unit: str
    written: str


# normalised unit -> spellings (longest first when matching)
_UNITS: dict[str, tuple[str, ...]] = {
    "N·m": ("N·m", "N⋅m", "N.m", "N-m", "N m", "Nm", "Newtonmeter"),
    "h": ("h", "hours", "hour", "hrs", "heures", "heure", "Betriebsstunden", "Stunden", "Stunde", "시간", "小时"),
    "months": ("months", "month", "mois", "Monaten", "Monate", "Monat", "개월", "个月", "個月"),
    "years": ("years", "year", "ans", "années", "Jahren", "Jahre", "Jahr", "년", "年"),
    "days": ("days", "day", "jours", "jour", "Tagen", "Tage", "Tag", "일", "天"),
    "weeks": ("weeks", "week", "semaines", "Wochen", "Woche", "주", "周"),
    "min": ("minutes", "minute", "Minuten", "Minute", "min", "분", "分钟"),
    "s": ("seconds", "second", "secondes", "Sekunden", "sec", "s", "초", "秒"),
    "bar": ("bar",),
    "mbar": ("mbar",),
    "kPa": ("kPa",),
    "MPa": ("MPa",),
    "psi": ("psi",),
    "°C": ("°C", "℃", "° C"),
    "°F": ("°F", "℉"),
    "mm²": ("mm²", "mm2"),
    "mm": ("mm", "毫米"),
    "cm": ("cm",),
    "m³/h": ("m³/h", "m3/h"),
    "m³/min": ("m³/min", "m3/min"),
    "l/min": ("l/min", "L/min"),
    "m": ("m", "米"),
    "mA": ("mA",),
    "kVA": ("kVA",),
    "kV": ("kV",),
    "mV": ("mV",),
    "kW": ("kW",),
    "mW": ("mW",),
    "W": ("W",),
    "dBm": ("dBm",),  # a radio's power: decibels over one milliwatt
    "V": ("V",),
    "Ah": ("Ah",),
    "mAh": ("mAh",),
    "Wh": ("Wh",),
    "A": ("A",),
    "MΩ": ("MΩ", "Mohm"),
    "Pa": ("Pa",),
    "%": ("%", "％"),
    "ppm": ("ppm",),
    "rpm": ("rpm", "tr/min", "U/min"),
    "Hz": ("Hz",),
    "GB": ("GB",),
    "kg": ("kg", "kilograms", "kilogram", "kilogrammes", "kilogramme", "Kilogramm", "킬로그램", "公斤", "千克"),
    "t": ("tonnes", "tonne", "Tonnen", "Tonne", "tons", "ton", "톤", "吨", "噸"),
    "lb": ("lbs", "lb", "pounds", "磅"),
    "g": ("g", "公克", "克"),
    "dB": ("dB(A)", "dBA", "dB"),
    "l": ("litres", "litre", "liters", "liter", "Liter", "l", "L", "升"),
}
_SPELLING = {sp: unit for unit, sps in _UNITS.items() for sp in sps}
_UNIT_ALT = "|".join(re.escape(sp) for sp in sorted(_SPELLING, key=len, reverse=True))
_NUMBER = r"(?<![0-9A-Za-z\u00c0-\u024f_.,])[-−]?(?:\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
_VALUE = re.compile(rf"({_NUMBER})[ \u00a0\u202f]?({_UNIT_ALT})(?![A-Za-z\u00c0-\u024f])", re.UNICODE)
_BARE_NUMBER = re.compile(rf"^\s*({_NUMBER})\s*$")
_HEADER_UNIT = re.compile(rf"\(({_UNIT_ALT})\)")


def parse_number(written: str) -> float:
    s = written.replace("−", "-").replace("\u00a0", "").replace("\u202f", "")
    if re.fullmatch(r"-?\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?", s):  # 2,000 / 1 000 / 1,000.5
        s = s.replace(",", "").replace(" ", "")
    else:
        s = s.replace(" ", "").replace(",", ".")  # 2,4 (decimal comma)
    try:
        return float(s)
    except ValueError:
        return float("nan")


def values_in(text: str, header_units: tuple[str, ...] = ()) -> list[Value]:
    """Numbers with units in a text. For a table row, ``header_units`` gives the unit of
    each column (from ``Torque (N·m)`` style headers), used for cells that hold a bare number."""
    text = unicodedata.normalize("NFC", text)
    out = [Value(parse_number(m.group(1)), _SPELLING[m.group(2)], m.group(0)) for m in _VALUE.finditer(text)]
    if header_units and text.lstrip().startswith("|"):
        cells = table_cells(text)
        for cell, unit in zip(cells, header_units):
            m = _BARE_NUMBER.match(cell)
            if unit and m:
                out.append(Value(parse_number(m.group(1)), unit, f"{m.group(1)} {unit}"))
    return [v for v in out if v.number == v.number]


def header_units(header_row: str) -> tuple[str, ...]:
    """Per-column units from a table header row (``| Torque (N·m) |`` → ``N·m``)."""
    out = []
    for cell in table_cells(header_row):
        m = _HEADER_UNIT.search(cell)
        out.append(_SPELLING[m.group(1)] if m else "")
    return tuple(out)


def column_units(text: str) -> tuple[str, ...]:
    """Units written as column labels anywhere in ``text`` ("Replace at (Pa)"), normalised.

    A table that lost its structure (PDF text) keeps its labels but not which cell is which."""
    return tuple(dict.fromkeys(_SPELLING[u] for u in _HEADER_UNIT.findall(text)))


def table_header(chunk: Chunk, unit: Unit) -> str:
    """The header row of the table a row unit belongs to ('' when none is found): in Markdown the
    row above the ``|---|`` rule, in reStructuredText the header its table marks
    (engine.lang.rst.table_header_cells, its cells joined by " | "), else the header the chunker
    carried in the chunk's context (a chunk cut from a table's body; HTML, PDF)."""
    if unit.kind != "table_row":
        return ""
    rel = unit.char_start - chunk.char_start
    if is_rst(chunk):
        cells = table_header_cells(chunk.text, rel, chunk.in_code, chunk.kind == "table")
        if cells is not None:
            return " | ".join(cells)
    lines = chunk.text[:rel].splitlines()
    rule = re.compile(r"^\s*\|?\s*:?-{2,}")
    for i in range(len(lines) - 1, 0, -1):  # rows need no pipe at either end (GitHub tables)
        if rule.match(lines[i]) and "|" in lines[i - 1]:
            return lines[i - 1]
        if "|" not in lines[i]:
            break
    for line in table_context(chunk.context):  # the chunker may carry the header in context
        if "|" in line and not rule.match(line):
            return line
    return ""


# --- sides ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Statement:
    """A unit with what is needed to compare it: its chunk, its document, its values."""

    unit: Unit
    chunk: Chunk
    meta: DocumentMeta
    values: tuple[Value, ...]
    codes: frozenset[str]  # codes in the unit and its heading
    subject_terms: frozenset[str]
    first_cell: str  # table rows: the first cell, normalised
    flagged: bool = False


def statement(unit: Unit, chunk: Chunk, meta: DocumentMeta, flagged: bool = False) -> Statement:
    header = table_header(chunk, unit)
    vals = values_in(unit.text, header_units(header) if header else ())
    heading = unit.heading or (chunk.heading_path[-1] if chunk.heading_path else "")
    codes = frozenset(exact_codes(unit.text) | exact_codes(heading))
    skel = re.sub(r"\d+(?:[.,]\d+)*", " ", unit.text)
    first = table_cells(unit.text)[0].casefold() if unit.kind == "table_row" else ""
    return Statement(unit, chunk, meta, tuple(vals), codes, frozenset(terms(skel)), first, flagged)


def applicable_together(a: DocumentMeta, b: DocumentMeta) -> bool:
    """Could both documents govern the same device? Same manual, or overlapping devices: their
    models, else the device codes of their titles (engine.search.devices.document_codes: the
    "EBB36 CAN V1.0" and "EBB36 CAN V1.1" manuals may disagree, "EBB42 ..." is another board's).
    A document about no device named may govern any."""
    if a.doc_id == b.doc_id:
        return True
    codes_a, codes_b = document_codes(a), document_codes(b)
    return not codes_a or not codes_b or bool(codes_a & codes_b)


def same_subject(a: Statement, b: Statement) -> bool:
    if a.first_cell and b.first_cell:
        return a.first_cell == b.first_cell
    if a.subject_terms and b.subject_terms:
        inter = len(a.subject_terms & b.subject_terms)
        union = len(a.subject_terms | b.subject_terms)
        if union and inter / union >= 0.6:
            return True
    err = {c for c in a.codes & b.codes if "_" in c}
    return bool(err) and bool({v.unit for v in a.values} & {v.unit for v in b.values})


@dataclass(frozen=True, slots=True)
class Difference:
    subject: str
    a_value: str
    b_value: str


def differences(a: Statement, b: Statement) -> list[Difference]:
    """What two statements about the same subject disagree on (empty when they agree)."""
    out: list[Difference] = []
    subject = _subject(a, b)
    units = sorted({v.unit for v in a.values} & {v.unit for v in b.values})
    for u in units:
        av = {round(v.number, 6): v.written for v in a.values if v.unit == u}
        bv = {round(v.number, 6): v.written for v in b.values if v.unit == u}
        if set(av) != set(bv):
            only_a = [av[k] for k in sorted(av) if k not in bv] or list(av.values())
            only_b = [bv[k] for k in sorted(bv) if k not in av] or list(bv.values())
            out.append(Difference(f"{subject} ({u})", ", ".join(only_a), ", ".join(only_b)))
    fam_a = _families(a.codes)
    fam_b = _families(b.codes)
    for fam in sorted(set(fam_a) & set(fam_b)):
        if fam_a[fam] != fam_b[fam]:
            only_a = sorted(fam_a[fam] - fam_b[fam]) or sorted(fam_a[fam])
            only_b = sorted(fam_b[fam] - fam_a[fam]) or sorted(fam_b[fam])
            out.append(Difference(f"{subject} (part reference)", ", ".join(only_a), ", ".join(only_b)))
    if a.first_cell and a.first_cell == b.first_cell and "_" in a.first_cell:
        ma, mb = table_cells(a.unit.text), table_cells(b.unit.text)
        if len(ma) > 1 and len(mb) > 1 and _norm(ma[1]) != _norm(mb[1]):
            out.append(Difference(f"{table_cells(a.unit.text)[0]} (meaning)", ma[1], mb[1]))
    return out


def _norm(s: str) -> str:
    return " ".join(re.findall(r"\w+", s.casefold()))


def _families(codes: frozenset[str]) -> dict[str, set[str]]:
    """Part references grouped by family: REF27-ALPHA, REF27-BETA → {"REF27": {...}}."""
    out: dict[str, set[str]] = {}
    for c in codes:
        if "-" in c and "_" not in c:
            head, _, tail = c.rpartition("-")
            if head and tail.isalpha() and len(tail) > 2:  # a named variant, not a model number
                out.setdefault(head, set()).add(c)
    return out


def _subject(a: Statement, b: Statement) -> str:
    if a.first_cell:
        return table_cells(a.unit.text)[0]
    heading = a.unit.heading or (a.chunk.heading_path[-1] if a.chunk.heading_path else "")
    return heading or a.meta.title


def find_conflicts(
    anchors: list[tuple[Statement, int]], others: list[tuple[Statement, int]]
) -> tuple[list[Conflict], set[int]]:
    """Conflicts between each anchor (a chosen claim) and the other statements.

    Both lists hold ``(statement, citation number)``. Returns the conflicts (sides
    ordered oldest first) and the indexes into ``others`` that took part in one
    (so the caller keeps them as claims with their own citation).
    """
    by_subject: dict[str, dict[int, ConflictSide]] = {}
    used: set[int] = set()
    for a, na in anchors:
        if a.flagged:
            continue
        for i, (b, nb) in enumerate(others):
            if b.flagged or b.unit.chunk_id == a.unit.chunk_id or b.chunk.path == a.chunk.path:
                continue
            if not applicable_together(a.meta, b.meta) or not same_subject(a, b):
                continue
            for d in differences(a, b):
                sides = by_subject.setdefault(d.subject, {})
                sides.setdefault(na, _side(a, na, d.a_value))
                sides.setdefault(nb, _side(b, nb, d.b_value))
                used.add(i)
    conflicts = []
    for subject, sides in by_subject.items():
        ordered = sorted(sides.values(), key=lambda s: (s.date is None, s.date or 0, s.version, s.citation))
        conflicts.append(Conflict(subject=subject, sides=tuple(ordered)))
    return conflicts, used


def _side(s: Statement, n: int, value: str) -> ConflictSide:
    return ConflictSide(
        citation=n, doc_id=s.meta.doc_id, version=s.meta.version, date=s.meta.date,
        status=s.meta.status, models=s.meta.models, value=value,
    )
