"""Runs tfc-run with --stats and checks the memory rule of packed weights:
the process's peak resident memory is at most 1.15 x the model's weight
bytes plus the arena of its memory plan.

    check_peak.py MODEL.so WEIGHTS [tfc-run arguments...]

Prints the figures and "rule holds"; exit 1 if it does not.
"""
import re
import subprocess
import sys

model, weights, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def size(text):
    value, unit = text.split()
    return float(value) * UNITS[unit]


info = subprocess.run(["tfc-run", model, "--info"], capture_output=True,
                      text=True, check=True).stdout
weight_bytes = size(re.search(r"weights: \d+ tensors?, ([0-9.]+ \w+)",
                              info).group(1))
out = subprocess.run(["tfc-run", model, "--weights", weights, "--stats",
                      "--time", "2"] + rest, capture_output=True, text=True,
                     check=True).stdout
line = next(l for l in out.splitlines() if l.startswith("resident:"))
arena = size(re.search(r"arena ([0-9.]+ \w+)", line).group(1))
peak = size(re.search(r"process peak ([0-9.]+ \w+)", line).group(1))
bound = 1.15 * weight_bytes + arena
print(line)
print(f"peak {peak / 2**20:.1f} MiB, weights {weight_bytes / 2**20:.1f} MiB, "
      f"arena {arena / 2**20:.1f} MiB: "
      f"{'rule holds' if peak <= bound else 'RULE BROKEN'} "
      f"(peak <= {bound / 2**20:.1f} MiB)")
sys.exit(0 if peak <= bound else 1)
