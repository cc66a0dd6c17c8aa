"""Writes the GGUF files of test/Import/gguf-*.test into a directory.

    make_gguf.py DIR

Valid: quants.gguf holds one 6x256 matrix in each type tfc reads (F32, F16,
Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 quantised by the `gguf` package, llama.cpp's
Python implementation; the K-quants Q2_K ... Q6_K, which it cannot quantise,
as random blocks with finite f16 scales), with the package's dequantisation
of each as NAME.npy;
tiny-llama.gguf is a 2-layer llama model (random weights, Q8_0 embedding,
F16 and Q4_0 projections). Malformed (bad-*.gguf): each breaks one rule of
the format and must be refused with a message naming it.
"""
import os
import struct
import sys

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import quants

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)

# --- quants.gguf -------------------------------------------------------------
# Byte offsets of the f16 scales in a K-quant super-block (d, then dmin).
K_SCALES = {Q.Q2_K: (80, 82), Q.Q3_K: (108,), Q.Q4_K: (0, 2),
            Q.Q5_K: (0, 2), Q.Q6_K: (208,)}


def random_blocks(qt, rows, cols):
    """Random bytes as blocks of qt, the scales finite halves of either
    sign (random bits would give infinities and NaNs)."""
    block, size = gguf.GGML_QUANT_SIZES[qt]
    data = rng.integers(0, 256, (rows, cols // block, size), dtype=np.uint8)
    for off in K_SCALES[qt]:
        h = (rng.standard_normal((rows, cols // block)) * 0.01).astype(np.float16)
        data[:, :, off:off + 2] = h.view(np.uint8).reshape(rows, cols // block, 2)
    return data.reshape(rows, -1)


w = gguf.GGUFWriter(os.path.join(out, "quants.gguf"), "llama")
for name, qt in [("f32", Q.F32), ("f16", Q.F16), ("q8_0", Q.Q8_0),
                 ("q4_0", Q.Q4_0), ("q4_1", Q.Q4_1), ("q5_0", Q.Q5_0),
                 ("q5_1", Q.Q5_1), ("q2_k", Q.Q2_K), ("q3_k", Q.Q3_K),
                 ("q4_k", Q.Q4_K), ("q5_k", Q.Q5_K), ("q6_k", Q.Q6_K)]:
    x = rng.standard_normal((6, 256)).astype(np.float32)
    if qt == Q.F32:
        data, ref = x, x
    elif qt == Q.F16:
        data = x.astype(np.float16)
        ref = data.astype(np.float32)
    elif qt in K_SCALES:
        data = random_blocks(qt, 6, 256)
        ref = quants.dequantize(data, qt).astype(np.float32)
    else:
        data = quants.quantize(x, qt)
        ref = quants.dequantize(data, qt).astype(np.float32)
    w.add_tensor(name, data, raw_dtype=qt if qt not in (Q.F32, Q.F16) else None)
    np.save(os.path.join(out, name + ".npy"), ref)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

# --- tiny-llama.gguf ---------------------------------------------------------
V, D, L, H, KV, F = 96, 64, 2, 4, 2, 96
w = gguf.GGUFWriter(os.path.join(out, "tiny-llama.gguf"), "llama")
w.add_name("tiny llama")
w.add_context_length(32)
w.add_embedding_length(D)
w.add_block_count(L)
w.add_feed_forward_length(F)
w.add_head_count(H)
w.add_head_count_kv(KV)
w.add_layer_norm_rms_eps(1e-5)
w.add_rope_freq_base(10000.0)
w.add_vocab_size(V)


def t(name, shape, qt):
    x = (rng.standard_normal(shape) * 0.2).astype(np.float32)
    if qt == Q.F32:
        w.add_tensor(name, x)
    elif qt == Q.F16:
        w.add_tensor(name, x.astype(np.float16))
    else:
        w.add_tensor(name, quants.quantize(x, qt), raw_dtype=qt)


t("token_embd.weight", (V, D), Q.Q8_0)
t("output_norm.weight", (D,), Q.F32)
for l in range(L):
    p = f"blk.{l}."
    t(p + "attn_norm.weight", (D,), Q.F32)
    t(p + "ffn_norm.weight", (D,), Q.F32)
    t(p + "attn_q.weight", (H * 16, D), Q.F16)
    t(p + "attn_k.weight", (KV * 16, D), Q.Q4_0)
    t(p + "attn_v.weight", (KV * 16, D), Q.Q4_1)
    t(p + "attn_output.weight", (D, H * 16), Q.Q8_0)
    t(p + "ffn_gate.weight", (F, D), Q.Q4_0)
    t(p + "ffn_up.weight", (F, D), Q.F16)
    t(p + "ffn_down.weight", (D, F), Q.Q4_1)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

# --- malformed files, written by hand --------------------------------------


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def header(n_tensors, n_kv, version=3, magic=b"GGUF"):
    return magic + struct.pack("<IQQ", version, n_tensors, n_kv)


def kv_u32(key, v):
    return s(key) + struct.pack("<II", 4, v)


def kv_str(key, v):
    return s(key) + struct.pack("<I", 8) + s(v)


def tensor_info(name, dims, ggml_type, offset):
    return (s(name) + struct.pack("<I", len(dims)) +
            b"".join(struct.pack("<Q", d) for d in dims) +
            struct.pack("<IQ", ggml_type, offset))


def pad(b, align=32):
    return b + b"\0" * (-len(b) % align)


good_meta = kv_str("general.architecture", "llama")
one = tensor_info("w", [32, 2], 0, 0)
bad = {
    "bad-magic": header(1, 1, magic=b"GGML") + good_meta,
    "bad-version": header(1, 1, version=1) + good_meta,
    "bad-kv-count": header(0, 1 << 60) + good_meta,
    "bad-tensor-count": header(1 << 60, 1) + good_meta,
    "bad-string-length": header(0, 1) + struct.pack("<Q", 1 << 40) + b"key" + b"\0" * 32,
    "bad-value-type": header(0, 1) + s("k") + struct.pack("<I", 99),
    "bad-array-count": header(0, 1) + s("k") + struct.pack("<IIQ", 9, 4, 1 << 50),
    "bad-quant-type": pad(header(1, 1) + good_meta + tensor_info("w", [256, 2], 23, 0)) + b"\0" * 512,
    "bad-dims": pad(header(1, 1) + good_meta + tensor_info("w", [1 << 40, 1 << 40], 0, 0)) + b"\0" * 256,
    "bad-offset": pad(header(1, 1) + good_meta + tensor_info("w", [32, 2], 0, 1 << 20)) + b"\0" * 256,
    "bad-misaligned": pad(header(1, 1) + good_meta + tensor_info("w", [32, 2], 0, 4)) + b"\0" * 512,
    "bad-truncated-data": pad(header(1, 1) + good_meta + one) + b"\0" * 100,
    "bad-partial-block": pad(header(1, 1) + good_meta + tensor_info("w", [40, 2], 8, 0)) + b"\0" * 256,
    "bad-duplicate-key": header(0, 2) + good_meta + good_meta,
    "bad-overlap": pad(header(2, 1) + good_meta + tensor_info("a", [32, 2], 0, 0) +
                       tensor_info("b", [32, 2], 0, 128)) + b"\0" * 512,
    "bad-alignment": header(0, 2) + good_meta + kv_u32("general.alignment", 3),
    "bad-arch": header(0, 1) + kv_str("general.architecture", "mamba"),
}
for name, data in bad.items():
    with open(os.path.join(out, name + ".gguf"), "wb") as f:
        f.write(data)
with open(os.path.join(out, "bad-truncated-meta.gguf"), "wb") as f:
    f.write(open(os.path.join(out, "tiny-llama.gguf"), "rb").read()[:300])
with open(os.path.join(out, "bad-truncated-info.gguf"), "wb") as f:
    # Cut inside the last tensor info's type: its name, 2 dims, 3 of 4 bytes.
    data = open(os.path.join(out, "quants.gguf"), "rb").read()
    name = struct.pack("<Q", 4) + b"q6_k"
    f.write(data[:data.rindex(name) + len(name) + 4 + 16 + 3])
