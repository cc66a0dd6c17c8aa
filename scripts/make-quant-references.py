#!/usr/bin/env python3
"""Makes llama.cpp's own quantised matrix products, the reference of
test/E2E/quantized-llamacpp.test (whose Inputs/quant-llamacpp/model.tfm has
one entry per format over these weights).

For each block format tfc computes on as stored, a weight matrix of random
values quantised by the gguf package (llama.cpp's reference quantisers; the
K-quants, which the package cannot quantise, by ggml's own
ggml_quantize_chunk) and a batch of activation rows, multiplied by
llama.cpp's CPU backend (ggml_mul_mat in a ggml graph: it quantises the
activations to the format's vec_dot type, Q8_0, Q8_1 or Q8_K, and sums block
products as llama.cpp does when it runs a model). Needs llama-cpp-python built from its PyPI source package (its ggml
libraries are loaded with ctypes), gguf and numpy; run once after changing
what the test covers:

    /path/to/venv/bin/python scripts/make-quant-references.py

Writes test/E2E/Inputs/quant-llamacpp/: weights.gguf (every format's matrix,
named after the format), x.npy (the activations, f32 [M, K]), <format>.npy
(llama.cpp's products, f32 [M, N]) and versions.json.
"""
import ctypes
import json
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter
from gguf.quants import quantize

import llama_cpp

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "test", "E2E", "Inputs", "quant-llamacpp")
os.makedirs(out, exist_ok=True)

# Shapes: K spans several blocks of 32 (and, for the K-quants to come, of
# 256); N is not a multiple of the kernels' row groups; M covers a decode
# row and a prefill tile with a tail.
M, K, N = 7, 512, 72
FORMATS = {"q8_0": Q.Q8_0, "q4_0": Q.Q4_0, "q4_1": Q.Q4_1, "q5_0": Q.Q5_0,
           "q5_1": Q.Q5_1, "q4_k": Q.Q4_K, "q5_k": Q.Q5_K, "q6_k": Q.Q6_K}
K_QUANTS = {Q.Q4_K, Q.Q5_K, Q.Q6_K}

libdir = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
base = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
cpu = ctypes.CDLL(os.path.join(libdir, "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p),
                ("no_alloc", ctypes.c_bool)]


vp = ctypes.c_void_p
base.ggml_init.restype = vp
base.ggml_init.argtypes = [InitParams]
base.ggml_new_tensor_2d.restype = vp
base.ggml_new_tensor_2d.argtypes = [vp, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
base.ggml_mul_mat.restype = vp
base.ggml_mul_mat.argtypes = [vp, vp, vp]
base.ggml_new_graph.restype = vp
base.ggml_new_graph.argtypes = [vp]
base.ggml_build_forward_expand.argtypes = [vp, vp]
base.ggml_get_data.restype = vp
base.ggml_get_data.argtypes = [vp]
base.ggml_nbytes.restype = ctypes.c_size_t
base.ggml_nbytes.argtypes = [vp]
base.ggml_free.argtypes = [vp]
base.ggml_quantize_chunk.restype = ctypes.c_size_t
base.ggml_quantize_chunk.argtypes = [ctypes.c_int, vp, vp, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_int64, vp]
base.ggml_row_size.restype = ctypes.c_size_t
base.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
cpu.ggml_graph_compute_with_ctx.restype = ctypes.c_int
cpu.ggml_graph_compute_with_ctx.argtypes = [vp, vp, ctypes.c_int]


def ggml_quantize(qtype, w):
    """ggml's quantiser (quantize_row_*_ref for these types): bytes [N, row]."""
    rows, cols = w.shape
    row_bytes = base.ggml_row_size(int(qtype), cols)
    out = np.zeros((rows, row_bytes), dtype=np.uint8)
    src = np.ascontiguousarray(w, dtype=np.float32)
    n = base.ggml_quantize_chunk(int(qtype), src.ctypes.data, out.ctypes.data,
                                 0, rows, cols, None)
    assert n == out.size, (n, out.size)
    return out


def llamacpp_mul_mat(qtype, blocks, x):
    """llama.cpp's x @ W^T for W given as the format's bytes [N, row bytes]."""
    ctx = base.ggml_init(InitParams(64 << 20, None, False))
    w = base.ggml_new_tensor_2d(ctx, int(qtype), K, N)
    a = base.ggml_new_tensor_2d(ctx, int(Q.F32), K, M)
    raw = np.ascontiguousarray(blocks).view(np.uint8).ravel()
    assert base.ggml_nbytes(w) == raw.size, (base.ggml_nbytes(w), raw.size)
    ctypes.memmove(base.ggml_get_data(w), raw.ctypes.data, raw.size)
    xs = np.ascontiguousarray(x, dtype=np.float32)
    ctypes.memmove(base.ggml_get_data(a), xs.ctypes.data, xs.nbytes)
    y = base.ggml_mul_mat(ctx, w, a)  # ne0 = N, ne1 = M
    graph = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(graph, y)
    status = cpu.ggml_graph_compute_with_ctx(ctx, graph, 1)
    assert status == 0, status
    result = np.empty((M, N), dtype=np.float32)
    ctypes.memmove(result.ctypes.data, base.ggml_get_data(y), result.nbytes)
    base.ggml_free(ctx)
    return result


rng = np.random.default_rng(11)
# Activations with a few outliers per row, as a transformer's have.
x = rng.standard_normal((M, K)).astype(np.float32)
x[:, rng.choice(K, 6, replace=False)] *= 12
np.save(os.path.join(out, "x.npy"), x)
writer = GGUFWriter(os.path.join(out, "weights.gguf"), "tfc-test")
for name, qtype in FORMATS.items():
    w = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
    blocks = ggml_quantize(qtype, w) if qtype in K_QUANTS else quantize(w, qtype)
    writer.add_tensor(name, blocks, raw_shape=blocks.shape, raw_dtype=qtype)
    y = llamacpp_mul_mat(qtype, blocks, x)
    np.save(os.path.join(out, name + ".npy"), y)
    print(f"{name}: max |y| {np.abs(y).max():.3g}")
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
import gguf  # noqa: E402
with open(os.path.join(out, "versions.json"), "w") as f:
    json.dump({"llama_cpp_python": llama_cpp.__version__,
               "gguf": getattr(gguf, "__version__", "?"), "numpy": np.__version__,
               "shapes": {"M": M, "K": K, "N": N}}, f, indent=1)
    f.write("\n")
