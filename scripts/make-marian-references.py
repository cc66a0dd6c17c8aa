#!/usr/bin/env python3
"""Makes the encoder-decoder generation references of test/Import/marian.test.

A tiny random-weight MarianMT checkpoint (untied output head) (MarianMTModel, save_pretrained) and
transformers' generate() on five source sentences (token ids): beam search
with 4 beams (do_sample=False, length_penalty 1, early_stopping False) and
greedy decoding, 24 new tokens at most. Needs torch and transformers (not
part of the test command); run once after changing what the test covers:

    /path/to/venv/bin/python scripts/make-marian-references.py

Writes test/Import/Inputs/hf/marian-f32/ (config.json,
generation_config.json, model.safetensors) and
test/Import/Inputs/generate/marian-f32.json (with the versions that made it).
"""
import json
import os

import torch
import transformers
from transformers import GenerationConfig, MarianConfig, MarianMTModel

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "Import", "Inputs")
out = os.path.join(inputs, "hf", "marian-f32")

torch.manual_seed(0)
config = MarianConfig(
    vocab_size=96, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="swish",
    scale_embedding=True, pad_token_id=95, decoder_start_token_id=95,
    eos_token_id=0, forced_eos_token_id=None, init_std=0.1,
    tie_word_embeddings=False)
model = MarianMTModel(config).eval()
# A random model with its output tied to its input embedding repeats one
# token forever; an untied head and a random final_logits_bias (EOS a
# little favoured) give varied sequences, one ending early. (With EOS
# favoured more, 0.45, four of the five sources' beams were the same five
# ids: a search that mixed up the sources' rows would have passed.)
with torch.no_grad():
    model.final_logits_bias.normal_(0, 0.5)
    model.final_logits_bias[0, 0] += 0.25
model.save_pretrained(out, safe_serialization=True)

sources = [[14, 52, 7, 33, 0], [5, 81, 23, 60, 11, 42, 9, 0],
           [70, 3, 19, 88, 27, 45, 2, 66, 31, 12, 0], [40, 0],
           [8, 17, 93, 56, 21, 64, 77, 38, 29, 50, 71, 6, 0]]
cases = []
for src in sources:
    ids = torch.tensor([src])
    case = {"source_ids": src}
    for name, beams in (("beam4", 4), ("greedy", 1)):
        gen = GenerationConfig(
            num_beams=beams, do_sample=False, max_new_tokens=24,
            length_penalty=1.0, early_stopping=False, eos_token_id=0,
            pad_token_id=95, decoder_start_token_id=95,
            forced_eos_token_id=None, bad_words_ids=None)
        with torch.no_grad():
            seq = model.generate(ids, attention_mask=torch.ones_like(ids),
                                 generation_config=gen)
        tokens = seq[0].tolist()[1:]  # without the decoder start
        # Padding after an early EOS (shorter hypotheses of a batch of one
        # never have any, but be safe).
        if 0 in tokens:
            tokens = tokens[:tokens.index(0) + 1]
        case[name] = tokens
    cases.append(case)
# The test tells the sources apart only if their references differ.
for name in ("beam4", "greedy"):
    seqs = [tuple(c[name]) for c in cases]
    assert len(set(seqs)) == len(seqs), f"two sources share their {name} reference"
assert any(c["beam4"][-1] == 0 for c in cases), "no beam hypothesis ends with EOS"
ref = {"versions": {"torch": torch.__version__,
                    "transformers": transformers.__version__},
       "decoder_start_token_id": 95, "eos_token_id": 0, "max_new_tokens": 24,
       "cases": cases}
with open(os.path.join(inputs, "generate", "marian-f32.json"), "w") as f:
    json.dump(ref, f, indent=1)
    f.write("\n")
print(json.dumps(cases))
