#!/usr/bin/env python3
"""Makes the Vision Transformer references of test/Import/hf-checkpoints.test.

Tiny random-weight ViTModel (with its pooler) and ViTForImageClassification
(3 labels) written by save_pretrained, and transformers' outputs on a batch
of two random 3 x 32 x 32 images (patches of 8: 16 patches and the class
token). Needs torch and transformers (not part of the test command); run once
after changing what the test covers:

    /path/to/venv/bin/python scripts/make-vit-references.py

Writes test/Import/Inputs/hf/vit-f32/ and vit-classifier-f32/ (config.json,
model.safetensors, reference/*.npy and versions.json).
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers import ViTConfig, ViTForImageClassification, ViTModel

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
hf = os.path.join(root, "test", "Import", "Inputs", "hf")


def config(**extra):
    return ViTConfig(image_size=32, patch_size=8, num_channels=3,
                     hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64,
                     initializer_range=0.2, **extra)


torch.manual_seed(0)
pixels = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
versions = {"torch": torch.__version__, "transformers": transformers.__version__}
for name, model, outputs in (
        ("vit-f32", ViTModel(config()),
         lambda o: {"last_hidden_state": o.last_hidden_state,
                    "pooler_output": o.pooler_output}),
        ("vit-classifier-f32",
         ViTForImageClassification(config(
             num_labels=3, id2label={0: "cat", 1: "dog", 2: "bird"},
             label2id={"cat": 0, "dog": 1, "bird": 2})),
         lambda o: {"logits": o.logits})):
    model = model.eval()
    # Random (not zero) class token and positions, as a trained model has.
    with torch.no_grad():
        emb = model.vit.embeddings if hasattr(model, "vit") else model.embeddings
        emb.cls_token.normal_(0, 0.5)
        emb.position_embeddings.normal_(0, 0.5)
    out = os.path.join(hf, name)
    ref = os.path.join(out, "reference")
    os.makedirs(ref, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    with torch.no_grad():
        o = model(pixel_values=torch.from_numpy(pixels))
    np.save(os.path.join(ref, "pixel_values.npy"), pixels)
    for key, value in outputs(o).items():
        np.save(os.path.join(ref, key + ".npy"), value.numpy())
    with open(os.path.join(ref, "versions.json"), "w") as f:
        json.dump(versions, f)
        f.write("\n")
    print(name, {k: tuple(v.shape) for k, v in outputs(o).items()})
