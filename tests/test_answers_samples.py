"""Acceptance of cited answers on the bundled samples, with the real models (slow).

Builds an index of ``samples/`` once (real e5 embedder; the reranker when built) and
checks the answer targets of issue 5 over ``samples/questions.tsv``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import Config
from engine.eval.answers import AnswerEval, claims_outside_span
from engine.eval.retrieval import load_questions
from engine.render import render_text

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    from engine.pipeline import Library

    lib = Library.open(SAMPLES, Config(), tmp_path_factory.mktemp("index"))
    lib.build()
    yield lib
    lib.close()


@pytest.fixture(scope="module")
def answered(lib):
    questions = load_questions(SAMPLES / "questions.tsv")
    hook = AnswerEval(lib)
    answers = []
    for q in questions:
        a = lib.ask(q.text)
        answers.append((q, a))
        hook.outcomes.append(hook.score(q, a))
    return answers, hook.summary()[1]


def test_no_claim_outside_its_cited_span(lib, answered):
    answers, _ = answered
    assert sum(claims_outside_span(a, lib) for _q, a in answers) == 0


def test_citation_targets(answered):
    _answers, s = answered
    # with the learned answerability (fitted on train questions, never on these) the samples
    # measured cited .833 and abstention on answerable .091; the hand rule it replaced, fitted on
    # these very questions, had .924 / 0 (and .10 no-answer abstention on unseen manuals)
    assert s["abstain_rate_answerable"] <= 0.10, s
    assert s["cited_rate"] >= 0.80, s


def test_no_answer_questions_abstain(answered):
    _answers, s = answered
    assert s["abstain_rate_noanswer"] >= 0.80, s


def test_abstention_says_what_was_not_found(answered):
    answers, _ = answered
    a = next(a for q, a in answers if q.text == "How much does the Hydra-400 pump weigh?")
    assert a.abstained and not a.claims and a.to_consult
    assert any("no passage gives the weight asked for" in n for n in a.notes), a.notes


def test_battery_replacement_brings_the_sealing_condition(lib):
    a = lib.ask("How do I replace the battery of the Vela VB-12?")
    assert not a.abstained
    cited = {c.n: c for c in a.citations}
    steps = [c for c in a.claims if not c.is_condition
             and cited[c.citation].heading_path[-1:] == ("Replacing the battery",)]
    sealing = [c for c in a.claims if c.is_condition and "REF-G12" in c.text
               and cited[c.citation].heading_path[-1:] == ("Restoring water resistance",)]
    assert steps, render_text(a)
    assert sealing, render_text(a)


VERSION_QUESTIONS = [q for q in load_questions(SAMPLES / "questions.tsv") if q.family == "version"]
# question -> why; strict xfail, so a fix shows up as a failure to update this (none known now: the
# answerability model with the crowd gaps answers the moisture-absorber question it abstained on)
KNOWN_MISSES: dict[str, str] = {}


@pytest.mark.parametrize("question", [
    pytest.param(q.text, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[q.text]))
    if q.text in KNOWN_MISSES else q.text
    for q in VERSION_QUESTIONS
])
def test_version_question_warns_naming_both_versions(answered, question):
    answers, _ = answered
    a = next(a for q, a in answers if q.text == question)
    versions = {s.version for c in a.conflicts for s in c.sides}
    assert {"1.3", "2.0"} <= versions, render_text(a)
    out = render_text(a)
    assert "version 1.3" in out and "version 2.0" in out


def test_the_learned_answerability_is_in_force_with_the_built_models(lib, answered):
    # the shipped model was fitted for these exact model files (checksums): if a model build
    # changed them, answers would silently fall back to the hand rule
    assert lib.answerability_model() is not None, lib.answerability_status
    answers, s = answered
    assert all(a.answerability is not None for _q, a in answers)
    assert s["brier"] is not None and s["brier"] < 0.25, s


def test_the_battery_procedure_is_whole_in_order_with_the_screw_torque(lib):
    a = lib.ask("How do I replace the battery of the Vela VB-12?")
    out = render_text(a)
    steps = ["Remove the sensor from its bracket", "Undo the four cover screws", "Unplug the connector",
             "Remove the old VB-BAT-3 pack", "Check that the date printed", "Connect the new pack",
             "Wait until the LED flashes green"]
    at = [out.find(s) for s in steps]
    assert all(i >= 0 for i in at) and at == sorted(at), out
    assert "1.2 N·m" in out


def test_the_impeller_nut_answer_names_both_models_with_units(lib):
    out = render_text(lib.ask("What torque for the impeller nut?"))
    assert "HY-400 (manual): 38 N·m" in out and "HY-400S (this bulletin): 45 N·m" in out, out


def test_an_error_code_comes_with_its_remedy(lib):
    out = render_text(lib.ask("What should I do when the Haram HR-5 shows ERR_PV_OVERVOLT?"))
    assert "ERR_PV_OVERVOLT" in out and "모듈 차단기를 분리" in out, out


def test_the_oil_answer_starts_with_the_oil_and_its_quantity(lib):
    # asked in English of the French manual: the overview, which names the compressor most, does
    # not come first
    a = lib.ask("Which oil goes into the BR-20 and how much of it?")
    first, second = a.claims[:2]
    assert "BR-OIL 46" in first.text and "9 litres" in second.text, render_text(a)
    assert first.citation == second.citation


def test_the_carbon_monoxide_rule_is_marked_as_safety_and_shown_first(lib):
    a = lib.ask("Can I run the Falke FK-3 inside a garage if the door is left open?")
    assert a.claims[0].safety and "Kohlenmonoxid" in a.claims[0].text, render_text(a)
    assert "SAFETY:" in render_text(a).splitlines()[0]
