"""all-MiniLM-L6-v2 from text to sentence embedding through tfc-run --text
(tfc's WordPiece tokenizer and the compiled model) vs sentence-transformers.

    check_minilm_text.py MODEL.so CHECKPOINT REF_DIR OUT_DIR

Runs the 24 reference sentences as one padded batch (tfc-run from PATH) and
requires every element of every sentence's embedding within TOL of
sentence-transformers' (per element, relative, floored at the rms:
tolerance.py).
"""
import json
import os
import subprocess
import sys

import numpy as np

from tolerance import relative_errors

# The batch check_minilm.py checks from ids, here from text: the same bound
# (measured 4.3e-6 / 3.8e-6 there).
TOL = 5e-5

model, ckpt, ref_dir, out_dir = sys.argv[1:5]
sentences = json.load(open(os.path.join(ref_dir, "sentences.json"), encoding="utf-8"))
out = os.path.join(out_dir, "text-embedding.npy")
cmd = ["tfc-run", model, "--weights", ckpt, "--entry", "encode",
       "--output", out]
for s in sentences:
    cmd += ["--text", s]
p = subprocess.run(cmd, capture_output=True, text=True)
if p.returncode != 0:
    sys.exit("tfc-run failed: " + p.stderr)
emb = np.load(out).astype(np.float64)
ref = np.load(os.path.join(ref_dir, "sentence_embedding.npy")).astype(np.float64)
if emb.shape != ref.shape or not np.isfinite(emb).all():
    sys.exit(f"--text: shape {emb.shape} vs {ref.shape} or non-finite: MISMATCH")
ratio = relative_errors(emb, ref).max(1)
bad = [(s, r) for s, r in zip(sentences, ratio) if r > TOL]
for s, r in bad:
    print(f"relative error {r:.3g} for {s!r}: MISMATCH")
print(f"--text: {len(sentences)} sentences, max relative error {ratio.max():.3g} (limit {TOL:g})")
sys.exit(1 if bad else 0)
