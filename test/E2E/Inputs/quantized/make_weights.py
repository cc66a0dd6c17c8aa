"""Writes the weights of model.tfm twice, from one set of f32 values: as a
.gguf whose tensors gguf-py (the reference implementation of the formats)
quantised, and as f32 .safetensors (which tfc quantises when it binds).
Also saves the dequantised values, for check.py."""
import sys
import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType as T
from gguf.quants import quantize, dequantize
from safetensors.numpy import save_file

out = sys.argv[1]
rng = np.random.default_rng(7)
spec = {"emb": ((100, 64), 1.0, T.Q8_0), "w1": ((96, 64), 0.2, T.Q4_1),
        "b1": ((96,), 0.1, T.F32), "w2": ((78, 96), 0.2, T.Q4_0),
        "w3": ((64, 78), 0.2, T.F32)}
writer = GGUFWriter(out + "/weights.gguf", "tfc-test")
values, dequantised = {}, {}
for name, (shape, scale, qtype) in spec.items():
    v = (rng.standard_normal(shape) * scale).astype(np.float32)
    values[name] = v
    if qtype == T.F32:
        writer.add_tensor(name, v)
        dequantised[name] = v
    else:
        q = quantize(v, qtype)
        writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)
        dequantised[name] = dequantize(q, qtype)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
save_file(values, out + "/weights.safetensors")
np.savez(out + "/dequantised.npz", **dequantised)
