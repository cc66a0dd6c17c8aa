"""Runs a compiled example on the inputs of its PyTorch reference cases and
compares every output (test/E2E/torch-*.test).

    check_reference.py REF_DIR MODEL.so WEIGHTS WORK_DIR [RTOL]

REF_DIR is one model of test/E2E/Inputs/torch (scripts/make-example-
references.py): model.json lists the cases (entry, inputs, outputs) and the
SHA-256 of the weights the references were computed with; WEIGHTS must be
that file (same recipe, same -D options), else the test fails before
comparing anything. Each case runs through tfc-run (from PATH). Plain
Python 3.8+, no NumPy.

An output passes when it has the reference's shape, every value of both is
finite, the reference is not constant, and for every element

    |out_i - ref_i| <= RTOL x max(|ref_i|, rms(ref))       (RTOL: 1e-5)

where rms(ref) = sqrt(mean(ref²)) over the whole output: relative to the
element itself, floored at the output's typical magnitude so that elements
near zero (which carry the rounding error of the O(rms) terms that cancelled
in them) are not held to an impossible bound. The line printed per output
gives the largest error in those units and the element where it occurs.
"""
import array
import ast
import hashlib
import json
import math
import os
import subprocess
import sys


def load_npy(path):
    """(shape, values) of a little-endian f4/f8 .npy file, in C order. Plain
    Python: the test needs no NumPy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    if data[6] == 1:
        hlen, start = int.from_bytes(data[8:10], "little"), 10
    else:
        hlen, start = int.from_bytes(data[8:12], "little"), 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    codes = {"<f4": "f", "<f8": "d"}
    if header["descr"] not in codes or header["fortran_order"]:
        raise ValueError(f"{path}: {header['descr']}, expected C-order <f4 or <f8")
    values = array.array(codes[header["descr"]])
    values.frombytes(data[start + hlen:])
    if sys.byteorder != "little":
        values.byteswap()
    shape = tuple(header["shape"])
    if len(values) != math.prod(shape):
        raise ValueError(f"{path}: {len(values)} values for shape {shape}")
    return shape, values


def compare(out, ref, rtol):
    """(ok, message) of the criterion above; out and ref are (shape, values)."""
    (oshape, o), (rshape, r) = out, ref
    if oshape != rshape:
        return False, f"shape {oshape}, expected {rshape}"
    bad = sum(1 for x in o if not math.isfinite(x))
    if bad:
        return False, f"{bad} non-finite values (NaN or inf) in tfc's output"
    if not all(math.isfinite(x) for x in r) or (len(r) > 1 and max(r) == min(r)):
        return False, "the reference is non-finite or constant"
    if len(o) > 1 and max(o) == min(o):
        return False, "tfc's output is constant"
    floor = math.sqrt(math.fsum(x * x for x in r) / len(r))
    worst, at, max_abs = -1.0, 0, 0.0
    for i, (x, y) in enumerate(zip(o, r)):
        err = abs(x - y)
        max_abs = max(max_abs, err)
        rel = err / max(abs(y), floor)
        if rel > worst:
            worst, at = rel, i
    index, rest = [], at
    for d in reversed(rshape):
        index.insert(0, rest % d)
        rest //= d
    return worst <= rtol, (
        f"max error {worst:.2g} x max(|ref|, rms {floor:.3g}) at {index} "
        f"(out {o[at]:.7g}, ref {r[at]:.7g}; max abs error {max_abs:.2g}, "
        f"tolerance {rtol:g})")


def main():
    ref_dir, lib, weights, work = sys.argv[1:5]
    rtol = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-5
    with open(os.path.join(ref_dir, "model.json")) as f:
        manifest = json.load(f)
    with open(weights, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    name = os.path.basename(os.path.normpath(ref_dir))
    if sha != manifest["weights_sha256"]:
        sys.exit(f"{name}: the weights are not those of the references "
                 f"(sha256 {sha}, expected {manifest['weights_sha256']}): "
                 f"compile {manifest['tfm']} with -D {' -D '.join(manifest['defines'])} "
                 "or regenerate with scripts/make-example-references.py: MISMATCH")
    os.makedirs(work, exist_ok=True)
    ok = True
    for case in manifest["cases"]:
        cd = os.path.join(ref_dir, case["name"])
        cmd = ["tfc-run", lib, "--weights", weights, "--entry", case["entry"]]
        for i in case["inputs"]:
            cmd += ["--input", f"{i}={os.path.join(cd, i + '.npy')}"]
        for o in case["outputs"]:
            cmd += ["--output", f"{o}={os.path.join(work, case['name'] + '.' + o + '.npy')}"]
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        if run.returncode != 0:
            print(f"{name}/{case['name']}: tfc-run failed: {run.stdout.strip()}: MISMATCH")
            ok = False
            continue
        for o in case["outputs"]:
            good, msg = compare(
                load_npy(os.path.join(work, case["name"] + "." + o + ".npy")),
                load_npy(os.path.join(cd, o + ".npy")), rtol)
            ok &= good
            print(f"{name}/{case['name']} @{case['entry']} {o}: {msg}"
                  + ("" if good else ": MISMATCH"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
