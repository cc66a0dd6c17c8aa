#!/usr/bin/python3
"""Attention benchmark: one tfc.attention op, compiled by tfc, against
PyTorch's scaled_dot_product_attention on the same inputs and thread count.

    attention_bench.py LIB.so --seq 128 [--causal] [--threads 2] [--iters 20]
                       [--rounds 3] [--bin build/bin]

LIB.so is bench/attention.mlir compiled (12 heads of 64; run.sh compiles
it; --causal picks its
`causal` entry, else its `padded` one with a [1, 1, 1, seq] additive mask of
zeros, which is what BERT runs). tfc runs through `tfc-run --time N` (median
of N runs into reused outputs), PyTorch under torch.inference_mode (median
of N after a warm-up); they take turns for --rounds rounds and each is
judged by its best round. Prints both times, GFLOP/s (4 x seq² x dim x heads
flops, halved when causal), the ratio and the max abs difference.
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_timing  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    args = ap.parse_args()

    args.heads, args.dim = 12, 64  # bench/attention.mlir's
    rng = np.random.default_rng(0)
    shape = (1, args.heads, args.seq, args.dim)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    mask = np.zeros((1, 1, 1, args.seq), dtype=np.float32)
    torch.set_num_threads(args.threads)
    tq, tk, tv, tm = (torch.from_numpy(x) for x in (q, k, v, mask))
    scale = 1.0 / np.sqrt(args.dim)

    def torch_attention():
        if args.causal:
            return torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=True, scale=scale)
        return torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, attn_mask=tm, scale=scale)

    def median_ms(fn):
        return bench_timing.median_ms(fn, args.iters)

    env = dict(os.environ, TFC_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        feeds = {"q": q, "k": k, "v": v}
        if not args.causal:
            feeds["mask"] = mask
        run, out = bench_timing.tfc_run_command(
            args.bin, args.lib, "causal" if args.causal else "padded", args.iters, feeds, tmp)

        def tfc_round():
            return bench_timing.tfc_run_median_ms(run, env)

        rounds = {"tfc": [], "torch": []}
        with torch.inference_mode():
            for _ in range(max(1, args.rounds)):
                rounds["tfc"].append(tfc_round())
                rounds["torch"].append(median_ms(torch_attention))
            ref = torch_attention().numpy()
        err = float(np.max(np.abs(np.load(out) - ref)))

    flops = 4.0 * args.seq * args.seq * args.dim * args.heads * (0.5 if args.causal else 1.0)
    t, p = min(rounds["tfc"]), min(rounds["torch"])
    print(f"attention heads={args.heads} seq={args.seq} d={args.dim} "
          f"{'causal' if args.causal else 'padding mask'} threads={args.threads}: "
          f"tfc {t:.3f} ms {flops / t / 1e6:.1f} GFLOP/s | PyTorch {torch.__version__} SDPA "
          f"{p:.3f} ms {flops / p / 1e6:.1f} GFLOP/s | tfc/PyTorch time ratio {t / p:.2f} | "
          f"max abs diff {err:.2e}", flush=True)


if __name__ == "__main__":
    main()
