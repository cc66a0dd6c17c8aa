"""Timing helpers the Python benchmarks share (model_bench.py,
attention_bench.py, gpu_bench.py, python_overhead.py,
ray_serve_throughput.py)."""

import os
import re
import statistics
import subprocess
import sys
import time


def lscpu(field):
    """A field of lscpu ("Model name", "CPU family", "Model"), or "?"."""
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return "?"


def host_description(bin_dir):
    """"MODEL NAME (family F, model M), ISA": the CPU and the instruction set
    tfc's kernels use on it, as the runtime (bin_dir/tfc-run --host-cpu)
    sees it, TFC_HOST_CPU included."""
    out = subprocess.run([os.path.join(bin_dir, "tfc-run"), "--host-cpu"],
                         capture_output=True, text=True).stdout
    features = set(next((l.split(":", 1)[1].split() for l in out.splitlines()
                         if l.startswith("features:")), []))
    isa = ("AVX-512" + (" + VNNI" if "avx512vnni" in features else "") if "avx512f" in features
           else "AVX2 + FMA" if "avx2" in features else "x86-64")
    return (f"{lscpu('Model name')} (family {lscpu('CPU family')}, model {lscpu('Model')}), "
            f"{isa}")


def median_ms(fn, iters):
    """The median of `iters` calls of fn() in ms, after one warm-up call."""
    times = []
    for i in range(iters + 1):
        start = time.perf_counter()
        fn()
        if i:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def tfc_run_median_ms(cmd, env=None, device=False):
    """Runs `tfc-run ... --time N` and returns the median it prints (ms):
    of the whole runs ("time: ... median X ms"), or with `device` of the
    GPU kernels alone ("device time: median X ms"); exits with tfc-run's
    output if it fails or prints none."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"tfc-run failed:\n{proc.stdout}\n{proc.stderr}")
    line = "device time" if device else "time"
    m = re.search(rf"^{line}:.*?median\s+([0-9.]+)\s*ms", proc.stdout, re.M)
    if not m:
        sys.exit(f"cannot find the {line} median in tfc-run's output:\n"
                 f"{proc.stdout}")
    return float(m.group(1))


def tfc_run_command(bin_dir, lib, entry, iters, feeds, tmp):
    """The `tfc-run LIB --time ITERS --entry ENTRY` command that reads each
    array of `feeds` (name -> numpy array, saved as TMP/name.npy) and writes
    the output `out` to TMP/out.npy; returns (command, that path)."""
    import numpy as np
    run = [os.path.join(bin_dir, "tfc-run"), lib, "--time", str(iters),
           "--entry", entry]
    for name, value in feeds.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, value)
        run += ["--input", f"{name}={path}"]
    out = os.path.join(tmp, "out.npy")
    return run + ["--output", f"out={out}"], out
