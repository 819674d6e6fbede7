"""engine.models.CrossEncoder runs a Hugging Face-style cross-encoder export: a tiny BERT
sequence classifier in plain torch with the HF ONNX interface (inputs input_ids /
attention_mask / token_type_ids, output ``logits`` [n, 1]) and a WordPiece tokenizer.json
with a BertProcessing post-processor.  Scores must agree with torch.

Needs the `train` extra (torch CPU); skipped only when torch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from engine.models import CrossEncoder  # noqa: E402

H, NH, FF, MAXP = 32, 4, 64, 64
WORDS = ["pump", "valve", "filter", "oil", "reset", "pressure", "the", "how", "to", "change",
         "bar", "torque", "nut", "wheel", "is", "what", "max", "check", "level", "motor", "##s", "##ing"]


def _tokenizer():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3} | {w: i + 4 for i, w in enumerate(WORDS)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    return tok


class Layer(torch.nn.Module):
    """A post-LN BERT layer written with reshapes that stay dynamic in the export."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(H, 3 * H)
        self.ao = torch.nn.Linear(H, H)
        self.ln1 = torch.nn.LayerNorm(H, eps=1e-12)
        self.fi = torch.nn.Linear(H, FF)
        self.fo = torch.nn.Linear(FF, H)
        self.ln2 = torch.nn.LayerNorm(H, eps=1e-12)

    def forward(self, x, bias):
        B, S = x.shape[0], x.shape[1]
        q, k, v = (t.reshape(B, S, NH, H // NH).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        p = torch.softmax(q @ k.transpose(-1, -2) / (H // NH) ** 0.5 + bias, dim=-1)
        x = self.ln1(x + self.ao((p @ v).transpose(1, 2).reshape(B, S, H)))
        return self.ln2(x + self.fo(torch.nn.functional.gelu(self.fi(x))))


class TinyBertForSequenceClassification(torch.nn.Module):
    """BERT layout: word + position + token-type embeddings, post-LN layers, [CLS] pooler."""

    def __init__(self, vocab: int):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, H)
        self.pos = torch.nn.Embedding(MAXP, H)
        self.token_type = torch.nn.Embedding(2, H)
        self.ln = torch.nn.LayerNorm(H, eps=1e-12)
        self.layers = torch.nn.ModuleList([Layer(), Layer()])
        self.pooler = torch.nn.Linear(H, H)
        self.classifier = torch.nn.Linear(H, 1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
        bias = ((1.0 - attention_mask.float()) * -1e9)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def test_crossencoder_scores_an_hf_style_export_like_torch(tmp_path):
    torch.manual_seed(0)
    tok = _tokenizer()
    model = TinyBertForSequenceClassification(tok.get_vocab_size()).eval()
    ids = torch.tensor([[2, 5, 6, 3, 7, 8, 3], [2, 5, 3, 7, 3, 0, 0]])
    mask = (ids != 0).long()
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]])
    torch.onnx.export(model, (ids, mask, types), str(tmp_path / "model.onnx"), dynamo=False,
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
                      | {"logits": {0: "batch"}}, opset_version=17)
    tok.save(str(tmp_path / "tokenizer.json"))

    ce = CrossEncoder(tmp_path, threads=1, max_length=MAXP, batch_size=3)
    assert "token_type_ids" in ce.input_names
    query = "how to change the oil filter"
    passages = ["change the oil filters", "check the wheel nut torque", "max pressure is 6 bar",
                "resetting the motor", "oil level check"]
    got = ce.score(query, passages)

    want = []
    with torch.no_grad():
        for p in passages:
            enc = tok.encode(query, p)
            assert enc.ids[0] == 2 and enc.ids.count(3) == 2 and enc.type_ids[-1] == 1
            t = lambda v: torch.tensor([v])  # noqa: E731
            want.append(float(model(t(enc.ids), t([1] * len(enc.ids)), t(enc.type_ids))[0, 0]))
    np.testing.assert_allclose(got, np.array(want), atol=1e-4)
    assert np.ptp(got) > 1e-3  # the scores actually differ between passages
