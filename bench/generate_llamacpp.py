#!/usr/bin/env python3
"""llama.cpp's speed on the measurements of bench/generate_bench.c, through
llama-cpp-python (built from its PyPI source package): prefill of 128 and
1024 tokens (best of 3), and one decode step with the KV cache holding 16,
256, 1024 and 4096 tokens (median of 16 steps).

    python generate_llamacpp.py MODEL.gguf THREADS
"""
import statistics
import sys
import time

import llama_cpp
import llamacpp_compat  # noqa: F401 (before any model is loaded)
from llama_cpp import Llama

path, threads = sys.argv[1], int(sys.argv[2])
llm = Llama(model_path=path, n_ctx=4096 + 64, n_batch=1024, n_ubatch=1024,
            n_threads=threads, n_threads_batch=threads, verbose=False)
print(f"llama.cpp (llama-cpp-python {llama_cpp.__version__}), {threads} threads, "
      f"{path.rsplit('/', 1)[-1]}")


def ids(n, start=0):
    return [(start + i) % 1000 + 1 for i in range(n)]


for p in (128, 1024):
    best = 1e30
    for _ in range(3):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids(p))
        best = min(best, time.perf_counter() - t0)
    print(f"prefill {p}: {best * 1e3:.1f} ms, {p / best:.1f} tokens/s")
for target in (16, 256, 1024, 4096):
    llm.reset()
    pos = 0
    while pos < target:
        n = min(1024, target - pos)
        llm.eval(ids(n, pos))
        pos += n
    times = []
    for _ in range(16):
        t0 = time.perf_counter()
        llm.eval(ids(1, pos))
        times.append(time.perf_counter() - t0)
        pos += 1
    t = statistics.median(times)
    print(f"decode at position {target}: {t * 1e3:.2f} ms/token, {1 / t:.1f} tokens/s")
