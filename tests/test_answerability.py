"""The learned answerability model: its file format, its features and how answers use it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.answer.answerability import (
    BASE_FEATURES, CE_FEATURES, AnswerabilityModel, Variant, features, load_model,
)
from engine.config import Config
from tests.test_answer import CONFIG, ask, library


def _variant(names, weights, threshold=0.5, bias=0.0) -> Variant:
    n = len(names)
    return Variant(tuple(names), np.zeros(n), np.ones(n), np.asarray(weights, float), bias, threshold)


def _model(base: Variant, with_ce: Variant | None = None) -> AnswerabilityModel:
    return AnswerabilityModel(base, with_ce, embedder_checksum="emb", reranker_checksum="ce", source="test")


def test_probability_is_a_logistic_of_the_standardised_features():
    v = Variant(("unit_cos", "lex_cover_top"), np.array([0.8, 0.2]), np.array([0.1, 0.5]),
                np.array([2.0, 1.0]), -0.5, 0.4)
    p = v.probability({"unit_cos": 0.9, "lex_cover_top": 0.7})
    z = 2.0 * (0.9 - 0.8) / 0.1 + 1.0 * (0.7 - 0.2) / 0.5 - 0.5
    assert p == pytest.approx(1 / (1 + np.exp(-z)))
    assert v.probability({"unit_cos": 0.95, "lex_cover_top": 0.7}) > p  # monotone in a positive weight


def test_model_round_trips_through_json_and_rejects_damage(tmp_path):
    base = _variant(BASE_FEATURES, np.linspace(-1, 1, len(BASE_FEATURES)), 0.3)
    ce = _variant(BASE_FEATURES + CE_FEATURES, np.ones(len(BASE_FEATURES) + len(CE_FEATURES)), 0.6)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(_model(base, ce).to_json()))
    back = load_model(path)
    assert back.base.names == base.names and back.base.threshold == 0.3
    assert np.allclose(back.with_ce.weights, ce.weights)
    bad = _model(base, ce).to_json()
    bad["base"]["weights"] = [1.0]
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="do not match"):
        load_model(path)
    bad = _model(base).to_json()
    bad["base"]["features"][0] = "made_up"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="unknown features"):
        load_model(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        load_model(path)


def test_the_cross_encoder_variant_needs_the_same_cross_encoder():
    base = _variant(["unit_cos"], [1.0])
    ce = _variant(["unit_cos", "ce_top"], [1.0, 1.0])
    m = _model(base, ce)
    feats = {"unit_cos": 0.9, "ce_top": 3.0}
    assert m.variant(feats, "ce") is ce
    assert m.variant(feats, "another") is base
    assert m.variant({"unit_cos": 0.9}, "ce") is base
    assert _model(base).variant(feats, "ce") is base


class _WithModel:
    """A test library that carries a fitted model (its embedder is the test one)."""

    def __init__(self, lib, model):
        self._lib, self._model = lib, model

    def __getattr__(self, name):
        return getattr(self._lib, name)

    def answerability_model(self):
        return self._model

    def reranker_checksum(self):
        return None


def test_answers_follow_the_learned_verdict_and_report_its_probability():
    lib = library()
    q = "What torque for the lid screws of the KX-7 enclosure?"
    default = Config()  # abstain_threshold 0.0: the learned model decides when there is one
    sure = _WithModel(lib, _model(_variant(["unit_cos"], [0.0], threshold=0.4, bias=3.0)))
    a = ask(sure, q, config=default, k=1)
    assert not a.abstained and a.answerability == pytest.approx(1 / (1 + np.exp(-3.0)))
    assert any("answerability" in n for n in a.notes)
    doubtful = _WithModel(lib, _model(_variant(["unit_cos"], [0.0], threshold=0.4, bias=-3.0)))
    a = ask(doubtful, q, config=default, k=1)
    assert a.abstained and not a.claims and a.to_consult
    assert any("do not answer it" in n for n in a.notes)
    # an explicit hand threshold in the config wins over the model
    a = ask(doubtful, q, config=CONFIG, k=1)
    assert not a.abstained and a.answerability is None


def test_without_a_model_the_hand_rule_decides():
    a = ask(library(), "What torque for the lid screws of the KX-7 enclosure?", config=Config(), k=1)
    assert a.answerability is None


def test_features_are_finite_and_named(open_library, write_library, tmp_path):
    from engine.answer import assess, evidence_features

    root = write_library(tmp_path / "lib", {"a.md": "# Pump\n\n## Seal\n\nReplace the seal every 500 h.\n"})
    lib = open_library(root)
    lib.build()
    result = lib.search("How often replace the seal?")
    a = assess(result.question, result, lib, lib.config)
    f = evidence_features(result.question, result, lib, a)
    assert set(BASE_FEATURES) <= set(f) and all(np.isfinite(v) for v in f.values())
    assert f["lex_cover_top"] > 0 and f["lexical_found"] > 0
    # no cross-encoder in this library: no cross-encoder features, the base variant applies
    assert not set(CE_FEATURES) & set(f)
    assert lib.answerability_model() is None and "hand rule" in lib.answerability_status
    empty = features("x", lib.search("zzzz qqqq", mode="lexical"), a, None)
    assert empty["lexical_found"] == 0.0
    assert f["name_unknown"] == 0.0
    named = lib.search("How often replace the seal of the Grundfos CR pump?")
    assert named.trace.unknown_names == ("Grundfos", "CR")
    assert evidence_features(named.question, named, lib, assess(named.question, named, lib, lib.config))[
        "name_unknown"] == 1.0


def test_the_gaps_measure_the_best_passage_and_unit_against_the_crowd_of_the_vector_list():
    from engine.answer.answerability import CROWD_FROM
    from engine.answer.scoring import Assessment
    from engine.types import Ranked, SearchResult, Stage, Trace

    def result(scores):
        vec = Stage("vector", tuple(Ranked(f"c{i}", i + 1, s) for i, s in enumerate(scores)), 50, 0.0)
        return SearchResult("q", (), Trace("q", len(scores), len(scores), (vec,)))

    a = Assessment("q", (), 0.0, 0.95, (), None)
    scores = [0.93, 0.90] + [0.88] * (CROWD_FROM - 3) + [0.80, 0.70]  # the crowd: ranks 10 and 11
    f = features("q", result(scores), a, None)
    assert f["passage_gap"] == pytest.approx(0.93 - 0.75) and f["unit_gap"] == pytest.approx(0.95 - 0.75)
    # a library with fewer passages than the crowd starts: the mean of the whole list
    f = features("q", result([0.9, 0.8]), a, None)
    assert f["passage_gap"] == pytest.approx(0.05) and f["unit_gap"] == pytest.approx(0.1)
    assert features("q", result([]), a, None)["unit_gap"] == 0.0


def test_lexical_features_count_for_a_same_language_question_only(open_library, write_library, tmp_path):
    from engine.answer import assess, evidence_features
    from engine.answer.answerability import LEXICAL_FEATURES

    root = write_library(tmp_path / "lib", {"a.md": "---\nlanguage: en\n---\n# Pump\n\n## Seal\n\n"
                                                    "Replace the seal every 500 hours of pump service. Code ERR_SEAL_42 means "
                                                    "the seal leaks.\n"})
    lib = open_library(root)
    lib.build()

    def feats(q):
        result = lib.search(q)
        return evidence_features(q, result, lib, assess(q, result, lib, lib.config))

    same = feats("How often must the pump seal be replaced?")
    other = feats("Wie oft muss die Dichtung der Pumpe (pump seal) ersetzt werden?")  # German, English words inside
    assert same["cross_lingual"] == 0.0 and same["lex_cover_top"] > 0
    assert other["cross_lingual"] == 1.0
    assert all(other[n] == 0.0 for n in LEXICAL_FEATURES), {n: other[n] for n in LEXICAL_FEATURES}
    assert other["lex_cover_top"] == 0.0  # its English words do not count: no code in it
    code = feats("Was bedeutet der Fehlercode ERR_SEAL_42 an der Pumpe und was ist dann zu tun?")  # any language
    assert code["cross_lingual"] == 1.0 and code["lex_cover_top"] > 0.0


def test_the_cross_encoder_runs_for_answerability_only_when_the_rerank_stage_did_or_when_asked():
    lib = library()
    q = "What torque for the lid screws of the KX-7 enclosure?"
    calls = []

    class WithCE(_WithModel):
        def reranker_checksum(self):
            calls.append("checksum")  # loading the cross-encoder is a cost too
            return "ce"

        def cross_scores(self, question, chunks):
            calls.append(len(chunks))
            return np.full(len(chunks), 2.0)

    base = _variant(["unit_cos"], [0.0], threshold=0.4, bias=1.0)
    ce = _variant(["unit_cos", "ce_top"], [0.0, 1.0], threshold=0.4, bias=0.0)
    both = WithCE(lib, _model(base, ce))
    a = ask(both, q, config=Config(), k=1)  # rerank off (the default): the base variant, no cross-encoder
    assert calls == [] and any("; base)" in n for n in a.notes), a.notes
    for cfg in (Config().replace(**{"retrieval.rerank": True}),
                Config().replace(**{"answer.answerability_cross_encoder": True})):
        calls.clear()
        a = ask(both, q, config=cfg, k=1)
        assert calls and any("with cross-encoder" in n for n in a.notes), a.notes


def test_an_answer_says_which_names_no_document_mentions(open_library, write_library, tmp_path):
    from engine.answer import compose_answer

    root = write_library(tmp_path / "lib", {"a.md": "# Pump\n\n## Seal\n\nReplace the seal every 500 h.\n"})
    lib = open_library(root)
    lib.build()
    q = "How often replace the seal of the Grundfos pump?"
    for bias, abstained in ((-3.0, True), (3.0, False)):
        model = _WithModel(lib, _model(_variant(["unit_cos"], [0.0], threshold=0.5, bias=bias)))
        a = compose_answer(q, lib.search(q), model, Config())
        assert a.abstained is abstained
        assert any("no document searched mentions Grundfos" in n for n in a.notes), a.notes
    a = compose_answer("How often replace the seal?", lib.search("How often replace the seal?"), model, Config())
    assert not any("mentions" in n for n in a.notes)


def test_the_question_prior_reads_the_wording_in_any_script_and_round_trips(tmp_path):
    from engine.answer.question_prior import DIM, QuestionPrior, question_indices, question_matrix

    q = "Combien coûte la carte 主板 ?"
    idx = question_indices(q)
    assert np.array_equal(idx, question_indices(q)) and len(set(idx.tolist())) == len(idx)
    assert set(question_indices("主板")) <= set(idx) and len(question_indices("主板")) > 0  # CJK by its n-grams
    row = question_matrix([q])[0]
    assert np.linalg.norm(row) == pytest.approx(1.0) and np.count_nonzero(row) == len(idx)
    weights = np.zeros(DIM)
    weights[question_indices("cost")] = -1.0
    prior = QuestionPrior(weights, 0.5)
    assert prior.logit("what does it cost?") < prior.logit("why?") == pytest.approx(0.5)  # no slot of "cost" in it
    base = _variant(BASE_FEATURES + ("question_prior",), np.ones(len(BASE_FEATURES) + 1))
    m = AnswerabilityModel(base, None, "emb", "ce", "test", prior)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(m.to_json()))
    back = load_model(path)
    assert back.prior.logit("what does it cost?") == pytest.approx(prior.logit("what does it cost?"))
    feats = back.with_prior("what does it cost?", {"unit_cos": 0.9})
    assert feats == {"unit_cos": 0.9, "question_prior": pytest.approx(prior.logit("what does it cost?"))}
    damaged = m.to_json()
    damaged["question_prior"] = None  # a variant that reads the prior needs it
    path.write_text(json.dumps(damaged))
    with pytest.raises(ValueError, match="no question prior"):
        load_model(path)


def test_the_fitted_question_prior_separates_its_training_questions_and_is_scored_out_of_set():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "ans_fit", Path(__file__).resolve().parents[1] / "models" / "answerability" / "fit.py")
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    rows = []
    for s, (yes, no) in {"klipper-manuals": ("why does my bed stop heating", "how much does the board cost"),
                         "px4-docs": ("why does my drone drift", "how much does the radio cost")}.items():
        for k in range(4):
            rows.append({"set": s, "kind": "answerable", "label": 1, "question": f"{yes} {k}", "features": {}})
            rows.append({"set": s, "kind": "noanswer", "label": 0, "question": f"{no} {k}", "features": {}})
    prior = fit.fit_prior(rows, {"klipper-manuals", "px4-docs"})
    assert prior.logit("why does my printer stop") > prior.logit("how much does the fan cost")
    scored, _every, _vector = fit.with_priors(rows)
    # a row is scored by the prior fitted without its own set: the same question gets another value
    # than the prior of every set gives it
    r = scored[0]
    assert r["features"]["question_prior"] != pytest.approx(prior.logit(r["question"]))
    only_px4 = fit.fit_prior(rows, {"px4-docs"})
    assert r["features"]["question_prior"] == pytest.approx(only_px4.logit(r["question"]))


def test_a_damaged_question_prior_is_refused_with_its_reason(tmp_path):
    from engine.answer.question_prior import QuestionPrior

    good = QuestionPrior(np.linspace(-1, 1, 64), 0.1).to_json()
    assert QuestionPrior.from_json(good).logit("x") == pytest.approx(QuestionPrior.from_json(good).logit("x"))
    for damage, reason in (({"weights_f32_base64": "not base64!"}, "not base64"), ({"dim": 65}, "do not match"),
                           ({"weights_f32_base64": __import__("base64").b64encode(
                               np.full(64, np.nan, "<f4").tobytes()).decode()}, "not all finite"),
                           ({"ngrams": [0]}, "n-gram")):
        with pytest.raises(ValueError, match=reason):
            QuestionPrior.from_json({**good, **damage})


def test_the_shipped_model_reads_the_question_prior_and_matches_its_manifest():
    import hashlib
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "models" / "answerability"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    path = folder / "answerability.json"
    assert manifest["files"]["answerability.json"] == hashlib.sha256(path.read_bytes()).hexdigest()
    m = load_model(path)
    assert m.prior is not None and m.vector_prior is not None
    assert all({"question_prior", "question_vector_prior"} <= set(v.names) for v in (m.base, m.with_ce) if v is not None)
    assert np.isfinite(m.prior.logit("Wie viel kostet das Netzteil?"))
    assert len(m.vector_prior.mean) == 384 and np.isfinite(m.vector_prior.logit(np.full(384, 384 ** -0.5)))


def _vector_prior(direction, bias=0.0):
    from engine.answer.question_prior import VectorPrior

    d = np.asarray(direction, float)
    return VectorPrior(np.zeros(len(d)), np.ones(len(d)), d, bias)


def test_the_question_vector_prior_reads_the_query_vector_and_round_trips(tmp_path):
    vp = _vector_prior([1.0, -2.0, 0.5], 0.25)
    assert vp.logit(np.array([1.0, 0.0, 2.0])) == pytest.approx(1.0 + 1.0 + 0.25)
    with pytest.raises(ValueError, match="4 dimensions, expected 3"):
        vp.logit(np.ones(4))
    base = _variant(("unit_cos", "question_vector_prior"), [0.0, 1.0])
    m = AnswerabilityModel(base, None, "emb", "ce", "test", None, vp)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(m.to_json()))
    back = load_model(path)
    assert np.allclose(back.vector_prior.weights, vp.weights) and back.vector_prior.bias == pytest.approx(0.25)
    feats = back.with_prior("q", {"unit_cos": 0.9}, np.array([0.0, 1.0, 0.0]))
    assert feats == {"unit_cos": 0.9, "question_vector_prior": pytest.approx(-2.0 + 0.25)}
    with pytest.raises(ValueError, match="needs the question's vector"):
        back.with_prior("q", {"unit_cos": 0.9})
    damaged = m.to_json()
    damaged["question_vector_prior"] = None  # a variant that reads it needs it
    path.write_text(json.dumps(damaged))
    with pytest.raises(ValueError, match="no question vector prior"):
        load_model(path)
    good = vp.to_json()
    for damage, reason in (({"dim": 4}, "do not match"), ({"scale_f32_base64": good["mean_f32_base64"]}, "positive"),
                           ({"weights_f32_base64": "%%"}, "not base64")):
        with pytest.raises(ValueError, match=reason):
            type(vp).from_json({**good, **damage})


def test_answers_read_the_question_vector_prior_from_the_search_query_vector():
    lib = library()
    q = "What torque for the lid screws of the KX-7 enclosure?"
    qvec = np.asarray(lib.embedder.embed_queries([q]), dtype=np.float64)[0]
    # the model's only input is the vector prior: toward the question's vector answers, away abstains
    for sign, abstained in ((1.0, False), (-1.0, True)):
        vp = _vector_prior(sign * 50.0 * qvec)
        model = AnswerabilityModel(_variant(["question_vector_prior"], [1.0], threshold=0.5), None,
                                   "emb", "ce", "test", None, vp)
        a = ask(_WithModel(lib, model), q, config=Config(), k=1)
        assert a.abstained is abstained
        assert a.answerability == pytest.approx(1 / (1 + np.exp(-sign * 50.0 * float(qvec @ qvec))), abs=1e-6)


def test_the_fitted_question_vector_prior_points_from_no_answer_to_answerable_and_is_scored_out_of_set():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "ans_fit", Path(__file__).resolve().parents[1] / "models" / "answerability" / "fit.py")
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    rng = np.random.default_rng(3)
    yes_dir, rows, vectors = np.eye(8)[0], [], {}
    for s in ("klipper-manuals", "px4-docs", "wled-docs"):
        for k in range(6):
            for kind, label, sign in (("answerable", 1, 1.0), ("noanswer", 0, -1.0)):
                q = f"{s} {kind} {k}"
                vectors[q] = sign * yes_dir + 0.3 * rng.standard_normal(8)
                rows.append({"set": s, "kind": kind, "label": label, "question": q, "features": {}})
    vp = fit.fit_vector_prior(rows, {"klipper-manuals", "px4-docs"}, vectors)
    assert vp.logit(yes_dir) > vp.logit(-yes_dir)
    scored, _prior, every = fit.with_priors(rows, vectors)
    r = next(r for r in scored if r["set"] == "wled-docs")
    only_others = fit.fit_vector_prior(rows, {"klipper-manuals", "px4-docs"}, vectors)
    assert r["features"]["question_vector_prior"] == pytest.approx(only_others.logit(vectors[r["question"]]))
    assert r["features"]["question_vector_prior"] != pytest.approx(every.logit(vectors[r["question"]]))
