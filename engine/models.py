"""ONNX model wrappers: the sentence embedder and a generic cross-encoder.

No UI imports.  Model folders hold ``model.onnx`` + ``tokenizer.json`` (+ ``manifest.json``),
built by ``fieldqa models build`` / ``make models`` (see models/README.md).

Determinism: a text's vector does not depend on what it is batched with.  Batches are
sorted by token length and padded (right, with the pad id) only to the longest member;
the graph masks padding out of attention and pooling, so padding and batch size change
the result only by float rounding (measured max abs diff is reported by
``tests/test_models_slow.py``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from engine.search.fusion import RerankBlend

FIX = "run `fieldqa models build` (or `make models`)"
EMBEDDER_FILES = ("model.onnx", "tokenizer.json")
RECENT_QUERIES = 64  # query vectors remembered (a question is embedded by its search and its answer)


class ModelError(Exception):
    """A model folder is missing, incomplete or corrupt; the message names the fix."""


# ----------------------------------------------------------------------------- files
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def embedder_identity(manifest: dict[str, Any]) -> str:
    """What names an embedder to the indexes and models fitted on its vectors (``Embedder.checksum``):
    the sha256 of its model.onnx, as its manifest records it."""
    return str((manifest.get("files") or {}).get("model.onnx", ""))


def query_encoder_identity(manifest: dict[str, Any]) -> str:
    """What names a query encoder (models/query_encoder/) to the models fitted on its vectors: the
    sha256 of the trained delta it was built from (its graph is built from that delta for the
    embedder its manifest names, which the embedder checks), else of its model.onnx. The delta's,
    not the graph's, so that a graph serialised byte for byte otherwise by another onnx still
    counts as the same encoder."""
    delta = (manifest.get("source_delta") or {}).get("sha256")
    return str(delta or embedder_identity(manifest))


def read_manifest(model_dir: Path, *, required: bool) -> dict[str, Any] | None:
    path = Path(model_dir) / "manifest.json"
    if not path.is_file():
        if required:
            raise ModelError(f"model files missing in {model_dir} (no manifest.json): {FIX}")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelError(f"unreadable manifest {path} ({e}): {FIX} --force") from e
    if not isinstance(data, dict):
        raise ModelError(f"unreadable manifest {path}: {FIX} --force")
    return data


def require_files(model_dir: Path, names: Sequence[str]) -> None:
    model_dir = Path(model_dir)
    missing = [n for n in names if not (model_dir / n).is_file()]
    if missing:
        raise ModelError(f"model files missing in {model_dir} ({', '.join(missing)}): {FIX}")


def verify_checksums(model_dir: Path, manifest: dict[str, Any], names: Sequence[str] | None = None) -> None:
    """Compare sha256 of the files listed in the manifest (or only ``names``)."""
    model_dir = Path(model_dir)
    files: dict[str, str] = manifest.get("files") or {}
    for name in (names if names is not None else list(files)):
        expected = files.get(name)
        if expected is None:
            continue
        path = model_dir / name
        if not path.is_file():
            raise ModelError(f"model files missing in {model_dir} ({name}): {FIX}")
        if sha256_file(path) != expected:
            raise ModelError(f"checksum mismatch for {path} (corrupt or stale): {FIX} --force")


# ------------------------------------------------------------------------- tokenizer
@lru_cache(maxsize=8)
def _load_tokenizer_cached(path: str, mtime_ns: int, size: int):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.no_padding()
    tok.no_truncation()
    return tok


def load_tokenizer(model_dir: Path):
    """The folder's ``tokenizers.Tokenizer`` (no ONNX session; cached per file version).

    Padding and truncation are switched off; callers handle both.  The object is
    shared: do not enable padding/truncation on it."""
    path = Path(model_dir) / "tokenizer.json"
    if not path.is_file():
        raise ModelError(f"model files missing in {model_dir} (tokenizer.json): {FIX}")
    st = path.stat()
    try:
        return _load_tokenizer_cached(str(path.resolve()), st.st_mtime_ns, st.st_size)
    except Exception as e:  # tokenizers raises plain Exception subclasses
        raise ModelError(f"cannot read {path} ({e}): {FIX} --force") from e


@lru_cache(maxsize=1)
def default_embedder_dir() -> Path:
    """The configured embedder folder (resolved once per process)."""
    from engine.config import load_config

    return load_config().embedder_dir


def count_tokens(text: str, tokenizer: Any = None) -> int:
    """Tokens of ``text`` without prefix or special tokens.

    ``tokenizer`` may be a Tokenizer, a model folder, or None (the configured embedder)."""
    if tokenizer is None:
        tokenizer = default_embedder_dir()
    if isinstance(tokenizer, (str, Path)):
        tokenizer = load_tokenizer(Path(tokenizer))
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def token_counter(model_dir: Path | None = None) -> Callable[[str], int]:
    """A ``count_tokens`` bound to one tokenizer (what the chunker wants)."""
    tok = load_tokenizer(model_dir if model_dir is not None else default_embedder_dir())
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


# --------------------------------------------------------------------------- session
def _session(model_path: Path, threads: int):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, int(threads))
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise ModelError(f"cannot load {model_path} ({str(e)[:300]}): {FIX} --force") from e


def _batches_by_length(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index batches, longest first; equal lengths keep input order (stable)."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    bs = max(1, int(batch_size))
    return [order[i:i + bs] for i in range(0, len(order), bs)]


def _pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(s) for s in seqs)
    ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=np.int64)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return ids, mask


def pool_spans(tokens: np.ndarray, offsets: np.ndarray, spans: Sequence[tuple[int, int]]) -> list[np.ndarray | None]:
    """The L2-normalised mean of the token vectors (``tokens[k]`` for character range
    ``offsets[k]``; special and padding tokens have an empty range) overlapping each span; None
    for a span no token overlaps."""
    starts, ends = offsets[:, 0], offsets[:, 1]
    real = ends > starts
    out: list[np.ndarray | None] = []
    for a, b in spans:
        sel = real & (starts < b) & (ends > a)
        if not sel.any():
            out.append(None)
            continue
        v = tokens[:len(offsets)][sel].mean(0)
        n = float(np.linalg.norm(v))
        out.append((v / n).astype(np.float32) if n > 0 else None)
    return out


# -------------------------------------------------------------------------- embedder
class Embedder:
    """Sentence embeddings from an ONNX graph with inputs ``input_ids``/``attention_mask``
    (int64 [batch, seq]) and output ``sentence_embedding`` (float32 [batch, dim], already
    mean-pooled and L2-normalised), as built by ``models/build_e5.py``."""

    def __init__(self, model_dir: Path, *, threads: int = 2, max_length: int = 512,
                 batch_size: int = 16, verify: bool = False, query_model_dir: Path | None = None):
        self.model_dir = Path(model_dir)
        manifest = read_manifest(self.model_dir, required=True)
        assert manifest is not None
        require_files(self.model_dir, EMBEDDER_FILES)
        if verify:
            verify_checksums(self.model_dir, manifest)
        self.manifest = manifest
        self.model_id: str = str(manifest.get("name") or self.model_dir.name)
        self.checksum: str = embedder_identity(manifest)
        self.dim: int = int(manifest.get("dim", 0))
        self.max_length: int = max(2, min(int(max_length), int(manifest.get("max_length", max_length))))
        self.batch_size = max(1, int(batch_size))
        prefixes = manifest.get("prefixes") or {}
        self.query_prefix: str = prefixes.get("query", "")
        self.passage_prefix: str = prefixes.get("passage", "")
        self.tokenizer = load_tokenizer(self.model_dir)
        pad = manifest.get("pad_id")
        self.pad_id: int = int(pad if pad is not None else (self.tokenizer.token_to_id("<pad>") or 0))
        self._session = _session(self.model_dir / "model.onnx", threads)
        names = {i.name for i in self._session.get_inputs()}
        outs = [o.name for o in self._session.get_outputs()]
        if not {"input_ids", "attention_mask"} <= names or "sentence_embedding" not in outs:
            raise ModelError(f"{self.model_dir / 'model.onnx'} has unexpected inputs/outputs "
                             f"({sorted(names)} -> {outs}): {FIX} --force")
        self._feeds_type_ids = "token_type_ids" in names
        self.pools_spans: bool = "token_embeddings" in outs  # embed_passages_pooled can work
        shape = next(o.shape for o in self._session.get_outputs() if o.name == "sentence_embedding")
        if not self.dim and isinstance(shape[-1], int):
            self.dim = int(shape[-1])
        self._query_session: Any = None  # the query encoder's graph (None: questions through the embedder)
        self.query_model_dir: Path | None = None
        self.query_checksum: str = ""  # names the query encoder (query_encoder_identity; '' = none)
        if query_model_dir is not None:
            self._open_query_model(Path(query_model_dir), threads, verify)
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, tuple[np.ndarray, np.ndarray | None]] = OrderedDict()  # question -> vectors
        self.recent_queries = RECENT_QUERIES  # how many query vectors to remember (0: none; benches)

    def _open_query_model(self, qdir: Path, threads: int, verify: bool) -> None:
        """The query encoder (models/query_encoder/): the embedder's graph with trained updates in
        its upper layers, forked there, so one run gives the embedder's own vector of a question
        (``base_embedding``) and the encoder's (``sentence_embedding``); built for this
        embedder's model.onnx, same tokenizer."""
        manifest = read_manifest(qdir, required=True)
        assert manifest is not None
        require_files(qdir, ("model.onnx",))
        if verify:
            verify_checksums(qdir, manifest)
        built_for = str((manifest.get("embedder") or {}).get("model_sha256", ""))
        if built_for != self.checksum:
            raise ModelError(f"query encoder {qdir} was built for another embedder "
                             f"({built_for[:12] or '?'}… != {self.checksum[:12]}…): {FIX} --force")
        session = _session(qdir / "model.onnx", threads)
        if not {"sentence_embedding", "base_embedding"} <= {o.name for o in session.get_outputs()}:
            raise ModelError(f"{qdir / 'model.onnx'} lacks the sentence_embedding / base_embedding outputs: "
                             f"{FIX} --force")
        self._query_session = session
        self.query_model_dir = qdir
        self.query_checksum = query_encoder_identity(manifest)

    # -- tokens -------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` without prefix and special tokens."""
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def encode_ids(self, texts: Sequence[str], prefix: str = "") -> list[list[int]]:
        """Token ids with specials, truncated to ``max_length`` (the final ``</s>`` is kept)."""
        return [ids for ids, _offsets in self._encode(texts, prefix)]

    def _encode(self, texts: Sequence[str], prefix: str) -> list[tuple[list[int], np.ndarray]]:
        """``encode_ids`` with each token's character range in ``prefix + text`` ([n, 2]; empty
        for special tokens)."""
        out = []
        for e in self.tokenizer.encode_batch([prefix + t for t in texts]):
            ids, offsets = list(e.ids), np.asarray(e.offsets, dtype=np.int64).reshape(-1, 2)
            if len(ids) > self.max_length:
                ids = ids[:self.max_length - 1] + ids[-1:]
                offsets = np.concatenate([offsets[:self.max_length - 1], np.zeros((1, 2), np.int64)])
            out.append((ids, offsets))
        return out

    def _run(self, seqs: Sequence[Sequence[int]], outputs: list[str], session: Any = None) -> list[np.ndarray]:
        """One padded batch through the graph (the embedder's unless ``session`` is given)."""
        ids, mask = _pad(seqs, self.pad_id)
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._feeds_type_ids:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            return (session or self._session).run(outputs, feed)

    # -- vectors ------------------------------------------------------------------
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (the embedder's own); the last few questions are remembered, since one
        question is embedded by the search and again by the answer that continues from it."""
        return self.embed_questions(texts)[0]

    def tuned_queries(self, texts: Sequence[str]) -> np.ndarray | None:
        """The query encoder's vectors of the questions, from the same run as ``embed_queries``'
        (and remembered with them); None without a query encoder."""
        return self.embed_questions(texts)[1]

    def embed_questions(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """(``embed_queries``, ``tuned_queries``) of ``texts`` from one lookup or run: the search
        wants both, and with nothing remembered (``recent_queries = 0``) two calls would run twice."""
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not a single str")
        texts = list(texts)
        if self.recent_queries <= 0:
            return self._embed_questions(texts)
        with self._lock:
            known = {t: self._recent[t] for t in texts if t in self._recent}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            own, tuned = self._embed_questions(missing)
            with self._lock:
                for i, t in enumerate(missing):
                    self._recent[t] = known[t] = (own[i], None if tuned is None else tuned[i])
                    self._recent.move_to_end(t)
                while len(self._recent) > self.recent_queries:
                    self._recent.popitem(last=False)
        if not texts:
            empty = np.zeros((0, self.dim), np.float32)
            return empty, (empty if self._query_session is not None else None)
        own = np.stack([known[t][0] for t in texts])
        return own, (np.stack([known[t][1] for t in texts]) if self._query_session is not None else None)

    def _embed_questions(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """(the embedder's vectors, the query encoder's or None) of ``texts``."""
        seqs = self.encode_ids(texts, self.query_prefix)
        if self._query_session is None:
            return self.embed_ids(seqs), None
        own = np.zeros((len(seqs), self.dim), dtype=np.float32)
        tuned = np.zeros_like(own)
        for idx in _batches_by_length([len(s) for s in seqs], self.batch_size) if seqs else []:
            own[idx], tuned[idx] = self._run([seqs[i] for i in idx], ["base_embedding", "sentence_embedding"],
                                             self._query_session)
        return own, tuned

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.passage_prefix)

    def embed_ids(self, seqs: Sequence[Sequence[int]], *, sort: bool = True,
                  batch_size: int | None = None) -> np.ndarray:
        """Embed pre-tokenized sequences. ``sort=False`` keeps input order in batches
        (naive batching, used by the bench for comparison)."""
        n = len(seqs)
        out = np.zeros((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        bs = batch_size or self.batch_size
        if sort:
            batches = _batches_by_length([len(s) for s in seqs], bs)
        else:
            batches = [np.arange(i, min(i + bs, n)) for i in range(0, n, bs)]
        for idx in batches:
            out[idx] = self._run([seqs[i] for i in idx], ["sentence_embedding"])[0]
        return out

    def embed_passages_pooled(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
                              ) -> tuple[np.ndarray, list[list[np.ndarray | None]]]:
        """Passage vectors and, from the same forward pass, a vector for each character span
        ``spans[i]`` of ``texts[i]`` ("late chunking"): the token vectors whose characters overlap
        the span, averaged and L2-normalised. Spans past the model's window (``max_length``) are
        pooled from a further pass over the text from the first of them on (one pass per window,
        not per span); a span no token overlaps gets None. Needs the graph's ``token_embeddings``
        output (``pools_spans``)."""
        if not self.pools_spans:
            raise ModelError(f"{self.model_dir / 'model.onnx'} has no token_embeddings output: {FIX} --force")
        texts = list(texts)
        shift = len(self.passage_prefix)
        encoded = self._encode(texts, self.passage_prefix)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled: list[list[np.ndarray | None]] = [[] for _ in texts]
        for idx in _batches_by_length([len(ids) for ids, _o in encoded], self.batch_size) if texts else []:
            vecs, tokens = self._run([encoded[i][0] for i in idx], ["sentence_embedding", "token_embeddings"])
            out[idx] = vecs
            for row, i in enumerate(idx):
                pooled[i] = pool_spans(tokens[row], encoded[i][1], [(a + shift, b + shift) for a, b in spans[i]])
        reach = [int(offsets[:, 1].max(initial=shift)) - shift for _ids, offsets in encoded]  # last char seen
        past = {i: [j for j, v in enumerate(got)  # missed, past the window: each window starts further on
                    if v is None and spans[i][j][1] > max(spans[i][j][0], reach[i]) and spans[i][j][0] > 0]
                for i, got in enumerate(pooled)}
        past = {i: js for i, js in past.items() if js}
        if past:  # the next window starts at the first span it did not reach
            starts = {i: min(spans[i][j][0] for j in js) for i, js in past.items()}
            _vecs, tails = self.embed_passages_pooled(
                [texts[i][starts[i]:] for i in past],
                [[(spans[i][j][0] - starts[i], spans[i][j][1] - starts[i]) for j in js] for i, js in past.items()])
            for (i, js), got in zip(past.items(), tails):
                for j, v in zip(js, got):
                    pooled[i][j] = v
        return out, pooled

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("pass a sequence of texts, not a single str")
        return self.embed_ids(self.encode_ids(list(texts), prefix))

    def __repr__(self) -> str:
        q = f", queries also through {self.query_model_dir.name!r}" if self.query_model_dir else ""
        return f"Embedder({self.model_id!r}, dim={self.dim}, max_length={self.max_length}{q})"


# ---------------------------------------------------------------------- cross-encoder
def encode_pair(tokenizer, query: str, passage: str, max_length: int, n_special: int):
    """The pair template with the truncation rule every cross-encoder input follows (training
    included): cut the passage first, the query only when it would leave the passage less than
    half of the budget."""
    eq = tokenizer.encode(query, add_special_tokens=False)
    ep = tokenizer.encode(passage, add_special_tokens=False)
    budget = max(2, max_length - n_special)
    lq, lp = len(eq.ids), len(ep.ids)
    if lq + lp > budget:
        keep_p = min(lp, max(budget - lq, budget // 2))
        keep_q = min(lq, budget - keep_p)
        if keep_q < lq:
            eq.truncate(keep_q)
        if keep_p < lp:
            ep.truncate(keep_p)
    return tokenizer.post_process(eq, ep, add_special_tokens=True)


class CrossEncoder:
    """Relevance scores from any ONNX sequence-classification export with a
    ``tokenizer.json`` next to it.

    Pairs are encoded with the tokenizer's own pair template (``tokenizer.post_process``;
    for XLM-R ``<s> q </s></s> p </s>``, for BERT ``[CLS] q [SEP] p [SEP]`` with
    ``token_type_ids``).  Truncation to ``max_length`` cuts the passage first; the query
    is cut only when it alone would leave the passage less than half the budget.
    Only the inputs the graph declares are fed (``input_ids``, ``attention_mask``,
    ``token_type_ids``).  Score = the first output: shape ``[n]`` or ``[n, 1]`` as is;
    ``[n, k]`` with k >= 2: the last column (the positive-class logit for 2-way heads).
    An optional ``manifest.json`` gives ``name``, ``files["model.onnx"]`` (checksum) and
    ``blend`` (the rerank stage's learned weighted RRF, engine.search.fusion.RerankBlend)."""

    SUPPORTED_INPUTS = {"input_ids", "attention_mask", "token_type_ids"}

    def __init__(self, model_dir: Path, *, threads: int = 2, max_length: int = 256,
                 batch_size: int = 16, verify: bool = False):
        self.model_dir = Path(model_dir)
        if not self.model_dir.is_dir():
            raise ModelError(f"model files missing in {self.model_dir} (no such folder): {FIX}")
        require_files(self.model_dir, EMBEDDER_FILES)
        manifest = read_manifest(self.model_dir, required=False) or {}
        if verify and manifest:
            verify_checksums(self.model_dir, manifest)
        self.manifest = manifest
        self.model_id: str = str(manifest.get("name") or self.model_dir.name)
        try:
            self.blend: RerankBlend | None = RerankBlend.from_manifest(manifest)
        except ValueError as e:
            raise ModelError(f"{self.model_dir / 'manifest.json'}: {e}: {FIX} --force") from e
        self._checksum: str | None = (manifest.get("files") or {}).get("model.onnx")
        self.max_length = max(8, int(max_length))
        self.batch_size = max(1, int(batch_size))
        self.tokenizer = load_tokenizer(self.model_dir)
        self._n_special = int(self.tokenizer.num_special_tokens_to_add(True))
        pad = manifest.get("pad_id")
        if pad is None:
            for t in ("<pad>", "[PAD]", "<PAD>"):
                pad = self.tokenizer.token_to_id(t)
                if pad is not None:
                    break
        self.pad_id = int(pad or 0)
        self._session = _session(self.model_dir / "model.onnx", threads)
        self.input_names = [i.name for i in self._session.get_inputs()]
        unknown = set(self.input_names) - self.SUPPORTED_INPUTS
        if unknown or "input_ids" not in self.input_names:
            raise ModelError(f"{self.model_dir / 'model.onnx'}: unsupported inputs {self.input_names} "
                             f"(expected input_ids [+ attention_mask, token_type_ids])")
        self.output_name = self._session.get_outputs()[0].name
        self._lock = threading.Lock()

    @property
    def checksum(self) -> str:
        """sha256 of model.onnx (from the manifest, else computed once)."""
        if self._checksum is None:
            self._checksum = sha256_file(self.model_dir / "model.onnx")
        return self._checksum

    def encode_pair(self, query: str, passage: str) -> tuple[list[int], list[int]]:
        enc = encode_pair(self.tokenizer, query, passage, self.max_length, self._n_special)
        return list(enc.ids), list(enc.type_ids)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance logit per (query, passage), in the passages' order."""
        n = len(passages)
        out = np.zeros(n, dtype=np.float32)
        if n == 0:
            return out
        pairs = [self.encode_pair(query, p) for p in passages]
        for idx in _batches_by_length([len(ids) for ids, _ in pairs], self.batch_size):
            ids, mask = _pad([pairs[i][0] for i in idx], self.pad_id)
            types, _ = _pad([pairs[i][1] for i in idx], 0)
            avail = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feed = {k: avail[k] for k in self.input_names}
            with self._lock:
                logits = np.asarray(self._session.run([self.output_name], feed)[0], dtype=np.float32)
            if logits.ndim == 2:
                logits = logits[:, -1]
            elif logits.ndim != 1:
                raise ModelError(f"{self.model_dir / 'model.onnx'}: unexpected output shape {logits.shape}")
            out[idx] = logits
        return out

    def __repr__(self) -> str:
        return f"CrossEncoder({self.model_id!r}, max_length={self.max_length})"
