"""On-disk index of one library: SQLite as the single commit point, plus generation folders.

Layout of an index folder::

    index.sqlite         documents, chunks, ingest issues, generations, embedding cache (WAL)
    gen-0007/            the current generation's component files
      manifest.json      format, embedder id/checksum/dim, space, tokenizer, chunker settings
      lexical/           LexicalIndex.save()
      vectors/           VectorIndex.save()

A build writes a *new* ``gen-N`` folder completely (and fsyncs it), then one SQLite
transaction replaces documents/chunks/issues and points ``current_generation`` at
``N``.  Until that transaction commits, readers and a killed build see the previous
generation; afterwards the old folder is deleted.  Folders that no generation row
references (a build that crashed before its commit) are deleted by the next build.

The embedding cache is keyed by (embedder checksum, sha256 of ``Chunk.search_text``)
and committed in batches during a build, so a cancelled or killed build keeps the
embeddings it paid for.

A damaged or mismatched index raises ``IndexCorrupt`` / ``IndexMismatch`` naming the rebuild
command; a full disk, read-only media or a busy database are told apart (engine.index.integrity),
and every generation file is checked against the checksum recorded at its commit.
"""

from __future__ import annotations

import contextlib
import errno
import json
import re
import shutil
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import IndexCorrupt, IndexMismatch, rebuild_hint
from engine.index.integrity import connect_read_only, file_checksums, fsync_tree, sqlite_error
from engine.index.rows import CHUNK_COLS, chunk_from_row, chunk_row, meta_from_json, text_sha
from engine.types import Chunk, DocumentMeta, IngestIssue

__all__ = [
    "FORMAT_VERSION", "DB_NAME", "IndexStore", "IndexMismatch", "DocumentRecord", "Generation",
    "rebuild_hint",
]

FORMAT_VERSION = 1
DB_NAME = "index.sqlite"
MANIFEST = "manifest.json"
_GEN_RE = re.compile(r"^gen-(\d{4,})$")


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One indexed file as the TUI's library view and the answer module see it."""

    path: str
    sha256: str
    format: str
    meta: DocumentMeta
    chunks: int
    issues: tuple[IngestIssue, ...] = ()


@dataclass(frozen=True, slots=True)
class Generation:
    number: int
    dir: Path
    manifest: dict


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS generations (
    number INTEGER PRIMARY KEY, dir TEXT NOT NULL, chunks INTEGER NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now')));
CREATE TABLE IF NOT EXISTS documents (
    path TEXT PRIMARY KEY, doc_id TEXT NOT NULL, sha256 TEXT NOT NULL, format TEXT NOT NULL,
    meta TEXT NOT NULL, status TEXT NOT NULL, chunks INTEGER NOT NULL,
    text TEXT NOT NULL, page_starts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    row INTEGER PRIMARY KEY, {", ".join(c + (" TEXT" if c not in ("start_line", "end_line", "char_start",
        "char_end", "tokens", "page", "ordinal", "in_code", "end_page") else " INTEGER") for c in CHUNK_COLS)},
    text_sha TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, ordinal);
CREATE TABLE IF NOT EXISTS ingest_issues (path TEXT NOT NULL, reason TEXT NOT NULL, severity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, text_sha TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (model, text_sha)) WITHOUT ROWID;
"""


ADDED_COLUMNS = ("in_code", "end_page")  # chunk columns added since the first database format
TABLE_COLUMNS = frozenset({"row", "text_sha", *CHUNK_COLS})  # the chunks table's columns in this version


def _add_new_columns(conn: sqlite3.Connection) -> bool:
    """Columns added since a database was made (``in_code``, ``end_page``: its chunks were cut by an
    older chunker, whose manifest then asks for ``--rebuild``, which keeps the embedding cache).
    False when the chunks table has other columns than this version's, less those: damage."""
    have = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
    if have - TABLE_COLUMNS or TABLE_COLUMNS - have - set(ADDED_COLUMNS):  # a column renamed (a flipped bit): damage
        return False
    if "in_code" not in have:
        conn.execute("ALTER TABLE chunks ADD COLUMN in_code INTEGER NOT NULL DEFAULT 0")
    if "end_page" not in have:
        conn.execute("ALTER TABLE chunks ADD COLUMN end_page INTEGER")
    return True


class IndexStore:
    """Thread-safe access to one index folder (one connection guarded by a lock)."""

    def __init__(self, index_dir: Path, conn: sqlite3.Connection, library: Path | None,
                 read_only: bool = False):
        self.dir = index_dir
        self.read_only = read_only  # opened from read-only media: search works, building does not
        self._conn = conn
        self._lock = threading.RLock()
        self._library = library

    # ---- opening ---------------------------------------------------------------------

    @classmethod
    def open(cls, index_dir: Path, *, create: bool = True, library: Path | None = None) -> IndexStore:
        index_dir = Path(index_dir)
        db = index_dir / DB_NAME
        hint = rebuild_hint(library)
        if db.exists() and db.stat().st_size == 0:
            raise IndexCorrupt(f"index database {db} is empty (truncated): {hint}")
        if not db.exists():
            if not create and index_dir.is_dir() and any(_GEN_RE.match(p.name) for p in index_dir.iterdir()):
                raise IndexCorrupt(f"index database {db} is missing (its generation folders remain): {hint}")
            if not create:
                raise IndexCorrupt(f"no index at {index_dir}: build it with `fieldqa index "
                                   f"{library if library is not None else 'PATH'}`")
            index_dir.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            if not _add_new_columns(conn):
                conn.close()
                raise IndexCorrupt(f"index database {db} has a damaged chunks table: {hint}")
            row = conn.execute("SELECT value FROM info WHERE key='format'").fetchone()
            if row is None:
                conn.execute("INSERT INTO info VALUES ('format', ?)", (str(FORMAT_VERSION),))
            elif row[0] != str(FORMAT_VERSION):
                conn.close()
                raise IndexMismatch(f"index at {index_dir} has format {row[0]}, this version reads "
                                    f"{FORMAT_VERSION}: {hint}")
        except sqlite3.DatabaseError as e:
            err = sqlite_error(e, db, library)
            if isinstance(err, OSError) and err.errno in (errno.EROFS, errno.EACCES) and not create:
                return cls(index_dir, connect_read_only(db, library, FORMAT_VERSION), library, read_only=True)
            raise err from e
        return cls(index_dir, conn, library)

    @staticmethod
    def destroy(index_dir: Path) -> None:
        """Delete an index folder's database and generations (for ``--rebuild`` of a broken index)."""
        index_dir = Path(index_dir)
        for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
            (index_dir / name).unlink(missing_ok=True)
        if index_dir.is_dir():
            for p in index_dir.iterdir():
                if p.is_dir() and _GEN_RE.match(p.name):
                    shutil.rmtree(p, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def reading(self):
        """One read transaction: every query inside sees the same committed generation, even
        while another process switches to a new one."""
        with self._lock:
            self._run("BEGIN")
            try:
                yield self
            except BaseException:
                self._end_read()  # quietly: the error raised already names the damage
                raise
            if self._conn.in_transaction:
                try:
                    self._run("COMMIT")
                except BaseException:
                    self._end_read()
                    raise

    def _end_read(self) -> None:
        """End a read transaction on a database that may be damaged (the next read starts anew)."""
        for sql in ("COMMIT", "ROLLBACK"):
            with contextlib.suppress(sqlite3.DatabaseError):
                if self._conn.in_transaction:
                    self._conn.execute(sql)

    def _run(self, sql: str) -> None:
        """A statement whose failure on a damaged database is a typed error naming the rebuild."""
        try:
            self._conn.execute(sql)
        except sqlite3.DatabaseError as e:
            raise sqlite_error(e, self.dir / DB_NAME, self._library) from e

    def current_number(self) -> int | None:
        row = self._q("SELECT value FROM info WHERE key='current_generation'")
        return int(row[0][0]) if row else None

    def _q(self, sql: str, params: Sequence = ()) -> list[tuple]:
        try:
            with self._lock:
                return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise sqlite_error(e, self.dir / DB_NAME, self._library) from e

    # ---- generations -----------------------------------------------------------------

    def current(self) -> Generation | None:
        """The committed generation, its manifest read and checked against SQLite."""
        row = self._q("SELECT value FROM info WHERE key='current_generation'")
        if not row:
            return None
        number = int(row[0][0])
        gen = self._q("SELECT dir, chunks FROM generations WHERE number=?", (number,))
        hint = rebuild_hint(self._library)
        if not gen:
            raise IndexCorrupt(f"index at {self.dir}: generation {number} is not recorded: {hint}")
        gdir = self.dir / gen[0][0]
        path = gdir / MANIFEST
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise IndexCorrupt(f"index at {self.dir}: {path} is missing: {hint}") from e
        except (OSError, ValueError) as e:
            raise IndexCorrupt(f"index at {self.dir}: {path} is unreadable ({e}): {hint}") from e
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
            raise IndexMismatch(f"index at {self.dir}: manifest format "
                                f"{manifest.get('format') if isinstance(manifest, dict) else '?'}"
                                f" is not {FORMAT_VERSION}: {hint}")
        self._verify_files(gdir, hint)
        n_chunks = self._q("SELECT COUNT(*) FROM chunks")[0][0]
        if manifest.get("chunks") != gen[0][1] or n_chunks != gen[0][1]:
            raise IndexCorrupt(f"index at {self.dir}: manifest says {manifest.get('chunks')} chunks, "
                               f"database {n_chunks}: {hint}")
        return Generation(number, gdir, manifest)

    def _verify_files(self, gdir: Path, hint: str) -> None:
        """Every file of the generation as it was at commit (blake2b recorded in SQLite)."""
        row = self._q("SELECT value FROM info WHERE key='generation_checksums'")
        if not row:  # an index from before checksums: nothing to compare with
            return
        want: dict[str, str] = json.loads(row[0][0])
        try:
            have = file_checksums(gdir)
        except OSError as e:  # a file vanished while being read (a switch): missing, as below
            raise IndexCorrupt(f"index at {self.dir}: {gdir.name} is incomplete ({e.strerror}): {hint}") from e
        for rel in sorted(set(want) | set(have)):
            if rel not in have:
                raise IndexCorrupt(f"index at {self.dir}: {gdir.name}/{rel} is missing: {hint}")
            if want.get(rel) != have[rel]:
                what = "is not part of the index" if rel not in want else "was changed or damaged"
                raise IndexCorrupt(f"index at {self.dir}: {gdir.name}/{rel} {what} (checksum): {hint}")

    def new_generation_dir(self) -> tuple[int, Path]:
        """A fresh, empty ``gen-N`` folder numbered after every existing one."""
        used = [int(r[0]) for r in self._q("SELECT number FROM generations")]
        used += [int(m.group(1)) for p in self.dir.iterdir() if (m := _GEN_RE.match(p.name))]
        number = max(used, default=0) + 1
        gdir = self.dir / f"gen-{number:04d}"
        gdir.mkdir()
        return number, gdir

    def remove_stale_generations(self) -> list[str]:
        """Delete generation folders the database does not point at (old or crashed builds)."""
        keep = {r[0] for r in self._q(
            "SELECT g.dir FROM generations g JOIN info i ON i.key='current_generation' "
            "AND CAST(i.value AS INTEGER)=g.number")}
        removed = []
        for p in self.dir.iterdir():
            if p.is_dir() and _GEN_RE.match(p.name) and p.name not in keep:
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p.name)
        return removed

    def commit_generation(self, number: int, gdir: Path, manifest: dict,
                          documents: Sequence[tuple], chunks: Sequence[Chunk], text_shas: Sequence[str],
                          issues: Sequence[IngestIssue], info: Mapping[str, str] | None = None) -> None:
        """Write the manifest, fsync the folder, then switch to it in one transaction.

        ``documents`` rows: (path, doc_id, sha256, format, meta_json, status, chunks, text, page_starts_json).
        ``chunks`` are in row order; ``text_shas[i]`` is the cache key of ``chunks[i]``.
        """
        (gdir / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        fsync_tree(gdir)
        sums = json.dumps(file_checksums(gdir), sort_keys=True)
        rows = [(i, *chunk_row(c), text_shas[i]) for i, c in enumerate(chunks)]
        marks = ",".join("?" * (len(CHUNK_COLS) + 2))
        with self._lock, self._write_transaction() as c:
            c.execute("DELETE FROM documents")
            c.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?)", documents)
            c.execute("DELETE FROM chunks")
            c.executemany(f"INSERT INTO chunks (row, {', '.join(CHUNK_COLS)}, text_sha) "
                          f"VALUES ({marks})", rows)
            c.execute("DELETE FROM ingest_issues")
            c.executemany("INSERT INTO ingest_issues VALUES (?,?,?)",
                          [(i.path, i.reason, i.severity) for i in issues])
            c.execute("INSERT INTO generations (number, dir, chunks) VALUES (?,?,?)",
                      (number, gdir.name, len(chunks)))
            c.execute("INSERT OR REPLACE INTO info VALUES ('current_generation', ?)", (str(number),))
            c.execute("INSERT OR REPLACE INTO info VALUES ('generation_checksums', ?)", (sums,))
            c.executemany("INSERT OR REPLACE INTO info VALUES (?, ?)", list((info or {}).items()))
            c.execute("DELETE FROM generations WHERE number != ?", (number,))
            # the cache keeps only texts some chunk still has (chunk vectors of any model)
            c.execute("DELETE FROM embeddings WHERE text_sha NOT IN (SELECT text_sha FROM chunks) "
                      "AND model NOT LIKE '%:units'")  # answer units are pruned by their own phase

    @contextlib.contextmanager
    def _write_transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; on any error a rollback (when a transaction is open: a
        failed BEGIN or COMMIT may leave none) and the SQLite error told apart (disk full,
        read-only, corrupt...) by integrity.sqlite_error."""
        c = self._conn
        try:
            c.execute("BEGIN IMMEDIATE")
            yield c
            c.execute("COMMIT")
        except BaseException as e:
            if c.in_transaction:  # the real error below matters more; SQLite rolls back on close too
                with contextlib.suppress(sqlite3.Error):
                    c.execute("ROLLBACK")
            if isinstance(e, sqlite3.DatabaseError):
                raise sqlite_error(e, self.dir / DB_NAME, self._library) from e
            raise

    def get_info(self, key: str) -> str | None:
        row = self._q("SELECT value FROM info WHERE key=?", (key,))
        return row[0][0] if row else None

    def set_info(self, key: str, value: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO info VALUES (?, ?)", (key, value))

    # ---- rows ------------------------------------------------------------------------

    def chunks(self) -> list[Chunk]:
        """Every chunk in row order, each text checked against the sha256 recorded with it."""
        # read-only media: the columns added since the database was made (``_add_new_columns``) may be
        # missing; any other missing column is damage, and the query says so
        have = {r[1] for r in self._q("PRAGMA table_info(chunks)")}
        if have - TABLE_COLUMNS:
            raise IndexCorrupt(f"index database {self.dir / DB_NAME} has a damaged chunks table: "
                               f"{rebuild_hint(self._library)}")
        cols = ", ".join(f"NULL AS {c}" if c in ADDED_COLUMNS and c not in have else c for c in CHUNK_COLS)
        rows = self._q(f"SELECT {cols}, text_sha FROM chunks ORDER BY row")
        out = []
        for r in rows:
            chunk = chunk_from_row(r[:-1])
            if text_sha(chunk) != r[-1]:
                raise IndexCorrupt(f"index database {self.dir / DB_NAME}: the stored text of passage "
                                   f"{chunk.location} was altered (checksum): {rebuild_hint(self._library)}")
            out.append(chunk)
        return out

    def text_shas(self) -> list[str]:
        return [r[0] for r in self._q("SELECT text_sha FROM chunks ORDER BY row")]

    def document_rows(self) -> dict[str, tuple[str, str, str, DocumentMeta]]:
        """path -> (sha256, format, meta_json, meta) of every indexed document."""
        return {p: (sha, fmt, mj, meta_from_json(mj))
                for p, sha, fmt, mj in self._q("SELECT path, sha256, format, meta FROM documents")}

    def document_full_rows(self, paths: Iterable[str]) -> list[tuple]:
        out = []
        for p in paths:
            out.extend(self._q("SELECT * FROM documents WHERE path=?", (p,)))
        return out

    def documents(self) -> list[DocumentRecord]:
        issues: dict[str, list[IngestIssue]] = {}
        for i in self.issues():
            issues.setdefault(i.path, []).append(i)
        return [DocumentRecord(p, sha, fmt, meta_from_json(mj), n, tuple(issues.get(p, ())))
                for p, sha, fmt, mj, n in self._q(
                    "SELECT path, sha256, format, meta, chunks FROM documents ORDER BY path")]

    def issues(self) -> list[IngestIssue]:
        return [IngestIssue(p, r, s) for p, r, s in
                self._q("SELECT path, reason, severity FROM ingest_issues ORDER BY path")]

    def document_text(self, path: str) -> str | None:
        row = self._q("SELECT text FROM documents WHERE path=?", (path,))
        return row[0][0] if row else None

    # ---- embedding cache -------------------------------------------------------------

    def _cache_rows(self, columns: str, model: str, shas: Iterable[str]) -> list[tuple]:
        """``columns`` of the cache rows of ``model`` for ``shas`` (queried 500 at a time)."""
        wanted = list(dict.fromkeys(shas))
        return [row for i in range(0, len(wanted), 500)
                for row in self._q(f"SELECT {columns} FROM embeddings WHERE model=? AND text_sha IN "
                                   f"({','.join('?' * len(wanted[i:i + 500]))})", (model, *wanted[i:i + 500]))]

    def cached_embeddings(self, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for sha, dim, blob in self._cache_rows("text_sha, dim, vec", model, shas):
            vec = np.frombuffer(blob, dtype="<f4")
            if vec.shape == (dim,):
                out[sha] = vec
        return out

    def cached_shas(self, model: str, shas: Iterable[str]) -> set[str]:
        """Which of ``shas`` the cache holds for ``model`` (no vector is read)."""
        return {row[0] for row in self._cache_rows("text_sha", model, shas)}

    def put_embeddings(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(model, sha, int(v.shape[0]), np.asarray(v, dtype="<f4").tobytes()) for sha, v in items]
        with self._lock, self._write_transaction() as c:
            c.executemany("INSERT OR REPLACE INTO embeddings VALUES (?,?,?,?)", rows)

    def prune_embeddings(self, model: str, keep: Iterable[str]) -> None:
        """Drop ``model``'s cached vectors whose text is not in ``keep`` (shas)."""
        with self._lock, self._write_transaction() as c:
            c.execute("DELETE FROM embeddings WHERE model=? AND text_sha NOT IN (SELECT value FROM json_each(?))",
                      (model, json.dumps(sorted(keep))))

    def drop_unit_vectors_except(self, model: str) -> None:
        """Forget the answer-unit vectors kept under any other key than ``model`` (another embedder,
        another way of making them): only the current key's are ever read."""
        with self._lock, self._write_transaction() as c:
            c.execute("DELETE FROM embeddings WHERE model LIKE '%:units' AND model != ?", (model,))

    def import_embeddings(self, other_db: Path) -> int:
        """Copy another index's embedding cache into this one (same texts, same model, no re-embedding)."""
        with self._lock:
            before = self.embedding_count()
            self._conn.execute("ATTACH DATABASE ? AS other", (str(other_db),))
            try:
                self._conn.execute("INSERT OR IGNORE INTO embeddings SELECT * FROM other.embeddings")
            finally:
                self._conn.execute("DETACH DATABASE other")
            return self.embedding_count() - before

    def embedding_count(self) -> int:
        return self._q("SELECT COUNT(*) FROM embeddings")[0][0]
