"""Runs a model through the C API (capi_run, which prints each output's
shape) and again through tfc-run on the inputs capi_run used, and compares
every output (test/E2E/c-api.test):

    capi_check.py CAPI_RUN MODEL.so WEIGHTS SEQ WORK_DIR

Both run the same library on the same inputs, so the outputs must be
identical (tolerance 0), finite and not constant (check_reference.compare).
tfc-run's results are themselves checked against the interpreter and
PyTorch by the other end-to-end tests; this test checks that the C API
passes inputs and returns outputs without mixing them up.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_reference import compare, load_npy  # noqa: E402


def main():
    capi, lib, weights, seq, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = subprocess.run([capi, lib, weights, seq, work], stdout=subprocess.PIPE,
                         text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        sys.exit("capi_run failed: MISMATCH")
    files = sorted(os.listdir(work))
    entries = sorted({f.split(".")[0] for f in files})
    ok = True
    for entry in entries:
        cmd = ["tfc-run", lib, "--weights", weights, "--entry", entry]
        outputs = []
        for f in files:
            e, kind, name = f[:-len(".npy")].split(".", 2)
            if e != entry:
                continue
            if kind == "in":
                cmd += ["--input", f"{name}={os.path.join(work, f)}"]
            else:
                outputs.append(name)
                cmd += ["--output", f"{name}={os.path.join(work, 'run.' + f)}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        for name in outputs:
            f = f"{entry}.out.{name}.npy"
            good, msg = compare(load_npy(os.path.join(work, f)),
                                load_npy(os.path.join(work, "run." + f)), 0.0)
            ok &= good
            print(f"{entry}: output {name} vs tfc-run: {msg}"
                  + ("" if good else ": MISMATCH"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
