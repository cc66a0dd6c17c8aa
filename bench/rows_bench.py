#!/usr/bin/python3
"""Row kernels and elementwise code alone: one entry of bench/rows.mlir,
compiled by tfc, against the PyTorch op users would call, on the same inputs
and thread count.

    rows_bench.py LIB.so --op layer_norm|rms_norm|softmax|gelu --rows 128
                  [--threads 2] [--iters 200] [--rounds 3] [--bin build/bin]

LIB.so is bench/rows.mlir compiled (run.sh compiles it for the ISA it
measures). The ops, at BERT-base's sizes:
  layer_norm  LN(x + r) · gamma + beta over rows x 768  (F.layer_norm(x + r))
  rms_norm    (x + r) / rms(x + r) · gamma, rows x 768  (F.rms_norm(x + r);
                                                         composed before 2.4)
  softmax     12 x rows x rows along the last axis       (torch.softmax)
  gelu        erf GELU of rows x 3072                    (F.gelu)
tfc runs through `tfc-run --time N` (median of N runs into reused outputs),
PyTorch under torch.inference_mode (median of N after a warm-up, its
residual add included where the op has one: PyTorch has no fused form);
they take turns for --rounds rounds and each is judged by its best round.
Prints both times, the bytes each moves per microsecond (GB/s: inputs read
once and the output written once, the least any implementation moves), the
ratio and the max abs difference.
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_timing  # noqa: E402

HIDDEN, FFN, HEADS = 768, 3072, 12  # bench/rows.mlir's


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--op", required=True,
                    choices=["layer_norm", "rms_norm", "softmax", "gelu"])
    ap.add_argument("--rows", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    n = args.rows

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    if args.op in ("layer_norm", "rms_norm"):
        feeds = {"x": normal(n, HIDDEN), "r": normal(n, HIDDEN),
                 "gamma": 1 + 0.1 * normal(HIDDEN)}
        if args.op == "layer_norm":
            feeds["beta"] = 0.1 * normal(HIDDEN)
        out_shape = (n, HIDDEN)
    elif args.op == "softmax":
        feeds = {"s": 4 * normal(HEADS, n, n)}
        out_shape = (HEADS, n, n)
    else:
        feeds = {"h": 2 * normal(n, FFN)}
        out_shape = (n, FFN)
    t = {k: torch.from_numpy(v) for k, v in feeds.items()}
    torch.set_num_threads(args.threads)

    def torch_op():
        if args.op == "layer_norm":
            return F.layer_norm(t["x"] + t["r"], (HIDDEN,), t["gamma"], t["beta"], eps=1e-12)
        if args.op == "rms_norm":
            x = t["x"] + t["r"]
            if hasattr(F, "rms_norm"):  # torch >= 2.4
                return F.rms_norm(x, (HIDDEN,), t["gamma"], eps=1e-6)
            return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6) * t["gamma"]
        if args.op == "softmax":
            return torch.softmax(t["s"], dim=-1)
        return F.gelu(t["h"])

    env = dict(os.environ, TFC_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as tmp:
        run, out = bench_timing.tfc_run_command(args.bin, args.lib, args.op, args.iters,
                                                feeds, tmp)

        rounds = {"tfc": [], "torch": []}
        with torch.inference_mode():
            for _ in range(max(1, args.rounds)):
                rounds["tfc"].append(bench_timing.tfc_run_median_ms(run, env))
                rounds["torch"].append(bench_timing.median_ms(torch_op, args.iters))
            ref = torch_op().numpy()
        got = np.load(out)
        if got.shape != ref.shape:
            sys.exit(f"tfc's output is {got.shape}, PyTorch's {ref.shape}")
        err = float(np.max(np.abs(got - ref)))

    moved = 4.0 * (sum(v.size for v in feeds.values()) + int(np.prod(out_shape)))
    shape = "x".join(str(d) for d in out_shape)
    tt, pt = min(rounds["tfc"]), min(rounds["torch"])
    print(f"{args.op} {shape} threads={args.threads}: "
          f"tfc {tt * 1e3:.1f} us {moved / tt / 1e6:.1f} GB/s | PyTorch {torch.__version__} "
          f"{pt * 1e3:.1f} us {moved / pt / 1e6:.1f} GB/s | tfc/PyTorch time ratio {tt / pt:.2f} | "
          f"max abs diff {err:.2e}", flush=True)


if __name__ == "__main__":
    main()
