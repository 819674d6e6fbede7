"""Where the question sets live, for the scripts that fit models (``models/``) and the benches
(``bench/``): the project's own training sets in ``models/training/`` (models/training/README.md)
and the shared evaluation sets beside the checkout, ``../shared/eval`` (or ``$FIELDQA_EVAL_DIR``).
A set is a folder with ``corpus/`` and ``questions.{train,dev}.tsv`` (engine.eval.retrieval reads
them). The app itself never reads them.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["EVAL", "ROOT", "TRAINING", "set_folder"]

ROOT = Path(__file__).resolve().parents[1]  # the checkout
EVAL = Path(os.environ.get("FIELDQA_EVAL_DIR") or ROOT.parent / "shared" / "eval")
TRAINING = ROOT / "models" / "training"


def set_folder(name: str) -> Path:
    """A set's folder: a training set of the project's own, else a shared evaluation set."""
    return TRAINING / name if (TRAINING / name).is_dir() else EVAL / name
