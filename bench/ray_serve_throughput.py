"""Throughput of tfc on Ray Serve (python/tfc/serve.py) with 1 and 2
replicas of one thread each, on this machine, through the `openai` client:

    ~/.cache/tfc/python-venv/bin/python bench/ray_serve_throughput.py

* MiniLM embeddings: 192 requests of 8 sentences from 8 client threads:
  sentences/s;
* SmolLM2-135M (Q4_1) chat: 24 requests of 48 new tokens (greedy, ignoring
  the end of the turn is not possible through OpenAI's API, so the count is
  what was generated) from 4 client threads: generated tokens/s.
Prints the CPU (lscpu); one Ray node (ray.init, num_cpus = 2).
"""
import concurrent.futures as cf
import json
import os
import socket
import time

import openai
import ray
from ray import serve

import tfc.serve
from bench_timing import host_description
from tfc._build_config import TFC_COMPILE

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CACHE = os.environ.get("TFC_CACHE_DIR") or os.path.expanduser("~/.cache/tfc")
MINILM = os.path.join(CACHE, "models", "minilm")
SMOLLM2 = os.path.join(CACHE, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
sentences = json.load(open(os.path.join(ROOT, "test", "Import", "Inputs", "minilm",
                                        "sentences.json"), encoding="utf-8"))
questions = ["What is the capital of France?", "Write a haiku about compilers.",
             "Why is the sky blue?", "Name three prime numbers.", "What is a transformer?",
             "Tell me a joke about cats."]


with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
serve.start(http_options={"host": "127.0.0.1", "port": port})
print(f"CPU: {host_description(os.path.dirname(TFC_COMPILE))}, {os.cpu_count()} cores; "
      f"ray {ray.__version__}")
for replicas in (1, 2):
    serve.run(tfc.serve.app(MINILM, name="minilm", replicas=replicas, threads=1),
              name="minilm", route_prefix="/minilm")
    c = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/minilm/v1", api_key="x", max_retries=0)
    batches = [[sentences[(i * 8 + k) % len(sentences)] for k in range(8)] for i in range(192)]
    c.embeddings.create(model="minilm", input=batches[0])
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda b: c.embeddings.create(model="minilm", input=b), batches))
    emb_rate = 192 * 8 / (time.perf_counter() - t0)
    serve.delete("minilm")
    serve.run(tfc.serve.app(SMOLLM2, name="smollm2", replicas=replicas, threads=1, kv_cache=True),
              name="smollm2", route_prefix="/smollm2")
    c = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/smollm2/v1", api_key="x", max_retries=0)
    c.chat.completions.create(model="smollm2", messages=[{"role": "user", "content": "Hi"}],
                              max_tokens=4)

    def ask(i):
        r = c.chat.completions.create(model="smollm2", max_tokens=48, temperature=0, messages=[
            {"role": "user", "content": questions[i % len(questions)]}])
        return r.usage.completion_tokens

    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(4) as pool:
        tokens = sum(pool.map(ask, range(24)))
    chat_rate = tokens / (time.perf_counter() - t0)
    serve.delete("smollm2")
    print(f"{replicas} replica{'s' if replicas > 1 else ''} x 1 thread: MiniLM {emb_rate:.0f} "
          f"sentences/s; SmolLM2 chat {chat_rate:.1f} generated tokens/s ({tokens} tokens)")
serve.shutdown()
ray.shutdown()
