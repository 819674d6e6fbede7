"""Keeping an index trustworthy: checksums of generation files, one writer at a time, SQLite
errors told apart (damage vs a full disk, read-only media, a busy database), and opening an
index that sits on read-only media."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from pathlib import Path

from engine.errors import IndexBusy, IndexCorrupt, IndexMismatch, rebuild_hint

__all__ = ["WriterLock", "connect_read_only", "file_checksums", "fsync_tree", "sqlite_error"]


def connect_read_only(db: Path, library: Path | None, format_version: int) -> sqlite3.Connection:
    """The database of an index on read-only media (a DVD, a write-protected stick): opened
    immutable, with no journal to create and no lock to take."""
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                               check_same_thread=False, isolation_level=None)
        row = conn.execute("SELECT value FROM info WHERE key='format'").fetchone()
    except sqlite3.DatabaseError as e:
        raise sqlite_error(e, db, library) from e
    if row is None or row[0] != str(format_version):
        raise IndexMismatch(f"index at {db.parent} has format {row[0] if row else '?'}, this version reads "
                            f"{format_version}: {rebuild_hint(library)}")
    return conn


_SQLITE_ERRNO = (("disk is full", errno.ENOSPC), ("readonly", errno.EROFS), ("read-only", errno.EROFS),
                 ("unable to open", errno.EACCES), ("disk i/o error", errno.EIO))


def sqlite_error(e: sqlite3.DatabaseError, db: Path, library: Path | None) -> Exception:
    """A SQLite error told apart: a full disk, read-only media, missing permission or an I/O
    error is an ``OSError`` with its errno (the index may be intact: never rebuild for it), a
    locked database is ``IndexBusy``, anything else means the file is damaged (``IndexCorrupt``,
    naming the rebuild)."""
    text = str(e).lower()
    if "locked" in text or "busy" in text:
        return IndexBusy(f"index database {db} is busy (another fieldqa is writing it); try again")
    for words, code in _SQLITE_ERRNO:
        if words in text:
            return OSError(code, f"{e} ({db})")
    return IndexCorrupt(f"index database {db} is unreadable ({e}): {rebuild_hint(library)}")


class WriterLock:
    """One writer per index folder, across processes: an exclusive ``flock`` on ``write.lock``,
    which holds the holder's pid for the message a second writer gets. The lock goes with the
    process (a killed build leaves nothing to clean up)."""

    NAME = "write.lock"

    def __init__(self, index_dir: Path):
        self.path = Path(index_dir) / self.NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise IndexBusy(f"another `fieldqa index` (pid {holder}) is updating the index at "
                            f"{self.path.parent}; wait for it to finish, then run it again") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            import fcntl

            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def file_checksums(folder: Path) -> dict[str, str]:
    """blake2b of every file under ``folder`` (relative POSIX path -> hex): fast enough to check
    a generation on every open (~1 GB/s), strong enough to catch any damaged byte."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h = hashlib.blake2b(digest_size=20)
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            out[p.relative_to(folder).as_posix()] = h.hexdigest()
    return out


def fsync_tree(root: Path) -> None:
    """Flush every file and folder under ``root`` to disk."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(dirpath, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
