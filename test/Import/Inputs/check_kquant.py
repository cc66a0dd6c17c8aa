"""check_kquant.py OUT.gguf REFS.npz TYPE: every tensor of OUT (tfc-quantize's
copy of Inputs/kquant/input.gguf in TYPE) against the blocks llama.cpp's
reference quantiser made of the same values (refs.npz, from
scripts/make-kquant-references.py): its type, and its bytes, block by block.
Prints one line per tensor, "OK" when every block is llama.cpp's."""
import sys
import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as T

out, refs, name = sys.argv[1], np.load(sys.argv[2]), sys.argv[3]
qt = getattr(T, name.upper())
block = {"q2_k": 84, "q3_k": 110, "q4_k": 144, "q5_k": 176, "q6_k": 210}[name]
for t in GGUFReader(out).tensors:
    ref = refs[f"{t.name}.{name}"]
    got = np.asarray(t.data, dtype=np.uint8).reshape(ref.shape)
    blocks = ref.size // block
    same = (got.reshape(blocks, block) == ref.reshape(blocks, block)).all(axis=1)
    ok = t.tensor_type == qt and same.all()
    print(f"{name} {t.name}: type {t.tensor_type.name}, {int(same.sum())} of "
          f"{blocks} blocks equal to llama.cpp's", "OK" if ok else "MISMATCH")
