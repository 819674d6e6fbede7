"""The binding catalogue (for Help) and the command palette provider built from it.

Both are generated from the `BINDINGS` of the app, its screens and widgets, with
the user's keymap applied, so they can never disagree with the real keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content


@dataclass(frozen=True, slots=True)
class BindingInfo:
    scope: str  # "global", "screens", or a screen / widget name
    id: str
    keys: tuple[str, ...]
    action: str
    description: str


def catalogue(scopes: Iterable[tuple[str, type]], keymap: Mapping[str, str]) -> list[BindingInfo]:
    """Every binding declared by the classes (own BINDINGS only), keymap applied."""
    rows: list[BindingInfo] = []
    for scope, cls in scopes:
        by_id: dict[str, tuple[list[str], Binding]] = {}
        for b in Binding.make_bindings(cls.__dict__.get("BINDINGS", [])):
            bid = b.id or b.action
            keys, _ = by_id.setdefault(bid, ([], b))
            keys.append(b.key)
        for bid, (keys, b) in by_id.items():
            if bid in keymap:
                keys = [k.strip() for k in keymap[bid].split(",") if k.strip()]
            rows.append(BindingInfo(scope, bid, tuple(keys), b.action, b.description))
    return rows


def key_label(app, key: str) -> str:
    return app.get_key_display(Binding(key, ""))


class BindingCommands(Provider):
    """Every action reachable from the current screen, by its description."""

    def _entries(self) -> list[tuple[str, str, str, object]]:
        app = self.app
        screen = self.screen
        entries = []
        wanted = {"global", "screens", getattr(screen, "SCOPE", "")}
        for info in app.binding_catalogue():  # type: ignore[attr-defined]
            if info.scope not in wanted or not info.description:
                continue
            target = app if info.scope == "global" else screen
            keys = ", ".join(key_label(app, k) for k in info.keys)
            entries.append((info.description, keys, info.action, target))
        return entries

    def _command(self, action: str, target: object):
        def run() -> None:
            self.app.call_later(self.app.run_action, action, target)

        return run

    async def discover(self) -> Hits:
        for description, keys, action, target in self._entries():
            yield DiscoveryHit(Content(description), self._command(action, target),
                               text=description, help=f"key: {keys}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, keys, action, target in self._entries():
            score = matcher.match(description)
            if score > 0:
                yield Hit(score, matcher.highlight(description), self._command(action, target),
                          text=description, help=f"key: {keys}")
