"""One claimable unit read for answering: the text it is embedded and matched with (its
headings, a table row's header), the exact tokens it names, the values it gives for answer
types, and the cache of unit vectors (keyed by the embedder's checksum)."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from engine.answer.conflicts import Value, column_units, header_units, table_header, values_in
from engine.lang.codes import exact_codes
from engine.lang.tables import is_html_row, table_cells
from engine.lang.units import Unit
from engine.types import Chunk

class _VectorCache:
    """Unit vectors by (the source's unit-vector key, embedded text), bounded, so a re-asked
    question costs one query. The key names the model's checksum (and whether the vectors are
    pooled), never an object's identity: another embedder, or a library that makes its unit
    vectors the other way, can never receive this one's vectors. Behind it, the vectors the
    library stored at index time (``source.unit_vectors``); only what neither holds is embedded
    while the user waits."""

    def __init__(self, size: int = 4096):
        self.size = size
        self.data: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def passages(self, source, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 1), np.float32)
        embedder = source.embedder
        # the stored vectors' own key when the source says it (pooled or not), else the model's
        key = str(getattr(source, "unit_vector_key", "") or getattr(embedder, "checksum", "")) or f"id:{id(embedder)}"
        here: dict[str, np.ndarray] = {}
        for t in dict.fromkeys(texts):
            v = self.data.get((key, t))
            if v is not None:
                here[t] = v
                self.data.move_to_end((key, t))
        missing = [t for t in dict.fromkeys(texts) if t not in here]
        if missing:
            found = dict(source.unit_vectors(missing))
            rest = [t for t in missing if t not in found]
            if rest:
                found.update(zip(rest, np.asarray(embedder.embed_passages(rest), dtype=np.float32)))
            for t in missing:
                here[t] = self.data[(key, t)] = found[t]
            while len(self.data) > self.size:
                self.data.popitem(last=False)
        return np.stack([here[t] for t in texts])


_CACHE = _VectorCache()


def _headings(unit: Unit, chunk: Chunk) -> str:
    path = list(chunk.heading_path[-2:])
    if unit.heading and unit.heading not in path:
        path = path[-1:] + [unit.heading]
    return " > ".join(path)


def _embed_text(unit: Unit, chunk: Chunk) -> str:
    heading = _headings(unit, chunk)
    header = ""
    if unit.kind == "table_row":
        from engine.answer.conflicts import table_header

        header = table_header(chunk, unit)
    text = unit.text
    if unit.kind == "table_row" and is_html_row(unit.text):  # an HTML row: its cells, not its tags
        text = " | ".join(table_cells(unit.text))
    parts = [p for p in (heading, header, text) if p]
    return "\n".join(parts)


def unit_texts(chunk: Chunk) -> list[str]:
    """What is embedded for each unit of a chunk (the index stores these vectors ahead of time)."""
    return [t for t, _a, _b in unit_spans(chunk)]


def unit_spans(chunk: Chunk) -> list[tuple[str, int, int]]:
    """Each unit's key (``unit_texts``) and its character span in ``chunk.search_text``: the span
    whose token vectors the chunk's own forward pass pools into the unit's vector."""
    from engine.lang.units import split_units

    base = len(chunk.search_text) - len(chunk.text) - chunk.char_start
    return [(_embed_text(u, chunk), base + u.char_start, base + u.char_end) for u in split_units(chunk)]


def _match_text(unit: Unit, chunk: Chunk) -> str:
    return f"{_headings(unit, chunk)} {unit.text}"


def _exact_tokens(text: str) -> set[str]:
    vals = {f"{v.number:g} {v.unit}" for v in values_in(text)}
    return exact_codes(text) | vals


def _typed_piece(unit: Unit, chunk: Chunk) -> tuple[str, list[Value]]:
    """A unit's text with its headings (and table header), and its values, for answer types.

    A unit holding a bare number also counts as holding a value in each unit its chunk uses
    as a column label: a PDF table row ("Bag filter F7 CV-FB7 90 250") under "Replace at (Pa)"."""
    header = table_header(chunk, unit)
    text = f"{' > '.join(chunk.heading_path)} {unit.heading} {header} {unit.text}"
    values = values_in(unit.text, header_units(header) if header else ())
    if re.search(r"\d", unit.text):
        values += [Value(float("nan"), u, f"({u})") for u in column_units(f"{chunk.context}\n{chunk.text}")]
    return text, values
