#!/usr/bin/env python3
"""Writes a copy of a .gguf with its tensors in another type: every tensor
dequantised with the gguf package's reference code, then written in F32, or
(Q8_0) every matrix whose rows are whole blocks quantised with the same
package's Q8_0 quantiser (what llama.cpp's llama-quantize writes for Q8_0)
and the vectors kept in F32. Every metadata key is copied as is (tokenizer
and chat template included). The benchmarks give these files to llama.cpp
and to tfc, so both run the same weights in the same format.

    python gguf_convert.py IN.gguf OUT.gguf [F32|Q8_0]
"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, GGMLQuantizationType
from gguf.quants import dequantize, quantize

src, dst = sys.argv[1], sys.argv[2]
target = sys.argv[3].upper() if len(sys.argv) > 3 else "F32"
if target not in ("F32", "Q8_0"):
    sys.exit(f"gguf_convert: unknown type {target} (expected F32 or Q8_0)")
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
writer.add_file_type(0 if target == "F32" else 7)  # ALL_F32, MOSTLY_Q8_0
for t in reader.tensors:
    data = dequantize(t.data, t.tensor_type).astype(np.float32)
    # The reader's shape is GGUF's (fastest dimension first); numpy's is the
    # reverse, which is what add_tensor expects.
    data = data.reshape(tuple(reversed([int(d) for d in t.shape])))
    if target == "Q8_0" and data.ndim == 2 and data.shape[-1] % 32 == 0:
        q = quantize(data, GGMLQuantizationType.Q8_0)
        writer.add_tensor(t.name, q, raw_shape=q.shape,
                          raw_dtype=GGMLQuantizationType.Q8_0)
    else:
        writer.add_tensor(t.name, data, raw_dtype=GGMLQuantizationType.F32)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(f"gguf_convert: {dst}: {len(reader.tensors)} tensors, {target}")
