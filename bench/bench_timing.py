"""Timing helpers the Python benchmarks share (model_bench.py,
attention_bench.py)."""

import re
import statistics
import subprocess
import sys
import time


def median_ms(fn, iters):
    """The median of `iters` calls of fn() in ms, after one warm-up call."""
    times = []
    for i in range(iters + 1):
        start = time.perf_counter()
        fn()
        if i:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def tfc_run_median_ms(cmd, env):
    """Runs `tfc-run ... --time N` and returns the median it prints (ms);
    exits with tfc-run's output if it fails or prints none."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"tfc-run failed:\n{proc.stdout}\n{proc.stderr}")
    m = re.search(r"median\s+([0-9.]+)\s*ms", proc.stdout)
    if not m:
        sys.exit(f"cannot find the median in tfc-run's output:\n{proc.stdout}")
    return float(m.group(1))
