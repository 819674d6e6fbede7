"""The on-disk index: round trips, generations, corrupt and mismatched indexes."""

from __future__ import annotations

import os
import shutil

import pytest

from engine.errors import IndexCorrupt
from hash_embedder import HashEmbedder
from engine.index.store import DB_NAME, IndexMismatch, IndexStore

DOCS = {
    "a.md": "# Alpha\n\n## Start\n\nPress the green button for three seconds.\n\n## Stop\n\nHold the red button.\n",
    "b.md": "---\nstatus: superseded\nversion: '0.9'\n---\n# Beta\n\n## Filters\n\nChange the air filter monthly.\n",
    "c.txt": "Gamma notes\n\nThe fuse is rated 5 A.\n",
}


@pytest.fixture
def built(tmp_path, open_library, write_library):
    root = write_library(tmp_path / "lib", DOCS)
    lib = open_library(root)
    lib.build()
    return lib


def _reopen(built, open_library, **kw):
    built.close()
    return open_library(built.root, **kw)


def test_round_trip_same_chunks_documents_and_results(built, open_library):
    before_chunks = built.all_chunks()
    before_docs = built.documents()
    before = {m: built.search("green button", mode=m) for m in ("lexical", "vector", "full")}
    again = _reopen(built, open_library)
    assert again.all_chunks() == before_chunks
    assert again.documents() == before_docs
    assert again.document_text("a.md") == DOCS["a.md"]
    assert again.meta_of("b.md").status == "superseded" and again.meta_of("b.md").version == "0.9"
    for m, res in before.items():
        now = again.search("green button", mode=m)
        assert [(r.chunk_id, r.rank) for r in now.trace.stages[-1].ranked] == \
               [(r.chunk_id, r.rank) for r in res.trace.stages[-1].ranked]


def test_manifest_records_settings(built):
    gen = built.store.current()
    m = gen.manifest
    assert m["embedder"] == {"model_id": "test-hash", "checksum": "test-hash-v1", "dim": 384}
    assert m["space"] == "cosine" and m["chunking"]["max_tokens"] == 350
    assert m["lexical"]["tokenizer"] and m["chunks"] == len(built)
    assert gen.dir.name == "gen-0001" and (gen.dir / "lexical").is_dir() and (gen.dir / "vectors").is_dir()


def test_new_generation_replaces_old_and_cleans_leftovers(built):
    (built.root / "d.md").write_text("# Delta\n\n## One\n\nA new manual.\n", encoding="utf-8")
    crashed = built.store.dir / "gen-0005"  # a crashed build left this behind
    crashed.mkdir()
    (crashed / "junk").write_text("x")
    built.build()
    gens = sorted(p.name for p in built.store.dir.iterdir() if p.name.startswith("gen-"))
    assert gens == ["gen-0002"]  # numbers follow committed generations; the crashed folder is gone
    assert built.generation == 2


def test_truncated_sqlite_is_a_clear_error(built, open_library):
    db = built.store.dir / DB_NAME
    built.close()
    for suffix in ("-wal", "-shm"):
        (built.store.dir / (DB_NAME + suffix)).unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(data[:100] + b"\0garbage" * 50)
    with pytest.raises(IndexCorrupt) as e:
        open_library(built.root)
    assert "--rebuild" in str(e.value)


def test_not_a_database_is_a_clear_error(built, open_library):
    built.close()
    for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
        (built.store.dir / name).unlink(missing_ok=True)
    (built.store.dir / DB_NAME).write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(IndexCorrupt, match="--rebuild"):
        open_library(built.root)


@pytest.mark.parametrize("victim", ["lexical", "vectors", "manifest.json", "vectors/vectors.npy"])
def test_missing_generation_files_are_a_clear_error(built, open_library, victim):
    gdir = built.store.current().dir
    built.close()
    target = gdir / victim
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    with pytest.raises(IndexCorrupt, match="--rebuild"):
        open_library(built.root)


def test_other_model_checksum_is_a_mismatch(built, open_library):
    built.close()
    emb = HashEmbedder()
    emb.checksum = "another-model"  # the index was built with the test model; this one differs
    with pytest.raises(IndexMismatch, match="--rebuild") as e:
        open_library(built.root, embedder=emb)
    assert "another-model" in str(e.value) and "test-hash-v1" in str(e.value)


def test_changed_chunker_settings_are_a_mismatch(built, open_library, fast_config):
    built.close()
    with pytest.raises(IndexMismatch, match="chunker settings"):
        open_library(built.root, config=fast_config.replace(**{"chunking.max_tokens": 100}))


def test_repair_rebuilds_a_corrupt_index(built, open_library):
    built.close()
    for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
        (built.store.dir / name).unlink(missing_ok=True)
    (built.store.dir / DB_NAME).write_bytes(b"garbage" * 1000)
    lib = open_library(built.root, repair=True)
    lib.build(rebuild=True)
    assert lib.search("green button").hits


def test_repair_rebuilds_a_mismatched_index(built, open_library):
    built.close()
    emb = HashEmbedder()
    emb.checksum = "v2"  # a new model version
    lib = open_library(built.root, embedder=emb, repair=True)
    lib.build(rebuild=True)
    from engine.answer.units import unit_texts

    units = {t for c in lib.all_chunks() for t in unit_texts(c)}
    assert emb.passages_embedded == len(lib) + len(units)  # nothing reused from the other model's cache
    assert lib.store.current().manifest["embedder"]["checksum"] == "v2"


def test_open_without_create_names_the_index_command(tmp_path, open_library):
    with pytest.raises(IndexCorrupt, match="fieldqa index"):
        open_library(tmp_path, index_dir=tmp_path / "nothing-here", create=False)


def test_embedding_cache_keyed_by_model(tmp_path):
    import numpy as np

    store = IndexStore.open(tmp_path / "idx")
    v = np.arange(4, dtype=np.float32)
    store.put_embeddings("m1", [("sha-a", v)])
    assert np.array_equal(store.cached_embeddings("m1", ["sha-a", "sha-b"])["sha-a"], v)
    assert store.cached_embeddings("m2", ["sha-a"]) == {}
    store.close()


def _damage(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "zero":
        path.write_bytes(b"")
    elif how == "flip":
        i = len(data) // 2
        path.write_bytes(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
    else:
        path.unlink()


@pytest.mark.parametrize("how", ["truncate", "zero", "flip", "delete"])
def test_every_generation_file_damaged_any_way_is_a_typed_error(built, open_library, how):
    gdir = built.store.current().dir
    files = sorted(p for p in gdir.rglob("*") if p.is_file())
    assert len(files) >= 4
    built.close()
    original = {p: p.read_bytes() for p in files}
    for victim in files:
        _damage(victim, how)
        with pytest.raises(IndexCorrupt, match="--rebuild") as e:
            open_library(built.root).close()
        assert victim.name in str(e.value) or "manifest" in str(e.value) or "unreadable" in str(e.value)
        victim.write_bytes(original[victim])
    open_library(built.root).close()  # all restored: it opens again


def test_a_file_added_to_a_generation_is_noticed(built, open_library):
    gdir = built.store.current().dir
    built.close()
    (gdir / "vectors" / "extra.npy").write_bytes(b"x")
    with pytest.raises(IndexCorrupt, match="not part of the index"):
        open_library(built.root)


def test_zero_length_database_is_corrupt_not_empty(built, open_library):
    db = built.store.dir / DB_NAME
    built.close()
    for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
        (built.store.dir / name).unlink(missing_ok=True)
    db.write_bytes(b"")
    with pytest.raises(IndexCorrupt, match="empty"):
        open_library(built.root)


def test_altered_chunk_text_in_the_database_is_detected(built, open_library):
    import sqlite3

    built.close()
    conn = sqlite3.connect(built.store.dir / DB_NAME)
    conn.execute("UPDATE chunks SET text = replace(text, '5 A', '50 A')")
    conn.commit()
    conn.close()
    with pytest.raises(IndexCorrupt, match="altered"):
        open_library(built.root)


def test_a_second_writer_is_refused_with_the_holders_pid(built, open_library):
    from engine.errors import IndexBusy
    from engine.index.integrity import WriterLock

    with WriterLock(built.store.dir):  # as another process's build would hold it
        other = WriterLock(built.store.dir)
        with pytest.raises(IndexBusy, match=f"pid {os.getpid()}"):
            other.acquire()
    built.build()  # free again: the next build runs


def test_a_concurrent_cli_index_is_refused_and_the_index_survives(built, tmp_path):
    import subprocess
    import sys

    from engine.index.integrity import WriterLock

    from pathlib import Path

    cli = Path(__file__).with_name("fieldqa_hash.py")  # the CLI with the test embedder
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[models]\ndir = "{tmp_path / "no-models"}"\n')
    with WriterLock(built.store.dir):
        run = subprocess.run([sys.executable, str(cli), "index", str(built.root), "--index", str(built.store.dir),
                              "--config", str(cfg)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 4, run.stderr
    assert "another `fieldqa index`" in run.stderr and "Traceback" not in run.stderr
    assert built.search("green button").hits


def test_disk_full_during_a_build_keeps_the_previous_index_and_says_so(built, open_library, monkeypatch, capsys):
    import errno

    from engine.index.vectors import VectorIndex

    before = [h.chunk.id for h in built.search("green button").hits]
    (built.root / "new.md").write_text("# New\n\n## Part\n\nA new manual arrives.\n")

    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(built.store.dir))

    monkeypatch.setattr(VectorIndex, "save", full)
    with pytest.raises(OSError) as e:
        built.build()
    assert e.value.errno == errno.ENOSPC and not isinstance(e.value, IndexCorrupt)
    gens = [p.name for p in built.store.dir.iterdir() if p.name.startswith("gen-")]
    assert gens == [built.store.current().dir.name]  # the half-written generation is gone
    assert [h.chunk.id for h in built.search("green button").hits] == before
    built.close()
    again = open_library(built.root)  # reopens intact: nothing was deleted
    assert [h.chunk.id for h in again.search("green button").hits] == before

    from fieldqa.commands.retrieval import EXIT_WRITE, os_error_message
    msg = os_error_message(e.value)
    assert "no space left" in msg and "previous index is unchanged" in msg and EXIT_WRITE == 5


def test_sqlite_errors_are_told_apart():
    import errno
    import sqlite3
    from pathlib import Path

    from engine.errors import IndexBusy
    from engine.index.integrity import sqlite_error

    db = Path("/x/index.sqlite")
    assert sqlite_error(sqlite3.OperationalError("database or disk is full"), db, None).errno == errno.ENOSPC
    assert sqlite_error(sqlite3.OperationalError("attempt to write a readonly database"), db, None).errno \
        == errno.EROFS
    assert sqlite_error(sqlite3.OperationalError("disk I/O error"), db, None).errno == errno.EIO
    assert isinstance(sqlite_error(sqlite3.OperationalError("database is locked"), db, None), IndexBusy)
    corrupt = sqlite_error(sqlite3.DatabaseError("file is not a database"), db, None)
    assert isinstance(corrupt, IndexCorrupt) and "--rebuild" in str(corrupt)


def test_an_index_on_read_only_media_is_searchable(built, open_library, monkeypatch):
    import errno
    import sqlite3

    built.close()
    real = sqlite3.connect

    def read_only_media(*args, **kwargs):
        if not kwargs.get("uri"):  # every writable open fails as on a write-protected medium
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_media)
    lib = open_library(built.root, create=False)
    assert lib.store.read_only and lib.search("green button").hits
    with pytest.raises(OSError) as e:
        lib.build(rebuild=True)
    assert e.value.errno == errno.EROFS


def test_readers_opening_during_generation_switches_never_see_a_false_corruption(tmp_path, write_library,
                                                                                fast_config):
    import threading

    from engine.pipeline import Library

    root = write_library(tmp_path / "lib", {"a.md": "# A\n\n## Part\n\nThe green button starts the pump.\n"})
    index = tmp_path / "index"
    writer = Library.open(root, fast_config, index, embedder=HashEmbedder())
    writer.build()
    errors: list[str] = []
    stop = threading.Event()

    def switch() -> None:
        for i in range(12):
            (root / "a.md").write_text(f"# A\n\n## Part\n\nThe green button starts pump {i}.\n")
            writer.build()
        stop.set()

    opens = 0
    t = threading.Thread(target=switch)
    t.start()
    while not stop.is_set():
        try:
            with Library.open(root, fast_config, index, embedder=HashEmbedder(), create=False) as reader:
                hits = reader.search("green button").hits
                assert hits and all(h.chunk.id in {c.id for c in reader.all_chunks()} for h in hits)
            opens += 1
        except Exception as e:  # noqa: BLE001 - counted, then asserted
            errors.append(f"{type(e).__name__}: {e}")
    t.join()
    writer.close()
    assert opens > 0 and not errors, errors[:3]


def test_a_chunk_starting_inside_a_code_block_says_so_after_a_reopen(tmp_path, open_library, write_library,
                                                                       fast_config):
    entries = "\n".join(f"#option_{i}: {i}\n#   What option {i} sets, explained at some length." for i in range(40))
    root = write_library(tmp_path / "code", {"cfg.md": f"# Config\n\n## Printer\n\n```\n[printer]\n{entries}\n```\n"})
    config = fast_config.replace(**{"chunking.max_tokens": 120})
    lib = open_library(root, config=config)
    lib.build()
    before = lib.all_chunks()
    assert any(c.in_code for c in before) and not before[0].in_code
    lib.close()
    assert open_library(root, config=config).all_chunks() == before


def test_a_database_from_before_in_code_gets_the_column(built, open_library):
    import sqlite3

    db = built.store.dir / DB_NAME
    built.close()
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE chunks DROP COLUMN in_code")  # as an older version made it
    conn.execute("ALTER TABLE chunks DROP COLUMN end_page")
    conn.commit()
    conn.close()
    again = open_library(built.root)  # same chunker: the chunks read back, none in code
    assert again.all_chunks() and not any(c.in_code or c.end_page for c in again.all_chunks())


@pytest.mark.parametrize("column", ["id", "end_page"])
def test_a_renamed_chunk_column_is_damage_not_a_column_to_add(built, open_library, monkeypatch, column):
    import sqlite3

    db = built.store.dir / DB_NAME
    built.close()
    conn = sqlite3.connect(db)
    conn.execute(f"ALTER TABLE chunks RENAME COLUMN {column} TO {column[:-1]}x")  # as a flipped bit in the schema
    conn.commit()
    conn.close()
    with pytest.raises(IndexCorrupt, match="damaged chunks table.*--rebuild"):
        open_library(built.root)
    real = sqlite3.connect

    def read_only_media(*args, **kwargs):
        if not kwargs.get("uri"):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_media)
    with pytest.raises(IndexCorrupt, match="damaged chunks table|unreadable"):
        open_library(built.root, create=False)


def test_a_read_that_cannot_commit_on_a_damaged_database_is_a_typed_error(built):
    import sqlite3

    class Failing:  # the connection of a database whose pages are malformed at COMMIT
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *a):
            if sql == "COMMIT":
                raise sqlite3.DatabaseError("database disk image is malformed")
            return self.conn.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    store = built.store
    real = store._conn
    store._conn = Failing(real)
    try:
        with pytest.raises(IndexCorrupt, match="--rebuild"):
            with store.reading():
                store.current()
        with pytest.raises(IndexCorrupt, match="chunk"):  # the error inside is the one that surfaces
            with store.reading():
                raise IndexCorrupt("chunk 3 damaged: fieldqa index --rebuild")
        assert not real.in_transaction  # the failed read was ended: the next one can start
    finally:
        store._conn = real
