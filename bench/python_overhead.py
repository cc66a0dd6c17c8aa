"""What the Python package costs, and its embedding rate against
sentence-transformers (issue 52's acceptance), in one run:

    TFC_TORCH_PYTHON=/path/to/python-with-sentence-transformers \
        ~/.cache/tfc/python-venv/bin/python bench/python_overhead.py [threads]

1. One MiniLM embedding call (entry `encode`, one 12-token sentence) and one
   SmolLM2-135M decode step (Q4_1, one token after a 16-token prompt,
   rewound each time): the median time through `tfc` (this interpreter)
   and through the C API (bench/python_overhead_capi.c, built here against
   the same libtfcrt), alternating, and their ratio (goal <= 1.05).
2. Sentences per second, MiniLM, `tfc.Model.embed` vs sentence-transformers'
   `encode` (run by TFC_TORCH_PYTHON, torch held to the same threads) at
   batch 1 and 32, and their ratio (goals >= 2 and >= 1.2).
Prints the CPU (lscpu) and the instruction set the runtime chose.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import tfc
from bench_timing import host_description, median_ms
from tfc._build_config import TFC_COMPILE

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CACHE = os.environ.get("TFC_CACHE_DIR") or os.path.expanduser("~/.cache/tfc")
MINILM = os.path.join(CACHE, "models", "minilm")
SMOLLM2 = os.path.join(CACHE, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
BUILD = os.path.dirname(os.path.dirname(TFC_COMPILE))
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
tfc.set_num_threads(threads)


capi = os.path.join(BUILD, "bench", "python_overhead_capi")
os.makedirs(os.path.dirname(capi), exist_ok=True)
subprocess.run(["cc", "-O2", "-std=c11", "-I" + os.path.join(ROOT, "include"),
                os.path.join(ROOT, "bench", "python_overhead_capi.c"),
                "-L" + os.path.join(BUILD, "lib"), "-Wl,-rpath," + os.path.join(BUILD, "lib"),
                "-ltfcrt", "-o", capi], check=True)
env = dict(os.environ, TFC_NUM_THREADS=str(threads))


def capi_us(mode, model, weights, repeats, ids):
    out = subprocess.run([capi, mode, model, weights, str(repeats), ",".join(map(str, ids))],
                         capture_output=True, text=True, env=env, check=True).stdout
    return float(out)


enc = tfc.Model(MINILM)
dec = tfc.Model(SMOLLM2, kv_cache=True)
print(f"CPU: {host_description(os.path.join(BUILD, 'bin'))}; {threads} threads; "
      f"tfc {tfc.__version__}")

# 1. The cost of the Python layer.
text = "Hello world, this is a short sentence."
ids = enc.tokenizer.encode(text)
inputs = {i.name: (np.array([ids], np.int64) if i.name == "input_ids" else
                   np.ones((1, len(ids)), np.int64) if i.name == "attention_mask" else
                   np.zeros((1, len(ids)), np.int64))
          for i in enc.entries["encode"].inputs}
prompt = dec.tokenizer.encode("The quick brown fox jumps over the lazy dog while the")[:16]
session = dec.session(context=len(prompt) + 16)
session.run(input_ids=np.array([prompt], np.int64))
step = np.array([[prompt[-1]]], np.int64)


def decode_step():
    session.run(input_ids=step)
    session.rewind(len(prompt))


rows = []
for name, py, c in (
        ("MiniLM embedding call", lambda: 1e3 * median_ms(lambda: enc.run("encode", **inputs), 400),
         lambda: capi_us("encode", enc.library, MINILM, 400, ids)),
        ("SmolLM2 decode step", lambda: 1e3 * median_ms(decode_step, 300),
         lambda: capi_us("decode", dec.library, SMOLLM2, 300, prompt))):
    pys, cs = [], []
    for _ in range(3):  # alternating rounds; the median of each side
        pys.append(py())
        cs.append(c())
    p, q = statistics.median(pys), statistics.median(cs)
    rows.append((name, p, q))
    print(f"{name}: Python {p:.1f} us, C API {q:.1f} us: {p / q:.3f}x")

# 2. Sentence embeddings against sentence-transformers.
sentences = json.load(open(os.path.join(ROOT, "test", "Import", "Inputs", "minilm",
                                        "sentences.json"), encoding="utf-8"))
batch32 = (sentences * 2)[:32]
peer = os.environ.get("TFC_TORCH_PYTHON")
if not peer:
    sys.exit("set TFC_TORCH_PYTHON to a python with sentence-transformers "
             "(bench/setup-pypi-torch.sh, then pip install sentence-transformers)")
st_script = r"""
import json, sys, time, statistics, torch
from sentence_transformers import SentenceTransformer
torch.set_num_threads(int(sys.argv[2]))
m = SentenceTransformer(sys.argv[1], device="cpu")
s = json.loads(sys.stdin.read())
b32 = (s * 2)[:32]
import sentence_transformers
def rate(batch, rounds):
    m.encode(batch, batch_size=len(batch))
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter(); m.encode(batch, batch_size=len(batch)); t.append(time.perf_counter() - t0)
    return len(batch) / statistics.median(t)
r1 = statistics.median([rate([x], 1) for x in s * 4])
print(json.dumps({"b1": r1, "b32": rate(b32, 20), "version": sentence_transformers.__version__,
                  "torch": torch.__version__}))
"""


def tfc_rate(batch, rounds):
    enc.embed(batch, batch_size=len(batch))
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        enc.embed(batch, batch_size=len(batch))
        t.append(time.perf_counter() - t0)
    return len(batch) / statistics.median(t)


ratios = {}
for rnd in range(2):
    st = json.loads(subprocess.run([peer, "-c", st_script, MINILM, str(threads)],
                                   input=json.dumps(sentences), capture_output=True,
                                   text=True, check=True).stdout)
    t1 = statistics.median([tfc_rate([x], 1) for x in sentences * 4])
    t32 = tfc_rate(batch32, 20)
    ratios.setdefault("b1", []).append((t1, st["b1"]))
    ratios.setdefault("b32", []).append((t32, st["b32"]))
print(f"peer: sentence-transformers {st['version']}, torch {st['torch']}")
for key, label in (("b1", "batch 1"), ("b32", "batch 32")):
    t = statistics.median(r[0] for r in ratios[key])
    s = statistics.median(r[1] for r in ratios[key])
    print(f"MiniLM sentences/s at {label}: tfc {t:.1f}, sentence-transformers {s:.1f}: {t / s:.2f}x")
