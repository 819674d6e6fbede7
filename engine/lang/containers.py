"""MkDocs' indented containers (the Python-Markdown extensions a Material site writes with):
admonitions (``!!! warning "Title"``), collapsible ones (``??? info "Title"``, ``???+ tip``) and
content tabs (``=== "ESP8266"``), whose body is the lines indented under the opening line.

CommonMark knows none of them: after a blank line, a body indented four spaces is an indented
code block, so a tab's steps, headings and lists (Tasmota's "Configuration procedure for new
devices": two tabs, ESP8266 and ESP32, each a procedure under its own headings) would be read as one
block of code. ``dedent_bodies`` gives the Markdown reader the text with each body set back to its
container's indent, line for line (a block's lines stay the file's lines), and the tabs: a tab's
label heads what its body holds, as a heading would (engine.ingest.markdown). A container's opening
line inside fenced code is an example, not a container.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["TAB_MARKER", "Tab", "dedent_bodies", "tab_label"]

# a content tab's opening line: its label quoted (pymdownx.tabbed; "===+" opens selected, "===!" a new set)
TAB_MARKER = re.compile(r'[ \t]*===[+!]?[ \t]+"([^"\n]*)"[ \t]*$')
# an admonition's opening line: its kind, further classes, a quoted title ("" for none)
_ADMONITION_MARKER = re.compile(r'[ \t]*(?:!!!|\?\?\?\+?)[ \t]+[A-Za-z][\w-]*(?:[ \t]+[A-Za-z][\w-]*)*'
                                r'(?:[ \t]+"[^"\n]*")?[ \t]*$')
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
# a Liquid tab (jekyll-tabs: {% tab install humble %}, the group then the label; GitBook: {% tab title="Humble" %})
# and its end, each a line of its own
_LIQUID_TAB = re.compile(r"""[ \t]*\{%-?[ \t]*tab[ \t]+(?:title=(["'])(.*?)\1|(?:[^\s%]+[ \t]+)?([^\s%-][^%\n]*?))[ \t]*-?%\}[ \t]*$""")
_LIQUID_END_TAB = re.compile(r"[ \t]*\{%-?[ \t]*endtab[ \t]*-?%\}[ \t]*$")
BODY_INDENT = 4  # Python-Markdown's: a container's body is indented four columns under its opening line


class Tab(NamedTuple):
    line: int  # its opening line (0-based)
    end: int  # the first line past its body (0-based; the text's line count where the text ends)
    label: str
    depth: int  # how many tabs it sits inside


def tab_label(line: str) -> str | None:
    """The label of a content tab's opening line (``=== "ESP32"``, ``{% tab install humble %}``,
    ``{% tab title="Humble" %}``), None for another line."""
    m = TAB_MARKER.match(line)
    if m:
        return " ".join(m.group(1).split())
    m = _LIQUID_TAB.match(line) if "{%" in line else None
    if m:
        return " ".join((m.group(2) if m.group(1) else m.group(3)).strip("\"'").split())
    return None


def _lead(line: str) -> tuple[str, str]:
    """The line's leading whitespace, tabs as four columns, and the rest."""
    rest = line.lstrip(" \t")
    return line[:len(line) - len(rest)].expandtabs(BODY_INDENT), rest


def dedent_bodies(text: str) -> tuple[str, list[Tab]]:
    """``text`` with the bodies of its containers set back to their opening line's indent (the same
    lines, each shortened by its leading spaces only; a tab's opening line left blank, its label
    being no text but the heading of its body), and its content tabs in order."""
    if "!!!" not in text and "???" not in text and "===" not in text and "{%" not in text:
        return text, []
    lines = text.split("\n")
    out: list[str] = []
    bodies: list[int] = []  # the body indent (columns of the file's line) of each open container
    tabs: list[Tab] = []
    open_tabs: list[tuple[int, int]] = []  # (index into tabs, its container's place in bodies)
    liquid: list[int] = []  # the open Liquid tabs (indices into tabs)
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
            if line.lstrip(" ").startswith(fence):
                fence = ""
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            continue
        label = tab_label(line)
        if label is not None and line.lstrip().startswith("{%"):  # a Liquid tab: its body ends at {% endtab %}
            tabs.append(Tab(i, len(lines), label, len(open_tabs) + len(liquid)))
            liquid.append(len(tabs) - 1)
            out[-1] = ""
        elif _LIQUID_END_TAB.match(line) and liquid:
            k = liquid.pop()
            tabs[k] = tabs[k]._replace(end=i)
            out[-1] = ""
        elif label is not None or _ADMONITION_MARKER.match(line):
            if label is not None:  # its line no text: the label heads the body (``Tab``)
                tabs.append(Tab(i, len(lines), label, len(open_tabs) + len(liquid)))
                open_tabs.append((len(tabs) - 1, len(bodies)))
                out[-1] = ""
            bodies.append(indent + BODY_INDENT)
    return "\n".join(out), tabs
