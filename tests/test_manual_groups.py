"""models/reranker/manual_groups.py: training groups for the reranker from a manuals question set,
built through the real pipeline (hash embedder, no torch)."""

from __future__ import annotations

from engine.eval.retrieval import load_questions
from model_scripts import load_script

mg = load_script("reranker/manual_groups.py", "manual_groups")

DOCS = {
    "pump.md": "# Pump\n\n## Seals\n\nReplace the mechanical seal every 4000 hours.\n\n"
               "## Priming\n\nFill the casing with water before the first start.\n",
    "valve.md": "# Valve\n\n## Torque\n\nTighten the bonnet bolts to 45 Nm.\n",
}


def test_groups_hold_the_gold_passages_and_hard_negatives(tmp_path, open_library, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    lib = open_library(root)
    lib.build()
    qfile = tmp_path / "q.tsv"
    qfile.write_text("how often is the mechanical seal replaced\tpump.md:3\ten\n"
                     "bonnet bolt torque\tvalve.md:3\texact\n"
                     "what colour is the pump\t-\tnoanswer\n", encoding="utf-8")
    groups = list(mg.groups(lib, load_questions(qfile), pool=5, holdout_every=1))
    assert [g["question"] for g in groups] == ["how often is the mechanical seal replaced", "bonnet bolt torque"]
    for g, needle in zip(groups, ("4000 hours", "45 Nm")):
        assert g["gold"] and all(needle in g["passages"][i] for i in g["gold"])
        assert any(needle not in p for p in g["passages"])  # negatives from the same search
        assert g["held_out"]  # every file is held out when every = 1
    assert not any(g["held_out"] for g in mg.groups(lib, load_questions(qfile), pool=5, holdout_every=10**9))
