"""Library: incremental builds, search modes and traces, cancellation, accessors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.config import Config, FilterConfig
from engine.index.rows import unit_sha
from engine.pipeline import BuildCancelled, BuildProgress
from hash_embedder import HashEmbedder

DOCS = {
    "pump.md": "# Pump P-100 manual\n\n## Priming\n\nOpen the bleed valve and fill the casing with water "
               "before the first start.\n\n## Seals\n\nReplace the mechanical seal every 4000 hours.\n\n"
               "Warning: do not run the pump dry, the seal burns within seconds.\n",
    "valve.md": "# Valve V-20 manual\n\n## Torque\n\nTighten the bonnet bolts to 45 Nm in a cross pattern.\n",
    "sensor.md": "# Sensor S-7 guide\n\n## Calibration\n\nZero the sensor at ambient pressure, then apply "
                 "the 10 bar reference.\n",
}


@pytest.fixture
def lib(tmp_path, open_library, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    library = open_library(root)
    library.build()
    return library


def test_build_reports_documents_and_chunks(lib):
    assert {d.path for d in lib.documents()} == set(DOCS)
    assert len(lib) == sum(d.chunks for d in lib.documents())
    assert lib.generation == 1


def test_full_search_has_every_stage_in_order(lib):
    res = lib.search("mechanical seal replacement hours")
    names = [s.name for s in res.trace.stages]
    assert names == ["lexical", "vector", "fused", "order", "rerank", "context"]
    assert res.hits and res.hits[0].chunk.path == "pump.md"
    assert "Replace the mechanical seal" in res.hits[0].chunk.text
    rerank = res.trace.stage("rerank")
    assert rerank.note.startswith("degraded: no reranker model at")  # visible, not silent
    assert [h.chunk.id for h in res.hits] == [r.chunk_id for r in res.trace.stage("context").ranked]
    assert res.trace.total == len(lib) and res.trace.eligible == len(lib)


@pytest.mark.parametrize("mode,last", [("lexical", "lexical"), ("vector", "vector"), ("hybrid", "fused")])
def test_modes_stop_at_their_stage(lib, mode, last):
    res = lib.search("bonnet bolts torque", mode=mode)
    assert res.trace.stages[-1].name == last
    assert [h.chunk.id for h in res.hits] == [r.chunk_id for r in res.trace.stages[-1].ranked]
    assert res.hits[0].chunk.path == "valve.md"


def test_windows_are_separate_knobs(tmp_path, open_library, fast_config, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    cfg = fast_config.replace(**{"retrieval.lexical_depth": 2, "retrieval.fused_window": 3,
                                 "retrieval.rerank_input": 2, "retrieval.final_context": 1,
                                 "retrieval.context_token_budget": 10_000})
    library = open_library(root, config=cfg)
    library.build()
    tr = library.search("seal pump valve sensor").trace
    assert len(tr.stage("lexical").ranked) <= 2
    assert len(tr.stage("fused").ranked) <= 3
    assert len(tr.stage("rerank").ranked) <= 2
    primaries = [r for r in tr.stage("context").ranked]
    assert 1 <= len(primaries) <= 2  # one passage, plus at most one expansion


@pytest.mark.parametrize("pooled", [False, True])
def test_incremental_build_embeds_only_changed_chunks(tmp_path, open_library, write_library, fast_config, pooled):
    emb = HashEmbedder()
    root = write_library(tmp_path / "lib", DOCS)
    library = open_library(root, embedder=emb, config=fast_config.replace(**{"chunking.pooled_unit_vectors": pooled}))
    library.build()
    first = emb.passages_embedded
    units_before = _unit_texts(library)
    # each chunk, then each answer unit, once; pooled: the units' vectors come with their chunk's pass
    assert units_before and first == len(library) + (0 if pooled else len(units_before))
    report = library.build()  # nothing changed: nothing embedded, no new generation
    assert emb.passages_embedded == first
    assert report.unchanged == len(DOCS)
    (root / "valve.md").write_text(DOCS["valve.md"].replace("45 Nm", "50 Nm"), encoding="utf-8")
    report = library.build()
    assert report.unchanged == len(DOCS) - 1
    new_units = _unit_texts(library) - units_before
    assert new_units and emb.passages_embedded == (first + len(library.chunks_of("valve.md"))
                                                   + (0 if pooled else len(new_units)))
    assert set(library.unit_vectors(sorted(new_units))) == new_units
    assert "50 Nm" in library.search("bonnet bolts torque").hits[0].chunk.text


def test_pooled_units_come_from_chunk_passes_even_for_an_index_built_without_them(
        tmp_path, open_library, write_library, fast_config):
    """Turning pooled unit vectors on over an index built with a pass per unit: the units phase
    pools them from one pass per chunk, and a unit the model's window does not reach gets a
    pass of its own."""
    from engine.answer.units import unit_spans

    class Windowed(HashEmbedder):  # a model window of 100 characters
        def embed_passages_pooled(self, texts, spans):
            vecs, pooled = super().embed_passages_pooled(texts, spans)
            return vecs, [[v if b <= 100 else None for (_a, b), v in zip(sp, got)] for sp, got in zip(spans, pooled)]

    root = write_library(tmp_path / "lib", DOCS)
    open_library(root).build()  # the default: a pass per unit
    emb = Windowed()
    library = open_library(root, embedder=emb, config=fast_config.replace(**{"chunking.pooled_unit_vectors": True}))
    library.build()
    spans = {t: (c, a, b) for c in library.all_chunks() for t, a, b in unit_spans(c)}
    beyond = {t for t, (_c, _a, b) in spans.items() if b > 100}
    assert beyond and len(beyond) < len(spans)
    assert emb.passages_embedded == len(library) + len(beyond)
    got = library.unit_vectors(sorted(spans))
    keys = {r[0] for r in library.store._q("SELECT DISTINCT model FROM embeddings WHERE model LIKE '%:units'")}
    assert keys == {f"{emb.checksum}:pooled:units"}  # the per-unit vectors are forgotten
    for t, (c, a, b) in spans.items():
        want = emb.embed_queries([t])[0] if t in beyond else emb._vec(c.search_text[a:b])
        assert np.allclose(got[t], want, atol=1e-6)
    fresh = Windowed()  # a new index: units pooled during the embed phase, not pooled again after it
    again = open_library(root, embedder=fresh, index_dir=tmp_path / "fresh",
                         config=fast_config.replace(**{"chunking.pooled_unit_vectors": True}))
    again.build()
    assert fresh.passages_embedded == len(again) + len(beyond)
    assert set(again.unit_vectors(sorted(spans))) == set(spans)


def test_answers_read_the_unit_vectors_of_their_own_library(tmp_path, open_library, write_library, fast_config):
    """Two libraries in one process, one pooled: the answer's in-memory cache never hands one the
    other's unit vectors."""
    from engine.answer.units import _CACHE, unit_spans

    root = write_library(tmp_path / "lib", DOCS)
    per_unit = open_library(root)
    per_unit.build()
    pooled = open_library(root, index_dir=tmp_path / "pooled",
                          config=fast_config.replace(**{"chunking.pooled_unit_vectors": True}))
    pooled.build()
    key, _a, _b = unit_spans(per_unit.all_chunks()[0])[0]
    a, b = _CACHE.passages(per_unit, [key])[0], _CACHE.passages(pooled, [key])[0]
    assert np.allclose(a, per_unit.unit_vectors([key])[key]) and np.allclose(b, pooled.unit_vectors([key])[key])
    assert not np.allclose(a, b)


def _unit_texts(library) -> set[str]:
    from engine.answer.units import unit_texts

    return {t for c in library.all_chunks() for t in unit_texts(c)}


def test_embedding_cache_survives_reopen(tmp_path, open_library, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    open_library(root).build()
    emb = HashEmbedder()
    again = open_library(root, embedder=emb)
    again.build(rebuild=True)  # re-chunks everything, but every text is cached
    assert emb.passages_embedded == 0


def test_deleted_file_chunks_are_removed(tmp_path, lib):
    (lib.root / "sensor.md").unlink()
    report = lib.build()
    assert report.removed == 1
    assert "sensor.md" not in {d.path for d in lib.documents()}
    assert lib.chunks_of("sensor.md") == []
    for mode in ("lexical", "vector", "full"):
        assert all(h.chunk.path != "sensor.md" for h in lib.search("sensor calibration zero", mode=mode).hits)


def test_cancel_keeps_previous_generation(tmp_path, lib):
    (lib.root / "extra.md").write_text("# Extra\n\n## Notes\n\nNew text about gaskets.\n", encoding="utf-8")
    ev = threading.Event()
    seen: list[BuildProgress] = []

    def progress(p: BuildProgress) -> None:
        seen.append(p)
        if p.phase == "embed":
            ev.set()

    with pytest.raises(BuildCancelled):
        lib.build(progress=progress, cancel=ev)
    assert lib.generation == 1
    assert "extra.md" not in {d.path for d in lib.documents()}
    assert [p.phase for p in seen][:1] == ["scan"]
    assert lib.search("mechanical seal").hits
    assert len([p for p in lib.store.dir.iterdir() if p.name.startswith("gen-")]) == 1


def test_filters_applied(tmp_path, open_library, write_library):
    files = dict(DOCS)
    files["old.md"] = ("---\ndoc_id: pump-old\nstatus: superseded\n---\n# Old pump manual\n\n## Seals\n\n"
                       "Replace the mechanical seal every 2000 hours.\n")
    files["team.md"] = ("---\nvisibility: [blue]\n---\n# Team notes\n\n## Seals\n\n"
                        "Mechanical seal stock is in bay 4.\n")
    library = open_library(write_library(tmp_path / "lib", files))
    library.build()
    paths = {h.chunk.path for h in library.search("mechanical seal").hits}
    assert "old.md" not in paths and "team.md" not in paths
    res = library.search("mechanical seal", filters=FilterConfig(include_superseded=True, teams=("blue",)))
    paths = {r.chunk_id for s in res.trace.stages for r in s.ranked}
    assert {library.chunk(c).path for c in paths} >= {"old.md", "team.md"}
    assert res.trace.eligible == res.trace.total


def test_accessors(lib):
    chunks = lib.chunks_of("pump.md")
    assert [c.ordinal for c in chunks] == sorted(c.ordinal for c in chunks)
    first = chunks[0]
    prev, nxt = lib.neighbours(first.id)
    assert prev is None and (nxt is None or nxt.path == "pump.md")
    assert lib.chunk(first.id) == first
    assert first in lib.section(first.id)
    assert lib.meta_of("pump.md").title == "Pump P-100 manual"
    assert lib.meta_of(first) == lib.meta_of("pump.md")
    assert "bleed valve" in lib.document_text("pump.md")
    with pytest.raises(KeyError):
        lib.chunk("nope")
    assert lib.reranker_status.startswith("degraded")


def test_search_while_building_is_safe(tmp_path, lib):
    (lib.root / "more.md").write_text("# More\n\n## Pumps\n\nPump bearings need grease.\n", encoding="utf-8")
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                lib.search("pump seal")
            except BaseException as e:  # noqa: BLE001 - collected for the assertion
                errors.append(e)
                return

    t = threading.Thread(target=reader)
    t.start()
    try:
        lib.build()
    finally:
        stop.set()
        t.join()
    assert errors == []
    assert lib.chunks_of("more.md")


def test_empty_library_searches_without_error(tmp_path, open_library):
    (tmp_path / "empty").mkdir()
    library = open_library(tmp_path / "empty")
    library.build()
    res = library.search("anything")
    assert res.hits == ()


# ---- context assembly ----------------------------------------------------------------------

from engine.search.context import assemble_context  # noqa: E402
from engine.types import Chunk, DocumentMeta  # noqa: E402


def _chunk(cid: str, path: str, text: str, section: str = "s1", ordinal: int = 0, tokens: int = 10,
           heading: tuple = ("T", "A")) -> Chunk:
    return Chunk(id=cid, doc_id=path, version="1", path=path, start_line=ordinal + 1, end_line=ordinal + 1,
                 heading_path=heading, char_start=0, char_end=len(text), kind="prose", section_id=section,
                 language="en", text=text, tokens=tokens, ordinal=ordinal)


def _assemble(ranked, metas=None, nxt=None, final=5, budget=1000):
    metas = metas or {}
    return assemble_context([(c, 1.0 / (i + 1)) for i, c in enumerate(ranked)], final=final, token_budget=budget,
                            meta_of=lambda c: metas.get(c.path, DocumentMeta(c.path, "t")),
                            next_chunk=lambda c: (nxt or {}).get(c.id))


def test_context_drops_duplicates_but_never_a_restricted_twin():
    a = _chunk("a", "a.md", "Torque the bolts to 45 Nm.")
    b = _chunk("b", "b.md", "Torque  the bolts to 45 Nm.")  # same text (whitespace) in another file
    r = _chunk("r", "r.md", "Torque the bolts to 45 Nm.")  # same text, restricted to model X
    metas = {"r.md": DocumentMeta("r", "t", models=("X",))}
    out = _assemble([a, a, b, r], metas)
    assert [i.chunk.id for i in out] == ["a", "r"]
    # the other way round: the restricted one kept first, the unrestricted twin is dropped
    out = _assemble([r, a], metas)
    assert [i.chunk.id for i in out] == ["r"]


def test_context_expands_with_a_following_condition_within_budget():
    step = _chunk("s", "p.md", "Open the valve.", ordinal=0)
    warn = _chunk("w", "p.md", "Warning: only when the pump is stopped.", ordinal=1)
    other = _chunk("o", "q.md", "Unrelated.", ordinal=0)
    out = _assemble([step, other], nxt={"s": warn}, final=2)
    assert [(i.chunk.id, i.role) for i in out] == [("s", "primary"), ("o", "primary"), ("w", "expansion")]
    assert out[2].anchor == "s"
    assert [i.chunk.id for i in _assemble([step, other], nxt={"s": warn}, final=2, budget=20)] == ["s", "o"]
    plain = _chunk("w", "p.md", "Then close the lid.", ordinal=1, tokens=200)  # no condition, same section
    assert [i.chunk.id for i in _assemble([step], nxt={"s": plain})] == ["s"]


def test_context_keeps_the_final_window():
    cs = [_chunk(f"c{i}", f"{i}.md", f"text {i}") for i in range(8)]
    assert [i.chunk.id for i in _assemble(cs, final=3)] == ["c0", "c1", "c2"]


# ---- command line output -------------------------------------------------------------------


def test_cli_search_escapes_control_characters(tmp_path, write_library, capsys, monkeypatch, hash_cli):
    import argparse

    from fieldqa.commands import retrieval

    root = write_library(tmp_path / "lib", {"evil.md": "# Evil\n\n## Part\n\nPress \x1b[31mRED\x1b[0m now\u202e.\n"})
    parser = argparse.ArgumentParser()
    retrieval.register(parser.add_subparsers())
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[models]\ndir = "{tmp_path / "no-models"}"\n', encoding="utf-8")
    common = ["--index", str(tmp_path / "idx"), "--config", str(cfg)]
    args = parser.parse_args(["index", str(root), *common])
    assert args.func(args) == 0
    args = parser.parse_args(["search", "press red", str(root), *common])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "RED" in out and "\\u202e" in out  # the colour sequence removed, the override shown
    args = parser.parse_args(["search", "press red", str(tmp_path / "other"), "--index", str(tmp_path / "none"),
                              "--config", str(cfg)])
    assert args.func(args) == 2
    assert "fieldqa index" in capsys.readouterr().err


def test_fusion_weighs_the_lexical_ranking_by_what_it_sees_of_the_question(tmp_path, open_library, fast_config,
                                                                          write_library):
    from engine.search.fusion import fuse_rrf

    root = write_library(tmp_path / "lib", DOCS)
    q = "Dichtung pump ersetzen"  # most of its weight is in words no manual uses
    c = fast_config.retrieval.rrf_c

    def fused(knee):
        lib = open_library(root, config=fast_config.replace(**{"retrieval.lexical_sight_knee": knee}),
                           index_dir=tmp_path / f"index{knee}")
        lib.build()
        tr = lib.search(q, mode="hybrid").trace
        branches = [[r.chunk_id for r in tr.stage(n).ranked] for n in ("lexical", "vector")]
        return lib, branches, tr.stage("fused")

    lib, branches, stage = fused(0.5)
    sight = lib.lexical_sight(q)
    assert 0 < sight < 0.25 and branches[0]  # the lexical branch found something with the one word it knows
    weighted = fuse_rrf(branches, c=c, weights=[sight / 0.5, 1.0])
    assert [(r.chunk_id, round(r.score, 9)) for r in stage.ranked] == [(i, round(s, 9)) for i, s in weighted]
    assert f"lexical weight {sight / 0.5:.2f}" in stage.note
    _lib, plain_branches, plain = fused(0.0)  # plain RRF: weights 1, 1, and the trace says nothing
    assert plain_branches == branches and "lexical weight" not in plain.note
    assert [(r.chunk_id, round(r.score, 9)) for r in plain.ranked] == [(i, round(s, 9)) for i, s in fuse_rrf(branches, c=c)]
    assert [r.score for r in plain.ranked] != [r.score for r in stage.ranked]
    # a question in the manuals' words keeps the full weight
    assert lib.lexical_sight("replace the mechanical seal") > 0.5
    assert "lexical weight" not in lib.search("replace the mechanical seal", mode="hybrid").trace.stage("fused").note


def test_a_named_device_outranks_the_same_text_about_another_device(tmp_path, open_library, write_library):
    body = "## Lid\n\nTighten the lid screws crosswise to {} N·m.\n"
    root = write_library(tmp_path / "dev", {
        "alpha.md": "---\ntitle: Alpha AX-1 manual\nmodels: [AX-1]\n---\n# Alpha\n\n" + body.format("2.0"),
        "beta.md": "---\ntitle: Beta BX-2 manual\nmodels: [BX-2]\n---\n# Beta\n\n" + body.format("2.0"),
    })
    lib = open_library(root)
    lib.build()
    for code, path in (("AX-1", "alpha.md"), ("BX-2", "beta.md")):
        res = lib.search(f"{code}: lid screw torque?", mode="hybrid")
        assert res.hits[0].chunk.path == path
        assert f"device ranking for {code.lower().replace('-', '')}" in res.trace.stage("fused").note
    # a question naming no known device gets no extra ranking
    assert "device ranking" not in lib.search("lid screw torque?", mode="hybrid").trace.stage("fused").note


class ThirdFirstReranker:
    """A cross-encoder double that prefers the fusion's third candidate, then its neighbours."""

    model_id = "third-first"

    def score(self, question, passages):
        return [-float((i - 2) ** 2) - 0.01 * i for i in range(len(passages))]


@pytest.mark.parametrize("blend_c", [-1, 5])
def test_rerank_order_is_the_cross_encoders_or_blended_with_the_fused_order(
        tmp_path, open_library, fast_config, write_library, blend_c):
    from engine.search.fusion import fuse_rrf

    root = write_library(tmp_path / "lib", DOCS)
    cfg = fast_config.replace(**{"retrieval.rerank_blend_c": blend_c})
    library = open_library(root, config=cfg, reranker=ThirdFirstReranker())
    library.build()
    tr = library.search("seal pump valve sensor torque").trace
    fused = [r.chunk_id for r in tr.stage("fused").ranked][:cfg.retrieval.rerank_input]
    reranked = [r.chunk_id for r in tr.stage("rerank").ranked]
    assert len(fused) >= 3
    own = sorted(range(len(fused)), key=lambda i: (i - 2) ** 2 + 0.01 * i)
    if blend_c < 0:
        assert reranked == [fused[i] for i in own]
        assert tr.stage("rerank").note == "cross-encoder third-first"
    else:
        assert reranked == [c for c, _ in fuse_rrf([fused, [fused[i] for i in own]], c=blend_c)]
        # fused[2]: 1/(5+3) + 1/(5+1) = .292 > fused[1]: 2/(5+2) = .286 > fused[0]: 1/6 + 1/9 = .278
        assert reranked[:3] == [fused[2], fused[1], fused[0]]
        assert "blended with the fused order (RRF c=5)" in tr.stage("rerank").note


class LexicalLovingReranker(ThirdFirstReranker):
    """The same double carrying a learned blend that trusts the lexical branch most."""

    def __init__(self):
        from engine.search.fusion import RerankBlend

        self.blend = RerankBlend(c=1, cross_encoder=0.5, fused=0.0, lexical=1.0, vector=0.25)


def test_rerank_uses_the_models_learned_blend_with_both_branch_orders(
        tmp_path, open_library, fast_config, write_library):
    from engine.search.fusion import blend_orders

    root = write_library(tmp_path / "lib", DOCS)
    model = LexicalLovingReranker()
    library = open_library(root, config=fast_config, reranker=model)
    library.build()
    tr = library.search("seal pump valve sensor torque").trace
    fused = [r.chunk_id for r in tr.stage("fused").ranked][:fast_config.retrieval.rerank_input]
    lexical = [r.chunk_id for r in tr.stage("lexical").ranked]
    vector = [r.chunk_id for r in tr.stage("vector").ranked]
    own = [fused[i] for i in sorted(range(len(fused)), key=lambda i: (i - 2) ** 2 + 0.01 * i)]
    reranked = [r.chunk_id for r in tr.stage("rerank").ranked]
    assert reranked == model.blend.order(fused, own, lexical, vector)
    assert sorted(reranked) == sorted(fused)
    assert tr.stage("rerank").note == ("cross-encoder third-first, blended with the fused and branch orders "
                                       "(weighted RRF c=1: cross-encoder 0.5, fused 0, lexical 1, vector 0.25)")
    # rerank_blend_c = -1 still means the cross-encoder's order alone
    alone = open_library(root, config=fast_config.replace(**{"retrieval.rerank_blend_c": -1}), reranker=model)
    assert [r.chunk_id for r in alone.search("seal pump valve sensor torque").trace.stage("rerank").ranked] == own
    # rerank_learned_blend = false: the plain RRF of fused and cross-encoder orders
    plain = open_library(root, config=fast_config.replace(**{"retrieval.rerank_learned_blend": False}), reranker=model)
    rr = plain.search("seal pump valve sensor torque").trace.stage("rerank")
    assert [r.chunk_id for r in rr.ranked] == blend_orders(fused, own, fast_config.retrieval.rerank_blend_c)
    assert rr.note.endswith(f"blended with the fused order (RRF c={fast_config.retrieval.rerank_blend_c})")


def test_rerank_stage_is_off_by_default_and_says_so(tmp_path, open_library, fast_config, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    library = open_library(root, config=fast_config.replace(**{"retrieval.rerank": False}),
                           reranker=ThirdFirstReranker())
    library.build()
    res = library.search("seal pump valve sensor torque")
    rr = res.trace.stage("rerank")
    assert rr.note == "off (retrieval.rerank = false); fused order kept" and rr.passed_through
    fused = [r.chunk_id for r in res.trace.stage("fused").ranked][:len(rr.ranked)]
    assert [r.chunk_id for r in rr.ranked] == fused
    assert library.reranker_status == "off: retrieval.rerank = false"
    assert not any("rerank" in n for n in library.ask("seal").notes)  # a choice, not a degraded mode


def test_answer_continues_from_a_search_result_without_searching_again(lib, monkeypatch):
    result = lib.search("green button")
    calls = []
    monkeypatch.setattr(lib, "search", lambda *a, **k: calls.append(a) or result)
    a = lib.answer(result)
    assert calls == [] and a.question == "green button" and a.trace is result.trace


def test_a_cited_file_edited_after_indexing_is_flagged(tmp_path, open_library, write_library):
    from engine.render import answer_to_dict, render_text

    cfg = Config().replace(**{"models.dir": str(tmp_path / "m"), "answer.abstain_threshold": -1.0})
    root = write_library(tmp_path / "lib", {"pump.md": "# Pump\n\n## Impeller nut\n\nTighten to 38 N·m.\n"})
    lib = open_library(root, config=cfg)
    lib.build()
    a = lib.ask("impeller nut torque")
    assert a.citations and not any(c.changed for c in a.citations)
    (root / "pump.md").write_text("# Pump\n\n## Impeller nut\n\nTighten to 40 N·m.\n")
    a = lib.ask("impeller nut torque")
    assert a.citations[0].changed and "38" in a.claims[0].text
    assert "changed since indexing" in render_text(a)
    assert answer_to_dict(a)["citations"][0]["changed"] is True
    assert any("fieldqa index" in n for n in a.notes)
    (root / "pump.md").unlink()
    assert lib.ask("impeller nut torque").citations[0].changed  # a vanished file too


def test_the_answer_reuses_the_pairs_its_rerank_stage_scored(tmp_path, open_library, fast_config, write_library):
    class CountingReranker:
        model_id = "counting"
        checksum = "counting-v1"

        def __init__(self):
            self.pairs = 0

        def score(self, question, passages):
            self.pairs += len(passages)
            return [float(len(p) % 7) for p in passages]  # a function of the pair only

    root = write_library(tmp_path / "lib", DOCS)
    model = CountingReranker()
    library = open_library(root, config=fast_config, reranker=model)
    library.build()
    result = library.search("bonnet bolts torque", mode="full")
    scored = model.pairs
    assert scored == min(len(library), fast_config.retrieval.rerank_input)
    top = [h.chunk for h in result.hits[:3]]
    again = library.cross_scores("bonnet bolts torque", top)
    assert model.pairs == scored  # the answerability features read the stage's logits
    assert list(again) == [float(len(c.search_text) % 7) for c in top]
    library.cross_scores("another question", top)
    assert model.pairs == scored + len(top)


def test_the_search_embeds_the_question_less_the_devices_it_names_in_the_same_call(tmp_path, write_library,
                                                                                    open_library):
    root = write_library(tmp_path / "lib", {
        "br20.md": "# Borée BR-20 compressor\n\n## Oil\n\nFill 9 litres of BR-OIL 46.\n",
        "kx7.md": "# Kestrel KX-7 logger\n\n## Lid\n\nTighten the lid screws to 1.8 N·m.\n"})
    lib = open_library(root)
    lib.build()
    # the device goes by its code and by its title's words before the code; "Kestrel" names
    # another device, and stays
    named = lib.search("Which oil goes into the Borée BR-20, or the Kestrel?")
    expected = np.asarray(lib.embedder.embed_queries(["Which oil goes into the , or the Kestrel?"]),
                          dtype=np.float32)[0]
    assert named.content_vector is not None and np.allclose(named.content_vector, expected, atol=1e-6)
    assert "less the devices it names" in named.trace.stage("vector").note
    plain = lib.search("Which oil goes into the compressor?")
    assert plain.content_vector is None and "less the devices" not in plain.trace.stage("vector").note


def test_the_trace_names_what_no_eligible_passage_mentions(lib):
    tr = lib.search("Does the Grundfos pump need priming before the first start?").trace
    assert tr.unknown_names == ("Grundfos",)
    assert lib.search("How do I prime the pump? The P-100 manual").trace.unknown_names == ()
    valve = [c.id for c in lib.chunks_of("valve.md")]
    # a name only an excluded passage holds is unknown to that search
    assert lib.search("bonnet bolts of the V-20", exclude=valve).trace.unknown_names == ("V-20",)
    assert lib.search("bonnet bolts of the V-20").trace.unknown_names == ()


def test_units_cut_another_way_are_embedded_by_the_next_build(tmp_path, open_library, write_library, monkeypatch):
    """engine.lang.units.UNITS_VERSION: a new way of cutting units gives texts the index lacks; the
    next build embeds those (and only those), even when no file changed."""
    import engine.index.build as build

    emb = HashEmbedder()
    library = open_library(write_library(tmp_path / "lib", DOCS), embedder=emb)
    library.build()
    texts = sorted(_unit_texts(library))
    key = library.unit_vector_key
    gone = [unit_sha(t) for t in texts[:2]]  # as if the new cut made two texts the index never saw
    library.store._conn.execute(f"DELETE FROM embeddings WHERE model=? AND text_sha IN ({','.join('?' * len(gone))})",
                                (key, *gone))
    library.store._conn.commit()
    before = emb.passages_embedded
    library.build()  # same version: this generation's units count as done
    assert emb.passages_embedded == before
    monkeypatch.setattr(build, "UNITS_VERSION", build.UNITS_VERSION + "-next")
    library.build()
    assert emb.passages_embedded == before + 2
    assert set(library.unit_vectors(texts)) == set(texts)
