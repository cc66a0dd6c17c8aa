"""Variants of a Hugging Face checkpoint for test/Import/checkpoint-errors.test.

    make_checkpoints.py SRC DIR

SRC is a save_pretrained directory (Inputs/hf/llama-f32). Writes into DIR:
sharded/ (the same weights in two shards with model.safetensors.index.json,
which must work) and one broken directory per rule the importer checks.
"""
import json
import os
import shutil
import sys

from safetensors.numpy import load_file, save_file

src, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
config = json.load(open(os.path.join(src, "config.json")))
tensors = load_file(os.path.join(src, "model.safetensors"))


def make(name, cfg=None, weights=None, shards=None, index=None, config_text=None):
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if config_text is not None:
        open(os.path.join(d, "config.json"), "w").write(config_text)
    elif cfg is not None:
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=1)
    if weights is not None:
        save_file(weights, os.path.join(d, "model.safetensors"))
    for shard, names in (shards or {}).items():
        save_file({n: tensors[n] for n in names}, os.path.join(d, shard))
    if index is not None:
        json.dump(index, open(os.path.join(d, "model.safetensors.index.json"), "w"))
    return d


def with_config(**changes):
    c = json.loads(json.dumps(config))
    for k, v in changes.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


names = sorted(tensors)
half = len(names) // 2
shards = {"model-00001-of-00002.safetensors": names[:half],
          "model-00002-of-00002.safetensors": names[half:]}
weight_map = {n: s for s, ns in shards.items() for n in ns}
make("sharded", config, shards=shards, index={"metadata": {}, "weight_map": weight_map})
make("missing-shard", config, shards={"model-00001-of-00002.safetensors": names[:half]},
     index={"weight_map": weight_map})
wrong = dict(weight_map)
wrong[names[0]] = "model-00002-of-00002.safetensors"
make("wrong-shard", config, shards=shards, index={"weight_map": wrong})
make("missing-key", with_config(hidden_size=None), tensors)
make("wrong-type", with_config(hidden_size="64"), tensors)
make("negative", with_config(num_hidden_layers=-2), tensors)
make("unknown-type", with_config(model_type="xlnet"), tensors)
make("no-type", with_config(model_type=None), tensors)
make("bad-json", config_text='{"model_type": "llama",', weights=tensors)
make("not-object", config_text="[1, 2]", weights=tensors)
make("no-config", weights=tensors)
make("no-weights", config)
make("shape-mismatch", with_config(intermediate_size=100), tensors)
missing = dict(tensors)
del missing["lm_head.weight"]
make("missing-tensor", config, missing)
rp = dict(config["rope_parameters"])
rp["rope_type"] = "yarn"
make("rope-type", with_config(rope_parameters=rp), tensors)
make("gqa", with_config(num_key_value_heads=3), tensors)
make("act", with_config(hidden_act="gelu"), tensors)
