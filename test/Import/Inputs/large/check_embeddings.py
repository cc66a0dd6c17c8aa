"""check_embeddings.py MODEL.so WEIGHTS DIR NAME MIN_COSINE: tfc-run (from
PATH) computes the sentence embeddings (entry encode) of DIR/sentences.txt
as one padded batch, tokenised by the checkpoint's own tokenizer, and each
must have a cosine similarity of at least MIN_COSINE with the reference's
row of DIR/embeddings.npy (scripts/make-embedder-references.py); prints the
count and the lowest cosine."""
import os
import subprocess
import sys
import tempfile

import numpy as np

so, weights, d, name, min_cos = sys.argv[1:6]
ref = np.load(os.path.join(d, "embeddings.npy"))
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "e.npy")
    r = subprocess.run(["tfc-run", so, "--entry", "encode", "--weights", weights,
                        "--text-file", os.path.join(d, "sentences.txt"),
                        "--output", out], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"{name}: tfc-run failed: {r.stderr.decode(errors='replace')}: MISMATCH")
    got = np.load(out).astype(np.float64)
if got.shape != ref.shape:
    sys.exit(f"{name}: shape {got.shape}, reference {ref.shape}: MISMATCH")
cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
low = int(np.argmin(cos))
ok = bool(cos.min() >= float(min_cos))
print(f"{name}: {len(cos)} sentences, lowest cosine {cos.min():.7f} (sentence {low})"
      + ("" if ok else f" below {min_cos}: MISMATCH"))
sys.exit(0 if ok else 1)
