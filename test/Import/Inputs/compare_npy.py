"""Compares a tfc output with a reference output (.npy files).

    compare_npy.py OUT.npy REF.npy TOLERANCE [--argmax] [--ref-row N]

Fails unless the shapes agree, every value of both is finite, the reference
is not constant, and every element is within TOLERANCE of the reference
relative to its own magnitude, floored at the reference's root mean square:

    |out_i - ref_i| <= TOLERANCE x max(|ref_i|, rms(ref))   for every i

(the floor keeps values that are near zero by cancellation from demanding
more than f32 sums can give). The largest such ratio is printed: the tests
set TOLERANCE to about 10x what was measured on the machines seen so far.
--argmax also requires the same argmax along the last axis at every position
(logits). --ref-row N compares with row N of the reference's first axis.
"""
import sys

import numpy as np

from tolerance import relative_errors

args = sys.argv[1:]
argmax = "--argmax" in args
ref_row = None
if "--ref-row" in args:
    ref_row = int(args[args.index("--ref-row") + 1])
out = np.load(args[0]).astype(np.float64)
ref = np.load(args[1]).astype(np.float64)
tol = float(args[2])
name = args[1] if ref_row is None else f"{args[1]}[{ref_row}]"
if ref_row is not None:
    ref = ref[ref_row:ref_row + 1]
if out.shape != ref.shape:
    sys.exit(f"{name}: shape {out.shape}, expected {ref.shape}: MISMATCH")
if not np.isfinite(out).all():
    sys.exit(f"{name}: {np.size(out) - np.isfinite(out).sum()} non-finite values in tfc's output: MISMATCH")
if not np.isfinite(ref).all() or ref.max() == ref.min():
    sys.exit(f"{name}: the reference is non-finite or constant: MISMATCH")
rms = np.sqrt(np.mean(ref * ref))
err = np.abs(out - ref)
ratio = relative_errors(out, ref)
worst = np.unravel_index(np.argmax(ratio), ratio.shape)
ok = ratio.max() <= tol
line = (f"{name}: max abs error {err.max():.3g}, max relative error {ratio.max():.3g} "
        f"(per element, floor rms {rms:.3g}; tolerance {tol:g})")
if not ok:
    line += f", worst at {tuple(int(i) for i in worst)}: {out[worst]!r} vs {ref[worst]!r}"
if argmax:
    a, b = out.argmax(-1), ref.argmax(-1)
    same = (a == b).mean()
    line += f", argmax agrees at {same * 100:.1f}% of positions"
    ok = ok and same == 1.0
print(line + ("" if ok else ": MISMATCH"))
sys.exit(0 if ok else 1)
