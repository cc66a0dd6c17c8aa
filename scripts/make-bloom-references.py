#!/usr/bin/env python3
"""Makes the ALiBi references of test/Import/bloom.test.

A tiny random-weight BloomForCausalLM (untied head; 6 heads: ALiBi's slopes for a head
count that is not a power of two; save_pretrained) and transformers' logits
on two 40-token sequences, greedy generate() from three prompts of different
lengths (24 new tokens), and the same three prompts as one left-padded batch.
Needs torch and transformers (not part of the test command); run once after
changing what the test covers:

    /path/to/venv/bin/python scripts/make-bloom-references.py

Writes test/Import/Inputs/hf/bloom-f32/ (config.json, model.safetensors,
reference/*.npy, reference/versions.json) and
test/Import/Inputs/generate/bloom-f32.json.
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import BloomConfig, BloomForCausalLM

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "Import", "Inputs")
out = os.path.join(inputs, "hf", "bloom-f32")
ref = os.path.join(out, "reference")
os.makedirs(ref, exist_ok=True)

torch.manual_seed(0)
config = BloomConfig(vocab_size=96, hidden_size=48, n_layer=2, n_head=6,
                     layer_norm_epsilon=1e-5, initializer_range=0.2,
                     bos_token_id=1, eos_token_id=2, pad_token_id=0,
                     tie_word_embeddings=False)
model = BloomForCausalLM(config).eval()
# A random model with its output tied to its input table repeats one token;
# an untied head gives varied sequences.
with torch.no_grad():
    model.lm_head.weight.normal_(0, 1.0)
model.save_pretrained(out, safe_serialization=True)

ids = np.random.default_rng(0).integers(3, 96, size=(2, 40)).astype(np.int64)
with torch.no_grad():
    logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
np.save(os.path.join(ref, "input_ids.npy"), ids)
np.save(os.path.join(ref, "logits.npy"), logits)
versions = {"torch": torch.__version__, "transformers": transformers.__version__}
with open(os.path.join(ref, "versions.json"), "w") as f:
    json.dump(versions, f)
    f.write("\n")

prompts = [[5, 17, 42, 8, 77, 3], [60, 11, 9], [14, 52, 7, 33, 19, 88, 27, 45, 31]]
cases = []
for prompt in prompts:
    with torch.no_grad():
        seq = model.generate(torch.tensor([prompt]), max_new_tokens=24,
                             do_sample=False, eos_token_id=None, pad_token_id=0)
    cases.append({"prompt_ids": prompt,
                  "generated_ids": seq[0].tolist()[len(prompt):]})
# The same prompts as one left-padded batch (BLOOM's ALiBi shifts with the
# padding, which softmax ignores): the same tokens.
width = max(len(p) for p in prompts)
batch = torch.tensor([[0] * (width - len(p)) + p for p in prompts])
mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
with torch.no_grad():
    seq = model.generate(batch, attention_mask=mask, max_new_tokens=24,
                         do_sample=False, eos_token_id=None, pad_token_id=0)
for case, row in zip(cases, seq[:, width:].tolist()):
    assert row == case["generated_ids"], "batched generation differs"
with open(os.path.join(inputs, "generate", "bloom-f32.json"), "w") as f:
    json.dump({"versions": versions, "cases": cases}, f, indent=1)
    f.write("\n")
print([c["generated_ids"] for c in cases])
