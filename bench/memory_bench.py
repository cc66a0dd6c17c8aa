#!/usr/bin/env python3
"""Resident memory and load time of compiled models, bound from their
checkpoint and from a packed weights file (tfc-pack), for bench/memory.sh.

    memory_bench.py BUILD_DIR NAME MODEL.so CHECKPOINT PACKED.tfcw SEQ [SOURCE]

SOURCE, when given, is the checkpoint as a user hands it to tfc-run (a
.gguf, a Hugging Face directory, a .tfm whose weights are CHECKPOINT): its
first run, with an empty cache (TFC_CACHE_DIR in a new directory), compiles
it (tfc-compile, a child process), binds CHECKPOINT and writes the packed
weights into the cache; the second run maps them. For each: tfc-run's own
peak (--stats) and the largest peak of any process of the run (the
compiler's included: getrusage of the children).

For each way of binding, in a fresh process each:
  * a forward pass of `forward` (batch 1, SEQ tokens; three runs, so the
    memory plan is replayed from its arena): tfc-run --stats reports the
    weights, derived constants and arena it holds and the process's peak
    resident memory (VmHWM);
  * the load time (tfc_model_load + tfc_model_load_weights through the C
    API): cold, with the files dropped from the page cache first
    (posix_fadvise DONTNEED), and warm (median of 3).
The rule of the memory issue: peak <= 1.15 x weight bytes + arena.
"""
import ctypes
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build, name, model, checkpoint, packed, seq = sys.argv[1:7]
source = sys.argv[7] if len(sys.argv) > 7 else None
tfc_run = os.path.join(build, "bin", "tfc-run")
libtfcrt = os.path.join(build, "lib", "libtfcrt.so")

MIB = 1048576.0


def mib(text):
    """'12.5 MiB' / '1.20 GiB' / '3.0 KiB' / '0 B' -> MiB."""
    value, unit = text.split()
    scale = {"B": 1 / MIB, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[unit]
    return float(value) * scale


def weight_mib():
    info = subprocess.run([tfc_run, model, "--info"], capture_output=True,
                          text=True, check=True).stdout
    m = re.search(r"weights: \d+ tensors?, ([0-9.]+ [KMG]?i?B)", info)
    return mib(m.group(1))


def files_of(path):
    if os.path.isdir(path):
        return [os.path.join(path, f) for f in os.listdir(path)
                if f.endswith(".safetensors")]
    return [path]


def evict(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def load_seconds(weights):
    """One load in a fresh process (its own page tables)."""
    code = (
        "import ctypes, sys, time\n"
        "lib = ctypes.CDLL(sys.argv[1])\n"
        "lib.tfc_last_error.restype = ctypes.c_char_p\n"
        "m = ctypes.c_void_p()\n"
        "t0 = time.perf_counter()\n"
        "ok = lib.tfc_model_load(sys.argv[2].encode(), ctypes.byref(m)) == 0 and "
        "lib.tfc_model_load_weights(m, sys.argv[3].encode()) == 0\n"
        "t = time.perf_counter() - t0\n"
        "sys.exit(lib.tfc_last_error().decode()) if not ok else print(t)\n")
    out = subprocess.run([sys.executable, "-c", code, libtfcrt, model, weights],
                         capture_output=True, text=True, check=True).stdout
    return float(out)


def forward_inputs():
    """-i flags for `forward`: ids @range, 0/1 inputs (masks) @ones."""
    info = subprocess.run([tfc_run, model, "--info"], capture_output=True,
                          text=True, check=True).stdout
    entry = info.split("entry 'forward'\n", 1)[1].split("entry '", 1)[0]
    flags = []
    for m in re.finditer(r"input  '([^']+)': \w+ \[batch, seq[^\]]*\]"
                         r"(, values in \[0, (\d+)\))?", entry):
        kind = "@ones" if m.group(3) == "2" else "@range"
        flags += ["-i", f"{m.group(1)}={kind}:1x{seq}"]
    return flags


def forward(weights):
    out = subprocess.run(
        [tfc_run, model, "--weights", weights, "-e", "forward"] +
        forward_inputs() + ["--time", "2", "--stats"],
        capture_output=True, text=True, check=True).stdout
    return resident(out)


def resident(out):
    """tfc-run --stats' line, its arena and its process peak (MiB)."""
    line = next(l for l in out.splitlines() if l.startswith("resident:"))
    arena = re.search(r"arena ([0-9.]+ [KMG]?i?B)", line).group(1)
    peak = re.search(r"process peak ([0-9.]+ [KMG]?i?B)", line).group(1)
    return line, mib(arena), mib(peak)


weights_total = weight_mib()
print(f"### {name}: weights {weights_total:.1f} MiB, forward of 1 x {seq} "
      f"tokens")
for label, path in (("checkpoint", checkpoint), ("packed", packed)):
    line, arena, peak = forward(path)
    bound = 1.15 * weights_total + arena
    print(f"{label:10s} {line}")
    print(f"{label:10s} peak {peak:.1f} MiB = {peak / weights_total:.2f} x "
          f"weights; rule 1.15 x weights + arena = {bound:.1f} MiB: "
          f"{'holds' if peak <= bound else 'EXCEEDED'}")
    evict(files_of(path) + [model])
    cold = load_seconds(path)
    warm = statistics.median(load_seconds(path) for _ in range(3))
    print(f"{label:10s} load: cold {cold * 1e3:.0f} ms, warm {warm * 1e3:.0f} "
          f"ms")

if source:
    # One run in a fresh interpreter that prints tfc-run's output, then the
    # largest peak of any process it waited for (tfc-run's children too).
    wrapper = ("import resource, subprocess, sys\n"
               "sys.stdout.write(subprocess.run(sys.argv[1:], check=True, "
               "capture_output=True, text=True).stdout)\n"
               "print('children peak', resource.getrusage("
               "resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0)\n")
    weights = [] if os.path.realpath(source) == os.path.realpath(
        checkpoint) else ["--weights", checkpoint]
    args = [tfc_run, source] + weights + ["-e", "forward"] + \
        forward_inputs() + ["--time", "2", "--stats"]
    cache = tempfile.mkdtemp(prefix="tfc-memory-cache-")
    try:
        env = dict(os.environ, TFC_CACHE_DIR=cache)
        for label, state in (("first run", "empty"), ("second run", "filled")):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", wrapper] + args,
                                 capture_output=True, text=True, check=True,
                                 env=env).stdout
            seconds = time.perf_counter() - t0
            line, arena, peak = resident(out)
            children = float(out.rsplit("children peak ", 1)[1])
            bound = 1.15 * weights_total + arena
            print(f"{label:10s} (tfc-run {os.path.basename(source)}, cache "
                  f"{state}, {seconds:.1f} s) {line}")
            print(f"{label:10s} peak {peak:.1f} MiB = "
                  f"{peak / weights_total:.2f} x weights; rule 1.15 x "
                  f"weights + arena = {bound:.1f} MiB: "
                  f"{'holds' if peak <= bound else 'EXCEEDED'}; largest "
                  f"process of the run (tfc-compile included): "
                  f"{children:.1f} MiB")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
