#!/usr/bin/env python3
"""llama.cpp's peak resident memory for a forward pass over SEQ tokens of a
.gguf (llama-cpp-python, built from its PyPI source package), next to the
peak of the Python process before the model was loaded.

    python memory_llamacpp.py MODEL.gguf SEQ THREADS
"""
import resource
import sys

import llama_cpp
import llamacpp_compat  # noqa: F401 (before any model is loaded)
from llama_cpp import Llama

path, seq, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
llm = Llama(model_path=path, n_ctx=max(seq, 512), n_batch=seq, n_ubatch=seq,
            n_threads=threads, n_threads_batch=threads, verbose=False)
llm.eval([(i % 1000) + 1 for i in range(seq)])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(f"llama.cpp (llama-cpp-python {llama_cpp.__version__}) "
      f"{path.rsplit('/', 1)[-1]}, {seq} tokens: process peak {peak:.1f} MiB "
      f"(the Python process before loading: {before:.1f} MiB)")
