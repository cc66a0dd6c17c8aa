"""PyTorch eager implementations of the bundled BERT-base and GPT-2 models.

Written from the papers / Hugging Face conventions, reading the weights by
their Hugging Face names from a .safetensors file, so that a tfc-compiled
model and PyTorch run on identical weights. Used by bench/model_bench.py for
the timing peer and as an independent numerical reference.
"""

import json
import struct

import numpy as np
import torch
import torch.nn.functional as F

_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
           "I64": np.int64, "I32": np.int32}


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end],
                              dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(array.astype(np.float32)
                                     if info["dtype"] != "I64" else array)
    return out


def _split_heads(x, heads):
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def _attention(q, k, v, bias=None, causal=False):
    """softmax(q·kᵀ/√d + bias)·v: PyTorch's fused scaled_dot_product_attention
    where it exists (torch >= 2.0), else written out (Debian's torch 1.13)."""
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None and not (causal and bias is not None):
        return sdpa(q, k, v, attn_mask=bias, is_causal=causal)
    scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
    if bias is not None:
        scores = scores + bias
    if causal:
        t = q.shape[-2]
        keep = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _merge_heads(x):
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


class Bert:
    """BERT-base (Devlin et al., 2019): post-norm encoder, GELU (erf)."""

    def __init__(self, w, layers=12, heads=12, eps=1e-12):
        self.w, self.layers, self.heads, self.eps = w, layers, heads, eps

    def _ln(self, x, p):
        return F.layer_norm(x, x.shape[-1:], self.w[p + ".LayerNorm.weight"],
                            self.w[p + ".LayerNorm.bias"], self.eps)

    def _dense(self, x, p):
        return F.linear(x, self.w[p + ".weight"], self.w[p + ".bias"])

    def __call__(self, input_ids, token_type_ids, attention_mask):
        w = self.w
        t = input_ids.shape[1]
        x = (w["embeddings.word_embeddings.weight"][input_ids] +
             w["embeddings.position_embeddings.weight"][:t] +
             w["embeddings.token_type_embeddings.weight"][token_type_ids])
        x = self._ln(x, "embeddings")
        bias = torch.zeros(attention_mask.shape, dtype=x.dtype,
                           device=attention_mask.device)
        bias = bias.masked_fill(attention_mask == 0, float("-inf"))[:, None, None, :]
        for l in range(self.layers):
            p = f"encoder.layer.{l}"
            q = _split_heads(self._dense(x, p + ".attention.self.query"), self.heads)
            k = _split_heads(self._dense(x, p + ".attention.self.key"), self.heads)
            v = _split_heads(self._dense(x, p + ".attention.self.value"), self.heads)
            a = _attention(q, k, v, bias=bias)
            a = self._dense(_merge_heads(a), p + ".attention.output.dense")
            x = self._ln(x + a, p + ".attention.output")
            h = F.gelu(self._dense(x, p + ".intermediate.dense"))
            x = self._ln(x + self._dense(h, p + ".output.dense"), p + ".output")
        pooled = torch.tanh(self._dense(x[:, 0], "pooler.dense"))
        return x, pooled


class Gpt2:
    """GPT-2 small (Radford et al., 2019): pre-norm decoder, gelu_new."""

    def __init__(self, w, layers=12, heads=12, eps=1e-5):
        self.w, self.layers, self.heads, self.eps = w, layers, heads, eps

    def _ln(self, x, p):
        return F.layer_norm(x, x.shape[-1:], self.w[p + ".weight"],
                            self.w[p + ".bias"], self.eps)

    def _conv1d(self, x, p):
        return torch.addmm(self.w[p + ".bias"], x.reshape(-1, x.shape[-1]),
                           self.w[p + ".weight"]).view(*x.shape[:-1], -1)

    def __call__(self, input_ids):
        w = self.w
        t = input_ids.shape[1]
        x = w["wte.weight"][input_ids] + w["wpe.weight"][:t]
        for l in range(self.layers):
            p = f"h.{l}"
            qkv = self._conv1d(self._ln(x, p + ".ln_1"), p + ".attn.c_attn")
            q, k, v = (_split_heads(y, self.heads) for y in qkv.split(x.shape[-1], -1))
            a = _attention(q, k, v, causal=True)
            x = x + self._conv1d(_merge_heads(a), p + ".attn.c_proj")
            h = F.gelu(self._conv1d(self._ln(x, p + ".ln_2"), p + ".mlp.c_fc"),
                       approximate="tanh")
            x = x + self._conv1d(h, p + ".mlp.c_proj")
        x = self._ln(x, "ln_f")
        return (x @ w["wte.weight"].T,)
