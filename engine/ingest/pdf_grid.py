"""Tables drawn with ruling lines: a row's cells whole, however many lines their text wraps onto.

A manual's troubleshooting or specification table ("Symptom | Possible cause | Remedy") wraps its
cells' text onto several lines, cell after cell, and a line-by-line reader gets the lines of each cell
one after the other ("The pump does not start when" / "the switch is turned on" / "No supply voltage
or the thermal" / ...): no line has the row's cells, and no table is found. Where the table is drawn
with rules, they say where each row ends: ``page_rules`` reads the page's horizontal and vertical
rules from its content (stroked lines and rectangles, and filled ones: thin bars, cell shading), in
the coordinates the text visitor reports, and ``ruled_rows`` puts the lines between two rules, one
column after the other, into one row of cells, which the page's table reading then takes as it takes
a row set on one line.

A table, for this reading, is ``MIN_BANDS`` or more rows in a run between horizontal rules of the
same extent (one under the other, each across the table), whose lines each sit in one column. A
table ruled between its rows only has its first and last rows past the outer rules: they end where
its vertical rules do or, without those, a row's height away, and only lines of the table's type
beside a cell of another column count (``_next_to``), not a title or a paragraph's last line. The
columns are the vertical rules inside the table or, where none are drawn, where the rows' cells
start (a start found in ``COLUMN_ROWS`` of the rows or more); a column empty in every row is none.
Not taken as a row, and ending the run: the lines between two rules that read as several rows
(every cell ``ROWS_ALIKE`` lines or more, line for line at one height: a table ruled only under its
header and at its ends, as a book sets it), or that run across a column's end (a paragraph between
two tables of one width); those lines stay as they are. A page with no such table keeps its lines.

Not read: rules drawn inside forms (XObjects), a rule across some columns only (a cell that spans
rows), and tables with no rule between their rows, whose rows only the text's sense tells apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.ingest.pdf_gaps import matrix_product
from engine.lang.text import wide

__all__ = ["COLUMN_ROWS", "MIN_BANDS", "ROWS_ALIKE", "Rules", "joined_bold", "line_pieces", "page_rules",
           "ruled_rows"]

MIN_BANDS = 3  # rows between rules, header included, that make a drawn table (a booktabs table has 2)
COLUMN_ROWS = 0.5  # a column without a rule of its own starts cells in this share of the rows at least
ROW_LEADING = 2.5  # a row past the outer rules: its lines this many times their size apart at most
ROWS_ALIKE = 3  # lines between two rules, every cell as many and at one height: rows, not one row
THIN = 3.0  # a filled rectangle this thin (points) is a rule
MIN_RULE = 20.0  # a horizontal rule shorter than this (points) is no table's
SAME_Y = 1.5  # rules this close (points) are one
Segment = tuple[float, float, float]  # horizontal: (y, x0, x1); vertical: (x, y0, y1)
Rules = tuple[list[Segment], list[Segment]]

_PAINT_STROKE = {b"S", b"s"}
_PAINT_FILL = {b"f", b"F", b"f*"}
_PAINT_BOTH = {b"B", b"B*", b"b", b"b*"}


def page_rules(page: Any) -> Rules:
    """The page's horizontal and vertical rules (page space), from its own content stream (not the
    forms it draws). ([], []) when its content cannot be read."""
    from pypdf.generic import ContentStream

    try:
        contents = page.get("/Contents") if hasattr(page, "get") else None
        if contents is None:
            return [], []
        stream = contents if isinstance(contents, ContentStream) else ContentStream(contents.get_object(), page.pdf, "bytes")
        ops = stream.operations
    except Exception:  # noqa: BLE001 - unreadable content: its text reading reports it
        return [], []
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    ctm = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    stack: list[list[float]] = []
    lines: list[tuple[tuple[float, float], tuple[float, float]]] = []  # the path's straight segments
    rects: list[list[tuple[float, float]]] = []  # the path's rectangles, corners in page space
    fills: list[tuple[float, float, float, float]] = []  # shaded rectangles: (x0, x1, y0, y1)
    start = at = (0.0, 0.0)
    in_text = False

    def put(p: tuple[float, float]) -> tuple[float, float]:
        x, y = p
        return ctm[0] * x + ctm[2] * y + ctm[4], ctm[1] * x + ctm[3] * y + ctm[5]

    def segment(a: tuple[float, float], b: tuple[float, float]) -> None:
        if abs(a[1] - b[1]) <= 0.5 and abs(a[0] - b[0]) >= 2:
            horizontal.append(((a[1] + b[1]) / 2, min(a[0], b[0]), max(a[0], b[0])))
        elif abs(a[0] - b[0]) <= 0.5 and abs(a[1] - b[1]) >= 2:
            vertical.append(((a[0] + b[0]) / 2, min(a[1], b[1]), max(a[1], b[1])))

    for args, op in ops:
        try:
            if op == b"BT":
                in_text = True
            elif op == b"ET":
                in_text = False
            elif in_text:
                continue
            elif op == b"q":
                stack.append(list(ctm))
            elif op == b"Q":
                if stack:
                    ctm = stack.pop()
            elif op == b"cm" and len(args) == 6:
                ctm = matrix_product([float(v) for v in args], ctm)
            elif op == b"m" and len(args) == 2:
                start = at = put((float(args[0]), float(args[1])))
            elif op == b"l" and len(args) == 2:
                p = put((float(args[0]), float(args[1])))
                lines.append((at, p))
                at = p
            elif op in (b"c", b"v", b"y") and len(args) >= 4:
                at = put((float(args[-2]), float(args[-1])))  # a curve is no rule
            elif op == b"h":
                if at != start:
                    lines.append((at, start))
                at = start
            elif op == b"re" and len(args) == 4:
                x, y, w, h = (float(v) for v in args)
                rects.append([put((x, y)), put((x + w, y)), put((x + w, y + h)), put((x, y + h))])
                start = at = put((x, y))
            elif op in _PAINT_STROKE or op in _PAINT_FILL or op in _PAINT_BOTH or op == b"n":
                if op != b"n":
                    stroked = op in _PAINT_STROKE or op in _PAINT_BOTH
                    if stroked:
                        for a, b in lines:
                            segment(a, b)
                    for corners in rects:
                        xs, ys = [p[0] for p in corners], [p[1] for p in corners]
                        w, h = max(xs) - min(xs), max(ys) - min(ys)
                        if not stroked and h <= THIN and w > THIN:
                            horizontal.append(((min(ys) + max(ys)) / 2, min(xs), max(xs)))
                        elif not stroked and w <= THIN and h > THIN:
                            vertical.append(((min(xs) + max(xs)) / 2, min(ys), max(ys)))
                        elif stroked:  # a drawn box: its edges
                            for k in range(4):
                                segment(corners[k], corners[(k + 1) % 4])
                        else:  # a shaded area: its edges once the areas it touches are joined to it
                            fills.append((min(xs), max(xs), min(ys), max(ys)))
                lines, rects = [], []
        except (TypeError, ValueError):  # an operand that is no number: that operator is skipped
            continue
    for x0, x1, y0, y1 in _joined_fills(fills):  # a shaded band's top and bottom; its sides are no rule
        horizontal += [(y0, x0, x1), (y1, x0, x1)]
    return horizontal, vertical


def _joined_fills(fills: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Shaded rectangles of one height that touch side by side, as one area each: a word processor's
    highlighted text is a box a word and a box a space, whose shared edges part nothing (read as
    rules, they made every word of a paragraph a cell); a shaded row drawn cell by cell is one band.
    Only their tops and bottoms are read as rules: the sides of a caption's or a highlight's shading
    cut its line into cells where nothing was drawn between the words."""
    out: list[tuple[float, float, float, float]] = []
    for x0, x1, y0, y1 in sorted(fills, key=lambda f: (round(f[2]), round(f[3]), f[0])):
        last = out[-1] if out else None
        if last and abs(last[2] - y0) <= 0.5 and abs(last[3] - y1) <= 0.5 and x0 <= last[1] + 0.5:
            out[-1] = (last[0], max(last[1], x1), last[2], last[3])
        else:
            out.append((x0, x1, y0, y1))
    return out


def _merged(horizontal: Sequence[Segment]) -> list[Segment]:
    """Horizontal segments at one height (``SAME_Y`` of the first) that touch or overlap, as one rule
    each, top first: a row's rule drawn cell by cell is one rule."""
    out: list[Segment] = []
    ordered = sorted(horizontal, key=lambda s: -s[0])
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[i][0] - ordered[j][0] <= SAME_Y:
            j += 1
        level = sorted(ordered[i:j], key=lambda s: s[1])
        y = sum(s[0] for s in level) / len(level)
        x0, x1 = level[0][1], level[0][2]
        for _y, a, b in level[1:]:
            if a <= x1 + 2:
                x1 = max(x1, b)
            else:
                out.append((y, x0, x1))
                x0, x1 = a, b
        out.append((y, x0, x1))
        i = j
    return [r for r in out if r[2] - r[1] >= MIN_RULE]


def _tables(rules: list[Segment]) -> list[list[Segment]]:
    """Rules of one extent, top first, grouped: each group of two or more a candidate table."""
    groups: list[list[Segment]] = []
    for r in rules:
        tol = max(3.0, 0.02 * (r[2] - r[1]))
        for g in groups:
            if abs(g[0][1] - r[1]) <= tol and abs(g[0][2] - r[2]) <= tol and g[-1][0] - r[0] > SAME_Y:
                g.append(r)
                break
        else:
            groups.append([r])
    return [g for g in groups if len(g) >= 2]


def _edges(ys: list[float], vertical: Sequence[Segment], x0: float, x1: float) -> list[float]:
    """The heights that part a table's rows, top first: its rules', and where its outer rows end when
    no rule is drawn above the first row or under the last (rules between rows only): the ends of
    its vertical rules, or without those, one row's height (its lowest band's) past the outer rules
    when it has two bands or more."""
    mine = [(y0, y1) for x, y0, y1 in vertical if x0 - 3 <= x <= x1 + 3 and y0 < ys[0] + SAME_Y and y1 > ys[-1] - SAME_Y]
    out = list(ys)
    if mine:
        top, bottom = max(y1 for _y0, y1 in mine), min(y0 for y0, _y1 in mine)
    elif len(ys) >= 3:
        step = min(a - b for a, b in zip(ys, ys[1:]))
        top, bottom = ys[0] + step, ys[-1] - step
    else:
        return out
    if top > ys[0] + SAME_Y:
        out.insert(0, top)
    if bottom < ys[-1] - SAME_Y:
        out.append(bottom)
    return out


def _next_to(band: list[int], lines: list[dict], rule: float, size: float) -> list[int]:
    """The lines of a band past a table's outer rule that can be its row: of the table's type size,
    one under the other from the rule on (no farther apart than ``ROW_LEADING`` of the size), and
    no farther from the rule than the farthest height where two cells sit side by side: not a title
    or the end of a paragraph above the table, nor a note under it."""
    near: list[int] = []
    last = rule
    for k in sorted(band, key=lambda k: abs(lines[k]["y"] - rule)):
        ln = lines[k]
        if abs(ln["s"] - size) > 0.05 * max(size, 1.0) or abs(ln["y"] - last) > ROW_LEADING * max(size, 1.0):
            break
        near.append(k)
        last = ln["y"]
    tol = 0.3 * max(size, 1.0)
    pieces = [(lines[k]["y"], x) for k in near for _t, x, _e in line_pieces(lines[k])]
    side_by_side = [y for y, x in pieces if any(abs(y - y2) <= tol and abs(x - x2) > 2 * size for y2, x2 in pieces)]
    if not side_by_side:
        return []
    reach = max(abs(y - rule) for y in side_by_side) + tol
    return sorted(k for k in near if abs(lines[k]["y"] - rule) <= reach)


def line_pieces(ln: dict) -> list[tuple[str, float, float]]:
    """A line's pieces: its cells with where they start and end, or the line whole."""
    if ln["c"]:
        return list(zip(ln["c"], ln["x"], ln["e"]))
    return [(ln["t"], ln["x"][0] if ln["x"] else 0.0, ln["e"][-1] if ln["e"] else 0.0)]


def _columns(bands: list[list[dict]], vertical: Sequence[Segment], x0: float, x1: float,
             top: float, bottom: float) -> list[float]:
    """Where the table's columns start: its vertical rules inside it, else the cell starts most rows
    share."""
    inner = sorted(x for x, y0, y1 in vertical if x0 + 3 < x < x1 - 3 and y0 < top - SAME_Y and y1 > bottom + SAME_Y)
    cuts: list[float] = []
    for x in inner:
        if not cuts or x - cuts[-1] > SAME_Y:
            cuts.append(x)
    if cuts:
        return [x0, *cuts]
    size = max((ln["s"] for band in bands for ln in band), default=10.0) or 10.0
    starts: list[list[float]] = []  # clusters of cell starts: [x, rows holding one]
    for band in bands:
        seen: set[int] = set()
        for ln in band:
            for _t, x, _e in line_pieces(ln):
                k = next((i for i, s in enumerate(starts) if abs(s[0] - x) <= 0.6 * size), None)
                if k is None:
                    starts.append([x, 0])
                    k = len(starts) - 1
                if k not in seen:
                    starts[k][1] += 1
                    seen.add(k)
    shared = sorted(x for x, n in starts if n >= max(2, COLUMN_ROWS * len(bands)))
    return [x0, *(x - 0.6 * size for x in shared if x - 0.6 * size > x0 + 3)]


Placed = list[list[tuple[float, float, float, str]]]  # per column: its pieces as (-y, x, end, text), top first


def _placed(band: list[dict], cols: list[float], x1: float) -> Placed | None:
    """The pieces of the lines between two rules in their columns ``cols``, or None when a piece runs
    over a column's end (prose across the table) or the lines read as rows of their own
    (``ROWS_ALIKE``)."""
    size = max(ln["s"] for ln in band) or 10.0
    tol = 0.6 * size
    ends = [*cols[1:], x1]
    cells: Placed = [[] for _ in cols]
    for ln in band:
        for text, x, e in line_pieces(ln):
            k = max(i for i, c in enumerate(cols) if x >= c - tol) if x >= cols[0] - tol else 0
            if e > ends[k] + tol:
                return None
            cells[k].append((-ln["y"], x, e, text))
    cells = [sorted(c) for c in cells]
    filled = [c for c in cells if c]
    if len(filled) >= 2 and all(len(c) >= ROWS_ALIKE for c in filled) and \
            len({tuple(round(y) for y, *_ in c) for c in filled}) == 1:
        return None
    return cells


def joined_bold(lines: Sequence[dict]) -> float:
    """The bold share (``b``) of one line made of ``lines``: theirs, weighted by their characters."""
    chars = sum(len(ln["t"]) for ln in lines) or 1
    return round(sum(ln.get("b", 0.0) * len(ln["t"]) for ln in lines) / chars, 2)


def _row(cells: Placed, cols: list[float], band: list[dict]) -> dict:
    """One row of cells from its placed pieces (``band``: the lines they come from)."""
    texts = [_joined([t for *_, t in c]) for c in cells]
    return {"t": " ".join(t for t in texts if t), "s": max(ln["s"] for ln in band) or 10.0,
            "y": max(ln["y"] for ln in band), "b": joined_bold(band), "c": texts,
            "x": [round(min((x for _y, x, _e, _t in c), default=cols[i]), 1) for i, c in enumerate(cells)],
            "e": [round(max((e for _y, _x, e, _t in c), default=cols[i]), 1) for i, c in enumerate(cells)]}


def _rows(cells: Placed, cols: list[float], x1: float, band: list[dict], hi: float, lo: float,
          rules: Sequence[Segment]) -> list[dict]:
    """The band's row, or its rows where rules inside it part some columns only: a cell that spans
    rows (a symptom over its causes and remedies) is repeated in each row the other columns' rules
    part, so each cause stays with its remedy and its symptom. One row when no rule inside the band
    parts the same columns, each of them holding text in every part."""
    ends = [*cols[1:], x1]

    def parts(rule: Segment) -> frozenset[int]:
        return frozenset(k for k, (a, b) in enumerate(zip(cols, ends)) if rule[1] <= a + 3 and rule[2] >= b - 3)

    inside = [r for r in rules if lo + SAME_Y < r[0] < hi - SAME_Y and parts(r)]
    split = {parts(r) for r in inside}
    if len(split) != 1:
        return [_row(cells, cols, band)]
    parted = next(iter(split))
    if len(parted) == len(cols):
        return [_row(cells, cols, band)]
    cuts = [hi, *sorted((r[0] for r in inside), reverse=True), lo]
    out: list[dict] = []
    for top, bottom in zip(cuts, cuts[1:]):
        part = [[p for p in c if k not in parted or bottom < -p[0] < top] for k, c in enumerate(cells)]
        if any(not part[k] for k in parted if cells[k]):
            return [_row(cells, cols, band)]  # a part with nothing in a column the rules part: one row
        lines = [ln for ln in band if any(-p[0] == ln["y"] for c in part for p in c)]
        out.append(_row(part, cols, lines))
    return out


def _joined(parts: list[str]) -> str:
    """A cell's lines as one text: a space between them, none after a hyphen that ends a word
    ("Easy-to-" / "Weld", "22-" / "28 AWG") nor between two wide characters."""
    out = ""
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if out and not (wide(out[-1]) and wide(p[0])) and not (out[-1] == "-" and out[-2:-1].isalnum()):
            out += " "
        out += p
    return out


def _without_empty_columns(rows: list[dict]) -> list[dict]:
    """A table's rows less the columns empty in every row (a rule that parts one row's cells only)."""
    keep = [j for j in range(len(rows[0]["c"])) if any(r["c"][j] for r in rows)]
    return [{**r, "c": [r["c"][j] for j in keep], "x": [r["x"][j] for j in keep], "e": [r["e"][j] for j in keep]}
            for r in rows]


def ruled_rows(lines: list[dict], rules: Rules) -> list[dict]:
    """A page's lines (``engine.ingest.pdf._lines``) with each drawn table's rows as one line of
    cells per row, in the place of the table's first line; the other lines as they were."""
    horizontal, vertical = rules
    if not lines or len(horizontal) < 2:
        return lines
    taken: set[int] = set()  # the indices of the lines a table's rows took
    at: dict[int, list[dict]] = {}  # a table's first line index -> its rows
    merged = _merged(horizontal)
    for group in _tables(merged):
        x0 = min(r[1] for r in group)
        x1 = max(r[2] for r in group)
        partial = [r for r in merged if r not in group and x0 - 3 <= r[1] and r[2] <= x1 + 3]
        ys = _edges([r[0] for r in group], vertical, x0, x1)
        bands: list[list[int]] = []
        for hi, lo in zip(ys, ys[1:]):
            bands.append([k for k, ln in enumerate(lines) if k not in taken and ln["x"]
                          and lo < ln["y"] < hi and ln["x"][0] >= x0 - 3 and ln["e"][-1] <= x1 + 3])
        drawn = {r[0] for r in group}
        edge = {j for j in (0, len(bands) - 1) if ys[j] not in drawn or ys[j + 1] not in drawn}  # past the rules
        inner = [lines[k]["s"] for j, b in enumerate(bands) if j not in edge for k in b]
        for j in edge:
            bands[j] = _next_to(bands[j], lines, ys[j + 1] if j == 0 else ys[j], max(set(inner), key=inner.count)
                                if inner else 0.0)
        run: list[tuple[list[int], list[dict]]] = []

        def close() -> None:
            rows = _without_empty_columns([row for _b, rs in run for row in rs]) if len(run) >= MIN_BANDS else []
            if rows and len(rows[0]["c"]) >= 2:  # the rows, top first, where the table's first line was
                ks = [k for b, _row in run for k in b]
                taken.update(ks)
                at[min(ks)] = rows
            run.clear()

        cols = _columns([[lines[k] for k in b] for b in bands if b], vertical, x0, x1, group[0][0], group[-1][0])
        for j, b in enumerate(bands):
            if not b:
                continue
            band = [lines[k] for k in b]
            cells = _placed(band, cols, x1) if len(cols) >= 2 else None
            if j in edge and (cells is None or sum(1 for c in cells if c) < 2):
                continue  # past the outer rules: a row only with cells in two columns or more
            if cells is None:
                close()
            else:
                run.append((b, _rows(cells, cols, x1, band, ys[j], ys[j + 1], partial)))
        close()
    if not taken:
        return lines
    out: list[dict] = []
    for k, ln in enumerate(lines):
        out.extend(at.get(k, ()))
        if k not in taken:
            out.append(ln)
    return out
