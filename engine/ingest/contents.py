"""Tables of contents, which are no text: they repeat every section's title, and read as passages they
come up for any question about a section, instead of it (the citations give the pages anyway).

An entry is a title, a dot leader and a page number ("Power wiring ........ 7"). Three entries or
more (``CONTENTS_MIN``) whose numbers run in page order make contents; an author who forgot to
update them leaves a few numbers out of order (MD Dumper's "Extra Hardware Support … 17" above six
entries "… 14"), so three in four in order (``CONTENTS_IN_ORDER``) are enough. Dot leaders before
values that do not run in order (a specification list "Nozzle ......... 210") are text.

PDF asks this of each page's lines (``engine.ingest.pdf.without_contents``), HTML of each run of
consecutive paragraphs (a Word export's ``MsoToc`` paragraphs: ``engine.ingest.html``), plain text of
each run of consecutive lines (``engine.ingest.text.without_contents``): ``contents_runs``. Contents
whose entries are links (PDF annotations, HTML anchors) are judged by where they point
(``places_in_order``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

__all__ = ["CONTENTS_IN_ORDER", "CONTENTS_MIN", "contents_entries", "contents_runs", "entry", "in_order",
           "page_number", "places_in_order", "runs"]

# a title, a leader (four dots, middle dots or underscores, spaced or not and mixed with ellipses, or two
# ellipses) and a page number (an index's entry may name more: "21, 33", "7-9"; the first is kept)
_ENTRY = re.compile(r"(\S.*?)\s*(?:[.…·_](?:\s?[.…·_]){3,}|…\s?…)\s*(\d{1,4})(?:\s*[,–-]\s*\d{1,4})*\s*$")
CONTENTS_MIN = 3  # entries, their page numbers in order, that make a table of contents
CONTENTS_IN_ORDER = 0.75  # the share of them whose numbers must run in page order (a few may be stale)
ENTRY_MAX = 400  # characters: a longer line is no contents entry (and is not searched for one)


def entry(text: str) -> tuple[str, int] | None:
    """A contents or index entry's title and page number (title, dot leader, number), or None."""
    if len(text) > ENTRY_MAX or not text.rstrip()[-1:].isdigit():
        return None
    m = _ENTRY.fullmatch(text)
    return (m.group(1), int(m.group(2))) if m else None


def page_number(text: str) -> int | None:
    """The page number of a contents entry, or None: not an entry."""
    e = entry(text)
    return e[1] if e else None


def contents_entries(texts: Sequence[str]) -> list[int]:
    """The indices of ``texts`` that are contents entries, when they make contents (``CONTENTS_MIN``
    of them or more, ``CONTENTS_IN_ORDER`` of their numbers in page order); else none."""
    found = [(k, n) for k, t in enumerate(texts) if (n := page_number(t)) is not None]
    return [k for k, _n in found] if in_order([n for _k, n in found]) else []


def contents_runs(texts: Sequence[str]) -> list[int]:
    """The indices of ``texts`` (a page's paragraphs, a text file's lines) in runs of consecutive
    entries that make contents (``contents_entries``, each run judged on its own)."""
    return [run[i] for run in runs([page_number(t) is not None for t in texts])
            for i in contents_entries([texts[k] for k in run])]


def places_in_order(places: Sequence) -> bool:
    """Whether the places a run of linked entries points to make a contents list: each place once
    (consecutive repeats are one entry wrapped over two lines), ``CONTENTS_IN_ORDER`` of them
    distinct, and in the document's order (``in_order``)."""
    places = [p for i, p in enumerate(places) if i == 0 or p != places[i - 1]]
    return len(set(places)) >= CONTENTS_IN_ORDER * len(places) and in_order(places)


def runs(marked: Sequence[bool]) -> list[list[int]]:
    """The indices of each run of consecutive marked items."""
    out: list[list[int]] = []
    for k, m in enumerate(marked):
        if m:
            if out and out[-1][-1] == k - 1:
                out[-1].append(k)
            else:
                out.append([k])
    return out


def in_order(places: Sequence) -> bool:
    """Whether ``CONTENTS_MIN`` places or more (page numbers, or (page, position) tuples) run in the
    document's order, ``CONTENTS_IN_ORDER`` of them at least."""
    return len(places) >= CONTENTS_MIN and _longest_run_up(places) >= CONTENTS_IN_ORDER * len(places)


def _longest_run_up(places: Sequence) -> int:
    """The length of the longest non-decreasing subsequence of ``places`` (patience sorting)."""
    tails: list = []
    for p in places:
        i = bisect.bisect_right(tails, p)
        tails[i:i + 1] = [p]
    return len(tails)
