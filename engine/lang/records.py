"""The lines of a front matter's records (engine.ingest.markdown.front_matter_records): a static
site's page data that its layout prints, one YAML list entry a record (``- tag: S`` /
``  description: Timeout period…`` / ``  values:`` / ``  - tag: seconds``). A record is one
claim, its nested lines included, as a table row is; the key's line over them is its heading."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

import yaml

__all__ = ["record_cells", "record_roles"]

_ENTRY = re.compile(r"([ \t]*)- ")
_KEY = re.compile(r"[ \t]*[\w-]+:(?:[ \t]|$)")


def record_roles(lines: Sequence[str], heading_path: Sequence[str]) -> list[str] | None:
    """Roles (as engine.lang.rst.line_roles names them) of a chunk's lines when they are a front
    matter key's records under it: "title" for the key's line (``parameters:``, the chunk's last
    heading), "row" for an entry's first line (``- tag: S``), "row+" for its further lines, set
    out further. None for any other text: an entry that opens with no key (a Markdown list's
    "- **Reset** — …"), a line set out no further than the entries that opens none, or entries of
    one line each ("- Linux: use apt"), which are a writer's list. Under the key's line, a list of
    statements (``notes:`` / ``- Requires …``) is Markdown: the line is its heading, the rest ""."""
    if not heading_path:
        return None
    key = f"{heading_path[-1]}:"
    roles = _record_roles(lines, key)
    if roles is None and lines and lines[0].strip() == key:  # a list of statements under its key:
        return ["title"] + [""] * (len(lines) - 1)  # the key's line is its heading, the rest Markdown
    return roles


def _record_roles(lines: Sequence[str], key: str) -> list[str] | None:
    """``record_roles`` for entries of fields, else None."""
    roles: list[str] = []
    indent: int | None = None
    fields = False  # a key on a further line: the entries are records of fields
    for line in lines:
        if not line.strip():
            roles.append("row+" if indent is not None else "")
            continue
        if indent is None and line.strip() == key and not roles:
            roles.append("title")
            continue
        entry = _ENTRY.match(line)
        if indent is None and entry:
            indent = len(entry.group(1).expandtabs())
        lead = len(line.expandtabs()) - len(line.expandtabs().lstrip())
        if indent is None:
            return None
        if entry and lead == indent:
            if not _KEY.match(line, entry.end()):
                return None
            roles.append("row")
        elif lead > indent:
            fields = fields or bool(_KEY.match(line))
            roles.append("row+")
        else:
            return None
    return roles if indent is not None and fields else None


def record_cells(text: str) -> list[tuple[str, str]] | None:
    """A record's fields as (key, value) pairs in its order, each value as written (YAML's base
    reading: "off" stays "off"), a nested one read out on one line ("values: tag: seconds, type:
    int"); None when ``text`` is no YAML entry of keys over several lines (a list item's
    "- Mode: off" is the writer's sentence)."""
    entry = _ENTRY.match(text)
    if not entry or not _KEY.match(text, entry.end()) or "\n" not in text.strip():
        return None
    first, _, rest = text.lstrip().partition("\n")
    below = [len(line) - len(line.lstrip()) for line in rest.splitlines() if line.strip()]
    lead = " " * max(0, min(below, default=2) - 2)  # the entry's own indent, which its span lost
    try:
        data = yaml.load(textwrap.dedent(f"{lead}{first}\n{rest}"), Loader=yaml.BaseLoader)  # noqa: S506 - strings only
    except yaml.YAMLError:
        return None
    if not (isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict) and data[0]):
        return None
    return [(str(k), _flat(v)) for k, v in data[0].items()]


def _flat(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_flat(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "; ".join(_flat(x) for x in v)
    return " ".join(str(v).split())
