"""`python -m fieldqa.bundle OUT.tar`: everything an air-gapped machine needs, in one archive.

The archive holds ``wheels/`` (fieldqa and every runtime dependency, built or
downloaded for this platform and Python), ``models.tar.gz`` (the built models
with their manifests, as written by ``fieldqa models pack``) and ``INSTALL.txt``.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

INSTALL = """\
fieldqa offline bundle
======================
On the air-gapped machine (same OS, CPU architecture and Python minor version):

    tar xf {name}
    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links fieldqa-bundle/wheels fieldqa
    .venv/bin/fieldqa models unpack fieldqa-bundle/models.tar.gz
    .venv/bin/fieldqa /path/to/manuals
"""


def make_bundle(out: Path, repo: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "fieldqa-bundle"
        wheels = root / "wheels"
        wheels.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "-w", str(wheels), str(repo)], check=True)
        subprocess.run([sys.executable, "-m", "fieldqa", "models", "pack", str(root / "models.tar.gz")],
                       check=True)
        (root / "INSTALL.txt").write_text(INSTALL.format(name=out.name), encoding="utf-8")
        with tarfile.open(out, "w") as tar:
            tar.add(root, arcname="fieldqa-bundle")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m fieldqa.bundle OUT.tar")
    make_bundle(Path(sys.argv[1]).resolve(), Path(__file__).resolve().parent.parent)
