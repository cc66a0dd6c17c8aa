"""check.py DEQUANTISED.npz IDS.npy OUT.npy: the model's output against
numpy computing what the quantised kernels compute: activations quantised
per block of 32 (d = max|x| / 127, q = round half to even of x / d), exact
products with the dequantised weights in float64. Passes within 2e-5 x
max|ref| (float32 accumulation); prints the error either way."""
import sys
from math import erf
import numpy as np

w = np.load(sys.argv[1])
ids = np.load(sys.argv[2])
out = np.load(sys.argv[3]).astype(np.float64)


def quantised(x):
    b = x.astype(np.float32).reshape(-1, 32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    return (np.round(b * inv) * d).reshape(x.shape).astype(np.float64)


def linear(x, weight, bias=None, quant=True):
    x = quantised(x) if quant else x
    y = x @ weight.astype(np.float64).T
    return y if bias is None else y + bias


x = w["emb"][ids].astype(np.float64)
h = linear(x, w["w1"], w["b1"])
h = 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))
y = linear(linear(h, w["w2"]), w["w3"], quant=False)
ref = linear(y, w["emb"])
err = np.abs(out - ref).max() / np.abs(ref).max()
print(f"{ref.shape}: max error {err:.2e} x max|ref|",
      "OK" if err <= 2e-5 else "MISMATCH")
