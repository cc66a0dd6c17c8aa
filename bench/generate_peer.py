"""transformers' speed on the same measurements as bench/generate_bench.c:
prefill of 128 and 1024 tokens, and one decode step with the KV cache
holding 16, 256, 1024 and 4096 tokens (median of 16 steps), in f32 on the
CPU, for a .gguf that transformers dequantises (or a Hugging Face dir).

    python generate_peer.py DIR GGUF_FILE THREADS
"""
import statistics
import sys
import time

import torch
from transformers import AutoModelForCausalLM, DynamicCache

d, gguf, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(threads)
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=gguf or None,
                                             torch_dtype=torch.float32).eval()
print(f"transformers {__import__('transformers').__version__}, torch {torch.__version__}, {threads} threads")


def ids(n, start=0):
    return torch.tensor([[(start + i) % 1000 for i in range(n)]])


with torch.inference_mode():
    for p in (128, 1024):
        best = 1e30
        for _ in range(3):
            t0 = time.perf_counter()
            model(ids(p), use_cache=True)
            best = min(best, time.perf_counter() - t0)
        print(f"prefill {p}: {best * 1e3:.1f} ms, {p / best:.1f} tokens/s")
    for target in (16, 256, 1024, 4096):
        cache = DynamicCache()
        pos = 0
        while pos < target:
            n = min(512, target - pos)
            model(ids(n, pos), past_key_values=cache, use_cache=True)
            pos += n
        times = []
        for s in range(16):
            t0 = time.perf_counter()
            model(ids(1, pos), past_key_values=cache, use_cache=True)
            times.append(time.perf_counter() - t0)
            pos += 1
        t = statistics.median(times)
        print(f"decode at position {target}: {t * 1e3:.2f} ms/token, {1 / t:.1f} tokens/s")
