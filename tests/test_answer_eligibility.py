"""No excluded version reaches an answer: not as a claim, a citation or a conflict side.

The search stages have their own property test (test_eligibility.py); these cover what the
answer adds after the search: the other-version lookup behind version-conflict warnings.
A superseded version may appear inside a conflict warning only (marked superseded, with its
date), a restricted, dated-out or other-model version never.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.reliability_checks import PUMP  # one manual in many versions, shared with the bench
from engine.config import Config, FilterConfig
from engine.pipeline import Library
from engine.render import render_markdown, render_text
from engine.search.eligibility import Eligibility
from hash_embedder import HashEmbedder

ANSWER_ALWAYS = {"answer.abstain_threshold": -1.0}


@pytest.fixture
def pump_library(tmp_path, write_library):
    root = write_library(tmp_path / "lib", {
        "pump-v1.md": PUMP.format(version="1", date="2024-01-10", status="superseded", extra="", torque=30),
        "pump-v2.md": PUMP.format(version="2", date="2025-03-01", status="active", extra="", torque=38),
        "pump-v3-restricted.md": PUMP.format(version="3", date="2026-02-01", status="active",
                                             extra="visibility: [secret-team]\n", torque=52),
    })
    cfg = Config().replace(**{"models.dir": str(tmp_path / "no-models"), **ANSWER_ALWAYS})
    lib = Library.open(root, cfg, tmp_path / "idx", embedder=HashEmbedder())
    lib.build()
    yield lib
    lib.close()


def _claim_text(answer) -> str:
    return " ".join(c.text for c in answer.claims)


def test_no_team_answers_the_public_version_only(pump_library):
    a = pump_library.ask("What torque for the impeller nut?")
    assert not a.abstained
    assert "38 N·m" in _claim_text(a)
    assert "52" not in _claim_text(a) and "30 N·m" not in _claim_text(a)
    cited = {c.path for c in a.citations}
    assert "pump-v3-restricted.md" not in cited
    sides = [s for c in a.conflicts for s in c.sides]
    assert all(s.version != "3" for s in sides)
    # the superseded value is shown inside the conflict warning, marked, with its date
    old = [s for s in sides if s.version == "1"]
    assert old and old[0].status == "superseded" and old[0].date.isoformat() == "2024-01-10"
    assert "30" in old[0].value
    by_n = {c.n: c for c in a.citations}
    assert by_n[old[0].citation].path == "pump-v1.md"
    assert all(by_n[cl.citation].path != "pump-v1.md" for cl in a.claims)


def test_the_team_sees_its_restricted_version(pump_library):
    a = pump_library.ask("What torque for the impeller nut?", filters=FilterConfig(teams=("secret-team",)))
    text = _claim_text(a) + " ".join(s.value for c in a.conflicts for s in c.sides)
    assert "52" in text


def test_dated_out_version_never_appears(pump_library):
    a = pump_library.ask("What torque for the impeller nut?",
                         filters=FilterConfig(teams=("secret-team",), as_of="2025-12-31"))
    assert "pump-v3-restricted.md" not in {c.path for c in a.citations}
    assert all(s.version != "3" for c in a.conflicts for s in c.sides)


# ---- the property: random versions, statuses, dates, visibility and filters ----------------

STATUSES = ("active", "superseded")
VISIBILITY = ((), ("red",))
DATES = ("2024-01-01", "2026-06-01")
COMBOS = list(itertools.product(STATUSES, VISIBILITY, DATES, (("X1",), ())))


@pytest.fixture(scope="module")
def versioned_library(tmp_path_factory):
    root = tmp_path_factory.mktemp("versions")
    for i, (status, vis, day, models) in enumerate(COMBOS):
        extra = f"visibility: [{', '.join(vis)}]\nmodels: [{', '.join(models)}]\n"
        text = PUMP.format(version=str(i + 1), date=day, status=status, extra=extra, torque=30 + i)
        (root / f"pump-{i:02d}.md").write_text(text, encoding="utf-8")
    cfg = Config().replace(**{"models.dir": str(root / "no-models"), **ANSWER_ALWAYS})
    lib = Library.open(root, cfg, tmp_path_factory.mktemp("idx"), embedder=HashEmbedder())
    lib.build()
    yield lib
    lib.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    include_superseded=st.booleans(),
    teams=st.lists(st.sampled_from(["red", "grey"]), max_size=2, unique=True),
    device_model=st.sampled_from(["", "X1", "Z9"]),
    as_of=st.sampled_from(["", "2025-01-01"]),
    question=st.sampled_from(["What torque for the impeller nut?", "impeller nut torque wrench"]),
)
def test_no_excluded_version_in_any_answer(versioned_library, include_superseded, teams, device_model,
                                           as_of, question):
    lib = versioned_library
    filters = FilterConfig(include_superseded=include_superseded, teams=tuple(teams),
                           device_model=device_model, as_of=as_of)
    rule = Eligibility.from_filters(filters)
    a = lib.ask(question, filters=filters)
    by_n = {c.n: c for c in a.citations}
    for claim in a.claims:
        assert rule.allows(lib.meta_of(by_n[claim.citation].path)), "a claim cites an excluded version"
    for cite in a.citations:
        assert rule.allows_as_conflict_side(lib.meta_of(cite.path)), "an excluded version is cited"
        if not rule.allows(lib.meta_of(cite.path)):  # shown for a conflict warning only
            assert any(s.citation == cite.n for c in a.conflicts for s in c.sides)
    for conflict in a.conflicts:
        for side in conflict.sides:
            meta = lib.meta_of(by_n[side.citation].path)
            assert rule.allows(meta) or side.status == "superseded"
    for cite in a.to_consult:
        assert rule.allows(lib.meta_of(cite.path))
    exported = render_markdown(a) + render_text(a)  # the work order and the CLI text
    for i in range(len(COMBOS)):
        if not rule.allows_as_conflict_side(lib.meta_of(f"pump-{i:02d}.md")):
            assert f"{30 + i} N·m" not in exported, "an excluded version's value is exported"
