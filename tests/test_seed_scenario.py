"""The seed scenario: a tariff-sync procedure, its superseded version, another team's copy.

D01 holds the answer (REF27-ALPHA: relancer uniquement les lignes refusées); D04 is the old,
superseded version of the same document; D06 is restricted to another team; D02, D03, D05
are distractors. Assertions are about stage classification, not model-dependent ranks.
"""

from __future__ import annotations

import pytest

from engine.pipeline import MODES
from engine.search.diagnose import diagnose

DOCS = {
    "D01.md": """---
doc_id: proc-sync-tarifs
title: Procédure de synchronisation des tarifs
version: "3"
date: 2026-02-01
---
# Procédure de synchronisation des tarifs

## Préparation

Vérifier que le service de tarification est démarré et que la file d'attente est vide.

## Erreur REF27-ALPHA

En cas d'erreur REF27-ALPHA pendant la synchronisation des tarifs, relancer uniquement les lignes refusées. Ne jamais relancer le lot complet : les lignes déjà acceptées seraient dupliquées.

## Clôture

Archiver le rapport de synchronisation dans le dossier du jour.
""",
    "D02.md": """# Planification des synchronisations

## Horaires

La synchronisation des tarifs tourne chaque nuit à 2 h. Une synchronisation manuelle est possible depuis la console.
""",
    "D03.md": """# Réseau et pare-feu

## Ports

La synchronisation utilise le port 8443. Ouvrir ce port vers le serveur de tarifs.
""",
    "D04.md": """---
doc_id: proc-sync-tarifs
title: Procédure de synchronisation des tarifs
version: "2"
date: 2024-05-10
status: superseded
---
# Procédure de synchronisation des tarifs (ancienne version)

## Erreur REF27-ALPHA

En cas d'erreur REF27-ALPHA pendant la synchronisation des tarifs, relancer le lot complet depuis la console.
""",
    "D05.md": """# Glossaire

## Tarif

Un tarif est une grille de prix appliquée à une famille de produits. Les erreurs de synchronisation sont listées dans le journal.
""",
    "D06.md": """---
doc_id: note-facturation
visibility: [equipe-facturation]
---
# Note interne facturation

## Erreur REF27-ALPHA

Pour l'équipe facturation : en cas d'erreur REF27-ALPHA, prévenir le responsable avant de relancer la synchronisation des tarifs.
""",
}
QUESTION = "Que faire en cas d'erreur REF27-ALPHA pendant la synchronisation des tarifs ?"
QUESTIONS = (QUESTION, "REF27-ALPHA", "relancer le lot complet", "synchronisation des tarifs équipe facturation")
D01_SECTION = "D01.md:13"  # the "## Erreur REF27-ALPHA" heading line in the file


@pytest.fixture
def seed(tmp_path, open_library, fast_config, write_library):
    root = write_library(tmp_path / "seed", DOCS)
    assert DOCS["D01.md"].splitlines()[12] == "## Erreur REF27-ALPHA"
    lib = open_library(root, config=fast_config.replace(**{"retrieval.final_context": 2}))
    lib.build()
    return lib


def _expected_verdict(lib, trace) -> str:
    """The verdict the trace implies for D01's gold section, computed from the stage lists."""
    gold = {c.id for c in lib.chunks_of("D01.md") if c.start_line <= 15 and c.end_line >= 13}
    assert gold
    rank = {s.name: min((r.rank for r in s.ranked if r.chunk_id in gold), default=None) for s in trace.stages}
    if rank["context"] is not None:
        return f"present at rank {rank['context']}"
    if rank["lexical"] is None and rank["vector"] is None:
        return "not retrieved"
    if rank["rerank"] is not None:
        if rank["rerank"] <= 2:
            return "dropped by context assembly"
        kept = trace.stage("rerank").passed_through
        return "cut by the final window" if kept else "demoted by the reranker"
    return "cut by the fused window"


def test_d01_is_classified_from_its_stage_ranks(seed):
    dg = diagnose(seed, QUESTION, D01_SECTION)
    assert dg.verdict == _expected_verdict(seed, dg.trace)
    # the answer is lexically unmistakable: the lexical branch must have found it
    assert "missed by lexical" not in dg.detail
    assert dg.trace.stage("context").window == 2


def test_superseded_and_restricted_never_in_any_stage(seed):
    bad = {c.id for p in ("D04.md", "D06.md") for c in seed.chunks_of(p)}
    assert bad
    for q in QUESTIONS:
        for mode in MODES:
            res = seed.search(q, mode=mode)
            for stage in res.trace.stages:
                assert not bad & {r.chunk_id for r in stage.ranked}, (q, mode, stage.name)


def test_excluded_versions_are_diagnosed_with_their_rule(seed):
    d04 = diagnose(seed, QUESTION, "D04.md:10")
    assert d04.verdict == "excluded" and "superseded version" in d04.detail
    d06 = diagnose(seed, QUESTION, "D06.md:7")
    assert d06.verdict == "excluded" and "restricted to teams equipe-facturation" in d06.detail


def test_deleted_d01_is_not_in_the_library(seed):
    (seed.root / "D01.md").unlink()
    seed.build()
    dg = diagnose(seed, QUESTION, D01_SECTION)
    assert dg.verdict == "not in the library"
    assert all(h.chunk.path != "D01.md" for h in seed.search(QUESTION).hits)


@pytest.mark.slow
def test_seed_scenario_with_the_real_embedder(tmp_path, write_library):
    """Same classification with multilingual-e5-small (fails when the model is not built)."""
    from engine.config import Config
    from engine.pipeline import Library

    root = write_library(tmp_path / "seed", DOCS)
    cfg = Config().replace(**{"retrieval.final_context": 2, "index_dir": str(tmp_path / "indexes")})
    lib = Library.open(root, cfg, tmp_path / "index")
    try:
        lib.build()
        dg = diagnose(lib, QUESTION, D01_SECTION)
        assert dg.verdict == _expected_verdict(lib, dg.trace)
        assert "missed by lexical" not in dg.detail
        bad = {c.id for p in ("D04.md", "D06.md") for c in lib.chunks_of(p)}
        for stage in dg.trace.stages:
            assert not bad & {r.chunk_id for r in stage.ranked}
    finally:
        lib.close()
