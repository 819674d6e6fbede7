"""Bad input fails closed and alone: invalid access or lifecycle metadata keeps a document out of
every answer; a file that cannot be read safely is skipped with its name and reason while the
rest of the folder indexes."""

from __future__ import annotations

import os
import time

import pytest

from engine.config import Config, FilterConfig
from engine.ingest import iter_library
from engine.pipeline import Library
from engine.search.eligibility import Eligibility
from hash_embedder import HashEmbedder

GOOD = "# Pump\n\n## Impeller nut\n\nTighten the impeller nut to 38 N·m.\n"


def _doc(front: str, torque: int = 52) -> str:
    return f"---\n{front}\n---\n# Pump\n\n## Impeller nut\n\nTighten the impeller nut to {torque} N·m.\n"


BAD_METADATA = {
    "visibility-number": "visibility: 1",
    "visibility-mapping": "visibility: {team: electrical-team}",
    "status-free-text": "status: Superseded (2026)",
    "date-free-text": "date: next spring",
}


@pytest.mark.parametrize("front", BAD_METADATA.values(), ids=BAD_METADATA.keys())
def test_invalid_access_or_lifecycle_metadata_keeps_the_document_out(tmp_path, write_library, front):
    root = write_library(tmp_path / "lib", {"a-good.md": GOOD, "b-bad.md": _doc(front)})
    cfg = Config().replace(**{"models.dir": str(tmp_path / "m"), "answer.abstain_threshold": -1.0})
    lib = Library.open(root, cfg, tmp_path / "idx", embedder=HashEmbedder())
    report = lib.build()
    try:
        field = front.split(":")[0]
        warned = [i for i in report.issues if i.path == "b-bad.md"]
        assert len(warned) == 1 and field in warned[0].reason and "kept out" in warned[0].reason
        assert lib.meta_of("b-bad.md").invalid == (field,)
        for filters in (FilterConfig(), FilterConfig(include_superseded=True, teams=("electrical-team", "1"))):
            assert Eligibility.from_filters(filters).reason(lib.meta_of("b-bad.md")).startswith("invalid metadata")
            a = lib.ask("impeller nut torque", filters=filters)
            assert "b-bad.md" not in {c.path for c in a.citations}
            assert "52" not in " ".join(c.text for c in a.claims)
            for mode in ("lexical", "vector", "hybrid", "full"):
                assert all(h.chunk.path != "b-bad.md" for h in lib.search("impeller nut", mode=mode,
                                                                            filters=filters).hits)
    finally:
        lib.close()


ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, n in zip("abcdefgh", "bcdefghi")
) + "title: *i"
DEEP_YAML = "title: " + "[" * 5000 + "]" * 5000

BAD_FILES = {
    "alias-bomb.md": _doc(ALIAS_BOMB),
    "deep-yaml.md": _doc(DEEP_YAML),
    "impossible-date.md": _doc("date: 2026-02-30"),
    "huge-version.md": _doc("version: " + "9" * 5000),
    "one-long-line.md": "# Data\n\n" + "x" * 3_000_000 + "\n",
}


def test_each_bad_file_is_skipped_or_contained_and_the_rest_indexes(tmp_path, write_library):
    root = write_library(tmp_path / "lib", {"good.md": GOOD, **BAD_FILES})
    bad_name = os.fsencode(root) + b"/caf\xe9.md"
    with open(bad_name, "wb") as f:
        f.write(GOOD.encode())
    t0 = time.monotonic()
    lib = Library.open(root, Config().replace(**{"models.dir": str(tmp_path / "m")}), tmp_path / "idx",
                       embedder=HashEmbedder())
    report = lib.build()
    elapsed = time.monotonic() - t0
    try:
        assert elapsed < 30, f"bad files stalled the run ({elapsed:.0f} s)"
        indexed = {d.path for d in lib.documents()}
        assert "good.md" in indexed
        skipped = {i.path: i.reason for i in report.issues if i.severity == "skipped"}
        for name in ("alias-bomb.md", "deep-yaml.md", "impossible-date.md", "huge-version.md",
                     "one-long-line.md"):
            assert name in skipped and name not in indexed, name
        assert "aliases" in skipped["alias-bomb.md"]
        assert "nested" in skipped["deep-yaml.md"]
        assert "line longer" in skipped["one-long-line.md"]
        assert any("not valid UTF-8" in r for p, r in skipped.items() if p.startswith("caf"))
        assert "impossible value" in skipped["impossible-date.md"]
    finally:
        lib.close()


def test_an_exception_inside_one_file_skips_that_file_only(tmp_path, write_library, monkeypatch):
    import engine.ingest.library as library_mod

    root = write_library(tmp_path / "lib", {"a.md": GOOD, "b.md": GOOD.replace("38", "40")})
    real = library_mod._finish

    def explode(rel, *args, **kw):
        if rel == "a.md":
            raise RuntimeError("parser bug")
        return real(rel, *args, **kw)

    monkeypatch.setattr(library_mod, "_finish", explode)
    items = list(iter_library(root, Config().chunking))
    issues = [i for i in items if not isinstance(i, tuple)]
    docs = [i[0].path for i in items if isinstance(i, tuple)]
    assert docs == ["b.md"]
    assert issues[0].path == "a.md" and "RuntimeError: parser bug" in issues[0].reason


def test_a_sites_own_yaml_tag_is_read_as_its_plain_value_and_access_rules_still_hold(tmp_path, write_library):
    """Jekyll sites tag values of their own (``requires: !PIDTEMPBED``): the page is read, its
    visibility kept; a tag naming a Python object is still refused, and the file skipped."""
    front = "visibility: restricted\noptions:\n- name: BED_LIMIT_SWITCHING\n  requires: !PIDTEMPBED"
    root = write_library(tmp_path / "lib", {"tagged.md": _doc(front), "python.md": _doc("x: !!python/name:os.system")})
    items = list(iter_library(root, Config().chunking))
    docs = {i[0].path: i[0] for i in items if isinstance(i, tuple)}
    skipped = {i.path: i.reason for i in items if not isinstance(i, tuple) and i.severity == "skipped"}
    assert set(docs) == {"tagged.md"} and docs["tagged.md"].meta.visibility == ("restricted",)
    assert "not valid YAML" in skipped["python.md"]
