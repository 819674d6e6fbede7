"""Run the fieldqa CLI with the test embedder (no model files), for subprocess tests:

    python tests/fieldqa_hash.py index LIBRARY --index DIR      # like `fieldqa index ...`

``FIELDQA_TEST_EMBED_DELAY_MS`` slows each embedded passage (to kill a build mid-way).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine.models  # noqa: E402
from hash_embedder import HashEmbedder  # noqa: E402


def _embedder(*_args, **_kwargs) -> HashEmbedder:
    return HashEmbedder(float(os.environ.get("FIELDQA_TEST_EMBED_DELAY_MS", "0")) / 1000.0)


if __name__ == "__main__":
    engine.models.Embedder = _embedder  # Library.open builds its embedder from here
    from fieldqa.cli import main

    sys.exit(main(sys.argv[1:]))
