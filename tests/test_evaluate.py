"""Golden-set evaluation and loss diagnosis."""

from __future__ import annotations

import json

import pytest

from engine.eval.retrieval import evaluate, format_report, load_questions
from engine.search.diagnose import Target, classify, diagnose, markdown_section, parse_target
from engine.types import Ranked, Stage, StageStatus, Trace

CORPUS = {
    "fr/pompes.md": "# Pompes\n\n## Amorçage\n\nOuvrir la purge et remplir le corps de pompe avant le premier "
                    "démarrage.\n\n## Joints\n\nRemplacer la garniture mécanique toutes les 4000 heures.\n",
    "fr/vannes.md": "# Vannes\n\n## Couple\n\nSerrer les boulons du chapeau à 45 Nm en croix.\n",
    "zh/sensor.md": "# 传感器\n\n## 校准\n\n在环境压力下将传感器归零，然后施加10巴参考压力。\n",
}
TSV = (
    "# comment line\n"
    "garniture mécanique heures\tfr/pompes.md:7\tfr\n"
    "boulons du chapeau couple\tfr/vannes.md:3\tfr\n"
    "传感器归零\tzh/sensor.md:3\tzh-hans\n"
    "question sans réponse\t-\tfr\n"
    "fichier absent\tfr/absent.md:3|fr/pompes.md:99\tfr\n"
)


@pytest.fixture
def corpus(tmp_path, open_library, write_library):
    root = write_library(tmp_path / "corpus", CORPUS)
    (tmp_path / "q.tsv").write_text(TSV, encoding="utf-8")
    lib = open_library(root)
    lib.build()
    return lib, tmp_path / "q.tsv"


def test_load_questions(corpus):
    qs = load_questions(corpus[1])
    assert len(qs) == 5 and qs[0].targets == (Target("fr/pompes.md", 7),)
    assert qs[3].targets == () and qs[2].family == "zh-hans"
    assert len(load_questions(corpus[1], limit=2)) == 2


def test_parse_target():
    assert parse_target("a/b.md:12") == Target("a/b.md", line=12)
    assert parse_target("x.pdf:p3") == Target("x.pdf", page=3)
    with pytest.raises(ValueError):
        parse_target("nocolon")


def test_markdown_section_follows_the_hit_rule():
    lines = ["# T", "", "## A", "", "text", "### A.1", "more", "## B", "```", "## not a heading", "```", "end"]
    assert markdown_section(lines, 3) == (3, 7)  # ### A.1 is inside A
    assert markdown_section(lines, 6) == (6, 7)
    assert markdown_section(lines, 8) == (8, 12)  # a heading inside a code fence does not end B
    assert markdown_section(lines, 5) is None


def test_evaluate_shape_and_numbers(corpus):
    lib, tsv = corpus
    report = evaluate(lib, load_questions(tsv))
    assert report["questions"] == 5 and report["scored"] == 4 and report["no_answer"] == 1
    assert set(report["modes"]) == {"lexical", "vector", "hybrid", "full"}
    for mode, entry in report["modes"].items():
        assert set(entry) >= {"recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "by_family"}
        assert set(entry["by_family"]) == {"fr", "zh-hans"}
        # the absent file can never be found: at most 3 of 4
        assert entry["recall@10"] <= 0.75
    lex = report["modes"]["lexical"]
    assert lex["recall@1"] == 0.75 and lex["by_family"]["zh-hans"]["recall@1"] == 1.0
    assert report["losses"]["library"] == 1
    assert sum(report["losses"][k] for k in ("library", "index", "eligibility", "retrieval", "fused",
                                            "rerank", "final_window", "context")) \
        == round(4 * (1 - report["modes"]["full"]["recall@10"]))
    assert set(report["timings_ms"]) >= {"lexical", "vector", "fused", "rerank", "context", "total"}
    json.dumps(report)  # JSON-able
    text = format_report(report)
    assert "lexical" in text and "R@1" in text


def test_evaluate_subset_of_modes_and_hooks(corpus):
    lib, tsv = corpus
    seen = []

    class Hook:
        def observe(self, q, result):
            seen.append((q.text, len(result.hits)))

        def summary(self):
            return "answers", {"n": len(seen)}

    report = evaluate(lib, load_questions(tsv), modes=["lexical"])
    assert set(report["modes"]) == {"lexical"} and report["losses"] == {}
    report = evaluate(lib, load_questions(tsv), modes=["full"], hooks=[Hook()])
    assert report["answers"] == {"n": 5}


def test_diagnose_verdicts(corpus):
    lib, _ = corpus
    assert diagnose(lib, "garniture mécanique", "fr/pompes.md:7").verdict.startswith("present at rank")
    assert diagnose(lib, "garniture", "fr/absent.md:3").verdict == "not in the library"
    (lib.root / "fr/notes.md").write_text("# Notes\n\n## A\n\ntext\n", encoding="utf-8")
    dg = diagnose(lib, "garniture", "fr/notes.md:3")
    assert dg.verdict == "not indexed" and "fieldqa index" in dg.detail
    dg = diagnose(lib, "zzzz qqqq", "fr/vannes.md:3", mode="lexical")
    assert dg.verdict == "not retrieved" and "missed by lexical at depth 50" in dg.detail


def test_diagnose_reports_skipped_files(tmp_path, open_library, write_library, fast_config):
    root = write_library(tmp_path / "c", {"ok.md": "# Ok\n\n## A\n\ntext here\n",
                                          "big.md": "# Big\n\n## A\n\n" + "word " * 400 + "\n"})
    lib = open_library(root, config=fast_config.replace(**{"chunking.max_file_mb": 0.001}))  # ~1 KB
    lib.build()
    assert {i.path for i in lib.issues() if i.severity == "skipped"} == {"big.md"}
    dg = diagnose(lib, "text", "big.md:3")
    assert dg.verdict == "not indexed" and dg.detail.startswith("big.md: ")


def _trace(*stages: tuple[str, list[str], int, str]) -> Trace:
    return Trace("q", 10, 10, tuple(Stage(n, tuple(Ranked(c, i, 1.0 / i) for i, c in enumerate(ids, 1)), w, 0.0,
                                           note, StageStatus.DEGRADED if note.startswith("degraded")
                                           else StageStatus.RAN) for n, ids, w, note in stages))


def test_classify_each_stage():
    gold = {"g"}
    full = lambda lex, vec, fu, rr, ctx, note="": _trace(  # noqa: E731
        ("lexical", lex, 50, ""), ("vector", vec, 50, ""), ("fused", fu, 50, ""), ("rerank", rr, 3, note),
        ("context", ctx, 2, ""))
    assert classify(full(["g"], [], ["g"], ["g"], ["g"]), gold, gold).verdict == "present at rank 1"
    d = classify(full(["g"], [], ["g"], ["g"], ["g"]), gold, gold)
    assert d.branch_misses == ("vector",) and "missed by vector at depth 50" in d.detail
    assert classify(full([], [], [], [], []), gold, gold).verdict == "not retrieved"
    assert classify(full(["g"], [], [], [], []), gold, gold).verdict == "cut by the fused window"
    assert classify(full(["g"], [], ["a", "b", "c", "g"], ["a", "b", "c"], ["a", "b"]), gold, gold).stage == "fused"
    assert classify(full(["g"], ["g"], ["g"], ["a", "b", "g"], ["a", "b"]), gold, gold).verdict \
        == "demoted by the reranker"
    assert classify(full(["g"], ["g"], ["g"], ["a", "b", "g"], ["a", "b"], "degraded: x"), gold, gold).verdict \
        == "cut by the final window"
    assert classify(full(["g"], ["g"], ["g"], ["g", "a"], ["a"]), gold, gold).verdict \
        == "dropped by context assembly"


def test_joint_coverage_needs_every_target_of_a_group():
    from engine.eval.retrieval import joint_rank

    stage = Stage("fused", tuple(Ranked(c, i, 1.0) for i, c in enumerate(["a", "x", "b", "y", "c"], 1)), 50, 0.0)
    assert joint_rank(stage, [[{"a"}], [{"b"}]]) == 1  # either target answers: the best one
    assert joint_rank(stage, [[{"a"}, {"b"}]]) == 3  # both needed: found once the second is
    assert joint_rank(stage, [[{"a"}, {"zz"}]]) is None  # one never found: the group is not
    assert joint_rank(stage, [[{"a"}, {"c"}], [{"b"}]]) == 3  # the best alternative


def test_ampersand_targets_and_misses_in_the_report(tmp_path, write_library, open_library):
    from engine.eval.retrieval import evaluate, format_misses, load_questions

    root = write_library(tmp_path / "lib", {
        "a.md": "# Pump\n\n## Seal\n\nReplace the seal every 500 h.\n\n## Oil\n\nUse BR-OIL 46 oil.\n"})
    lib = open_library(root)
    lib.build()
    qf = tmp_path / "q.tsv"
    qf.write_text("seal and oil\ta.md:3&a.md:7\tjoint\nseal\ta.md:3\tone\nwhere is the moon\t-\tnone\n")
    qs = load_questions(qf)
    assert len(qs[0].alternatives()) == 1 and len(qs[0].alternatives()[0]) == 2
    assert qs[1].alternatives() == ((qs[1].targets[0],),)
    report = evaluate(lib, qs, modes=("lexical", "vector", "hybrid"))
    assert report["pool_coverage"]["all"]["coverage"] == 1.0
    hybrid = report["modes"]["hybrid"]
    assert hybrid["by_family"]["joint"]["recall@1"] == 0.0 and hybrid["by_family"]["joint"]["recall@3"] == 1.0
    assert [m["family"] for m in report["misses"]] == ["joint"] and report["misses"][0]["rank"] == 2
    assert "rank 2" in format_misses(report)


def test_claims_that_announce_what_follows_are_counted_open_when_nothing_follows():
    from datetime import date

    from engine.eval.answers import lead_in_counts as lead_ins
    from engine.types import Answer, Citation, Claim

    def cit(n, path):
        return Citation(n, f"c{n}", "d", "T", "1", date(2025, 1, 1), "active", ("S",), path, 1, 9)

    lead = Claim("Issue the following command:", 1, 0, 28)
    shown = Answer("q", (lead, Claim("SET_X ACCEL=500", 1, 30, 45, code=True)), (cit(1, "a.md"),))
    elsewhere = Answer("q", (lead, Claim("Another manual says so.", 2, 0, 23)), (cit(1, "a.md"), cit(2, "b.md")))
    last = Answer("q", (Claim("Fine.", 1, 0, 5), lead), (cit(1, "a.md"),))
    assert lead_ins(shown) == (1, 0)
    assert lead_ins(elsewhere) == (1, 1)
    assert lead_ins(last) == (1, 1)
    assert lead_ins(Answer("q", (Claim("No colon here.", 1, 0, 14),), (cit(1, "a.md"),))) == (0, 0)

    class Texts:  # the document text, where the library has it
        def __init__(self, text):
            self.text = text

        def document_text(self, path):
            return self.text

    doc = ("Remove it as follows:\n\n`X REMOVE=1`\n\nAny other one the same way.\n\nWire it so:\n\n| Pin | Name |\n"
           "|:--:|---|\n| 1 | VCC |\n\nRun:\n```bash\nmake\n```\n\nThen:\n\n.. code-block:: bash\n\n    make flash\n")
    at = doc.index
    skipped = Answer("q", (Claim("Remove it as follows:", 1, 0, 21),
                           Claim("Any other one the same way.", 1, at("Any"), at("Any") + 27)), (cit(1, "a.md"),))
    assert lead_ins(skipped) == (1, 0) and lead_ins(skipped, Texts(doc)) == (1, 1)  # the command between is missed
    table = Answer("q", (Claim("Wire it so:", 1, at("Wire"), at("Wire") + 11),
                         Claim("| 1 | VCC |", 1, at("| 1"), at("| 1") + 11, header="| Pin | Name |"),
                         Claim("Run:", 1, at("Run"), at("Run") + 4),
                         Claim("make", 1, at("make"), at("make") + 4, code=True),
                         Claim("Then:", 1, at("Then"), at("Then") + 5),
                         Claim("make flash", 1, at("make flash"), at("make flash") + 10, code=True)), (cit(1, "a.md"),))
    assert lead_ins(table, Texts(doc)) == (3, 0)  # a header row, a rule, a fence, a directive: nothing missed


def test_claims_per_answer_and_their_share_on_gold_count_answered_answerable_questions_only():
    from engine.eval.answers import AnswerOutcome, summarise

    outs = [AnswerOutcome("f", True, False, True, 0, claims=4, gold_claims=3),
            AnswerOutcome("f", True, False, False, 0, claims=2, gold_claims=0),
            AnswerOutcome("f", True, True, False, 0),  # abstained: no claims, not counted
            AnswerOutcome("-", False, False, False, 0, claims=5)]  # no-answer: not counted
    s = summarise(outs, 0.5)
    assert s["claims_per_answer"] == 3.0 and s["gold_claim_share"] == 0.5
    assert s["by_family"]["-"]["claims_per_answer"] is None
