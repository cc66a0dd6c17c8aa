#!/usr/bin/env python3
"""Makes the sliding-window references of test/Import/window.test.

A tiny random-weight MistralForCausalLM with sliding_window = 4 (each query
attends to itself and the 3 keys before it), written by save_pretrained, and
transformers' logits on sequences of 12 tokens (three windows) and greedy
generate() ids (24 new tokens with the KV cache). Needs torch and
transformers (not part of the test command); run once after changing what
the test covers:

    /path/to/venv/bin/python scripts/make-window-references.py

Writes test/Import/Inputs/hf/mistral-window-f32/ (config.json,
model.safetensors, reference/{input_ids,logits}.npy, versions.json) and
test/Import/Inputs/generate/mistral-window-f32.json.
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import MistralConfig, MistralForCausalLM

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "Import", "Inputs")
out = os.path.join(inputs, "hf", "mistral-window-f32")
ref = os.path.join(out, "reference")
os.makedirs(ref, exist_ok=True)

torch.manual_seed(0)
config = MistralConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, max_position_embeddings=64,
                       sliding_window=4, initializer_range=0.2,
                       tie_word_embeddings=False)
model = MistralForCausalLM(config).eval()
model.save_pretrained(out, safe_serialization=True)

ids = np.random.default_rng(0).integers(1, 96, size=(2, 12)).astype(np.int64)
with torch.no_grad():
    logits = model(input_ids=torch.from_numpy(ids)).logits.numpy()
np.save(os.path.join(ref, "input_ids.npy"), ids)
np.save(os.path.join(ref, "logits.npy"), logits)
versions = {"torch": torch.__version__, "transformers": transformers.__version__}
with open(os.path.join(ref, "versions.json"), "w") as f:
    json.dump(versions, f)
    f.write("\n")

prompt = [5, 17, 42, 8, 77, 3]
with torch.no_grad():
    seq = model.generate(torch.tensor([prompt]), max_new_tokens=24,
                         do_sample=False, eos_token_id=None, pad_token_id=0)
generated = seq[0].tolist()[len(prompt):]
with open(os.path.join(inputs, "generate", "mistral-window-f32.json"), "w") as f:
    json.dump({"versions": versions, "prompt_ids": prompt,
               "generated_ids": generated}, f, indent=1)
    f.write("\n")
print(generated)
