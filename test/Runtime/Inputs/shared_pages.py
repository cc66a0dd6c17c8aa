"""Checks that processes running one model share the pages of its packed
weights file (through the page cache) instead of each holding a copy.

    shared_pages.py CAPI_RUN MODEL.so WEIGHTS.tfcw SEQ [PROCESSES=2]

Starts PROCESSES copies of CAPI_RUN (test/E2E/Inputs/capi_run.c) with
CAPI_RUN_HOLD set: each loads the model, binds the packed file, runs every
entry and waits. Then, from /proc/PID/smaps, the mapping of WEIGHTS in each
process: its resident bytes (Rss) and its proportional share (Pss, each
shared page divided among the processes mapping it). Shared pages give
Pss = Rss / PROCESSES; private copies would give Pss = Rss. Exit 1 unless
every process has Pss <= 1.1 * Rss / PROCESSES and Rss > 0.
"""
import os
import subprocess
import sys

capi_run, model, weights, seq = sys.argv[1:5]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 2
target = os.path.realpath(weights)
env = dict(os.environ, CAPI_RUN_HOLD="1")
procs = [subprocess.Popen([capi_run, model, weights, seq], env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) for _ in range(n)]


def mapping_kib(pid):
    """Rss and Pss (KiB) of the mappings of `target` in process `pid`."""
    rss = pss = 0
    inside = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            if not fields[0].endswith(":"):  # a mapping's header line
                inside = len(fields) >= 6 and \
                    os.path.realpath(fields[-1]) == target
            elif inside and fields[0] == "Rss:":
                rss += int(fields[1])
            elif inside and fields[0] == "Pss:":
                pss += int(fields[1])
    return rss, pss


ok = True
try:
    for p in procs:
        line = p.stdout.readline()
        while line and line.strip() != "ready":
            line = p.stdout.readline()
        if not line:
            sys.exit(f"{capi_run} exited before it was ready "
                     f"(status {p.wait()})")
    for i, p in enumerate(procs):
        rss, pss = mapping_kib(p.pid)
        good = rss > 0 and pss <= 1.1 * rss / n
        ok = ok and good
        print(f"process {i}: {os.path.basename(weights)} Rss {rss / 1024:.1f} "
              f"MiB, Pss {pss / 1024:.1f} MiB: "
              f"{'shared' if good else 'NOT SHARED'}")
finally:
    for p in procs:
        p.stdin.close()
        p.wait()
sys.exit(0 if ok else 1)
