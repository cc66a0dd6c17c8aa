#!/usr/bin/env python3
"""llama.cpp's token ids for the conformance corpus on the tokenizers of the
full-size tier's .gguf files (test/Import/large-models.test): the 2,500
generated strings of test/Runtime/Inputs/tokenizer_conformance.py (words,
code, URLs, special-token look-alikes, emoji, 26 scripts, controls, spaces,
numbers), each tokenised by llama-cpp-python's own tokenizer of the file
(vocab only; BOS as the file says; special tokens parsed in the text).

    /tmp/ref/bin/python scripts/make-gguf-tokenizer-references.py [TFC_CACHE_DIR]

Writes test/Import/Inputs/large/<model>/tokens.jsonl: one {"text", "ids"}
per line.
"""
import json
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "test", "Runtime", "Inputs"))
sys.path.insert(0, os.path.join(root, "bench"))
import llamacpp_compat  # noqa: E402,F401
from llama_cpp import Llama  # noqa: E402
from tokenizer_conformance import generate  # noqa: E402

cache = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "TFC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "tfc"))
FILES = [("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
         ("gemma3-270m", "gemma3-270m/gemma-3-270m-q4_k_m.gguf"),
         ("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")]
texts = generate(2500)
for name, rel in FILES:
    llm = Llama(model_path=os.path.join(cache, "models", rel), vocab_only=True,
                verbose=False)
    out = os.path.join(root, "test", "Import", "Inputs", "large", name, "tokens.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for t in texts:
            ids = llm.tokenize(t.encode("utf-8"), add_bos=True, special=True)
            f.write(json.dumps({"text": t, "ids": ids}, ensure_ascii=False) + "\n")
    print(name, len(texts), "strings ->", out)
