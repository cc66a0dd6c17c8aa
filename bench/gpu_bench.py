#!/usr/bin/env python3
"""GPU benchmarks of the CUDA backend against PyTorch on the same GPU.

    gpu_bench.py [--bin build/bin] [--iters 20] [--quick]

1. Fused attention: batch 1, 16 heads, d_head 64 and 128, seq 1k..16k, causal
   and not, f16 and bf16. tfc: a model with one tfc.attention compiled with
   --target=cuda, timed by `tfc-run --time N` ("device time": CUDA events
   around the kernels, without the input/output copies). PyTorch:
   torch.nn.functional.scaled_dot_product_attention on CUDA tensors, timed
   with CUDA events. TFLOP/s count 4·B·H·S²·D (half of it when causal).
2. GPT-2 small and BERT-base forward at seq 128 and 512, in f32, tf32, f16 and
   bf16: tfc device time (a CUDA Graph's replay, and kernel by kernel with
   TFC_CUDA_GRAPHS=0) against PyTorch eager (bench/torch_models.py on CUDA,
   its weights in the same type), same weights; the max abs difference of
   the outputs (tfc's last timed run's) is printed too.
3. Decode: a Llama-architecture decoder at SmolLM2-135M's and
   Qwen2.5-0.5B's sizes (random weights, examples/llama.tfm), compiled with
   --kv-cache --kv-cache-last --compute-type=f16, generating 256 tokens
   after a 16-token prompt through a CUDA session (tfc-generate): tokens/s
   against the bound set by reading every f16 weight once per token at the
   copy bandwidth PyTorch measures on this GPU (a 1 GiB device-to-device
   copy), and with CUDA Graphs off.

Needs an NVIDIA GPU, its driver and PyTorch with CUDA. Prints one line per
configuration with both times and the ratio.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_timing  # noqa: E402
import torch_models  # noqa: E402

ATTENTION = """module attributes {{tfc.model = "attention"}} {{
  func.func @forward(%q: tensor<1x16x?x{d}x{t}> {{tfc.name = "q", tfc.dims = [1, 16, "seq", {d}]}},
                     %k: tensor<1x16x?x{d}x{t}> {{tfc.name = "k", tfc.dims = [1, 16, "seq", {d}]}},
                     %v: tensor<1x16x?x{d}x{t}> {{tfc.name = "v", tfc.dims = [1, 16, "seq", {d}]}})
      -> (tensor<1x16x?x{d}x{t}> {{tfc.name = "o"}}) {{
    %o = tfc.attention %q, %k, %v {causal_attr}
        : (tensor<1x16x?x{d}x{t}>, tensor<1x16x?x{d}x{t}>, tensor<1x16x?x{d}x{t}>) -> tensor<1x16x?x{d}x{t}>
    return %o : tensor<1x16x?x{d}x{t}>
  }}
}}
"""


def tfc_device_ms(binary, lib, args, iters, env=None):
    return bench_timing.tfc_run_median_ms(
        [os.path.join(binary, "tfc-run"), lib, "--time", str(iters)] + args, env=env,
        device=True)


def torch_ms(fn, iters):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def attention(args, tmp):
    seqs = [1024, 4096] if args.quick else [1024, 2048, 4096, 8192, 16384]
    for dtype, tname in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for d in (64, 128):
            for causal in (False, True):
                mlir = os.path.join(tmp, f"attn_{dtype}_{d}_{causal}.mlir")
                with open(mlir, "w") as f:
                    f.write(ATTENTION.format(d=d, t=dtype,
                                             causal_attr="{causal}" if causal else ""))
                lib = mlir[:-5] + ".so"
                subprocess.run([os.path.join(args.bin, "tfc-compile"), mlir, "--target=cuda",
                                "-o", lib], check=True)
                for s in seqs:
                    flops = 4 * 16 * s * s * d / (2 if causal else 1)
                    shape = f"1x16x{s}x{d}"
                    ms = tfc_device_ms(args.bin, lib,
                                       [f"--input={n}=@random:{shape}" for n in "qkv"],
                                       args.iters)
                    q, k, v = (torch.randn(1, 16, s, d, device="cuda", dtype=tname)
                               for _ in range(3))
                    peer = torch_ms(lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, is_causal=causal), args.iters)
                    print(f"attention {dtype} d={d} seq={s} causal={int(causal)}: "
                          f"tfc {ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s | PyTorch SDPA "
                          f"{peer:.3f} ms {flops / peer / 1e9:.1f} TFLOP/s | "
                          f"tfc/PyTorch time ratio {ms / peer:.2f}", flush=True)


def models(args, tmp):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    rng = np.random.default_rng(0)
    for (name, tfm, vocab), seq in ((m, s) for m in (("gpt2", "gpt2", 50257),
                                                     ("bert", "bert-base", 30522))
                                    for s in (128, 512)):
        ids = rng.integers(0, vocab, size=(1, seq), dtype=np.int64)
        # f32 as both compute by default, then tf32 products on both sides
        # (tfc-compile --gpu-fp32-matmul=tf32, PyTorch's allow_tf32), then
        # the model in f16 and bf16 (tfc-compile --compute-type, PyTorch's
        # weights converted: model.half()).
        for precision in ("f32", "tf32", "f16", "bf16"):
            lib = os.path.join(tmp, f"{name}-{precision}.so")
            weights = os.path.join(tmp, name + ".safetensors")
            half = precision in ("f16", "bf16")
            subprocess.run([os.path.join(args.bin, "tfc-compile"),
                            os.path.join(root, "examples", tfm + ".tfm"), "--target=cuda",
                            "--gpu-fp32-matmul=" + ("tf32" if precision == "tf32" else "ieee"),
                            "--compute-type=" + (precision if half else "f32"),
                            "-o", lib], check=True)
            subprocess.run([os.path.join(args.bin, "tfc-weights"), lib, "-o", weights],
                           check=True, capture_output=True)
            inputs = {"input_ids": ids}
            if name == "bert":
                inputs["token_type_ids"] = np.zeros_like(ids)
                inputs["attention_mask"] = np.ones_like(ids)
            run = ["--weights", weights]
            for key, value in inputs.items():
                path = os.path.join(tmp, key + ".npy")
                np.save(path, value)
                run.append(f"--input={key}={path}")
            out = os.path.join(tmp, name + "_out.npy")
            # --output: the last timed run's (from the third run on, a
            # CUDA Graph's replay); also timed kernel by kernel.
            ms = tfc_device_ms(args.bin, lib, run + [f"--output={out}" if name == "gpt2"
                                                      else f"--output=hidden={out}"], args.iters)
            ms_launches = tfc_device_ms(args.bin, lib, run, args.iters,
                                        env=dict(os.environ, TFC_CUDA_GRAPHS="0"))
            dtype = {"f16": torch.float16, "bf16": torch.bfloat16}.get(precision)
            w = {k: (v.to(dtype) if dtype is not None and v.is_floating_point() else v).cuda()
                 for k, v in torch_models.load_safetensors(weights).items()}
            model = torch_models.Gpt2(w) if name == "gpt2" else torch_models.Bert(w)
            targs = [torch.from_numpy(v).cuda() for v in inputs.values()]
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
            with torch.inference_mode():
                ref = model(*targs)[0].float().cpu().numpy()
                peer = torch_ms(lambda: model(*targs), args.iters)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            got = np.load(out)
            print(f"{name} seq={seq} {precision}: tfc {ms:.3f} ms (graph; {ms_launches:.3f} ms "
                  f"kernel by kernel) | PyTorch {torch.__version__} "
                  f"eager {peer:.3f} ms | tfc/PyTorch time ratio {ms / peer:.2f} | max abs diff "
                  f"{float(np.max(np.abs(ref - got))):.2e} "
                  f"(scale {float(np.max(np.abs(ref))):.2f})", flush=True)
            # Where the time goes: device time per kernel (TFC_CUDA_PROFILE;
            # the events around each launch add a little to each).
            profiled = subprocess.run(
                [os.path.join(args.bin, "tfc-run"), lib] + run + [f"--time={args.iters}"],
                capture_output=True, text=True, env=dict(os.environ, TFC_CUDA_PROFILE="1"))
            for line in profiled.stderr.splitlines():
                print(f"#   {line}", flush=True)


# Llama-architecture sizes of real decoders (examples/llama.tfm: untied
# head, no biases).
DECODERS = (
    ("SmolLM2-135M", dict(layers=30, d_model=576, heads=9, kv_heads=3, d_ff=1536,
                          vocab=49152)),
    ("Qwen2.5-0.5B", dict(layers=24, d_model=896, heads=14, kv_heads=2, d_ff=4864,
                          vocab=151936)),
)


def copy_bandwidth_gbs():
    """Device-to-device copy bandwidth (read + write) PyTorch measures."""
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = torch_ms(lambda: y.copy_(x), 20)
    return 2 * x.numel() / ms / 1e6


def decode(args, tmp):
    import re
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bandwidth = copy_bandwidth_gbs()
    print(f"# device-to-device copy bandwidth: {bandwidth:.0f} GB/s", flush=True)
    for name, dims in DECODERS:
        d = dict(dims)
        d_head = d["d_model"] // d["heads"]
        defines = [f"-D{k}={v}" for k, v in d.items()]
        lib = os.path.join(tmp, f"decode-{name}.so")
        weights = os.path.join(tmp, f"decode-{name}.safetensors")
        subprocess.run([os.path.join(args.bin, "tfc-compile"),
                        os.path.join(root, "examples", "llama.tfm"), "--target=cuda",
                        "--kv-cache", "--kv-cache-last", "--compute-type=f16", "-o", lib]
                       + defines, check=True)
        subprocess.run([os.path.join(args.bin, "tfc-weights"), lib, "-o", weights],
                       check=True, capture_output=True)
        # Weights read per token, in f16: every layer's matrices and the
        # LM head (the embedding lookup reads one row).
        per_layer = (d["d_model"] * d_head * (d["heads"] * 2 + d["kv_heads"] * 2)
                     + 3 * d["d_model"] * d["d_ff"])
        params = d["layers"] * per_layer + d["vocab"] * d["d_model"]
        bound = bandwidth * 1e9 / (2 * params)
        ids = ",".join(str(i) for i in range(1, 17))
        for graphs in ("1", "0"):
            out = subprocess.run(
                [os.path.join(args.bin, "tfc-generate"), lib, "--weights", weights,
                 "--ids", ids, "-n", "256", "--quiet"],
                capture_output=True, text=True,
                env=dict(os.environ, TFC_CUDA_GRAPHS=graphs))
            m = re.search(r"decode ([0-9.]+) tokens/s over (\d+) steps", out.stderr)
            if out.returncode != 0 or not m:
                print(f"decode {name}: tfc-generate failed: {out.stderr.strip()[-400:]}",
                      flush=True)
                break
            rate = float(m.group(1))
            print(f"decode {name} f16 ({params / 1e6:.0f}M parameters, graphs "
                  f"{'on' if graphs == '1' else 'off'}): tfc {rate:.0f} tokens/s over "
                  f"{m.group(2)} steps | bandwidth bound {bound:.0f} tokens/s | "
                  f"{100 * rate / bound:.0f} % of it", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="fewer sequence lengths")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_bench: PyTorch sees no CUDA device")
    print(f"# GPU: {torch.cuda.get_device_name()}, PyTorch {torch.__version__}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        models(args, tmp)
        decode(args, tmp)
        attention(args, tmp)


if __name__ == "__main__":
    main()
