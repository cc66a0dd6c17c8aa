"""all-MiniLM-L6-v2 from text to sentence embedding through tfc-run --text
(tfc's WordPiece tokenizer and the compiled model) vs sentence-transformers.

    check_minilm_text.py MODEL.so CHECKPOINT REF_DIR OUT_DIR

Runs the 24 reference sentences as one padded batch (tfc-run from PATH) and
requires cosine >= 0.99999 with sentence-transformers for every sentence.
"""
import json
import os
import subprocess
import sys

import numpy as np

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
cos = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
bad = [(s, c) for s, c in zip(sentences, cos) if c < 0.99999]
for s, c in bad:
    print(f"cosine {c:.7f} for {s!r}: MISMATCH")
print(f"--text: {len(sentences)} sentences, min cosine {cos.min():.8f}")
sys.exit(1 if bad else 0)
