#!/usr/bin/env python3
"""Makes the t5-small-shaped references of test/Import/t5-small.test.

test/Import/Inputs/make_t5_small.py writes a T5ForConditionalGeneration
checkpoint of t5-small's shapes with reproducible values (the test makes it
again instead of storing 240 MB). This script makes it, loads it with
transformers, checks that save_pretrained writes the same tensors (names,
shapes, values), and stores transformers' encoder output on a padded batch
of two sources, the decoder's logits at three positions of the first, and
generate() (greedy and 4 beams, 16 new tokens) for both sources. Needs torch and
transformers (not part of the test command); run once after changing what
the test covers:

    /path/to/venv/bin/python scripts/make-t5-small-references.py

Writes test/Import/Inputs/t5-small/ (*.npy, generate.json with the versions
that made them).
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch
import transformers
from safetensors.numpy import load_file
from transformers import T5ForConditionalGeneration

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inputs = os.path.join(root, "test", "Import", "Inputs")
sys.path.insert(0, inputs)
import make_t5_small  # noqa: E402

out = os.path.join(inputs, "t5-small")
os.makedirs(out, exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    made, saved = os.path.join(tmp, "made"), os.path.join(tmp, "saved")
    make_t5_small.write(made)
    model = T5ForConditionalGeneration.from_pretrained(made).eval()
    model.save_pretrained(saved, safe_serialization=True)
    a = load_file(os.path.join(made, "model.safetensors"))
    b = load_file(os.path.join(saved, "model.safetensors"))
    assert sorted(a) == sorted(b), set(a) ^ set(b)
    for k in a:
        assert np.array_equal(a[k], b[k]), k

ids = np.array([[13, 7, 4021, 3, 97, 15, 8, 1202, 31, 5, 1, 0],
                [644, 19, 3, 2775, 11, 1, 0, 0, 0, 0, 0, 0]], np.int64)
mask = (np.arange(12)[None, :] < np.array([[11], [6]])).astype(np.int64)
dec = np.array([[0, 1525, 46]], np.int64)
with torch.no_grad():
    enc = model.encoder(input_ids=torch.from_numpy(ids),
                        attention_mask=torch.from_numpy(mask)).last_hidden_state
    logits = model(encoder_outputs=(enc[:1],),
                   attention_mask=torch.from_numpy(mask[:1]),
                   decoder_input_ids=torch.from_numpy(dec)).logits
for name, v in (("input_ids", ids), ("attention_mask", mask),
                ("decoder_input_ids", dec),
                ("decoder_attention_mask", np.ones_like(dec)),
                ("encoder_hidden_states", enc.numpy()),
                ("logits", logits.numpy())):
    np.save(os.path.join(out, name + ".npy"), v)

cases = []
for row, n in ((0, 11), (1, 6)):
    src = ids[row, :n].tolist()
    case = {"source_ids": src}
    for key, beams in (("beam4", 4), ("greedy", 1)):
        with torch.no_grad():
            seq = model.generate(torch.tensor([src]), max_new_tokens=16,
                                 do_sample=False, num_beams=beams,
                                 length_penalty=1.0, early_stopping=False,
                                 eos_token_id=1, decoder_start_token_id=0,
                                 pad_token_id=0)
        tokens = seq[0].tolist()[1:]
        if 1 in tokens:
            tokens = tokens[:tokens.index(1) + 1]
        case[key] = tokens
    cases.append(case)
with open(os.path.join(out, "generate.json"), "w") as f:
    json.dump({"versions": {"torch": torch.__version__,
                            "transformers": transformers.__version__},
               "decoder_start_token_id": 0, "eos_token_id": 1,
               "max_new_tokens": 16, "cases": cases}, f, indent=1)
    f.write("\n")
print(cases)
