"""all-MiniLM-L6-v2 through tfc vs sentence-transformers and transformers.

    check_minilm.py REF_DIR EMBEDDINGS.npy HIDDEN.npy

EMBEDDINGS: tfc's `encode` output for the reference batch; HIDDEN: tfc's
`forward` hidden states for it. Every sentence's embedding must have cosine
>= 0.99999 with sentence-transformers' (and be finite and unit length), and
the hidden states of the first six sentences must be within 1e-4 of
transformers' (absolute, the hidden states are O(1)).
"""
import json
import os
import sys

import numpy as np

ref_dir, emb_path, hidden_path = sys.argv[1:4]
ref = np.load(os.path.join(ref_dir, "sentence_embedding.npy")).astype(np.float64)
emb = np.load(emb_path).astype(np.float64)
sentences = json.load(open(os.path.join(ref_dir, "sentences.json"), encoding="utf-8"))
ok = True
if emb.shape != ref.shape or not np.isfinite(emb).all():
    sys.exit(f"embeddings: shape {emb.shape} vs {ref.shape} or non-finite: MISMATCH")
cos = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
for s, c in zip(sentences, cos):
    if c < 0.99999:
        print(f"cosine {c:.7f} for {s!r}: MISMATCH")
        ok = False
norms = np.linalg.norm(emb, axis=1)
if np.abs(norms - 1).max() > 1e-5:
    print(f"embedding norms {norms.min()}..{norms.max()}, expected 1: MISMATCH")
    ok = False
print(f"{len(sentences)} sentences: min cosine {cos.min():.8f}, "
      f"max abs error {np.abs(emb - ref).max():.3g}")
hidden_ref = np.load(os.path.join(ref_dir, "hidden6.npy")).astype(np.float64)
hidden = np.load(hidden_path).astype(np.float64)[: hidden_ref.shape[0]]
if hidden.shape != hidden_ref.shape:
    sys.exit(f"hidden: shape {hidden.shape} vs {hidden_ref.shape}: MISMATCH")
err = np.abs(hidden - hidden_ref).max()
print(f"hidden states of {hidden_ref.shape[0]} sentences: max abs error {err:.3g} (limit 1e-4)"
      + ("" if err <= 1e-4 else ": MISMATCH"))
ok = ok and err <= 1e-4
sys.exit(0 if ok else 1)
