"""Compares a tfc output with a reference output (.npy files).

    compare_npy.py OUT.npy REF.npy TOLERANCE [--argmax]

Fails unless the shapes agree, every value of both is finite, the reference
is not constant, and max |out - ref| <= TOLERANCE x max |ref| (per element,
over the whole tensor; the scale is printed). --argmax also requires the
same argmax along the last axis at every position (logits).
"""
import sys

import numpy as np

out = np.load(sys.argv[1]).astype(np.float64)
ref = np.load(sys.argv[2]).astype(np.float64)
tol = float(sys.argv[3])
argmax = "--argmax" in sys.argv[4:]
name = sys.argv[2]
if out.shape != ref.shape:
    sys.exit(f"{name}: shape {out.shape}, expected {ref.shape}: MISMATCH")
if not np.isfinite(out).all():
    sys.exit(f"{name}: {np.size(out) - np.isfinite(out).sum()} non-finite values in tfc's output: MISMATCH")
if not np.isfinite(ref).all() or ref.max() == ref.min():
    sys.exit(f"{name}: the reference is non-finite or constant: MISMATCH")
scale = np.abs(ref).max()
err = np.abs(out - ref).max()
ok = err <= tol * scale
line = f"{name}: max abs error {err:.3g} (scale {scale:.3g}, relative {err / scale:.3g}, tolerance {tol:g})"
if argmax:
    a, b = out.argmax(-1), ref.argmax(-1)
    same = (a == b).mean()
    line += f", argmax agrees at {same * 100:.1f}% of positions"
    ok = ok and same == 1.0
print(line + ("" if ok else ": MISMATCH"))
sys.exit(0 if ok else 1)
