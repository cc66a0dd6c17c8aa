"""Runs a command and fails unless its peak resident memory stays below a limit.

    max-rss.py LIMIT_MIB command args...
"""
import resource
import subprocess
import sys

limit = float(sys.argv[1])
proc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL)
if proc.returncode != 0:
    sys.exit(f"command failed with exit code {proc.returncode}")
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
print(f"peak RSS {peak:.1f} MiB (limit {limit:.0f} MiB): {'OK' if peak < limit else 'TOO HIGH'}")
sys.exit(0 if peak < limit else 1)
