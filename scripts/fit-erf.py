#!/usr/bin/env python3
"""Fits the f32 erf of lib/Target/CPU/ApproximateMath.cpp (RationalErf).

erf(x) ~= x P(x^2) / Q(x^2) on [0, CLAMP] (odd, so on [-CLAMP, CLAMP]; the
kernel clamps x there, erf(4) = 1 - 1.5e-8), Q(0) = 1, minimising the largest
absolute error by differential correction: each round solves the linear
program  min t  s.t.  |erf(x_i) Q(s_i) - x_i P(s_i)| <= t Q_prev(s_i)  over a
dense grid, Q_prev being the previous round's denominator. Then it evaluates
the result as the kernel does (f32, Horner with FMAs, one division) over
[-6, 6] and prints the coefficients for the C++ table.

Needs numpy and scipy:  python3 scripts/fit-erf.py [P_TERMS Q_TERMS CLAMP]
(default 8 5 4: 3.0e-7 at worst in f32, 5.5e-8 in exact arithmetic).

Measured with the fit's coefficients (Xeon family 6 model 167, BERT-base,
seq 128, 2 threads, perf cpu-clock): with AVX2 kernels the GELU GEMMs (a
third of the FLOPs) took 35.6 % of the GEMM samples with the math dialect's
erf and 34.1 % with this one; with AVX-512 34.2 % and 33.8 %.
"""
import math
import sys

import numpy as np
from scipy.optimize import linprog


def fit(p_terms, q_terms, clamp, rounds=12):
    # Work in u = x^2 / clamp^2 in [0, 1] (better conditioned), rescale at
    # the end.
    x = np.concatenate([np.linspace(0, clamp, 3000),
                        clamp * (1 - np.cos(np.linspace(0, np.pi / 2, 2000)))])
    y = np.array([math.erf(v) for v in x])
    u = (x / clamp) ** 2
    p_basis = np.stack([(x / clamp) * u**i for i in range(p_terms)], 1)
    q_basis = np.stack([u**i for i in range(1, q_terms)], 1)
    q_prev = np.ones_like(x)
    best = None
    n = p_terms + q_terms  # p, q[1:], t
    cost = np.zeros(n)
    cost[-1] = 1
    for _ in range(rounds):
        upper = np.hstack([-p_basis, y[:, None] * q_basis, -q_prev[:, None]])
        lower = np.hstack([p_basis, -y[:, None] * q_basis, -q_prev[:, None]])
        res = linprog(cost, A_ub=np.vstack([upper, lower]),
                      b_ub=np.concatenate([-y, y]),
                      bounds=[(None, None)] * n, method="highs")
        p = res.x[:p_terms]
        q = np.concatenate([[1.0], res.x[p_terms:n - 1]])
        q_prev = sum(q[i] * u**i for i in range(q_terms))
        approx = (x / clamp) * sum(p[i] * u**i for i in range(p_terms))
        err = np.max(np.abs(approx / q_prev - y))
        if best is None or err < best[0]:
            best = (err,
                    [p[i] / clamp ** (2 * i + 1) for i in range(p_terms)],
                    [q[i] / clamp ** (2 * i) for i in range(q_terms)])
    return best


def f32(v):
    return np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64)


def eval_f32(p, q, clamp, x):
    """The kernel's arithmetic: each FMA, product and quotient rounded once."""
    x = f32(np.clip(f32(x), -clamp, clamp))
    s = f32(x * x)

    def horner(c):
        acc = f32(c[-1])
        for a in c[-2::-1]:
            acc = f32(acc * s + f32(a))
        return acc

    return f32(f32(x * horner(p)) / horner(q))


def main():
    p_terms, q_terms, clamp = 8, 5, 4.0
    if len(sys.argv) == 4:
        p_terms, q_terms, clamp = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    err, p, q = fit(p_terms, q_terms, clamp)
    xs = f32(np.linspace(-6, 6, 1200001))
    ref = np.array([math.erf(v) for v in xs])
    err32 = np.max(np.abs(eval_f32(p, q, clamp, xs) - ref))
    q_min = np.min(sum(q[i] * np.linspace(0, clamp**2, 1000) ** i
                       for i in range(q_terms)))
    print(f"P {p_terms} terms, Q {q_terms} terms, clamp {clamp}: max abs error "
          f"{err:.3g} exact, {err32:.3g} in f32; min Q on the interval {q_min:.3g}")
    print("P:", ", ".join(repr(float(v)) for v in p))
    print("Q:", ", ".join(repr(float(v)) for v in q))


if __name__ == "__main__":
    main()
