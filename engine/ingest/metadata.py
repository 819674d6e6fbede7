"""Document metadata: what a manual says about itself, merged in a fixed order.

Lowest to highest priority:
  1. defaults (doc_id = path without extension, title = the heading that heads the whole
     document (engine.ingest.blocks.Parsed.title_heading) or the file's name,
     version "1", status active, language detected from the text),
  2. the library's sidecar ``fieldqa.toml`` (``[[documents]]`` tables with a ``glob``),
     for files that cannot carry their own metadata,
  3. the file's own explicit values (Markdown front matter, HTML ``<meta>``, PDF info).

Bad values never stop a file from being read: they are dropped with a warning. A bad
access or lifecycle value (``visibility``, ``status``, ``date``) fails closed: the field is
recorded in ``DocumentMeta.invalid`` and engine.search.eligibility keeps the document out of every
answer until the file is fixed (a restricted manual must not turn public, nor a superseded
one current, because of a typo).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
import reprlib
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from engine.lang.language import detect_language
from engine.types import DocumentMeta

SIDECAR = "fieldqa.toml"
KEYS = ("doc_id", "title", "version", "date", "models", "status", "visibility", "language")
FAIL_CLOSED = ("visibility", "status", "date")


@dataclass(frozen=True, slots=True)
class SidecarRule:
    glob: str
    values: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Sidecar:
    rules: tuple[SidecarRule, ...] = ()
    problems: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # globs of files that are not manuals (READMEs, scripts)

    def excludes(self, rel_path: str) -> bool:
        return any(_glob_match(rel_path, pattern) for pattern in self.exclude)

    def values_for(self, rel_path: str) -> dict[str, Any]:
        """Values of every matching rule, later rules winning."""
        out: dict[str, Any] = {}
        for rule in self.rules:
            if _glob_match(rel_path, rule.glob):
                out.update(rule.values)
        return out


def _glob_match(rel_path: str, pattern: str) -> bool:
    if PurePosixPath(rel_path).match(pattern) or fnmatch.fnmatchcase(rel_path, pattern):
        return True
    # "**/x.md" should also match "x.md" at the root
    return pattern.startswith("**/") and _glob_match(rel_path, pattern[3:])


def read_sidecar(root: Path) -> Sidecar:
    """The library's ``fieldqa.toml``; a broken file is reported, not raised."""
    file = root / SIDECAR
    if not file.is_file():
        return Sidecar()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
        return Sidecar(problems=(f"{SIDECAR}: cannot read ({e}); ignored",))
    rules: list[SidecarRule] = []
    problems: list[str] = []
    exclude = data.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(g, str) for g in exclude):
        problems.append(f"{SIDECAR}: 'exclude' must be a list of globs; ignored")
        exclude = []
    docs = data.get("documents", [])
    if not isinstance(docs, list):
        return Sidecar(problems=(f"{SIDECAR}: [[documents]] must be an array of tables; ignored",))
    for i, entry in enumerate(docs):
        if not isinstance(entry, dict) or not isinstance(entry.get("glob"), str):
            problems.append(f"{SIDECAR}: documents[{i}] has no 'glob'; ignored")
            continue
        unknown = sorted(set(entry) - set(KEYS) - {"glob"})
        if unknown:
            problems.append(f"{SIDECAR}: documents[{i}] unknown keys {unknown} ignored")
        rules.append(SidecarRule(entry["glob"], {k: v for k, v in entry.items() if k in KEYS}))
    return Sidecar(tuple(rules), tuple(problems), tuple(exclude))


def default_doc_id(rel_path: str) -> str:
    """`en/Hydra 400 Manual.md` -> `en/hydra-400-manual`."""
    stem = str(PurePosixPath(rel_path).with_suffix(""))
    slug = re.sub(r"[^\w/.-]+", "-", stem.lower()).strip("-")
    return re.sub(r"-*/-*", "/", slug) or "document"


def file_title(rel_path: str) -> str:
    """A title from the file's name, as a static site prints one for a page with no title of its
    own: "Getting-Started.md" -> "Getting Started", "power_calibration" -> "power calibration"."""
    stem = PurePosixPath(rel_path).stem
    return re.sub(r"[-_\s]+", " ", stem).strip() or stem


def build_meta(
    rel_path: str,
    own: Mapping[str, Any],
    sidecar: Mapping[str, Any],
    *,
    first_heading: str,
    text: str,
) -> tuple[DocumentMeta, list[str]]:
    """Merge defaults < sidecar < own values; returns the meta and warnings about bad values."""
    warnings: list[str] = []
    merged: dict[str, Any] = {}
    invalid: dict[str, None] = {}
    for source, values in (("fieldqa.toml", sidecar), ("metadata", own)):
        for key, raw in values.items():
            if key not in KEYS or raw is None:
                continue
            try:
                merged[key] = _coerce(key, raw)
                invalid.pop(key, None)
            except (ValueError, TypeError, OverflowError, RecursionError) as e:
                if key in FAIL_CLOSED:
                    invalid[key] = None
                    warnings.append(f"{source}: {key}: {e}; the document is kept out of every answer "
                                    f"until {key} is fixed")
                else:
                    warnings.append(f"{source}: {key}: {e}; ignored")
    title = merged.get("title") or first_heading.strip() or file_title(rel_path)
    meta = DocumentMeta(
        doc_id=merged.get("doc_id") or default_doc_id(rel_path),
        title=title,
        version=merged.get("version", "1"),
        date=merged.get("date"),
        models=merged.get("models", ()),
        status=merged.get("status", "active"),
        visibility=merged.get("visibility", ()),
        language=merged.get("language") or detect_language(text),
        invalid=tuple(invalid),
    )
    return meta, warnings


def _coerce(key: str, raw: Any) -> Any:
    if key in ("models", "visibility"):
        if isinstance(raw, str):
            raw = [p for p in re.split(r"\s*,\s*", raw.strip()) if p]
        if not isinstance(raw, (list, tuple)) or not all(isinstance(x, (str, int, float)) for x in raw):
            raise ValueError(f"expected a list of names, got {_short(raw)}")
        return tuple(str(x).strip() for x in raw if str(x).strip())
    if key == "date":
        if isinstance(raw, dt.datetime):
            return raw.date()
        if isinstance(raw, dt.date):
            return raw
        try:
            return dt.date.fromisoformat(str(raw).strip())
        except ValueError:
            raise ValueError(f"not a valid ISO date (YYYY-MM-DD): {_short(raw)}") from None
    if key == "status":
        value = str(raw).strip().lower()
        if value not in ("active", "superseded"):
            raise ValueError(f"must be 'active' or 'superseded', got {_short(raw)}")
        return value
    if isinstance(raw, (dict, list, tuple)):
        raise ValueError(f"expected a single value, got {_short(raw)}")
    value = str(raw).strip()
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"longer than {MAX_VALUE_CHARS} characters")
    if key in ("doc_id", "title") and not value:
        raise ValueError("empty")
    if key == "language":
        return value.lower()
    return value


MAX_VALUE_CHARS = 500  # a title, version or id longer than this is not metadata


def _short(raw: Any) -> str:
    """A bounded repr: a YAML alias bomb must not expand while being reported."""
    text = reprlib.repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."
