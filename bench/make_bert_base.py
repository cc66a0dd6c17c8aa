#!/usr/bin/env python3
"""A BERT-base checkpoint for bench/memory.sh's peers: transformers'
BertModel with BertConfig()'s defaults (12 layers of 768, 110M parameters,
weights initialised by transformers with seed 0) saved as a Hugging Face
directory (config.json, model.safetensors), with the tokenizer files of
all-MiniLM-L6-v2 (the same 30,522-piece uncased vocabulary), so that tfc and
llama.cpp (through its convert_hf_to_gguf.py) read the same weights.

    python make_bert_base.py MINILM_DIR OUT_DIR
"""
import os
import shutil
import sys

import torch
import transformers

minilm, out = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = transformers.BertModel(transformers.BertConfig())
model.save_pretrained(out, safe_serialization=True)
for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
             "vocab.txt"):
    if os.path.exists(os.path.join(minilm, name)):
        shutil.copy(os.path.join(minilm, name), out)
print(out)
