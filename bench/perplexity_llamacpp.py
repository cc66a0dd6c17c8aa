#!/usr/bin/env python3
"""llama.cpp's perplexity over a text file, through llama-cpp-python, with
the protocol of llama.cpp's perplexity tool (and of tfc-perplexity): the
text tokenised once with llama.cpp's tokenizer (a BOS when the model adds
one), chunks of the context length, the first token of each chunk replaced
by BOS, the NLL of token j + 1 at positions j = n/2 .. n - 2 of each chunk.

    python perplexity_llamacpp.py MODEL.gguf TEXT [context=512] [threads=2]
        [--nll-out FILE.npy]

Prints one JSON object: {"perplexity", "error", "tokens", "scored",
"llama_cpp_python"}; --nll-out also writes each scored token's NLL, in
order, as float32 .npy (what tfc-perplexity --nll-out writes, in float64).
"""
import json
import math
import sys

import numpy as np
import llama_cpp
import llamacpp_compat  # noqa: F401 (before any model is loaded)
from llama_cpp import Llama

args = sys.argv[1:]
nll_out = None
if "--nll-out" in args:
    at = args.index("--nll-out")
    nll_out = args[at + 1]
    del args[at:at + 2]
path, text_path = args[0], args[1]
n_ctx = int(args[2]) if len(args) > 2 else 512
threads = int(args[3]) if len(args) > 3 else 2
llm = Llama(model_path=path, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx,
            n_threads=threads, n_threads_batch=threads, logits_all=True,
            verbose=False)
text = open(text_path, encoding="utf-8").read()
add_bos = llama_cpp.llama_vocab_get_add_bos(llm._model.vocab) if hasattr(
    llama_cpp, "llama_vocab_get_add_bos") else llm.add_bos_token()
tokens = llm.tokenize(text.encode("utf-8"), add_bos=bool(add_bos), special=False)
bos = llm.token_bos()
chunks = len(tokens) // n_ctx
first = n_ctx // 2
losses = []
for c in range(chunks):
    chunk = tokens[c * n_ctx:(c + 1) * n_ctx]
    ids = list(chunk)
    if add_bos:
        ids[0] = bos
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[:n_ctx], dtype=np.float64)
    for j in range(first, n_ctx - 1):
        row = logits[j]
        m = row.max()
        losses.append(math.log(np.exp(row - m).sum()) + m - row[chunk[j + 1]])
losses = np.array(losses)
if nll_out:
    np.save(nll_out, losses.astype(np.float32))
mean = losses.mean()
ppl = math.exp(mean)
err = ppl * math.sqrt(losses.var() / (len(losses) - 1))
print(json.dumps({"perplexity": round(ppl, 4), "error": round(err, 4),
                  "tokens": len(tokens), "scored": len(losses),
                  "llama_cpp_python": llama_cpp.__version__}))
