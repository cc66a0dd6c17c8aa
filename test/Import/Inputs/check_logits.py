"""A causal LM's logits through tfc vs transformers' (reference subset).

    check_logits.py REF_DIR LOGITS.npy [TOL [MIN_ARGMAX]]

REF_DIR holds, per position of the prompt, transformers' argmax, max |logit|,
the logits of 2,048 fixed vocabulary columns and of its top 64 tokens
(scripts/make-references.py). Fails unless tfc's logits (finite, [1, T, V])
agree with every stored value within TOL x max |logit| of the position,
and the argmax agrees at every position.
"""
import os
import sys

import numpy as np

# SmolLM2-135M (f32 arithmetic on the Q4_1 file's values): measured 2.9e-6
# (AVX-512 kernels) and 4.0e-6 (AVX2) on a Xeon family 6 model 167.
TOL = float(sys.argv[3]) if len(sys.argv) > 3 else 4e-5
# The fraction of positions whose argmax must agree (1: all of them).
MIN_ARGMAX = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0

ref_dir, path = sys.argv[1:3]
load = lambda n: np.load(os.path.join(ref_dir, n + ".npy"))
logits = np.load(path).astype(np.float64)[0]
T = load("argmax").shape[0]
if logits.shape[0] != T or not np.isfinite(logits).all():
    sys.exit(f"logits: shape {logits.shape}, expected {T} positions, or non-finite: MISMATCH")
scale = load("max_abs").astype(np.float64)
cols = load("columns")
err_cols = np.abs(logits[:, cols] - load("column_logits")).max(1)
top = load("top_ids")
err_top = np.abs(np.take_along_axis(logits, top, 1) - load("top_logits")).max(1)
rel = np.maximum(err_cols, err_top) / scale
same = logits.argmax(1) == load("argmax")
print(f"{T} positions: max error {rel.max():.3g} x max |logit| (limit {TOL:g}), "
      f"argmax agrees at {same.sum()}/{T} positions")
ok = rel.max() <= TOL and same.mean() >= MIN_ARGMAX
if not ok:
    print("MISMATCH")
sys.exit(0 if ok else 1)
