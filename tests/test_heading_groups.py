"""models/reranker/heading_groups.py: training groups for the reranker from manuals without
questions (heading -> section), built through the real pipeline (hash embedder, no torch)."""

from __future__ import annotations

from model_scripts import load_script

hg = load_script("reranker/heading_groups.py", "heading_groups")

DOCS = {
    "pump.md": "# Pump manual\n\n## Mechanical seal replacement\n\nReplace the mechanical seal every 4000 hours "
               "of running, with the pump drained and isolated.\n\n### Seal kit contents\n\nThe kit holds two "
               "faces, three O-rings and a spring.\n\n## Notes\n\nKeep this manual with the pump at all times.\n\n"
               "## Priming before first start\n\nFill the casing with clean water before the first start; a dry "
               "run destroys the seal faces within seconds.\n",
    "valve.md": "# Valve manual\n\n## Bonnet bolt torque\n\nTighten the bonnet bolts crosswise to 45 Nm in "
                "three passes, then check again after the first heat cycle.\n",
}


def test_a_heading_asks_for_its_section_without_being_copied_into_it(tmp_path, open_library, write_library):
    lib = open_library(write_library(tmp_path / "lib", DOCS))
    lib.build()
    groups = {g["question"]: g for g in hg.groups(lib, pool=10, min_terms=2, min_chars=90)}
    # "Notes" (one term) and the short kit section (under 90 characters) ask nothing a group can teach
    assert set(groups) == {"Mechanical seal replacement", "Priming before first start", "Bonnet bolt torque"}
    for question, needle in (("Mechanical seal replacement", "4000 hours"), ("Bonnet bolt torque", "45 Nm")):
        g = groups[question]
        assert g["gold"] and all(needle in g["passages"][i] for i in g["gold"])
        assert any(needle not in p for p in g["passages"])  # hard negatives from the same search
        assert not any(question in p for p in g["passages"])  # the heading is never the answer's text
        assert not g["held_out"]
    # the subsection (kit contents) answers part of the seal section: left out of its group
    assert not any("O-rings" in p for p in groups["Mechanical seal replacement"]["passages"])
    # every candidate loses its own deepest heading alike, the parents stay
    assert any(p.startswith("Pump manual") for p in groups["Priming before first start"]["passages"])


def test_limit_samples_sections_reproducibly(tmp_path, open_library, write_library):
    lib = open_library(write_library(tmp_path / "lib", DOCS))
    lib.build()
    a = [g["question"] for g in hg.groups(lib, pool=5, min_chars=40, limit=2, seed=3)]
    assert len(a) == 2 and a == [g["question"] for g in hg.groups(lib, pool=5, min_chars=40, limit=2, seed=3)]
