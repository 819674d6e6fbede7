"""Closing the terminal ends the app: the app runs in a real pty, the pty's master side is
closed (as when a terminal window or an SSH link goes away), and the process must be gone
within 2 s without spinning."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ("import signal, sys; sys.path[:0] = [{root!r}, {root!r} + '/tests/tui']; "
       "from tests.tui.tui_helpers import make_app; from tui.app import end_on_hangup; "
       "app = make_app(); end_on_hangup(app); {extra}; app.run(); sys.exit(app.return_code or 0)")
IGNORE_HUP = "signal.signal(signal.SIGHUP, signal.SIG_IGN)"  # no SIGHUP arrives: the watch must see it


def _start_in_pty(extra: str = "pass") -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        os.environ.update(TERM="xterm-256color", COLUMNS="80", LINES="24")
        os.execv(sys.executable, [sys.executable, "-c", APP.format(root=str(ROOT), extra=extra)])
    return pid, fd


def _read_until_drawn(fd: int, timeout: float = 20.0) -> None:
    seen = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end and b"fieldqa" not in seen:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    assert b"fieldqa" in seen, seen[-500:]


def _gone_within(pid: int, seconds: float) -> tuple[bool, int | None]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return True, status
        time.sleep(0.05)
    return False, None


@pytest.mark.parametrize("how", ["close the terminal", "close the terminal, SIGHUP ignored", "SIGTERM"])
def test_the_app_ends_when_its_terminal_goes_away(how):
    pid, fd = _start_in_pty(IGNORE_HUP if "ignored" in how else "pass")
    try:
        _read_until_drawn(fd)
        t0 = time.monotonic()
        if how == "SIGTERM":
            os.kill(pid, signal.SIGTERM)
        else:
            os.close(fd)
            fd = -1
        gone, _status = _gone_within(pid, 2.0)
        assert gone, f"still running {time.monotonic() - t0:.1f} s after: {how}"
    finally:
        if fd >= 0:
            os.close(fd)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
