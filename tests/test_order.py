"""The learned passage order (engine.search.order): its file, its stage in the trace, what the
diagnosis says of it, and the fit of models/passage_order/fit.py on planted data."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.search.devices import named_products
from engine.search.diagnose import classify
from engine.search.order import ORDER_FEATURES, OrderModel, candidate_features, load_order_model
from engine.types import Chunk
from hash_embedder import TunedHash
from model_scripts import load_script

order_fit = load_script("passage_order/fit.py", "order_fit")

DOCS = {  # every passage names "pump"; only one says how to prime it, in words the question uses
    "a.md": "# Pump A\n\n## General\n\nThe pump A is a pump for clean water pump duty, a pump among pumps.\n",
    "b.md": "# Pump B\n\n## General\n\nThe pump B is a pump for pump rooms, pump pump pump.\n",
    "c.md": "# Pump C\n\n## Priming\n\nTo prime the casing, open the bleed screw and fill it with water.\n",
}


def _model(weights, checksum="test-hash-v1") -> OrderModel:
    n = len(ORDER_FEATURES)
    return OrderModel(ORDER_FEATURES, np.zeros(n), np.ones(n), np.asarray(weights, float), 5.0, checksum, "test")


def _write(path: Path, model: OrderModel) -> Path:
    path.write_text(json.dumps(model.to_json()))
    return path


def _open(tmp_path, write_library, open_library, fast_config, model_path: str):
    root = write_library(tmp_path / "lib", DOCS)
    cfg = fast_config.replace(**{"retrieval.passage_order": model_path, "retrieval.rerank": False,
                                 "retrieval.final_context": 1})
    lib = open_library(root, config=cfg)
    lib.build()
    return lib


QUESTION = "how do I prime the casing with water, pump pump"


def test_the_order_stage_reorders_the_fused_head_and_says_how(tmp_path, write_library, open_library, fast_config):
    cover_only = _write(tmp_path / "o.json", _model([0, 0, 0, 10.0]))  # lexical cover decides
    lib = _open(tmp_path, write_library, open_library, fast_config, str(cover_only))
    res = lib.search(QUESTION)
    names = [s.name for s in res.trace.stages]
    assert names == ["lexical", "vector", "fused", "order", "rerank", "context"]
    fused, order = res.trace.stage("fused"), res.trace.stage("order")
    assert not order.passed_through and order.note.startswith("learned passage order (")
    assert {r.chunk_id for r in order.ranked} == {r.chunk_id for r in fused.ranked[:order.window]}  # a permutation
    assert res.hits[0].chunk.path == "c.md"  # the passage holding the question's words comes first
    assert "learned order kept" in res.trace.stage("rerank").note
    hybrid = lib.search(QUESTION, mode="hybrid")
    assert [h.chunk.id for h in hybrid.hits] == [r.chunk_id for r in fused.ranked]  # hybrid stops at fusion


def test_without_a_usable_model_the_fused_order_is_kept_and_the_trace_says_why(
        tmp_path, write_library, open_library, fast_config):
    other = _write(tmp_path / "other.json", _model([0, 0, 0, 10.0], checksum="another-embedder"))
    for path, why in ((str(other), "fitted with another embedder"), (str(tmp_path / "none.json"), "no passage order"),
                      ("", "retrieval.passage_order = ''")):
        lib = _open(tmp_path, write_library, open_library, fast_config, path)
        res = lib.search(QUESTION)
        order = res.trace.stage("order")
        assert order.passed_through and why in order.note, order.note
        assert [r.chunk_id for r in order.ranked] == [r.chunk_id for r in res.trace.stage("fused").ranked[:order.window]]
        lib.close()


def test_model_file_round_trips_and_damage_is_named(tmp_path):
    m = OrderModel(ORDER_FEATURES, np.arange(4.0), np.ones(4) * 2, np.array([1.0, -1.0, 0.5, 0.0]), 5.0, "e", "s",
                   {"questions": 3})
    back = load_order_model(_write(tmp_path / "m.json", m))
    assert back.names == m.names and back.record == {"questions": 3}
    assert np.allclose(back.weights, m.weights) and np.allclose(back.mean, m.mean) and back.rank_c == 5.0
    x = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]])
    assert np.allclose(back.scores(x), ((x - m.mean) / m.scale) @ m.weights)
    bad = m.to_json() | {"features": ["cosine"]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="features"):
        load_order_model(tmp_path / "bad.json")
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        load_order_model(tmp_path / "junk.json")


def test_an_order_fitted_on_the_query_encoders_vector_names_it_and_round_trips(tmp_path):
    m = replace(_model([0, 1.0, 0, 0]), question_vector="query_encoder", query_encoder_checksum="enc-1")
    d = m.to_json()
    assert d["format"] == 2 and d["question_vector"] == "query_encoder"
    back = load_order_model(_write(tmp_path / "q.json", m))
    assert (back.question_vector, back.query_encoder_checksum) == ("query_encoder", "enc-1")
    assert "query encoder" in back.describe()
    old = load_order_model(_write(tmp_path / "e.json", _model([0, 1.0, 0, 0])))
    assert old.question_vector == "embedder" and _model([0, 1.0, 0, 0]).to_json()["format"] == 1
    (tmp_path / "odd.json").write_text(json.dumps(d | {"question_vector": "reranker"}))
    with pytest.raises(ValueError, match="question_vector"):
        load_order_model(tmp_path / "odd.json")
    (tmp_path / "lacks.json").write_text(json.dumps({k: v for k, v in d.items() if k != "query_encoder_checksum"}))
    with pytest.raises(ValueError, match="query_encoder_checksum"):
        load_order_model(tmp_path / "lacks.json")


def test_an_order_fitted_on_the_query_encoders_vector_reads_its_cosines(
        tmp_path, write_library, open_library, hash_embedder, fast_config):
    """Cosine alone decides: through the embedder's vector the valve passage answers the valve
    question; the (planted) query encoder's vector is the belt passage's, so its order puts the belt
    first. With another query encoder, or none, that order is off and the trace says why."""
    docs = {"a.md": "# Valve\n\nOpen the valve slowly before starting the pump.\n",
            "c.md": "# Belt\n\nThe drive belt tension is 12 mm of deflection at the middle.\n"}
    root = write_library(tmp_path / "lib", docs)
    belt = "Belt\n\nThe drive belt tension is 12 mm of deflection at the middle."
    question = "open the valve slowly"
    model = replace(_model([0, 10.0, 0, 0]), question_vector="query_encoder", query_encoder_checksum="enc-1")
    cfg = fast_config.replace(**{"retrieval.passage_order": str(_write(tmp_path / "q.json", model)),
                                 "retrieval.rerank": False})
    plain = fast_config.replace(**{"retrieval.passage_order": str(_write(tmp_path / "e.json", _model([0, 10.0, 0, 0]))),
                                   "retrieval.rerank": False})
    lib = open_library(root, config=plain, embedder=TunedHash(hash_embedder, belt))
    lib.build()
    assert lib.chunk(lib.search(question).trace.stage("order").ranked[0].chunk_id).path == "a.md"
    lib.close()
    tuned = open_library(root, config=cfg, embedder=TunedHash(hash_embedder, belt))
    res = tuned.search(question)
    order = res.trace.stage("order")
    assert not order.passed_through and "cosines of the query encoder's vector" in order.note
    assert tuned.chunk(order.ranked[0].chunk_id).path == "c.md", order
    hybrid = tuned.search(question, mode="hybrid")  # what the fit reads: the same cosines
    x = tuned.order_features(hybrid, 20, 5.0, "query_encoder")
    snap, tvec = tuned._snap, hash_embedder.embed_passages([belt])[0]
    assert x[:, 1] == pytest.approx([float(snap.vectors.matrix[snap.by_id[h.chunk.id]] @ tvec) for h in hybrid.hits])
    tuned.close()
    for embedder, why in ((TunedHash(hash_embedder, belt, "enc-2"), "another query encoder"),
                          (hash_embedder, "which is off")):
        other = open_library(root, config=cfg, embedder=embedder)
        order = other.search(question).trace.stage("order")
        assert order.passed_through and why in order.note, order.note
        other.close()


def _chunk(cid: str, text: str, heading: str = "H") -> Chunk:
    return Chunk(id=cid, doc_id="d", version="1", path="d.md", start_line=1, end_line=1, heading_path=(heading,),
                 char_start=0, char_end=len(text), kind="prose", section_id="s", language="en", text=text)


def test_candidate_features_use_the_best_stored_unit_and_the_question_words():
    q = np.array([1.0, 0.0])
    chunks = [_chunk("a", "valve torque"), _chunk("b", "nothing here")]
    units = {"a": np.array([[0.0, 1.0], [0.6, 0.8]]), "b": np.zeros((0, 2))}
    x = candidate_features("valve torque?", q, chunks, [0.3, 0.4], lambda c: units[c.id], 5.0)
    assert x.shape == (2, len(ORDER_FEATURES))
    assert x[0].tolist() == pytest.approx([1 / 6, 0.3, 0.6, 1.0])
    assert x[1].tolist() == pytest.approx([1 / 7, 0.4, 0.4, 0.0])  # no stored units: the passage's cosine


def test_an_identifier_is_covered_by_its_words_in_a_heading():
    from engine.lang.words import term_held

    q = np.array([1.0, 0.0])

    chunks = [replace(_chunk("a", "If true, the phone's connection is used."), context="MQTT > Client Proxy Enabled"),
              replace(_chunk("b", "If true, the packets are sent as JSON."), context="MQTT > JSON Enabled")]
    x = candidate_features("what is proxy_to_client_enabled for?", q, chunks, [0.3, 0.3], lambda c: np.zeros((0, 2)),
                           5.0)
    assert x[:, 3].tolist() == [1.0, 0.0]
    assert term_held("proxy_to_client_enabled", {"client", "proxy", "enabled"})
    assert not term_held("json_enabled", {"enabled"})  # every word
    assert not term_held("enabled", {"enable"}) and not term_held("x_y", {"x", "y"})  # words of 3+ letters


def test_fit_finds_the_planted_feature_and_beats_the_fused_order():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(60):
        x = rng.normal(size=(10, len(ORDER_FEATURES)))
        gold = int(rng.integers(1, 10))  # never the fused first
        x[gold, 3] += 3.0  # lexical cover marks the gold passage
        rows.append({"x": x, "y": np.arange(10) == gold, "family": "f", "file": str(i % 7)})
    mean, scale, w = order_fit.fit(rows, l2=0.01)
    assert int(np.argmax(np.abs(w))) == 3 and w[3] > 0
    assert np.mean(order_fit.first_hits(rows, None)) == 0.0
    assert np.mean(order_fit.first_hits(rows, (mean, scale, w))) > 0.9


def test_diagnosis_blames_the_learned_order_for_a_passage_it_pushed_out(
        tmp_path, write_library, open_library, fast_config):
    against = _write(tmp_path / "o.json", _model([0, 0, 0, -10.0]))  # pushes the best-covering passage down
    lib = _open(tmp_path, write_library, open_library, fast_config, str(against))
    res = lib.search(QUESTION)
    fused = res.trace.stage("fused")
    gold = {r.chunk_id for r in fused.ranked if lib.chunk(r.chunk_id).path == "c.md"}
    assert fused.rank_of(next(iter(gold))) == 1
    d = classify(res.trace, gold, {c.id for c in lib.all_chunks()})
    assert d.verdict == "demoted by the learned order" and d.stage == "order", d


def _built_with_order(tmp_path, write_library, open_library, fast_config, docs, weights):
    """A built library of ``docs`` whose order stage scores with these weights only."""
    path = _write(tmp_path / "o.json", _model(weights))
    lib = open_library(write_library(tmp_path / "lib", docs),
                       config=fast_config.replace(**{"retrieval.passage_order": str(path)}))
    lib.build()
    return lib


def _first_in_order(lib, question: str) -> tuple[str, str]:
    """The document of the order stage's first passage for ``question``, and the stage's note."""
    order = lib.search(question).trace.stage("order")
    return lib.chunk(order.ranked[0].chunk_id).path, order.note


def test_passages_about_the_device_the_question_names_stay_first(tmp_path, write_library, open_library, fast_config):
    docs = {"px.md": "---\nmodels: [PX-1]\n---\n# PX-1 manual\n\n## Terminals\n\n단자 나사는 2 N·m로 조인다.\n",
            "qx.md": "---\nmodels: [QX-2]\n---\n# QX-2 manual\n\n## Terminals\n\nTighten the terminal screws "
                     "to 3 N·m and recheck the terminal screws yearly.\n"}
    lib = _built_with_order(tmp_path, write_library, open_library, fast_config, docs, [0, 0, 0, 10.0])  # cover
    res = lib.search("What torque do the PX-1 terminal screws need, and how often should they be rechecked?")
    order = res.trace.stage("order")
    assert lib.chunk(order.ranked[0].chunk_id).path == "px.md", order  # the other device's words do not win
    assert "passages about other devices than px1 after" in order.note  # the normalised code, as fused names it
    assert lib.search("terminal screws torque recheck").trace.stage("order").ranked[0].chunk_id != order.ranked[0].chunk_id


def test_a_passage_about_no_device_is_not_put_after_the_named_devices(
        tmp_path, write_library, open_library, fast_config):
    """What holds for every device (a library reference, a general page) competes with the named
    device's own passages on the learned score; only another device's passages go after them."""
    docs = {"px.md": "---\nmodels: [PX-1]\n---\n# PX-1 quick reference\n\n## Timers\n\nThe PX-1 has four timers.\n",
            "qx.md": "---\nmodels: [QX-2]\n---\n# QX-2 quick reference\n\n## Memory\n\nThe QX-2 keeps RTC memory "
                     "through deep sleep; RTC memory holds 2048 bytes.\n",
            "rtc.md": "# class RTC\n\n## Memory\n\nRTC memory keeps its bytes through deep sleep; it holds up to 2048 "
                      "bytes of RTC memory.\n"}
    lib = _built_with_order(tmp_path, write_library, open_library, fast_config, docs, [0, 0, 0, 10.0])  # cover
    order = lib.search("How many bytes of RTC memory survive deep sleep on the PX-1?").trace.stage("order")
    paths = [lib.chunk(r.chunk_id).path for r in order.ranked]
    assert paths[0] == "rtc.md", paths  # the general page answers; the PX-1 page does not
    assert paths.index("qx.md") > paths.index("px.md"), paths  # the other device's page goes after


def test_passages_about_the_edition_the_question_names_stay_first(tmp_path, write_library, open_library, fast_config):
    """Two editions of one board's manual: the question naming V1.1 reads the V1.1 manual first, though
    the V1.0 passage covers its words better; an edition no title names changes nothing."""
    docs = {"a.md": "# PX-1 V1.0 manual\n\n## CAN bus\n\nSet the CAN bus speed to 1M; the CAN bus speed must "
                    "match the firmware's CAN bus speed.\n",
            "b.md": "# PX-1 V1.1 manual\n\n## CAN bus\n\nSet the bitrate to 1000000 in can0.\n"}
    lib = _built_with_order(tmp_path, write_library, open_library, fast_config, docs, [0, 0, 0, 10.0])  # cover
    first, note = _first_in_order(lib, "How do I set the CAN bus speed on the PX-1 V1.1?")
    assert first == "b.md" and "passages about other editions than v1.1 after" in note, note
    fused = lib.search("How do I set the CAN bus speed on the PX-1 V1.1?").trace.stage("fused")
    assert "device ranking for px1 v1.1" in fused.note
    first, note = _first_in_order(lib, "How do I set the CAN bus speed on the PX-1 v0.12?")
    assert first == "a.md" and "editions" not in note, note


def test_a_product_named_by_its_name_reads_the_manual_whose_title_names_it_first(
        tmp_path, write_library, open_library, fast_config):
    """A board named by a name, not a code ("the Octopus"): the other board's manual, whose words
    cover the question better, goes after the manual whose title names it; a manual about no device
    keeps its place, and a word most titles share (a brand) names no one product. A mention in the
    text is not what the manual is about."""
    docs = {"a.md": "# Octopus user guide\n\n## Firmware\n\nCopy firmware.bin to the card and restart.\n",
            "b.md": "# SKR E3 manual\n\n## Firmware\n\nTo update the firmware (as on an Octopus), copy the "
                    "firmware file to the SD card.\n",
            "c.md": "# Wiring notes\n\n## Fans\n\nFans go on the fan ports.\n"}
    lib = _built_with_order(tmp_path, write_library, open_library, fast_config, docs, [0, 0, 0, 10.0])  # cover
    first, note = _first_in_order(lib, "How do I update the firmware on the Octopus?")
    assert first == "a.md" and "passages about other devices than the octopus after" in note, note
    first, note = _first_in_order(lib, "How do I update the firmware?")
    assert first == "b.md" and "octopus" not in note, note
    names = {"a": frozenset({"octopus", "bigtreetech"}), "b": frozenset({"skr", "bigtreetech"}),
             "c": frozenset({"bigtreetech"})}
    assert named_products("Is the Octopus like the SKR?", names, {}) == {"octopus", "skr"}
    assert named_products("Is the Octopus like the SKR?", names, {"b": frozenset({"e3"})}) == {"octopus"}
    assert not named_products("Which Bigtreetech boards?", names, {})  # the brand: every title
    # a word the whole library speaks of names no product, though one title holds it ("LED issues")
    spoken = {"a": 1, "b": 4, "c": 3}
    assert not named_products("Why does my Octopus flicker?", names, {}, mentions=lambda w: spoken)
    assert named_products("Why does my Octopus flicker?", names, {}, mentions=lambda w: {"a": 3, "b": 1}) == {
        "octopus"}


def test_inside_the_named_devices_manual_the_question_less_its_code_orders_the_passages(
        tmp_path, write_library, open_library, fast_config):
    docs = {"px.md": "---\nmodels: [PX-1]\n---\n# Manual\n\n## About\n\nThe PX-1 PX-1 PX-1 screws.\n\n"
                     "## Terminals\n\nTighten the terminal screws to 2 N·m.\n"}
    lib = _built_with_order(tmp_path, write_library, open_library, fast_config, docs, [0, 10.0, 0, 0])  # cosine
    res = lib.search("PX-1 PX-1 terminal screws?")
    assert res.content_vector is not None  # the question less PX-1 was embedded with it
    assert "cosines of the question less the devices it names" in res.trace.stage("order").note
    first = lib.chunk(res.trace.stage("order").ranked[0].chunk_id)
    assert "terminal screws" in first.text  # not the passage that repeats the device's code
    about = [c for c in lib.all_chunks() if "PX-1 PX-1 PX-1" in c.text][0]
    assert float(lib._snap.vectors.matrix[lib._snap.by_id[about.id]] @ res.query_vector) > \
        float(lib._snap.vectors.matrix[lib._snap.by_id[first.id]] @ res.query_vector)  # by the whole question it led
