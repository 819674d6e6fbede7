"""Eligibility rules, and the guarantee that an excluded chunk reaches no stage of any mode."""

from __future__ import annotations

import itertools
from datetime import date

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.config import Config, FilterConfig
from engine.pipeline import MODES, Library
from engine.search.eligibility import Eligibility
from hash_embedder import HashEmbedder
from engine.types import DocumentMeta


def meta(**kw) -> DocumentMeta:
    return DocumentMeta(doc_id=kw.pop("doc_id", "d"), title="t", **kw)


def test_rules_and_reasons():
    rule = Eligibility.from_filters(FilterConfig(teams=("Blue",), device_model="kx-7", as_of="2025-01-01"))
    assert rule.reason(meta()) is None
    assert rule.reason(meta(status="superseded")) == "superseded version"
    assert rule.reason(meta(visibility=("red",))) == "restricted to teams red"
    assert rule.reason(meta(visibility=("red", "blue"))) is None  # case-insensitive team match
    assert rule.reason(meta(models=("KX-9",))) == "applies to models KX-9, not kx-7"
    assert rule.reason(meta(models=("KX-7", "KX-9"))) is None
    assert rule.reason(meta(date=date(2025, 6, 1))).startswith("dated after as_of")
    assert rule.reason(meta(date=date(2025, 1, 1))) is None
    assert Eligibility.from_filters(FilterConfig(include_superseded=True)).reason(meta(status="superseded")) is None
    assert "superseded versions excluded" in rule.describe()
    assert any("kx-7" in r for r in rule.describe())


def test_bad_as_of_is_a_clear_error():
    with pytest.raises(ValueError, match="as_of"):
        Eligibility.from_filters(FilterConfig(as_of="last tuesday"))


def test_mask_matches_reason():
    metas = [meta(status="superseded"), meta(), meta(visibility=("x",)), meta()]
    assert Eligibility().mask(metas).tolist() == [False, True, False, True]
    assert Eligibility().mask([]).shape == (0,)


# ---- the property: no stage of any mode ever lists an excluded chunk ------------------------

STATUSES = ("active", "superseded")
VISIBILITY = ((), ("red",), ("blue", "green"))
MODELS = ((), ("X1",), ("X2", "X3"))
DATES = (None, "2024-01-01", "2026-06-01")
WORDS = "pump valve seal torque filter fuse sensor relay gasket bearing".split()


def _doc(i: int, status: str, vis: tuple, models: tuple, day: str | None) -> str:
    words = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(5))
    fm = [f"doc_id: doc-{i}", f"status: {status}", f"visibility: [{', '.join(vis)}]",
          f"models: [{', '.join(models)}]"] + ([f"date: {day}"] if day else [])
    return ("---\n" + "\n".join(fm) + f"\n---\n# Manual {i}\n\n## Part A\n\nCheck the {words} first.\n\n"
            f"## Part B\n\nThen inspect the {WORDS[i % len(WORDS)]} and the {words}.\n")


@pytest.fixture(scope="module")
def varied_library(tmp_path_factory):
    root = tmp_path_factory.mktemp("varied")
    combos = list(itertools.product(STATUSES, VISIBILITY, MODELS, DATES))[::2]  # 27 documents
    for i, (status, vis, models, day) in enumerate(combos):
        (root / f"doc{i:02d}.md").write_text(_doc(i, status, vis, models, day), encoding="utf-8")
    cfg = Config().replace(**{"models.dir": str(root / "no-models")})
    lib = Library.open(root, cfg, tmp_path_factory.mktemp("idx"), embedder=HashEmbedder())
    lib.build()
    yield lib
    lib.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    include_superseded=st.booleans(),
    teams=st.lists(st.sampled_from(["red", "blue", "green", "grey"]), max_size=3, unique=True),
    device_model=st.sampled_from(["", "X1", "x3", "Z9"]),
    as_of=st.sampled_from(["", "2023-12-31", "2025-01-01", "2027-01-01"]),
    question=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    depth=st.sampled_from([1, 3, 50, 1000]),
    mode=st.sampled_from(MODES),
)
def test_no_excluded_chunk_in_any_stage(varied_library, include_superseded, teams, device_model, as_of,
                                        question, depth, mode):
    lib = varied_library
    lib.config = lib.config.replace(**{
        "retrieval.lexical_depth": depth, "retrieval.vector_depth": depth, "retrieval.fused_window": depth,
        "retrieval.rerank_input": depth, "retrieval.final_context": depth})
    filters = FilterConfig(include_superseded=include_superseded, teams=tuple(teams),
                           device_model=device_model, as_of=as_of)
    rule = Eligibility.from_filters(filters)
    allowed = {c.id for c in lib.all_chunks() if rule.reason(lib.meta_of(c)) is None}
    res = lib.search(question, mode=mode, filters=filters)
    assert res.trace.eligible == len(allowed)
    for stage in res.trace.stages:
        ids = [r.chunk_id for r in stage.ranked]
        assert set(ids) <= allowed, f"{stage.name} let an excluded chunk through"
        assert len(ids) == len(set(ids)), f"{stage.name} lists a chunk twice"
    assert {h.chunk.id for h in res.hits} <= allowed
    vec = res.trace.stage("vector")
    if vec is not None:  # exact fallback fills k up to the eligible count, never beyond it
        assert len(vec.ranked) == min(depth, len(allowed))


def test_mask_is_cached_and_read_only(varied_library):
    snap = varied_library._snap
    rule = Eligibility()
    m1 = snap.mask(rule)
    assert snap.mask(Eligibility()) is m1
    with pytest.raises(ValueError):
        m1[0] = not m1[0]
    assert isinstance(m1, np.ndarray) and m1.dtype == bool
