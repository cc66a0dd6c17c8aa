#!/usr/bin/python3
"""Whole-model benchmark: a tfc-compiled model against PyTorch eager and,
when onnxruntime is installed, ONNX Runtime on the same model exported to
ONNX.

    model_bench.py {bert|gpt2} MODEL.so WEIGHTS.safetensors --seq 128
                   [--batch 1] [--threads 2] [--iters 20] [--bin build/bin]

Both run in this script's process tree on the same weights and inputs with
the same thread count: tfc through `tfc-run --time N` (median of N runs after
a warm-up, as printed by tfc-run), PyTorch with torch.set_num_threads and
torch.inference_mode (median of N after a warm-up), ONNX Runtime likewise.
The three take turns for --rounds rounds (in an order that rotates) and
each is judged by its best round's median (the rounds are printed too, and
the median of the rounds' own ratios; with --peak-cmd, tfc's share of the
FMA peak measured at the start of each round). Prints the times, the ratios
and the max abs difference of the outputs (PyTorch is also an independent
numerical reference of the compiled model).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_timing  # noqa: E402
import torch_models  # noqa: E402


def save_npy(path, array):
    np.save(path, array)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["bert", "gpt2"])
    ap.add_argument("lib")
    ap.add_argument("weights")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of (tfc, PyTorch, ONNX Runtime), each a median "
                         "of --iters runs; the best round of each is compared")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    ap.add_argument("--peak", type=float, default=0,
                    help="the FMA peak in GFLOP/s measured in the same run "
                         "(bench/fma_peak.c): tfc's rate is printed as its share")
    ap.add_argument("--peak-cmd", default="",
                    help="a command printing the FMA peak ('N GFLOP/s', "
                         "bench/fma_peak.c), run at the start of each round: "
                         "tfc's rate in the round is also taken as a share of "
                         "the peak measured seconds before it")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    vocab = 30522 if args.model == "bert" else 50257
    ids = rng.integers(0, vocab, size=(args.batch, args.seq), dtype=np.int64)
    weights = torch_models.load_safetensors(args.weights)
    torch.set_num_threads(args.threads)
    inputs = {"input_ids": ids}
    if args.model == "bert":
        inputs["token_type_ids"] = np.zeros_like(ids)
        inputs["attention_mask"] = np.ones_like(ids)
    model = (torch_models.Bert(weights, layers=args.layers) if args.model == "bert"
             else torch_models.Gpt2(weights, layers=args.layers))
    targs = [torch.from_numpy(v) for v in inputs.values()]

    def median_ms(fn):
        return bench_timing.median_ms(fn, args.iters)

    with tempfile.TemporaryDirectory() as tmp:
        run = [os.path.join(args.bin, "tfc-run"), args.lib, "--weights", args.weights,
               "--time", str(args.iters)]
        for name, value in inputs.items():
            path = os.path.join(tmp, name + ".npy")
            save_npy(path, value)
            run += ["--input", f"{name}={path}"]
        out0 = os.path.join(tmp, "out0.npy")
        first_output = "last_hidden_state" if args.model == "bert" else "logits"
        env = dict(os.environ, TFC_NUM_THREADS=str(args.threads))
        # Output names come from the model; ask tfc-run for the first one.
        info = subprocess.run([os.path.join(args.bin, "tfc-run"), args.lib, "--info"],
                              capture_output=True, text=True, env=env)
        m = re.search(r"output '([^']+)'", info.stdout)
        if m:
            first_output = m.group(1)

        def tfc_round():
            return bench_timing.tfc_run_median_ms(
                run + ["--output", f"{first_output}={out0}"], env)

        session = ort_session(args, model, targs, inputs, tmp)
        feeds = dict(inputs)
        # The peers side by side, round after round: on a shared 2-core VM a
        # process now and then runs at half speed for seconds, so each is
        # judged by its best round (all rounds are printed).
        rounds = {"tfc": [], "torch": [], "ort": [], "peak": []}
        runners = [("tfc", tfc_round),
                   ("torch", lambda: median_ms(lambda: model(*targs)))]
        if session is not None:
            runners.append(("ort", lambda: median_ms(lambda: session.run(None, feeds))))
        with torch.inference_mode():
            for r in range(max(1, args.rounds)):
                # The peak first, then the three in an order that rotates
                # from round to round (none always runs right after the
                # peak's full-load burst).
                if args.peak_cmd:
                    rounds["peak"].append(measure_peak(args.peak_cmd))
                for i in range(len(runners)):
                    name, run_round = runners[(r + i) % len(runners)]
                    rounds[name].append(run_round())
            ref = model(*targs)[0].numpy()
        tfc_out = np.load(out0)
        ort_out = session.run(None, feeds)[0] if session is not None else None

    def fmt(values):
        return "/".join(f"{v:.1f}" for v in values)

    tfc_ms, torch_ms = min(rounds["tfc"]), min(rounds["torch"])
    err = float(np.max(np.abs(ref - tfc_out)))
    scale = float(np.max(np.abs(ref)))
    head = (f"{args.model} layers={args.layers} batch={args.batch} seq={args.seq} "
            f"threads={args.threads}:")
    print(f"{head} tfc {tfc_ms:.2f} ms | PyTorch {torch.__version__} "
          f"{torch_ms:.2f} ms | tfc/PyTorch time ratio {tfc_ms / torch_ms:.2f} | "
          f"max abs diff {err:.2e} (scale {scale:.2f}) | best of rounds (ms): "
          f"tfc {fmt(rounds['tfc'])}, PyTorch {fmt(rounds['torch'])}", flush=True)
    gflop = forward_gflop(args, weights)
    peak = (f" = {100 * gflop / tfc_ms * 1e3 / args.peak:.1f} % of the FMA peak "
            f"{args.peak:.1f} GFLOP/s measured in this run" if args.peak > 0 else "")
    print(f"{head} tfc {tfc_ms:.2f} ms: {gflop:.2f} GFLOP a forward, "
          f"{gflop / tfc_ms * 1e3:.1f} GFLOP/s{peak}", flush=True)
    if rounds["peak"]:
        # Each round's rate over the peak measured at its start (the VM's
        # speed drifts by 2x within minutes; a round and its peak are
        # seconds apart).
        shares = [100 * gflop / t * 1e3 / p
                  for t, p in zip(rounds["tfc"], rounds["peak"]) if p > 0]
        if shares:
            print(f"{head} tfc's share of the FMA peak measured at the start of "
                  f"each round: {fmt(shares)} %, median "
                  f"{statistics.median(shares):.1f} % (peaks "
                  f"{fmt(rounds['peak'])} GFLOP/s)", flush=True)
    # Ratios within a round (the peers run seconds apart), then their median.
    paired = [t / p for t, p in zip(rounds["tfc"], rounds["torch"])]
    line = (f"{head} median of the rounds' time ratios: tfc/PyTorch "
            f"{statistics.median(paired):.2f}")
    if rounds["ort"]:
        paired_ort = [t / o for t, o in zip(rounds["tfc"], rounds["ort"])]
        line += f", tfc/ORT {statistics.median(paired_ort):.2f}"
    print(line, flush=True)
    if session is not None:
        import onnxruntime as ort
        ort_ms = min(rounds["ort"])
        err = float(np.max(np.abs(ort_out - tfc_out)))
        print(f"{head} tfc {tfc_ms:.2f} ms | ONNX Runtime {ort.__version__} "
              f"{ort_ms:.2f} ms | tfc/ORT time ratio {tfc_ms / ort_ms:.2f} | "
              f"max abs diff {err:.2e} | best of rounds (ms): ORT "
              f"{fmt(rounds['ort'])}", flush=True)


def forward_gflop(args, w):
    """GFLOP (2 per multiply-add) of one forward: the linear layers on every
    token, attention's two products over all seq x seq pairs (GPT-2's causal
    half counted in full, as PyTorch computes it), BERT's pooler on the first
    token, GPT-2's LM head."""
    tokens, b, s = args.batch * args.seq, args.batch, args.seq
    if args.model == "bert":
        d = w["embeddings.word_embeddings.weight"].shape[1]
        dff = w["encoder.layer.0.intermediate.dense.weight"].shape[0]
        extra = 2 * b * d * d
    else:
        vocab, d = w["wte.weight"].shape
        dff = w["h.0.mlp.c_fc.weight"].shape[1]
        extra = 2 * tokens * d * vocab
    layer = 2 * tokens * (4 * d * d + 2 * d * dff) + 4 * b * s * s * d
    return (args.layers * layer + extra) / 1e9


def measure_peak(cmd):
    """The GFLOP/s that `cmd` (bench/fma_peak.c) prints; 0 (and a warning)
    if none."""
    done = subprocess.run(cmd.split(), capture_output=True, text=True)
    m = re.search(r"([0-9.]+) GFLOP/s", done.stdout)
    if not m:
        print(f"model_bench: warning: no peak from '{cmd}': "
              f"{(done.stdout + done.stderr).strip()}", file=sys.stderr)
    return float(m.group(1)) if m else 0.0


def ort_session(args, model, targs, inputs, tmp):
    """ONNX Runtime on the same PyTorch model exported to ONNX (what people
    deploy BERT on CPUs with), when onnxruntime is installed; else None."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    names = list(inputs.keys())
    path = os.path.join(tmp, "model.onnx")

    class Module(torch.nn.Module):
        """torch_models' models are plain callables: the exporter traces
        a module (weights become the graph's initializers)."""

        def forward(self, *xs):
            return model(*xs)[0]

    try:
        torch.onnx.export(Module(), tuple(targs), path, input_names=names,
                          output_names=["out0"], opset_version=17,
                          dynamo=False)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"{args.model}: ONNX Runtime: the export failed: {e}")
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


if __name__ == "__main__":
    main()
