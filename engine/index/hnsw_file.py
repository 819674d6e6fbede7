"""hnswlib's index file, validated in Python before hnswlib reads it.

hnswlib trusts its file: a link id past the last element, or a link count past the list's
room, is followed into unrelated memory at search time (a crash, or worse). The generation's
checksums stop damaged files first; this check stops a *crafted* one (a file whose checksum was
forged too, or a loader called on a file no manifest vouches for). It reads the layout hnswlib
0.8 writes (``HierarchicalNSW::saveIndex``):

    header   offsetLevel0, max_elements, cur_element_count, size_data_per_element,
             label_offset, offsetData (size_t), maxlevel (int), enterpoint (uint32),
             maxM, maxM0, M (size_t), mult (double), ef_construction (size_t)
    level 0  count x [link count (uint32, low 16 bits used) | maxM0 x uint32 ids |
             dim x float32 | label (size_t)]
    upper    count x [size (uint32) | size bytes: levels x (uint32 count | maxM x uint32 ids)]

and checks every number that hnswlib would use as an offset, a count or an id.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

HEADER = struct.Struct("<QQQQQQiIQQQdQ")
_U32 = struct.Struct("<I")
MAX_LEVEL = 64  # mult = 1/ln(M): a level this high would need ~M**64 elements


def graph_problem(path: Path, count: int, dim: int, m: int | None = None) -> str | None:
    """Why the file at ``path`` is not a graph of ``count`` ``dim``-vectors hnswlib can safely
    load and search, or None. The labels must be the rows 0..count-1 in any order (how
    VectorIndex builds them; threads insert in any order)."""
    data = np.memmap(path, dtype=np.uint8, mode="r") if path.stat().st_size else np.zeros(0, np.uint8)
    if len(data) < HEADER.size:
        return "truncated header"
    (off0, max_elements, n, per_element, label_offset, offset_data, maxlevel, enterpoint, max_m, max_m0, big_m,
     _mult, _efc) = HEADER.unpack(bytes(data[:HEADER.size]))
    want_links0 = max_m0 * 4 + 4
    layout = {"element count": (n, count), "offsetLevel0": (off0, 0), "offsetData": (offset_data, want_links0),
              "label_offset": (label_offset, want_links0 + 4 * dim), "size_data_per_element":
              (per_element, want_links0 + 4 * dim + 8), "maxM": (max_m, big_m), "maxM0": (max_m0, 2 * big_m)}
    if m is not None:
        layout["M"] = (big_m, m)
    for name, (got, want) in layout.items():
        if got != want:
            return f"{name} is {got}, expected {want}"
    if not (max_elements >= n and 0 <= maxlevel <= MAX_LEVEL and 0 < big_m <= 4096 and (n == 0 or enterpoint < n)):
        return "header values out of range"
    level0_end = HEADER.size + n * per_element
    if len(data) < level0_end + 4 * n:
        return "truncated in the base layer"
    problem = _level0_problem(data[HEADER.size:level0_end].reshape(n, per_element), n, max_m0, label_offset)
    if problem:
        return problem
    return _upper_problem(data, level0_end, n, max_m, maxlevel, enterpoint)


def _level0_problem(rows: np.ndarray, n: int, max_m0: int, label_offset: int) -> str | None:
    counts = rows[:, 0:2].copy().view("<u2")[:, 0]
    if (counts > max_m0).any():
        return "a base-layer link count exceeds its list"
    ids = rows[:, 4:4 + 4 * max_m0].copy().view("<u4")
    used = np.arange(max_m0)[None, :] < counts[:, None]
    if (ids[used] >= n).any():
        return "a base-layer link points past the last element"
    labels = rows[:, label_offset:label_offset + 8].copy().view("<u8")[:, 0]
    if not np.array_equal(np.sort(labels), np.arange(n, dtype=np.uint64)):
        return "labels are not the rows 0..n-1"
    return None


def _upper_problem(data: np.ndarray, pos: int, n: int, max_m: int, maxlevel: int, enterpoint: int) -> str | None:
    per_level = max_m * 4 + 4
    top = entry_level = 0
    raw = memoryview(data)
    for i in range(n):
        if pos + 4 > len(data):
            return "truncated in the upper layers"
        (size,) = _U32.unpack_from(raw, pos)
        pos += 4
        if not size:
            continue
        levels, rest = divmod(size, per_level)
        if rest or levels > maxlevel or pos + size > len(data):
            return f"element {i} has an impossible upper-layer size {size}"
        block = np.frombuffer(raw[pos:pos + size], dtype="<u4").reshape(levels, max_m + 1)
        counts = block[:, 0] & 0xFFFF
        if (counts > max_m).any():
            return f"element {i}: an upper-layer link count exceeds its list"
        used = np.arange(max_m)[None, :] < counts[:, None]
        if (block[:, 1:][used] >= n).any():
            return f"element {i}: an upper-layer link points past the last element"
        top = max(top, levels)
        entry_level = levels if i == enterpoint else entry_level
        pos += size
    if pos != len(data):
        return f"{len(data) - pos} bytes after the graph"
    if n and (top != maxlevel or entry_level != maxlevel):
        return f"top layer is {top} and the entry point's {entry_level}, header says {maxlevel}"
    return None
