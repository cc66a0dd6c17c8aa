"""rewrite_gguf_arch.py IN.gguf OUT.gguf ARCH: IN with general.architecture
set to ARCH (the other metadata and the tensors as they are)."""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType

src = GGUFReader(sys.argv[1])
w = GGUFWriter(sys.argv[2], sys.argv[3])
for f in src.fields.values():
    if f.name.startswith("GGUF.") or f.name == "general.architecture":
        continue
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        w.add_array(f.name, f.contents())
    else:
        w.add_key_value(f.name, f.contents(), t)
for t in src.tensors:
    w.add_tensor(t.name, np.asarray(t.data),
                 raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
