"""rewrite_gguf_arch.py IN.gguf OUT.gguf ARCH [KEY=VALUE...]: IN with
general.architecture set to ARCH (the other metadata and the tensors as they
are), each KEY=VALUE setting a float32 key (KEY=- removes it)."""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType

src = GGUFReader(sys.argv[1])
w = GGUFWriter(sys.argv[2], sys.argv[3])
edits = dict(a.split("=", 1) for a in sys.argv[4:])
for f in src.fields.values():
    if f.name.startswith("GGUF.") or f.name == "general.architecture" \
            or f.name in edits:
        continue
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        w.add_array(f.name, f.contents())
    else:
        w.add_key_value(f.name, f.contents(), t)
for key, value in edits.items():
    if value != "-":
        w.add_key_value(key, float(value), GGUFValueType.FLOAT32)
for t in src.tensors:
    w.add_tensor(t.name, np.asarray(t.data),
                 raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
