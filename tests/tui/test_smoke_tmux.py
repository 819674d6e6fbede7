"""The tmux smoke test (real engine, real models, real terminal), run from pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("smoke_tmux.sh")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_smoke_in_tmux():
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke_tmux: ok" in done.stdout
