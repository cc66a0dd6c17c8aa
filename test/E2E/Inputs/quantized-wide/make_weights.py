"""Writes the weights of model.tfm as a .gguf: q5_0 and q5_1 quantised by
gguf-py from normal values; the K-quants, which gguf-py cannot quantise, as
random blocks whose f16 scales are small normal values (every scale and
minimum integer and quant bit pattern occurs). Also saves gguf-py's
dequantisation of each (dequantised.npz), for check.py."""
import sys
import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType as T, GGML_QUANT_SIZES
from gguf.quants import quantize, dequantize

out = sys.argv[1]
rng = np.random.default_rng(11)
SCALES = {T.Q2_K: (80, 82), T.Q3_K: (108,), T.Q4_K: (0, 2), T.Q5_K: (0, 2), T.Q6_K: (208,)}
writer = GGUFWriter(out + "/weights.gguf", "tfc-test")
dequantised = {}
emb = rng.standard_normal((300, 512)).astype(np.float32)
# A few large activations, as real residual streams have.
emb[:, 7] *= 20
writer.add_tensor("emb", emb)
dequantised["emb"] = emb
bias = (rng.standard_normal(96) * 0.1).astype(np.float32)
writer.add_tensor("b_q5_1", bias)
dequantised["b_q5_1"] = bias
for name, rows, qt in [("q5_0", 78, T.Q5_0), ("q5_1", 96, T.Q5_1),
                       ("q4_k", 78, T.Q4_K), ("q5_k", 96, T.Q5_K),
                       ("q6_k", 78, T.Q6_K), ("q3_k", 78, T.Q3_K),
                       ("q2_k", 78, T.Q2_K)]:
    if qt in SCALES:
        block, size = GGML_QUANT_SIZES[qt]
        q = rng.integers(0, 256, (rows, 512 // block, size), dtype=np.uint8)
        for off in SCALES[qt]:
            h = (rng.standard_normal((rows, 512 // block)) * 0.002).astype(np.float16)
            q[:, :, off:off + 2] = h.view(np.uint8).reshape(rows, 512 // block, 2)
        q = q.reshape(rows, -1)
    else:
        q = quantize((rng.standard_normal((rows, 512)) * 0.2).astype(np.float32), qt)
    writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qt)
    dequantised[name] = dequantize(q, qt)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
np.savez(out + "/dequantised.npz", **dequantised)
