#!/usr/bin/env python3
"""llama.cpp's peak resident memory for a forward pass over SEQ tokens of a
.gguf (llama-cpp-python, built from its PyPI source package), next to the
peak of the Python process before the model was loaded. With --embedding,
the model is an encoder (a BERT .gguf of convert_hf_to_gguf.py): its
embeddings of the SEQ tokens, in one batch.

    python memory_llamacpp.py MODEL.gguf SEQ THREADS [--embedding]
"""
import resource
import sys

import llama_cpp
import llamacpp_compat  # noqa: F401 (before any model is loaded)
from llama_cpp import Llama

path, seq, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
embedding = sys.argv[4:] == ["--embedding"]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
llm = Llama(model_path=path, n_ctx=max(seq, 512), n_batch=seq, n_ubatch=seq,
            n_threads=threads, n_threads_batch=threads, embedding=embedding,
            verbose=False)
if embedding:
    # embed() takes text: twice as many words as tokens, truncated to the
    # batch (SEQ tokens).
    llm.embed(" ".join(["memory"] * (2 * seq)), truncate=True)
else:
    llm.eval([(i % 1000) + 1 for i in range(seq)])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"llama.cpp (llama-cpp-python {llama_cpp.__version__}) "
      f"{path.rsplit('/', 1)[-1]}, {seq} tokens: process peak {peak:.1f} MiB "
      f"(the Python process before loading: {before:.1f} MiB)")
