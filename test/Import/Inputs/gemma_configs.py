"""gemma_configs.py SRC OUT: copies of the Hugging Face checkpoint SRC
(its weights linked) whose config.json has keys removed or changed, for
test/Import/gemma-config.test: OUT/absent (no soft caps, no window, a long
context), OUT/null (caps null), OUT/zero (attention cap 0)."""
import json
import os
import sys

src, out = sys.argv[1], sys.argv[2]
base = json.load(open(os.path.join(src, "config.json")))
REMOVE = object()
variants = {
    "absent": {"attn_logit_softcapping": REMOVE, "final_logit_softcapping": REMOVE,
               "sliding_window": REMOVE, "max_position_embeddings": 8192},
    "null": {"attn_logit_softcapping": None, "final_logit_softcapping": None},
    "zero": {"attn_logit_softcapping": 0},
}
for name, edits in variants.items():
    d = os.path.join(out, name)
    os.makedirs(d)
    os.symlink(os.path.abspath(os.path.join(src, "model.safetensors")),
               os.path.join(d, "model.safetensors"))
    config = dict(base)
    for k, v in edits.items():
        if v is REMOVE:
            config.pop(k, None)
        else:
            config[k] = v
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
