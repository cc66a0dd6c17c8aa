#!/usr/bin/env python3
"""Makes the T5 references of test/Import/t5.test.

Two tiny random-weight T5ForConditionalGeneration checkpoints
(save_pretrained): t5-f32 as t5-small is built (ReLU feed-forward, output
tied to the token table and scaled by d_model^-0.5) and t5-gated-f32 as T5
v1.1 (gated-gelu, untied head, d_kv * heads != d_model). For each:
transformers' encoder output and decoder logits on a padded batch of two
sources, and generate() on five sources, beam search with 4 beams and greedy
decoding, 24 new tokens at most. T5's relative position bias uses 32
buckets up to max_distance 20 here, so that the sources and targets reach
the logarithmic buckets and the clamp. Needs torch and transformers (not
part of the test command); run once after changing what the test covers:

    /path/to/venv/bin/python scripts/make-t5-references.py

Writes test/Import/Inputs/hf/t5{,-gated}-f32/ (config.json,
generation_config.json, model.safetensors, reference/) and
test/Import/Inputs/generate/t5{,-gated}-f32.json.
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "Import", "Inputs")
versions = {"torch": torch.__version__, "transformers": transformers.__version__}

variants = {
    "t5-f32": dict(d_model=32, d_kv=8, d_ff=64, num_heads=4,
                   feed_forward_proj="relu", tie_word_embeddings=True,
                   initializer_factor=4.0),
    "t5-gated-f32": dict(d_model=32, d_kv=12, d_ff=48, num_heads=4,
                         feed_forward_proj="gated-gelu",
                         tie_word_embeddings=False, initializer_factor=3.0),
}
sources = [[14, 52, 7, 33, 1], [5, 81, 23, 60, 11, 42, 9, 1],
           [70, 3, 19, 88, 27, 45, 2, 66, 31, 12, 15, 37, 54, 90, 22, 61, 47,
            29, 83, 36, 58, 74, 1], [40, 1],
           [8, 17, 93, 56, 21, 64, 77, 38, 29, 50, 71, 6, 1]]
for name, kw in variants.items():
    out = os.path.join(inputs, "hf", name)
    ref = os.path.join(out, "reference")
    os.makedirs(ref, exist_ok=True)
    torch.manual_seed(0)
    config = T5Config(vocab_size=96, num_layers=2, num_decoder_layers=2,
                      relative_attention_num_buckets=32,
                      relative_attention_max_distance=20,
                      layer_norm_epsilon=1e-6,
                      pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0, **kw)
    model = T5ForConditionalGeneration(config).eval()
    # (With transformers' default initializer_factor 1 a random T5 repeats
    # one token; 3-4 gives varied sequences, some ending with EOS.)
    model.save_pretrained(out, safe_serialization=True)

    # A padded batch: the second source is 5 tokens of 9.
    ids = np.array([[14, 52, 7, 33, 19, 88, 27, 45, 1],
                    [5, 81, 23, 60, 1, 0, 0, 0, 0]], np.int64)
    mask = (ids != 0).astype(np.int64)
    mask[0, :] = 1
    dec = np.array([[0, 12, 40, 7, 3, 9, 71], [0, 33, 2, 8, 50, 6, 18]],
                   np.int64)
    with torch.no_grad():
        o = model(input_ids=torch.from_numpy(ids),
                  attention_mask=torch.from_numpy(mask),
                  decoder_input_ids=torch.from_numpy(dec))
    for n, a in (("input_ids", ids), ("attention_mask", mask),
                 ("decoder_input_ids", dec),
                 ("decoder_attention_mask", np.ones_like(dec)),
                 ("encoder_hidden_states", o.encoder_last_hidden_state.numpy()),
                 ("logits", o.logits.numpy())):
        np.save(os.path.join(ref, n + ".npy"), a)
    with open(os.path.join(ref, "versions.json"), "w") as f:
        json.dump(versions, f)
        f.write("\n")

    cases = []
    for src in sources:
        case = {"source_ids": src}
        for key, beams in (("beam4", 4), ("greedy", 1)):
            gen = GenerationConfig(
                num_beams=beams, do_sample=False, max_new_tokens=24,
                length_penalty=1.0, early_stopping=False, eos_token_id=1,
                pad_token_id=0, decoder_start_token_id=0)
            t = torch.tensor([src])
            with torch.no_grad():
                seq = model.generate(t, attention_mask=torch.ones_like(t),
                                     generation_config=gen)
            tokens = seq[0].tolist()[1:]
            if 1 in tokens:
                tokens = tokens[:tokens.index(1) + 1]
            case[key] = tokens
        cases.append(case)
    with open(os.path.join(inputs, "generate", name + ".json"), "w") as f:
        json.dump({"versions": versions, "decoder_start_token_id": 0,
                   "eos_token_id": 1, "max_new_tokens": 24, "cases": cases},
                  f, indent=1)
        f.write("\n")
    print(name, json.dumps(cases))
