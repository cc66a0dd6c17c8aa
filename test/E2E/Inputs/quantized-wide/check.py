"""check.py DEQUANTISED.npz IDS.npy OUTDIR: each output y_<format>.npy of
model.tfm against numpy computing what the int8 kernels compute:
activations quantised per block of 32 (d = max|x| / 127, q = round half to
even of x / d), exact products with the dequantised weights in float64.
Passes within 2e-5 x max|ref| per output (float32 accumulation)."""
import sys
import numpy as np

w = np.load(sys.argv[1])
ids = np.load(sys.argv[2])
x = w["emb"][ids].astype(np.float32)
b = x.reshape(-1, 32)
d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
xq = (np.round(b * inv) * d).reshape(x.shape).astype(np.float64)
for name in ["q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q3_k", "q2_k"]:
    ref = xq @ w[name].astype(np.float64).T
    if name == "q5_1":
        ref = ref + w["b_q5_1"]
    out = np.load(f"{sys.argv[3]}/y_{name}.npy").astype(np.float64)
    err = np.abs(out - ref).max() / np.abs(ref).max()
    print(f"{name} {ref.shape}: max error {err:.2e} x max|ref|",
          "OK" if err <= 2e-5 else "MISMATCH")
