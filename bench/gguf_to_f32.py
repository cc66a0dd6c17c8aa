#!/usr/bin/env python3
"""Writes an F32 copy of a .gguf: every quantized or half tensor dequantised
with the gguf package's reference code, every metadata key copied as is
(tokenizer and chat template included). The generation benchmark gives it to
llama.cpp, so that llama.cpp and tfc (which dequantises the same .gguf to f32
while binding) run the same f32 weights.

    python gguf_to_f32.py IN.gguf OUT.gguf
"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, GGMLQuantizationType
from gguf.quants import dequantize

src, dst = sys.argv[1], sys.argv[2]
reader = GGUFReader(src)
arch = reader.fields["general.architecture"].contents()
writer = GGUFWriter(dst, arch)
for field in reader.fields.values():
    # GGUF.* are the reader's view of the header; the writer adds the
    # architecture itself.
    if field.name.startswith("GGUF.") or field.name in ("general.architecture",
                                                        "general.file_type"):
        continue
    vtype = field.types[0]
    sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
    writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub)
writer.add_file_type(0)  # ALL_F32
for t in reader.tensors:
    data = dequantize(t.data, t.tensor_type).astype(np.float32)
    # The reader's shape is GGUF's (fastest dimension first); numpy's is the
    # reverse, which is what add_tensor expects.
    writer.add_tensor(t.name, data.reshape(tuple(reversed([int(d) for d in t.shape]))),
                      raw_dtype=GGMLQuantizationType.F32)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(f"gguf_to_f32: {dst}: {len(reader.tensors)} tensors in f32")
