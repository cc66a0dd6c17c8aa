"""check_requantized.py SRC.gguf OUT.gguf TYPE: OUT (written by
tfc-quantize) holds every tensor of SRC, the matrices whose rows are whole
blocks in TYPE with exactly the bytes the gguf package's reference quantiser
makes from SRC's values (what llama-quantize --pure writes), the others in
F32, and the same metadata except general.file_type."""
import sys
import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as Q
from gguf.quants import dequantize, quantize

src, out, kind = GGUFReader(sys.argv[1]), GGUFReader(sys.argv[2]), sys.argv[3]
target = {"q8_0": Q.Q8_0, "q4_0": Q.Q4_0, "q4_1": Q.Q4_1, "q5_0": Q.Q5_0,
          "q5_1": Q.Q5_1, "f32": Q.F32}[kind]
ts = {t.name: t for t in src.tensors}
to = {t.name: t for t in out.tensors}
bad = 0
if ts.keys() != to.keys():
    print("tensor names differ: MISMATCH")
    bad += 1
for name, t in ts.items():
    shape = tuple(reversed([int(d) for d in t.shape]))
    values = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
    matrix = len(shape) >= 2 and (target == Q.F32 or shape[-1] % 32 == 0)
    want_type = target if matrix else Q.F32
    want = values if want_type == Q.F32 else quantize(values, want_type)
    got = to[name]
    same = got.tensor_type == want_type and np.array_equal(
        np.asarray(got.data).view(np.uint8).ravel(),
        np.asarray(want).view(np.uint8).ravel())
    if not same:
        print(f"{name}: {got.tensor_type.name} vs {want_type.name}: MISMATCH")
        bad += 1
fs = {f.name: f for f in src.fields.values() if not f.name.startswith("GGUF.")}
fo = {f.name: f for f in out.fields.values() if not f.name.startswith("GGUF.")}
for k in set(fs) | set(fo):
    if k == "general.file_type":
        continue
    if k not in fs or k not in fo or fs[k].contents() != fo[k].contents():
        print(f"metadata {k}: MISMATCH")
        bad += 1
print(f"{len(ts)} tensors, file_type {fo['general.file_type'].contents()}:",
      "OK" if bad == 0 else "FAILED")
