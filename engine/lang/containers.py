"""Containers whose body CommonMark reads as code: MkDocs' indented ones (the Python-Markdown
extensions a Material site writes with: admonitions ``!!! warning "Title"``, collapsible ones
``??? info "Title"``, content tabs ``=== "ESP8266"``, each body the lines indented under its opening
line) and fenced admonitions (MyST's ``` ```{warning} ```, a theme's ``` ```note ```); and the
content tabs of Liquid (``{% tab install humble %}`` ... ``{% endtab %}``) and Docusaurus
(``<TabItem value="win">`` ... ``</TabItem>``), whose label the page shows.

After a blank line, a body indented four spaces is an indented code block, so a tab's steps, headings
and lists (Tasmota's "Configuration procedure for new devices": two tabs, ESP8266 and ESP32, each a
procedure under its own headings) would be read as one block of code, and so would a fenced
admonition's text. ``dedent_bodies`` gives the Markdown reader the text with each body set back to its
container's indent and a fenced admonition's fences written as Docusaurus writes its admonitions
(``:::warning`` ... ``:::``), line for line (a block's lines stay the file's lines), and the tabs: a
tab's label heads what its body holds, as a heading would (engine.ingest.markdown). The answer units
read the same markup from the file's own lines (engine.lang.units). A container's opening line inside
fenced code is an example, not a container.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["ADMONITION_KINDS", "SAFETY_ADMONITIONS", "TAB_MARKER", "Tab", "closes_fence", "dedent_bodies",
           "fenced_admonition", "tab_label", "tab_labels"]

_EOL = r"[ \t\r]*$"  # a line's end: trailing blanks, and the CR of a file with Windows line ends
# a content tab's opening line: its label quoted (pymdownx.tabbed; "===+" opens selected, "===!" a new set)
TAB_MARKER = re.compile(r'[ \t]*===[+!]?[ \t]+"([^"\n]*)"' + _EOL)
# an admonition's opening line: its kind, further classes, a quoted title ("" for none)
_ADMONITION_MARKER = re.compile(r'[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[A-Za-z][\w-]*(?:[ \t]+[A-Za-z][\w-]*)*'
                                r'(?:[ \t]+"[^"\n]*")?' + _EOL)
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
# the kinds of the admonition markups that warn (note, tip, info, important do not)
SAFETY_ADMONITIONS = frozenset({"danger", "warning", "caution", "attention", "error"})
# the kinds docutils and Docusaurus name: a Jekyll site's Liquid block tag naming one ("{% alert warning %}"
# ... "{% endalert %}", "{% note %}" ... "{% endnote %}") is that admonition, and so is a fence naming one
ADMONITION_KINDS = SAFETY_ADMONITIONS | {"hint", "important", "note", "tip", "seealso", "info"}
# a fence naming an admonition: MyST's directive (```{warning}, ```{note} Title) or a bare kind (```warning,
# as the TurtleBot 4 manual's theme draws a callout); its lines are Markdown text, up to the closing fence
_ADMONITION_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*(?:\{([A-Za-z]+)\}(?:[ \t].*)?|([A-Za-z]+))" + _EOL)
# a Liquid tab (jekyll-tabs: {% tab install humble %}, the group then the label; GitBook: {% tab title="Humble" %})
# and its end, each a line of its own
_LIQUID_TAB = re.compile(r"""[ \t]*\{%-?[ \t]*tab[ \t]+"""
                         r"""(?:title=(["'])(.*?)\1|(?:[^\s%]+[ \t]+)?([^\s%-][^%\n]*?))[ \t]*-?%\}""" + _EOL)
_LIQUID_END_TAB = re.compile(r"[ \t]*\{%-?[ \t]*endtab[ \t]*-?%\}" + _EOL)
# Docusaurus' tab (MDX), a line of its own: its label, else its value ("win", "home_row_mods")
_TAB_ITEM = re.compile(r"[ \t]*<TabItem\b([^<>]*)>" + _EOL)
_TAB_ITEM_END = re.compile(r"[ \t]*</TabItem>" + _EOL)
_ATTRIBUTE = re.compile(r"""\b(label|value)=(?:"([^"]*)"|'([^']*)')""")
# a label its <Tabs values={[...]}> gives a value: {label: "Windows", value: "win"}, either order
_TAB_VALUE = re.compile(r"""\{\s*(label|value)\s*:\s*(["'])([^"'\n]*)\2\s*,"""
                        r"""\s*(label|value)\s*:\s*(["'])([^"'\n]*)\5\s*\}""")
BODY_INDENT = 4  # Python-Markdown's: a container's body is indented four columns under its opening line


class Tab(NamedTuple):
    line: int  # its opening line (0-based)
    end: int  # the first line past its body (0-based; the text's line count where the text ends)
    label: str


def tab_labels(text: str) -> dict[str, str]:
    """The labels Docusaurus' ``<Tabs values={[{label: "Windows", value: "win"}, ...]}>`` give values."""
    found = {}
    for m in _TAB_VALUE.finditer(text) if "<Tabs" in text else ():
        pair = {m.group(1): m.group(3), m.group(4): m.group(6)}
        if pair.keys() == {"label", "value"}:
            found.setdefault(pair["value"], pair["label"])
    return found


def tab_label(line: str, labels: dict[str, str] | None = None) -> str | None:
    """The label of a content tab's opening line (``=== "ESP32"``, ``{% tab install humble %}``,
    ``{% tab title="Humble" %}``, ``<TabItem value="win">``: its label, the one ``labels`` gives its
    value, else its value), None for another line."""
    m = TAB_MARKER.match(line)
    if m:
        return " ".join(m.group(1).split())
    m = _LIQUID_TAB.match(line) if "{%" in line else None
    if m:
        return " ".join((m.group(2) if m.group(1) else m.group(3)).strip("\"'").split())
    m = _TAB_ITEM.match(line) if "<TabItem" in line else None
    if m:
        found = {k: a or b for k, a, b in _ATTRIBUTE.findall(m.group(1))}
        value = found.get("value", "")
        label = found.get("label") or (labels or {}).get(value) or value.replace("_", " ")
        return " ".join(label.split()) or None
    return None


def fenced_admonition(line: str) -> tuple[str, str] | None:
    """(fence, kind) of a fence line that opens an admonition (``ADMONITION_KINDS``), else None."""
    m = _ADMONITION_FENCE.match(line) if "`" in line or "~" in line else None
    kind = (m.group(2) or m.group(3) or "").lower() if m else ""
    return (m.group(1), kind) if kind in ADMONITION_KINDS else None


def closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: as long a run of its character or longer, alone."""
    s = line.strip()
    return len(s) >= len(fence) and s == fence[0] * len(s)


def _lead(line: str) -> tuple[str, str]:
    """The line's leading whitespace, tabs as four columns, and the rest."""
    rest = line.lstrip(" \t")
    return line[:len(line) - len(rest)].expandtabs(BODY_INDENT), rest


def dedent_bodies(text: str) -> tuple[str, list[Tab]]:
    """``text`` with the bodies of its indented containers set back to their opening line's indent,
    a fenced admonition's fences written ``:::kind`` and ``:::``, and a tab's opening and end lines
    left blank (its label is no text but the heading of its body): the same lines, and its content
    tabs in order."""
    if not any(mark in text for mark in ("!!!", "???", "===", "{%", "```", "~~~", "<TabItem")):
        return text, []
    lines = text.split("\n")
    labels = tab_labels(text)
    out: list[str] = []
    bodies: list[int] = []  # the body indent (columns of the file's line) of each open container
    tabs: list[Tab] = []
    open_tabs: list[tuple[int, int]] = []  # (index into tabs, its container's place in bodies)
    tagged: list[int] = []  # the open tabs an end tag closes, Liquid's and Docusaurus' (indices into tabs)
    fences: list[str] = []  # the fences of the open fenced admonitions
    fence = ""
    for i, raw in enumerate(lines):
        if not raw.strip():
            out.append(raw)
            continue
        lead, rest = _lead(raw)
        indent = len(lead)
        while bodies and indent < bodies[-1] and not fence:
            bodies.pop()
            while open_tabs and open_tabs[-1][1] >= len(bodies):
                k, _ = open_tabs.pop()
                tabs[k] = tabs[k]._replace(end=i)
        cut = min(indent, BODY_INDENT * len(bodies))
        line = lead[cut:] + rest
        out.append(line)
        if fence:
            if closes_fence(line, fence):
                fence = ""
            continue
        if fences and closes_fence(line, fences[-1]):
            fences.pop()
            out[-1] = ":::"  # as Docusaurus closes one: its lines a paragraph's, not code
            continue
        admonition = fenced_admonition(line)
        if admonition is not None:
            fences.append(admonition[0])
            out[-1] = f":::{admonition[1]}"
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        label = tab_label(line, labels)
        if label is not None and line.lstrip()[:1] in "{<":  # Liquid's, Docusaurus': its body ends at its end tag
            tabs.append(Tab(i, len(lines), label))
            tagged.append(len(tabs) - 1)
            out[-1] = ""
        elif (_LIQUID_END_TAB.match(line) or _TAB_ITEM_END.match(line)) and tagged:
            k = tagged.pop()
            tabs[k] = tabs[k]._replace(end=i)
            out[-1] = ""
        elif label is not None or _ADMONITION_MARKER.match(line):
            if label is not None:  # its line no text: the label heads the body (``Tab``)
                tabs.append(Tab(i, len(lines), label))
                open_tabs.append((len(tabs) - 1, len(bodies)))
                out[-1] = ""
            bodies.append(indent + BODY_INDENT)
    return "\n".join(out), tabs
