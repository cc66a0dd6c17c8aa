"""check.py DEQUANTISED.npz IDS.npy OUTDIR [--activation-block 256]: each
output y_<format>.npy of model.tfm against numpy computing what the int8
kernels compute: activations quantised per block of 32 (d = max|x| / 127,
q = round half to even of x / d), exact products with the dequantised
weights in float64. With --activation-block 256 (tfc-compile's), the
K-quant formats' activations as llama.cpp's Q8_K: per 256, the element of
largest magnitude m (the first one) maps to -127, q = round half to even of
x * (-127 / m), at most 127, d = 1 / (-127 / m).
Passes within 2e-5 x max|ref| per output (float32 accumulation)."""
import sys
import numpy as np

w = np.load(sys.argv[1])
ids = np.load(sys.argv[2])
block = int(sys.argv[5]) if sys.argv[4:5] == ["--activation-block"] else 32
x = w["emb"][ids].astype(np.float32)
b = x.reshape(-1, 32)
d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
xq = (np.round(b * inv) * d).reshape(x.shape).astype(np.float64)


def q8_k(x):
    """llama.cpp's quantize_row_q8_K, dequantised (float32 scale)."""
    out = np.zeros(x.size, dtype=np.float64)
    for i, s in enumerate(x.reshape(-1, 256)):
        extreme = s[np.argmax(np.abs(s))]
        if extreme == 0:
            continue
        iscale = np.float32(-127) / extreme
        q = np.minimum(np.round(s * iscale), 127)
        out[256 * i:256 * (i + 1)] = q * np.float64(np.float32(1) / iscale)
    return out.reshape(x.shape)


xk = q8_k(x) if block == 256 else xq
for name in ["q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q3_k", "q2_k"]:
    ref = (xk if name.endswith("_k") else xq) @ w[name].astype(np.float64).T
    if name == "q5_1":
        ref = ref + w["b_q5_1"]
    out = np.load(f"{sys.argv[3]}/y_{name}.npy").astype(np.float64)
    err = np.abs(out - ref).max() / np.abs(ref).max()
    print(f"{name} {ref.shape}: max error {err:.2e} x max|ref|",
          "OK" if err <= 2e-5 else "MISMATCH")
