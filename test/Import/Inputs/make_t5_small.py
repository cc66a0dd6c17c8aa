"""Writes a T5ForConditionalGeneration checkpoint of t5-small's shapes.

    make_t5_small.py OUT_DIR

config.json as t5-small's (vocab 32128, d_model 512, 6 + 6 layers, 8
heads, d_ff 2048, 32 buckets up to 128, ReLU, tied and scaled output) and
model.safetensors with the tensors transformers' save_pretrained writes for
it (scripts/make-t5-small-references.py checks that it writes exactly
these), filled with reproducible pseudo-random values: uniform with
T5's initialisation scale per tensor (initializer_factor 2), from a counter-based hash (splitmix64)
of the tensor's index and the element's. Integer arithmetic and one
multiplication per value: the same bits with any numpy on any machine, so
the test makes the 240 MB file instead of storing it. Needs numpy and
safetensors.
"""
import json
import os
import sys

import numpy as np
from safetensors.numpy import save_file

CONFIG = {
    "architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
    "vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048,
    "num_layers": 6, "num_decoder_layers": 6, "num_heads": 8,
    "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-6,
    "feed_forward_proj": "relu", "tie_word_embeddings": True,
    "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    "is_encoder_decoder": True, "dropout_rate": 0.1,
    "initializer_factor": 2.0,
}


def tensors():
    """(name, shape, standard deviation) in a fixed order."""
    c = CONFIG
    d, inner, ff = c["d_model"], c["num_heads"] * c["d_kv"], c["d_ff"]
    # T5's scales times initializer_factor (2: with 1 a random T5 decodes
    # nothing but the pad token; with 4 its unscaled attention scores grow
    # so large that float32 rounding alone moves the logits by 1e-4).
    k = c["initializer_factor"]
    out = [("shared.weight", (c["vocab_size"], d), k)]
    for side, layers in (("encoder", c["num_layers"]),
                         ("decoder", c["num_decoder_layers"])):
        for l in range(layers):
            p = f"{side}.block.{l}.layer."
            attns = ["0.SelfAttention"] + (["1.EncDecAttention"]
                                           if side == "decoder" else [])
            for a in attns:
                out += [(p + a + ".q.weight", (inner, d), k * (d * c["d_kv"]) ** -0.5),
                        (p + a + ".k.weight", (inner, d), k * d ** -0.5),
                        (p + a + ".v.weight", (inner, d), k * d ** -0.5),
                        (p + a + ".o.weight", (d, inner), k * inner ** -0.5)]
            if l == 0:
                out.append((p + "0.SelfAttention.relative_attention_bias.weight",
                            (c["relative_attention_num_buckets"],
                             c["num_heads"]), k * d ** -0.5))
            f = "2" if side == "decoder" else "1"
            out += [(p + f + ".DenseReluDense.wi.weight", (ff, d), k * d ** -0.5),
                    (p + f + ".DenseReluDense.wo.weight", (d, ff), k * ff ** -0.5)]
            for n in ["0", "1"] + (["2"] if side == "decoder" else []):
                out.append((p + n + ".layer_norm.weight", (d,), None))
        out.append((f"{side}.final_layer_norm.weight", (d,), None))
    return out


def values(index, shape, std):
    """Uniform on [-sqrt(3) std, sqrt(3) std) (ones for std None)."""
    n = int(np.prod(shape))
    if std is None:
        return np.ones(shape, np.float32)
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64((index + 1) << 40)
        z = z * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53  # [0, 1)
    return ((2.0 * u - 1.0) * (3.0 ** 0.5 * std)).astype(np.float32).reshape(shape)


def write(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    save_file({name: values(i, shape, std)
               for i, (name, shape, std) in enumerate(tensors())},
              os.path.join(out_dir, "model.safetensors"))


if __name__ == "__main__":
    write(sys.argv[1])
