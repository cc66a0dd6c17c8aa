#!/usr/bin/env python3
"""Makes the tiny Qwen3, Gemma, Gemma 2, Gemma 3 (text) and Phi-3
checkpoints of test/Import/hf-checkpoints.test: random-weight
Qwen3ForCausalLM, GemmaForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM
and Phi3ForCausalLM written by transformers' save_pretrained (f32 and bf16),
and the logits transformers computes on them in f32, as
scripts/make-references.py does for the other families.

    /tmp/ref/bin/python scripts/make-hf-decoder-references.py [NAME...]

Writes test/Import/Inputs/hf/{qwen3,gemma,gemma2,gemma3_text,phi3}-{f32,bf16}/
and Inputs/hf/versions-decoders.json (NAME...: remake only these; each
model draws from its own seeds, so the others do not change).
"""
import json
import os
import shutil
import sys
import zlib

import numpy as np
import torch
import transformers as tr

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out_root = os.path.join(root, "test", "Import", "Inputs", "hf")


def save(d, name, a):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


common = dict(vocab_size=128, hidden_size=64, num_attention_heads=4,
              num_key_value_heads=2, intermediate_size=96,
              max_position_embeddings=64)
specs = {
    # Per-head q/k RMSNorm; head_dim 24 is not hidden_size / heads.
    "qwen3": (tr.Qwen3Config(**common, num_hidden_layers=2, head_dim=24,
                             tie_word_embeddings=False), tr.Qwen3ForCausalLM),
    # Six layers: five sliding (window 4, RoPE base 1e4) and one global
    # (base 1e6, linear scaling 2); 11 tokens reach past the window;
    # query_pre_attn_scalar 24 is not the head size 16.
    "gemma3_text": (tr.Gemma3TextConfig(
        **common, num_hidden_layers=6, head_dim=16, sliding_window=4,
        query_pre_attn_scalar=24,
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "linear", "factor": 2.0,
                                            "rope_theta": 1000000.0}}),
        tr.Gemma3ForCausalLM),
    # Gemma 1: (1 + w) norms before attention and the MLP only, GELU (tanh)
    # gate, the embedding times sqrt(d), scores by 1/sqrt(head_dim).
    "gemma": (tr.GemmaConfig(**common, num_hidden_layers=2, head_dim=16),
              tr.GemmaForCausalLM),
    # Gemma 2: sliding (window 4) and global layers alternating, norms after
    # attention and the MLP too, scores by 1/sqrt(24), and soft caps small
    # enough to bend most scores and logits of these weights (the real
    # models' 50 and 30 bend few).
    "gemma2": (tr.Gemma2Config(**common, num_hidden_layers=4, head_dim=16,
                               sliding_window=4, query_pre_attn_scalar=24,
                               attn_logit_softcapping=3.0,
                               final_logit_softcapping=2.5),
               tr.Gemma2ForCausalLM),
    # Fused qkv_proj and gate_up_proj, half of each head rotated, a sliding
    # window of 6 over 11 tokens.
    "phi3": (tr.Phi3Config(**common, num_hidden_layers=2, partial_rotary_factor=0.5,
                           sliding_window=6, pad_token_id=0, bos_token_id=1,
                           eos_token_id=2, tie_word_embeddings=False),
             tr.Phi3ForCausalLM),
}
only = sys.argv[1:]
# qwen3, gemma3_text and phi3 draw their inputs from one generator, in that
# order, as they always did; the others from their own.
shared = np.random.default_rng(5)
for name, (config, cls) in specs.items():
    rng = shared if name in ("qwen3", "gemma3_text", "phi3") else \
        np.random.default_rng(zlib.crc32(name.encode()))
    if only and name not in only:
        rng.integers(0, 128, size=(2, 11))  # the draws of the skipped model
        continue
    torch.manual_seed(0)
    model = cls(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.2)
    ids = torch.tensor(rng.integers(0, 128, size=(2, 11)), dtype=torch.long)
    for dtype in ("f32", "bf16"):
        d = os.path.join(out_root, f"{name}-{dtype}")
        shutil.rmtree(d, ignore_errors=True)
        m = model if dtype == "f32" else cls(config).eval()
        if dtype == "bf16":
            m.load_state_dict(model.state_dict())
            m = m.to(torch.bfloat16)
        m.save_pretrained(d, safe_serialization=True)
        ref = cls.from_pretrained(d, dtype=torch.float32).eval()
        with torch.no_grad():
            logits = ref(input_ids=ids).logits
        r = os.path.join(d, "reference")
        save(r, "input_ids", ids.numpy().astype(np.int64))
        save(r, "logits", logits.numpy().astype(np.float32))
        print(name, dtype, tuple(logits.shape))
with open(os.path.join(out_root, "versions-decoders.json"), "w") as f:
    json.dump({"torch": torch.__version__, "transformers": tr.__version__}, f, indent=1)
    f.write("\n")
