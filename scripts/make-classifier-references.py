#!/usr/bin/env python3
"""Makes the sequence-classification references of test/Import/hf-checkpoints.test.

A tiny random-weight BertForSequenceClassification (3 labels, save_pretrained)
and transformers' logits and softmax probabilities on a padded batch of two
sequences. Needs torch and transformers (not part of the test command); run
once after changing what the test covers:

    /path/to/venv/bin/python scripts/make-classifier-references.py

Writes test/Import/Inputs/hf/bert-classifier-f32/ (config.json,
model.safetensors, reference/*.npy, reference/versions.json).
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import BertConfig, BertForSequenceClassification

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "test", "Import", "Inputs", "hf", "bert-classifier-f32")
ref = os.path.join(out, "reference")
os.makedirs(ref, exist_ok=True)

torch.manual_seed(0)
config = BertConfig(vocab_size=96, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=4, intermediate_size=64,
                    max_position_embeddings=64, num_labels=3,
                    id2label={0: "negative", 1: "neutral", 2: "positive"},
                    label2id={"negative": 0, "neutral": 1, "positive": 2},
                    initializer_range=0.2)
model = BertForSequenceClassification(config).eval()
model.save_pretrained(out, safe_serialization=True)

ids = np.array([[2, 14, 52, 7, 33, 19, 3], [2, 81, 23, 3, 0, 0, 0]], np.int64)
mask = (np.arange(7)[None, :] < np.array([[7], [4]])).astype(np.int64)
types = np.zeros_like(ids)
with torch.no_grad():
    logits = model(input_ids=torch.from_numpy(ids),
                   attention_mask=torch.from_numpy(mask),
                   token_type_ids=torch.from_numpy(types)).logits
for name, a in (("input_ids", ids), ("attention_mask", mask),
                ("token_type_ids", types), ("logits", logits.numpy()),
                ("probabilities", torch.softmax(logits, -1).numpy())):
    np.save(os.path.join(ref, name + ".npy"), a)
with open(os.path.join(ref, "versions.json"), "w") as f:
    json.dump({"torch": torch.__version__,
               "transformers": transformers.__version__}, f)
    f.write("\n")
print(logits)
