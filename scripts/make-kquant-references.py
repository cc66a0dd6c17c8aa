#!/usr/bin/env python3
"""Makes the inputs and references of test/Import/gguf-kquantize.test: a
.gguf of f32 matrices (test/Import/Inputs/kquant/input.gguf) and the blocks
llama.cpp's own reference quantisers (in its libggml-base, the code llama-quantize runs without an importance matrix)
make of each (quantize_row_q{2,3,4,5,6}_K_ref), in refs.npz (key "<tensor>.<type>": the blocks as uint8).

    PYTHONPATH=$TFC_CACHE_DIR/llamacpp-venv/lib/python3.11/site-packages \\
        /tmp/ref/bin/python scripts/make-kquant-references.py

(the llama-cpp-python 0.3.36 that bench/setup-llama-server.sh and
bench/run-generate.sh build; the gguf package for the file).
"""
import ctypes
import json
import os

import numpy as np
import gguf
import llama_cpp

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "test", "Import", "Inputs", "kquant")
lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib",
                               "libggml-base.so"))
BLOCK_BYTES = {"q2_k": 84, "q3_k": 110, "q4_k": 144, "q5_k": 176, "q6_k": 210}

rng = np.random.default_rng(2026)
tensors = {}
# Weights as trained models have them: normal rows of varied scale.
tensors["normal"] = (rng.standard_normal((16, 512)) *
                     rng.uniform(0.005, 0.1, (16, 1))).astype(np.float32)
# Heavy tails (outliers), sub-blocks of zeros, of tiny values (their scale
# rounds to 0 against the block's largest) and all positive or all
# negative (the minimum term), constant rows.
heavy = (rng.standard_t(2.5, (12, 768)) * 0.02).astype(np.float32)
heavy[0, :32] = 0
heavy[1, 16:48] = 1e-7 * rng.standard_normal(32)
heavy[2, 64:96] = np.abs(heavy[2, 64:96]) + 0.05
heavy[3, 128:160] = -np.abs(heavy[3, 128:160]) - 0.05
heavy[4, :] = 0.25
heavy[5, :] = 0
heavy[6, 300] = 40.0
tensors["heavy"] = heavy


def reference(name, x):
    fn = getattr(lib, f"quantize_row_{name[:2]}_K_ref")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    rows, k = x.shape
    y = np.zeros((rows, k // 256 * BLOCK_BYTES[name]), dtype=np.uint8)
    for r in range(rows):
        row = np.ascontiguousarray(x[r])
        fn(row.ctypes.data, y[r].ctypes.data, k)
    return y


os.makedirs(out, exist_ok=True)
w = gguf.GGUFWriter(os.path.join(out, "input.gguf"), "llama")
for name, x in tensors.items():
    w.add_tensor(name, x)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
refs = {f"{t}.{q}": reference(q, x) for t, x in tensors.items()
        for q in BLOCK_BYTES}
np.savez_compressed(os.path.join(out, "refs.npz"), **refs)
with open(os.path.join(out, "versions.json"), "w") as f:
    json.dump({"llama-cpp-python": llama_cpp.__version__,
               "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
               "numpy": np.__version__}, f, indent=1)
    f.write("\n")
print({k: v.shape for k, v in refs.items()})
