"""Cells set apart inside one PDF text operator: a ``TJ`` array's wide moves made into runs.

pdfTeX and Acrobat Distiller set a table's row, or text a column apart, as one ``TJ`` array whose
numbers move the pen from cell to cell (``[(0) -2684 (N/A) -8170 (N/A) -3823 (62)] TJ``). pypdf's
text visitor reports such an array as one run at its start, the moves as single spaces, so the
row's columns are lost ("0 N/A N/A 62 32" over a five-column header). ``split_wide_moves`` rewrites
each such array, before its page's text is read, as one ``TJ`` per piece, each moved to its place by
a ``Td`` (its offset from the line's start: the glyph widths of the font, character and word spacing
and horizontal scale, as PDF 32000-1 9.4.4 computes the pen's advance) after the same ``Tf`` again
(pypdf ends a run at a ``Tf``, not at a move along the line), and the line's start restored after the
last, so the reader gets runs at their x, as other producers place their cells.

Only an array cut into ``MIN_PIECES`` pieces or more by moves of ``TJ_MOVE`` or more (of
``TJ_MOVE_UNLIKE`` or more where those moves differ, as columns do and a justified line's spaces do
not), and only where the rewrite is exact: the array starts its line (no text shown since the line was positioned, so the
pen is at the line's start), the next text shown after it is positioned anew (else it would follow
the restored start), and the font's widths are known (a simple font's ``/Widths``, a composite font's
``/W`` under ``Identity-H``). Anything else is left as it is.

A producer that places each cell of a row with its own ``Tm`` or ``Td`` on the row's baseline is read
the same way by pypdf: one run at the first cell's x, a space for each move ("mA Approximate battery
life (hours)" under two columns). Where such a move takes the pen ``CELL_MOVE`` em or more past the end
of the text shown (the font's widths measure it), the same ``Tf`` is set again before it, so the reader
ends its run there and the next cell is a run at its own x.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice
from typing import Any

__all__ = ["ALIKE", "MIN_PIECES", "TJ_MOVE", "TJ_MOVE_UNLIKE", "default_width", "matrix_product",
           "split_wide_moves"]

TJ_MOVE = 2000  # thousandths of an em: a move this wide inside a TJ array parts two runs,
TJ_MOVE_UNLIKE = 1000  # and one this wide where the array's moves this wide are not all alike:
ALIKE = 1.25  # within this ratio of each other, as a justified line's stretched spaces are
MIN_PIECES = 3  # an array cut into fewer pieces is left whole
# Chosen (2026-12-03) on the 332 PDFs of the mirrors and sets, compared block by block with the reader
# before. A word processor's justified narrow column moves 1-2 em between its words, all alike: cut
# at 1 em regardless, its lines read as table rows ("user-friendly | software | tool | for", the
# TMC2208 and TMC2130 datasheets). A table's columns sit 1-2 em apart as often, at moves that differ
# with their cells' widths (a pin table's "I | ANA | A/D Analog Inputs."): cut at 2 em only, they ran
# together. A number and its title set apart ("2.0" ... "PROGRAM MODE ENTRY", Microchip) are two
# pieces: cut, two such headings and a footer read as a table, and 232 of a datasheet's 592 headings
# were lost; a row of three cells or more is a table's

_SHOW = {b"Tj", b"TJ", b"'", b'"'}
_PLACE = {b"Td", b"TD", b"Tm", b"T*", b"BT", b"ET"}
Glyphs = Callable[[bytes], list[tuple[float, bool]]]  # a string's glyphs: width (1/1000 em), a word space


def split_wide_moves(page: Any) -> bool:
    """Rewrite ``page``'s content (in memory) so each wide move inside a ``TJ`` array starts a run
    of its own; True when it changed anything. The page keeps the content as parsed here, changed
    or not, so its text is read without parsing it again. A page whose content cannot be read is
    left alone."""
    from pypdf.generic import ArrayObject, ContentStream, FloatObject, NameObject

    try:
        if "/Contents" not in page:
            return False
        # read as pypdf reads a page for its text: strings as their bytes, which the font decodes
        stream = ContentStream(page["/Contents"].get_object(), page.pdf, "bytes")
        ops = stream.operations
        fonts = _obj(_obj(page.get("/Resources", {})).get("/Font", {}))
    except Exception:  # noqa: BLE001 - unreadable content: pypdf's own reading reports it
        return False
    glyphs: dict[str, Glyphs | None] = {}
    out: list[tuple[list, bytes]] = []
    changed = False
    font, size, tc, tw, th, tf = None, 0.0, 0.0, 0.0, 1.0, None
    stack: list[tuple] = []
    shown = False
    line: list[float] | None = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]  # the text line matrix (None: not followed)
    pen: float | None = 0.0  # how far the text shown moved the pen from the line's start (text space)
    for i, (args, op) in enumerate(ops):
        if op == b"q":
            stack.append((font, size, tc, tw, th, tf))
        elif op == b"Q" and stack:
            font, size, tc, tw, th, tf = stack.pop()
        elif op == b"Tf" and len(args) >= 2:
            font, size, tf = str(args[0]), _num(args[1]), args
        elif op == b"Tc" and args:
            tc = _num(args[0])
        elif op == b"Tw" and args:
            tw = _num(args[0])
        elif op == b"Tz" and args:
            th = _num(args[0]) / 100.0
        elif op == b'"' and len(args) >= 3:
            tw, tc = _num(args[0]), _num(args[1])
        if op in _PLACE:
            if shown and tf is not None and _cell_move(op, args, line, pen, size):
                out.append((tf, b"Tf"))  # the reader ends its run here: the next starts at its own x
                changed = True
            shown = False
            line, pen = _placed_line(op, args, line), 0.0
        elif op in _SHOW:
            if font is not None and font not in glyphs:
                glyphs[font] = _font_glyphs(fonts.get(font))
            if op in (b"'", b'"'):
                line, pen = None, 0.0
            shown_items = (args[0] if op == b"TJ" else [args[-1]]) if args else []
            step = _pen_advance(shown_items, glyphs.get(font) if font is not None else None, size, tc, tw, th)
            pen = None if pen is None or step is None else pen + step
        if (op == b"TJ" and not shown and args and isinstance(args[0], ArrayObject) and font is not None
                and any(_wide(x, TJ_MOVE_UNLIKE) for x in args[0]) and _ends_line(ops, i)):
            if font not in glyphs:
                glyphs[font] = _font_glyphs(fonts.get(font))
            pieces = _pieces(args[0], glyphs[font], size, tc, tw, th, _limit(args[0]))
            if pieces is not None and len(pieces) >= MIN_PIECES:
                at = 0.0
                for k, (x, items) in enumerate(pieces):
                    if k:  # the font set again: the reader ends its run there (the same font, no change)
                        out.append((tf, b"Tf"))
                    if x != at:
                        out.append(([FloatObject(x - at), FloatObject(0)], b"Td"))
                        at = x
                    out.append(([ArrayObject(items)], b"TJ"))
                out.append(([FloatObject(-at), FloatObject(0)], b"Td"))
                changed = True
                shown = True
                continue
        if op in _SHOW:
            shown = True
        out.append((args, op))
    if changed:
        stream = ContentStream(None, page.pdf, "bytes")
        stream.operations = out
    page[NameObject("/Contents")] = stream  # parsed once: pypdf reads a parsed stream as it is
    return changed


def _ends_line(ops: list, i: int) -> bool:
    """Whether the next text shown after ``ops[i]`` is positioned anew (or none is): ``'`` and
    ``"`` move to the next line before they show theirs."""
    for _args, op in islice(ops, i + 1, None):
        if op in _PLACE or op in (b"'", b'"'):
            return True
        if op in _SHOW:
            return False
    return True


CELL_MOVE = 1.25  # em: a move along the line this far past the text shown starts a run of its own
# (past the 1.2 em at which the line reader parts two runs into cells: every run cut here is a cell,
# and no space between two runs is left to guess; nearer moves stay one run, pypdf's space kept)


def _cell_move(op: bytes, args: list, line: list[float] | None, pen: float | None, size: float) -> bool:
    """Whether a positioning operator moves the pen along its line (the same baseline) ``CELL_MOVE``
    em or more past the end of the text shown since the line was placed: the next cell of a table
    whose producer places each cell (``Tm``, ``Td``), which pypdf would read on as one run at the
    first cell's x, one space between them ("mA Approximate battery life (hours)" under two
    columns). A word's move (nearer than ``CELL_MOVE``) keeps the run as it is."""
    if pen is None or size <= 0 or len(args) < 2:
        return False
    try:
        if op in (b"Td", b"TD"):
            tx, ty = _num(args[0]), _num(args[1])
            return abs(ty) < 1e-6 and tx - pen >= CELL_MOVE * size
        if op == b"Tm" and line is not None and len(args) >= 6:
            m = [_num(v) for v in args[:6]]
            if m[1] or m[2] or line[1] or line[2] or line[0] <= 0:
                return False  # rotated or skewed text: left as it is
            same_baseline = abs(m[5] - line[5]) <= 0.01 * size * abs(line[3] or 1.0)
            return same_baseline and m[4] - (line[4] + pen * line[0]) >= CELL_MOVE * size * line[0]
    except (TypeError, ValueError):
        return False
    return False


def matrix_product(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """``a`` times ``b``, both PDF matrices ``[a b c d e f]`` (PDF 32000-1 8.3.4): ``cm`` and ``Td``
    put their matrix before the current one."""
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def _placed_line(op: bytes, args: list, line: list[float] | None) -> list[float] | None:
    """The text line matrix after a positioning operator (None where it is not followed: ``T*``
    moves by the leading, which is not tracked)."""
    try:
        if op == b"BT":
            return [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
        if op == b"Tm" and len(args) >= 6:
            return [_num(v) for v in args[:6]]
        if op in (b"Td", b"TD") and line is not None and len(args) >= 2:
            return matrix_product([1.0, 0.0, 0.0, 1.0, _num(args[0]), _num(args[1])], line)
    except (TypeError, ValueError):
        return None
    return None if op == b"T*" else line


def _pen_advance(items: list, glyphs: Glyphs | None, size: float, tc: float, tw: float, th: float) -> float | None:
    """How far showing ``items`` (strings, and a TJ array's numbers) moves the pen (text space);
    None when a glyph's width is unknown."""
    if glyphs is None:
        return None
    x = 0.0
    for item in items:
        if isinstance(item, (int, float)):
            x -= float(item) / 1000.0 * size * th
        elif isinstance(item, bytes):
            x += _shown_width(bytes(item), glyphs, size, tc, tw, th)
        else:
            return None
    return x


def _shown_width(raw: bytes, glyphs: Glyphs, size: float, tc: float, tw: float, th: float) -> float:
    """The pen's advance over a string's glyphs (PDF 32000-1 9.4.4): each glyph's width at the font
    size, character spacing, word spacing after a space, all times the horizontal scale."""
    return sum((w / 1000.0 * size + tc + (tw if space else 0.0)) * th for w, space in glyphs(raw))


def _wide(item: Any, limit: float = TJ_MOVE) -> bool:
    """A move of ``limit`` or more to the right inside a TJ array."""
    return isinstance(item, (int, float)) and -float(item) >= limit


def _limit(items: list) -> float:
    """The move that parts the array's pieces: ``TJ_MOVE_UNLIKE`` when its moves that wide are not
    all alike (a table's columns), else ``TJ_MOVE`` (a justified line's spaces are alike)."""
    moves = [-float(x) for x in items if _wide(x, TJ_MOVE_UNLIKE)]
    return TJ_MOVE_UNLIKE if moves and max(moves) / min(moves) > ALIKE else TJ_MOVE


def _pieces(items: list, glyphs: Glyphs | None, size: float, tc: float, tw: float, th: float,
            limit: float = TJ_MOVE) -> list[tuple[float, list]] | None:
    """The array's pieces between wide moves, each with its offset from the array's start (text
    space); None when a glyph's width is unknown."""
    if glyphs is None:
        return None
    pieces: list[tuple[float, list]] = []
    x, start, cur = 0.0, 0.0, []
    for item in items:
        if isinstance(item, (int, float)):
            move = -float(item) / 1000.0 * size * th
            if _wide(item, limit) and any(not isinstance(c, (int, float)) for c in cur):
                pieces.append((start, cur))
                x += move
                start, cur = x, []
                continue
            x += move
        else:
            raw = bytes(item) if isinstance(item, bytes) else None
            if raw is None:
                return None
            x += _shown_width(raw, glyphs, size, tc, tw, th)
        cur.append(item)
    if any(not isinstance(c, (int, float)) for c in cur):
        pieces.append((start, cur))
    return pieces


def _font_glyphs(font: Any) -> Glyphs | None:
    """How to measure a string shown in ``font`` (a font resource), or None when its widths are
    not at hand: a simple font's ``/FirstChar`` and ``/Widths`` (``/MissingWidth`` for the rest), a
    composite font's ``/W`` and ``/DW`` under the ``Identity-H`` encoding (two bytes a glyph)."""
    try:
        font = _obj(font)
        if font.get("/Subtype") == "/Type3":  # its widths are in its own glyph space
            return None
        if font.get("/Subtype") == "/Type0":
            if font.get("/Encoding") != "/Identity-H":
                return None
            desc = _obj(_obj(font["/DescendantFonts"])[0])
            table = _cid_widths(desc.get("/W", []))
            default = default_width(font)
            if default is None:
                return None

            def composite(raw: bytes) -> list[tuple[float, bool]]:
                codes = [raw[k] << 8 | raw[k + 1] for k in range(0, len(raw) - 1, 2)]
                return [(table.get(c, default), False) for c in codes]

            return composite
        first = int(font["/FirstChar"])
        widths = [_num(w) for w in _obj(font["/Widths"])]
        missing = _num(_obj(font.get("/FontDescriptor", {})).get("/MissingWidth", 0))

        def simple(raw: bytes) -> list[tuple[float, bool]]:
            return [(widths[b - first] if 0 <= b - first < len(widths) else missing, b == 32) for b in raw]

        return simple
    except Exception:  # noqa: BLE001 - no widths to be read: nothing is split
        return None


def default_width(font: object) -> float | None:
    """A composite (Type 0) font's default glyph width: its descendant font's ``/DW``, 1000 when it
    names none (PDF 32000-1, 9.7.4.3). A subset font's ``/W`` array lists only some of its glyphs and
    leaves the rest ("i", "l" in ProximaNova) to it; without it a word holding one is not measured, and
    no space is read before the next (an HDSoC product sheet's "High-DensityDigitizerSystem")."""
    try:
        return _num(_obj(_obj(_obj(font)["/DescendantFonts"])[0]).get("/DW", 1000))
    except Exception:  # noqa: BLE001 - a malformed descendant font: no default
        return None


def _cid_widths(w: Any) -> dict[int, float]:
    """A composite font's ``/W`` array: ``c [w1 w2 …]`` and ``c_first c_last w`` entries."""
    out: dict[int, float] = {}
    items = [_obj(x) for x in _obj(w)] if w else []
    k = 0
    while k < len(items) - 1:
        start = int(items[k])
        if isinstance(items[k + 1], list):
            for j, width in enumerate(items[k + 1]):
                out[start + j] = _num(width)
            k += 2
        elif k + 2 < len(items):
            for c in range(start, int(items[k + 1]) + 1):
                out[c] = _num(items[k + 2])
            k += 3
        else:
            break
    return out


def _obj(x: Any) -> Any:
    """``x`` itself, an indirect reference resolved."""
    return x.get_object() if hasattr(x, "get_object") else x


def _num(x: Any) -> float:
    return float(_obj(x))
