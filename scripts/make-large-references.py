#!/usr/bin/env python3
"""Makes the references of the full-size tier (test/Import/large-models.test)
for the Q4_K_M downloads of scripts/setup-test-data.sh --large:
Qwen2.5-Coder-0.5B-Instruct and Gemma 3 270M; and of the larger decoder
(test/Import/larger-model.test, setup-test-data.sh --larger):
Qwen2.5-Coder-1.5B-Instruct.

For each, three prompts tokenised by llama.cpp's own tokenizer of the file
(llama-cpp-python, vocab only; a chat turn with the file's template markers
for Qwen, plain text after BOS for Gemma), then transformers loading the same
.gguf in f32: the logits of every prompt position (argmax, max |logit|, the
top 64 and 2,048 fixed columns: test/Import/Inputs/check_logits.py) and
greedy generate() of 64 new tokens (stopping at the file's end of turn).
And llama.cpp's perplexity of the Qwen file over the Genesis text
(bench/perplexity_llamacpp.py's protocol).

    /tmp/ref/bin/python scripts/make-large-references.py [--only NAME,...] [TFC_CACHE_DIR]

(the venv of scripts/make-references.py plus llama-cpp-python 0.3.36).
Writes test/Import/Inputs/large/<model>/ and versions.json; with --only, the
named models' folders, each with its own versions.json.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import transformers

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bench"))
import llama_cpp  # noqa: E402
import llamacpp_compat  # noqa: E402,F401
from llama_cpp import Llama  # noqa: E402

args = sys.argv[1:]
only = None
if args[:1] == ["--only"]:
    only = set(args[1].split(","))
    args = args[2:]
cache = args[0] if args else os.environ.get(
    "TFC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "tfc"))
out_root = os.path.join(root, "test", "Import", "Inputs", "large")

QWEN_PROMPTS = [
    "Write a Python function that reverses a linked list.",
    "¿Qué hace la función map() en JavaScript? Responde en español.",
    "Explain what a mutex is, in two sentences. 🔒",
]
GEMMA_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea, there lived",
    "Les trois couleurs du drapeau français sont",
]
MODELS = [
    ("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
     lambda p: f"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
               f"<|im_start|>user\n{p}<|im_end|>\n<|im_start|>assistant\n",
     QWEN_PROMPTS, [151645, 151643]),
    ("gemma3-270m", "gemma3-270m/gemma-3-270m-q4_k_m.gguf", lambda p: p,
     GEMMA_PROMPTS, [1, 106]),
    ("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
     lambda p: f"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
               f"<|im_start|>user\n{p}<|im_end|>\n<|im_start|>assistant\n",
     QWEN_PROMPTS, [151645, 151643]),
]
if only:
    unknown = only - {m[0] for m in MODELS}
    if unknown:
        sys.exit(f"make-large-references: no model {sorted(unknown)}")
    MODELS = [m for m in MODELS if m[0] in only]


def save(d, name, a):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


def main():
    rng = np.random.default_rng(0)
    for name, rel, template, prompts, eos in MODELS:
        path = os.path.join(cache, "models", rel)
        vocab = Llama(model_path=path, vocab_only=True, verbose=False)
        ids = [vocab.tokenize(template(p).encode(), add_bos=True, special=True)
               for p in prompts]
        del vocab
        model = transformers.AutoModelForCausalLM.from_pretrained(
            os.path.dirname(path), gguf_file=os.path.basename(path),
            torch_dtype=torch.float32)
        model.eval()
        out = os.path.join(out_root, name)
        cases = []
        for i, prompt_ids in enumerate(ids):
            with torch.no_grad():
                logits = model(torch.tensor([prompt_ids])).logits[0].double().numpy()
                gen = model.generate(torch.tensor([prompt_ids]), max_new_tokens=64,
                                     do_sample=False, eos_token_id=eos,
                                     pad_token_id=eos[0])[0, len(prompt_ids):].tolist()
            d = os.path.join(out, f"prompt{i}")
            V = logits.shape[1]
            cols = np.sort(rng.choice(V, 2048, replace=False))
            top = np.argsort(-logits, axis=1)[:, :64]
            save(d, "input_ids", np.array([prompt_ids], dtype=np.int64))
            save(d, "argmax", logits.argmax(1))
            save(d, "max_abs", np.abs(logits).max(1))
            save(d, "columns", cols)
            save(d, "column_logits", logits[:, cols])
            save(d, "top_ids", top)
            save(d, "top_logits", np.take_along_axis(logits, top, 1))
            cases.append({"prompt_ids": prompt_ids, "generated_ids": gen})
            print(name, i, len(prompt_ids), "tokens; generated", len(gen))
        with open(os.path.join(out, "generate.json"), "w") as f:
            json.dump({"cases": cases, "eos_token_id": eos}, f)
        del model
    # llama.cpp's perplexity over the Genesis text, as users run it (its
    # default f16 KV cache), for each model.
    for name, rel, *_ in MODELS:
        ppl = subprocess.run(
            [sys.executable, os.path.join(root, "bench", "perplexity_llamacpp.py"),
             os.path.join(cache, "models", rel),
             os.path.join(root, "test", "Import", "Inputs", "perplexity", "genesis-1-5.txt"),
             "512", "2"], capture_output=True, text=True, check=True).stdout
        with open(os.path.join(out_root, name, "perplexity-llamacpp.json"), "w") as f:
            f.write(ppl)
        print(name, "llama.cpp perplexity", ppl.strip())
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "llama-cpp-python": llama_cpp.__version__,
                "llama.cpp extra buffer types off (AMX host)":
                    llamacpp_compat.EXTRA_BUFTS_OFF}
    for d in ([os.path.join(out_root, m[0]) for m in MODELS] if only
              else [out_root]):
        with open(os.path.join(d, "versions.json"), "w") as f:
            json.dump(versions, f, indent=1)


main()
