"""Writes or checks test/E2E/row-kernels.test's softmax rows with special
values.

    softmax_special.py write DIR   -> DIR/s.npy
    softmax_special.py check DIR   reads DIR/s.npy and DIR/out.npy

Rows of 37 (two vectors and a masked tail of 5 lanes), each row one case:
  0  finite values                -> softmax (float64 reference, 1e-6)
  1  a NaN in the tail            -> NaN in every lane, as PyTorch gives
  2  a NaN in the first vector    -> NaN in every lane
  3  every value -inf (a fully masked row)
                                  -> zeros (tfc's convention: no NaN)
  4  +inf among finite values     -> NaN in every lane (inf - inf)
  5  -inf in some lanes           -> 0 there, softmax of the rest
  6  large values (1e30, 1e30 - 1e24, ...)
                                  -> softmax after subtracting the maximum
"""
import sys

import numpy as np

COLS = 37


def rows():
    rng = np.random.default_rng(7)
    s = rng.standard_normal((7, COLS)).astype(np.float32) * 3
    s[1, 35] = np.nan
    s[2, 3] = np.nan
    s[3, :] = -np.inf
    s[4, 20] = np.inf
    s[5, ::3] = -np.inf
    s[6, :] = np.float32(1e30) - np.arange(COLS, dtype=np.float32) * np.float32(1e24)
    return s


def softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "write":
        np.save(f"{d}/s.npy", rows())
        return
    s = np.load(f"{d}/s.npy")
    out = np.load(f"{d}/out.npy")
    ok = True

    def expect(row, cond, what):
        nonlocal ok
        print(f"row {row}: {what}: {'ok' if cond else 'WRONG'}")
        if not cond:
            print("  got", out[row].tolist())
            ok = False

    for row in (0, 5, 6):
        err = np.abs(out[row] - softmax(s[row])).max()
        expect(row, err <= 1e-6, f"softmax within 1e-6 (max abs error {err:.1e})")
    expect(5, np.all(out[5, ::3] == 0), "zero where -inf")
    for row in (1, 2, 4):
        expect(row, np.all(np.isnan(out[row])), "NaN in every lane")
    expect(3, np.all(out[3] == 0), "zeros")
    print("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
