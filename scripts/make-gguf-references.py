#!/usr/bin/env python3
"""Makes the tiny GGUF checkpoints of test/Import/gguf-archs.test and their
references: one per GGUF architecture tfc imports, each converted from a
random-weight transformers model by llama.cpp's own converter and quantised
by llama.cpp's own quantiser, so the files are what llama.cpp's tools make
for the real models (its Q/K permutation for llama, Gemma's 1 + w norms, the
per-tensor block formats of a Q*_K_M mix), and the logits transformers
computes after loading each .gguf (it dequantises to f32 and undoes the
conversion with code of its own).

Needs the reference venv of scripts/make-references.py plus the
llama-cpp-python source package (its vendor/llama.cpp holds
convert_hf_to_gguf.py; its built library the quantiser):

    /tmp/ref/bin/pip install llama-cpp-python==0.3.36   # builds llama.cpp
    (or PYTHONPATH=$TFC_CACHE_DIR/llamacpp-venv/lib/python3.11/site-packages,
    the one bench/ builds)
    /tmp/ref/bin/pip download --no-deps --no-binary :all: \\
        llama-cpp-python==0.3.36 -d /tmp/lcpp && tar xzf ... -C /tmp/lcpp
    /tmp/ref/bin/python scripts/make-gguf-references.py \\
        /tmp/lcpp/llama_cpp_python-0.3.36/vendor/llama.cpp [NAME...]

(NAME...: remake only these models.)

Writes test/Import/Inputs/gguf-archs/<arch>.gguf and <arch>/logits.npy,
input_ids.npy, generate.json (greedy generate(), 40 new tokens), and
versions.json. The tokenizer in the files is a stub (the
ids are the input; tokenizers are tested on the real files).
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import transformers

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out_root = os.path.join(root, "test", "Import", "Inputs", "gguf-archs")
llama_cpp_dir = sys.argv[1]
sys.path.insert(0, llama_cpp_dir)
sys.path.insert(1, os.path.join(llama_cpp_dir, "gguf-py"))
import convert_hf_to_gguf as conv  # noqa: E402
import llama_cpp  # noqa: E402
from conversion import get_model_class  # noqa: E402

VOCAB, D, FF, HEADS, KV, HEAD_DIM = 256, 256, 256, 4, 2, 64
COMMON = dict(vocab_size=VOCAB, hidden_size=D, intermediate_size=FF,
              num_attention_heads=HEADS, num_key_value_heads=KV,
              max_position_embeddings=64, rms_norm_eps=1e-6,
              tie_word_embeddings=False)

# (name, transformers config class, its arguments, llama_ftype of the
# quantised file): every block format tfc reads appears in some file.
MODELS = [
    ("llama", "LlamaConfig", dict(num_hidden_layers=2, rope_theta=10000.0), 9),   # Q5_1
    ("qwen2", "Qwen2Config", dict(num_hidden_layers=2, rope_theta=1e6), 15),       # Q4_K_M
    ("qwen3", "Qwen3Config", dict(num_hidden_layers=2, head_dim=128,
                                  rope_theta=1e6), 10),                             # Q2_K
    # transformers reads no query_pre_attn_scalar from a .gguf (it keeps
    # its default, 256) and llama.cpp scales by 1/sqrt(head_dim): the two
    # agree where they are equal, as in the real Gemma 3 270M, 1B and 4B.
    ("gemma3", "Gemma3TextConfig", dict(num_hidden_layers=6, head_dim=256,
                                        num_attention_heads=2, num_key_value_heads=1,
                                        sliding_window=4, query_pre_attn_scalar=256,
                                        rope_theta=1e6, rope_local_base_freq=1e4,
                                        tie_word_embeddings=True), 12),           # Q3_K_M
    # Gemma 1, in F16 (llama_ftype 1) from weights that f16 holds exactly
    # (HALF_EXACT): transformers does not load a "gemma" .gguf, so the
    # reference is the transformers model the file was converted from (the
    # conversion is then exact: norms stored as 1 + w in f32).
    ("gemma", "GemmaConfig", dict(num_hidden_layers=2, head_dim=64,
                                  tie_word_embeddings=True), 1),               # F16
    # Gemma 2: sliding (window 4) and global layers alternating, post-norms,
    # soft caps. transformers reads neither query_pre_attn_scalar nor the
    # caps from a .gguf (it keeps 256, 50 and 30), llama.cpp scales by
    # 1/sqrt(head_dim): all agree with these values. q_proj and k_proj are
    # scaled up and the final norm's weight is ~60 (SCALE_UP) so that the
    # caps bend most scores and logits, as they rarely would on random
    # weights.
    ("gemma2", "Gemma2Config", dict(num_hidden_layers=4, head_dim=256,
                                    num_attention_heads=2, num_key_value_heads=1,
                                    sliding_window=4, query_pre_attn_scalar=256,
                                    attn_logit_softcapping=50.0,
                                    final_logit_softcapping=30.0,
                                    tie_word_embeddings=True), 8),             # Q5_0
    # Fused attn_qkv and ffn_up (gate and up). Every dimension rotated:
    # transformers ignores rope.dimension_count when it loads a .gguf, so
    # partial rotation is checked on the Hugging Face path
    # (scripts/make-hf-decoder-references.py).
    ("phi3", "Phi3Config", dict(num_hidden_layers=2, partial_rotary_factor=1.0,
                                original_max_position_embeddings=64,
                                pad_token_id=0, bos_token_id=1, eos_token_id=2), 17),  # Q5_K_M
]
# Models whose weights are rounded to f16 after the draw.
HALF_EXACT = {"gemma"}
# Weights changed after the random draw, per model: name suffix -> (factor,
# then addend).
SCALE_UP = {"gemma2": {"q_proj.weight": (4.0, 0.0), "k_proj.weight": (4.0, 0.0),
                       "model.norm.weight": (1.0, 59.0)}}
IDS = np.array([[1, 17, 200, 45, 3, 99, 128, 7, 255, 64, 12, 31]], dtype=np.int64)


def stub_vocab(self):
    """A byte-less BPE vocabulary of the model's size: the tests feed ids."""
    self.gguf_writer.add_tokenizer_model("gpt2")
    self.gguf_writer.add_tokenizer_pre("default")
    self.gguf_writer.add_token_list([f"<t{i}>" for i in range(VOCAB)])
    self.gguf_writer.add_token_types([1] * VOCAB)
    self.gguf_writer.add_token_merges([])


def convert(hf_dir, arch_class, out):
    get_model_class(arch_class).set_vocab = stub_vocab
    argv = sys.argv
    sys.argv = ["convert_hf_to_gguf.py", hf_dir, "--outfile", out,
                "--outtype", "f32"]
    try:
        conv.main()
    finally:
        sys.argv = argv


def quantize(src, dst, ftype):
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), params)
    if rc != 0:
        sys.exit(f"llama_model_quantize({src}) failed: {rc}")


def main():
    os.makedirs(out_root, exist_ok=True)
    versions = {"torch": torch.__version__,
                "transformers": transformers.__version__,
                "llama-cpp-python": llama_cpp.__version__}
    only = sys.argv[2:]  # names to remake, or all
    for name, cls, extra, ftype in MODELS:
        if only and name not in only:
            continue
        torch.manual_seed(0)
        config = getattr(transformers, cls)(**{**COMMON, **extra})
        model = transformers.AutoModelForCausalLM.from_config(config)
        with torch.no_grad():  # norms away from their initial 1 (or 0)
            for n, p in model.named_parameters():
                if "norm" in n:
                    p.copy_(torch.randn_like(p) * 0.2 + (0 if "gemma" in name else 1))
            for n, p in model.named_parameters():
                for suffix, (factor, addend) in SCALE_UP.get(name, {}).items():
                    if n.endswith(suffix):
                        p.mul_(factor).add_(addend)
                if name in HALF_EXACT:
                    p.copy_(p.half().float())
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp)
            # Gemma's converter counts the vocabulary in tokenizer.json.
            with open(os.path.join(tmp, "tokenizer.json"), "w") as f:
                json.dump({"model": {"vocab": {f"<t{i}>": i for i in range(VOCAB)}},
                           "added_tokens": []}, f)
            f32 = os.path.join(tmp, "model-f32.gguf")
            convert(tmp, model.config.architectures[0], f32)
            gguf_path = os.path.join(out_root, name + ".gguf")
            quantize(f32, gguf_path, ftype)
            # Phi-3's default pad id (32000) is outside the stub vocabulary.
            load = {"pad_token_id": 0} if name == "phi3" else {}
            if name == "gemma":  # see MODELS: the model it was made from
                ref = transformers.AutoModelForCausalLM.from_pretrained(
                    tmp, torch_dtype=torch.float32)
            else:
                ref = transformers.AutoModelForCausalLM.from_pretrained(
                    out_root, gguf_file=name + ".gguf", torch_dtype=torch.float32,
                    **load)
        ref.eval()
        with torch.no_grad():
            logits = ref(torch.from_numpy(IDS)).logits.float().numpy()
        d = os.path.join(out_root, name)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "input_ids.npy"), IDS)
        np.save(os.path.join(d, "logits.npy"), logits)
        # Greedy generation, 40 new tokens (no end-of-sequence id: the
        # stub vocabulary has none), for generation through the KV cache.
        ref.generation_config.eos_token_id = None
        ref.generation_config.pad_token_id = 0
        with torch.no_grad():
            gen = ref.generate(torch.from_numpy(IDS), max_new_tokens=40,
                               do_sample=False)[0, IDS.shape[1]:].tolist()
        with open(os.path.join(d, "generate.json"), "w") as f:
            json.dump({"prompt_ids": IDS[0].tolist(), "generated_ids": gen}, f)
        print(name, os.path.getsize(gguf_path), "bytes; argmax", logits[0].argmax(-1))
    if only:
        return
    with open(os.path.join(out_root, "versions.json"), "w") as f:
        json.dump(versions, f, indent=1)


main()
