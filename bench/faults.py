"""Fault injection for the reliability bench: a write error at the Nth file-system call.

``FailAt(n)`` counts the calls a build makes that write to disk from Python (``open`` and
``io.open`` for writing, ``os.fsync``, ``os.replace``, ``os.rename``) and makes the ``n``-th raise
``OSError(ENOSPC)``, as a full disk would. ``FailAt(0)`` only counts. Writes made inside C
libraries (SQLite, hnswlib) do not pass through here; ``file_size_limit`` covers them by running
a command under ``RLIMIT_FSIZE`` (``ulimit -f``), where a write past the limit fails with EFBIG.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import resource
import signal
import subprocess
from collections.abc import Sequence

_WRITE_MODES = set("wax+")


class FailAt:
    def __init__(self, n: int):
        self.n = n
        self.calls = 0
        self.fired: str | None = None  # what the injected error interrupted
        self._saved: dict = {}

    def _tick(self, what: str, target) -> None:
        self.calls += 1
        if self.calls == self.n:
            self.fired = f"{what} {target}"
            raise OSError(errno.ENOSPC, "No space left on device (injected)", str(target))

    def __enter__(self) -> FailAt:
        real_open, real_fsync = builtins.open, os.fsync
        real_replace, real_rename = os.replace, os.rename

        def open_(file, mode="r", *a, **k):
            if isinstance(mode, str) and _WRITE_MODES & set(mode):
                self._tick("open", file)
            return real_open(file, mode, *a, **k)

        def fsync(fd):
            self._tick("fsync", fd)
            return real_fsync(fd)

        def replace(src, dst, *a, **k):
            self._tick("replace", dst)
            return real_replace(src, dst, *a, **k)

        def rename(src, dst, *a, **k):
            self._tick("rename", dst)
            return real_rename(src, dst, *a, **k)

        self._saved = {(builtins, "open"): real_open, (io, "open"): io.open, (os, "fsync"): real_fsync,
                       (os, "replace"): real_replace, (os, "rename"): real_rename}
        builtins.open, io.open = open_, open_  # pathlib opens through io.open
        os.fsync, os.replace, os.rename = fsync, replace, rename
        return self

    def __exit__(self, *exc) -> None:
        for (mod, name), fn in self._saved.items():
            setattr(mod, name, fn)


def file_size_limit(cmd: Sequence[str], limit_bytes: int, timeout_s: float = 300,
                    **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` where no file can grow past ``limit_bytes`` (writes fail with EFBIG)."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(list(cmd), preexec_fn=limit, capture_output=True, text=True, timeout=timeout_s, **kw)
