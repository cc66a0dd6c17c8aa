#!/usr/bin/env python3
"""Makes the checked-in reference data of the conformance tests (test/Import).

Needs torch, transformers, sentence-transformers, gguf and accelerate, which
the test command does not install (PyPI's torch brings ~5 GiB of CUDA
libraries); run it once after changing what the tests cover:

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch transformers \
        sentence-transformers gguf accelerate numpy
    /tmp/ref/bin/python scripts/make-references.py [TFC_CACHE_DIR]

The real checkpoints come from scripts/setup-test-data.sh's cache. Writes:
  test/Import/Inputs/minilm/       ids, masks, sentence-transformers
                                   embeddings and transformers hidden states
                                   of 24 sentences (one padded batch)
  test/Import/Inputs/smollm2/      a chat prompt's ids and transformers'
                                   logits (argmax, max |logit| and values at
                                   the top 64 and 2,048 fixed columns of each
                                   position) for the Q4_1 .gguf
  test/Import/Inputs/hf/<model>/   tiny random-weight checkpoints written by
                                   save_pretrained (f32 and bf16) and their
                                   transformers outputs
  test/Import/Inputs/generate/     greedy generate() token ids (64 new
                                   tokens): SmolLM2 on three chat prompts,
                                   the random GPT-2, LLaMA and Qwen2
Every file records the versions that made it (versions.json).
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cache = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "TFC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "tfc"))
out_root = os.path.join(root, "test", "Import", "Inputs")
torch.manual_seed(0)


def versions():
    import gguf
    import sentence_transformers
    import transformers
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "sentence-transformers": sentence_transformers.__version__,
            "gguf": getattr(gguf, "__version__", "?"), "numpy": np.__version__}


def save(d, name, a):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


SENTENCES = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "Café au lait, naïve résumé, jalapeño, façade.",
    "Übermäßig große Straßenbahnhaltestellen in Zürich.",
    "北京是中国的首都。",
    "東京の天気は晴れです",
    "서울은 한국의 수도입니다.",
    "I love pizza 🍕 and emoji 😀👍🏽!",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "pneumonoultramicroscopicsilicovolcanoconiosis is a long word",
    "def f(x): return x ** 2  # a Python function",
    "https://example.com/path?query=1&other=two#frag",
    "Prices rose 3.14% to $1,234.56 on 2024-01-15.",
    "Ελληνικά: Η γρήγορη καφέ αλεπού",
    "Русский текст: быстрая коричневая лиса",
    "مرحبا بالعالم",
    "שלום עולם",
    "   leading and trailing spaces   ",
    "Tabs\tand\nnewlines\r\nmixed",
    "[CLS] looks like a special token [SEP] but is text",
    "A",
    "What is the capital of France? Paris is the capital of France.",
    "Sentence embeddings map text to dense vectors for semantic search.",
    "ALL CAPS SHOUTING AND lowercase whispering",
]


def minilm():
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer
    d = os.path.join(cache, "models", "minilm")
    out = os.path.join(out_root, "minilm")
    st = SentenceTransformer(d, device="cpu")
    emb = st.encode(SENTENCES, convert_to_numpy=True, normalize_embeddings=False,
                    batch_size=len(SENTENCES))
    tok = AutoTokenizer.from_pretrained(d)
    enc = tok(SENTENCES, padding=True, truncation=True, max_length=256,
              return_tensors="pt")
    model = AutoModel.from_pretrained(d).eval()
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state.numpy()
    save(out, "input_ids", enc["input_ids"].numpy().astype(np.int64))
    save(out, "attention_mask", enc["attention_mask"].numpy().astype(np.int64))
    save(out, "token_type_ids", enc["token_type_ids"].numpy().astype(np.int64))
    save(out, "sentence_embedding", emb.astype(np.float32))
    # Hidden states of the first 6 sentences (the file stays small).
    save(out, "hidden6", hidden[:6].astype(np.float32))
    with open(os.path.join(out, "sentences.json"), "w") as f:
        json.dump(SENTENCES, f, ensure_ascii=False, indent=0)
    print("minilm:", enc["input_ids"].shape, emb.shape)


CHAT = [{"role": "user", "content": "What is the capital of France?"}]


def smollm2():
    from transformers import AutoModelForCausalLM, AutoTokenizer
    gdir = os.path.join(cache, "models", "smollm2")
    gfile = "SmolLM2-135M-Instruct.Q4_1.gguf"
    out = os.path.join(out_root, "smollm2")
    tok = AutoTokenizer.from_pretrained(gdir, gguf_file=gfile)
    text = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    ids = tok(text, return_tensors="pt")["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(gdir, gguf_file=gfile,
                                                 torch_dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(ids).logits[0].numpy()  # [T, V]
    T, V = logits.shape
    rng = np.random.default_rng(0)
    cols = np.sort(rng.choice(V, 2048, replace=False)).astype(np.int64)
    top = np.argsort(-logits, axis=1)[:, :64].astype(np.int64)
    save(out, "input_ids", ids.numpy().astype(np.int64))
    save(out, "argmax", logits.argmax(axis=1).astype(np.int64))
    save(out, "max_abs", np.abs(logits).max(axis=1).astype(np.float32))
    save(out, "columns", cols)
    save(out, "column_logits", logits[:, cols].astype(np.float32))
    save(out, "top_ids", top)
    save(out, "top_logits", np.take_along_axis(logits, top, axis=1).astype(np.float32))
    with open(os.path.join(out, "prompt.txt"), "w") as f:
        f.write(text)
    print("smollm2:", ids.shape, "argmax of the last position", logits[-1].argmax())


def tiny_models():
    import transformers as tr
    common = dict(vocab_size=128, hidden_size=64, num_hidden_layers=2,
                  num_attention_heads=4, intermediate_size=96,
                  max_position_embeddings=64)
    specs = {
        "gpt2": (tr.GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=4,
                               n_positions=64, n_inner=96),
                 tr.GPT2LMHeadModel),
        "bert": (tr.BertConfig(**common, type_vocab_size=2), tr.BertModel),
        "llama": (tr.LlamaConfig(**common, num_key_value_heads=2, rope_theta=500000.0,
                                 rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                               "low_freq_factor": 1.0,
                                               "high_freq_factor": 4.0,
                                               "original_max_position_embeddings": 16},
                                 tie_word_embeddings=False),
                  tr.LlamaForCausalLM),
        "llama-linear": (tr.LlamaConfig(**common, num_key_value_heads=4,
                                        rope_scaling={"rope_type": "linear", "factor": 2.0},
                                        tie_word_embeddings=True),
                         tr.LlamaForCausalLM),
        "qwen2": (tr.Qwen2Config(**common, num_key_value_heads=2,
                                 tie_word_embeddings=True), tr.Qwen2ForCausalLM),
        "mistral": (tr.MistralConfig(**common, num_key_value_heads=1,
                                     sliding_window=None), tr.MistralForCausalLM),
    }
    rng = np.random.default_rng(1)
    for name, (config, cls) in specs.items():
        torch.manual_seed(0)
        model = cls(config).eval()
        # Larger random values than the default init, so that every part of
        # the model matters to the output.
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.2)
        batch, seq = 2, 11
        ids = torch.tensor(rng.integers(0, 128, size=(batch, seq)), dtype=torch.long)
        for dtype in ("f32", "bf16"):
            d = os.path.join(out_root, "hf", f"{name}-{dtype}")
            shutil.rmtree(d, ignore_errors=True)
            m = model if dtype == "f32" else cls(config).eval()
            if dtype == "bf16":
                m.load_state_dict(model.state_dict())
                m = m.to(torch.bfloat16)
            m.save_pretrained(d, safe_serialization=True)
            # The reference computes in f32 on exactly the stored weights.
            ref = cls.from_pretrained(d, torch_dtype=torch.float32).eval()
            inputs = {"input_ids": ids}
            if name == "bert":
                mask = torch.ones_like(ids)
                mask[1, 7:] = 0  # a padded second row
                inputs["attention_mask"] = mask
                inputs["token_type_ids"] = torch.zeros_like(ids)
            with torch.no_grad():
                o = ref(**inputs)
            r = os.path.join(d, "reference")
            for k, v in inputs.items():
                save(r, k, v.numpy().astype(np.int64))
            if name == "bert":
                save(r, "hidden", o.last_hidden_state.numpy().astype(np.float32))
                save(r, "pooled", o.pooler_output.numpy().astype(np.float32))
            else:
                save(r, "logits", o.logits.numpy().astype(np.float32))
            print(name, dtype, {k: tuple(v.shape) for k, v in inputs.items()})


PROMPTS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Write a haiku about compilers."}],
    [{"role": "system", "content": "You answer in one sentence."},
     {"role": "user", "content": "Why is the sky blue?"}],
]


def generation():
    """Greedy generation (do_sample=False), 64 new tokens: SmolLM2 from the
    .gguf on three chat prompts, and the random-weight GPT-2 and LLaMA
    checkpoints of test/Import/Inputs/hf on fixed ids (56 new tokens: their
    context is 64)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    out = os.path.join(out_root, "generate")
    os.makedirs(out, exist_ok=True)
    gdir = os.path.join(cache, "models", "smollm2")
    gfile = "SmolLM2-135M-Instruct.Q4_1.gguf"
    tok = AutoTokenizer.from_pretrained(gdir, gguf_file=gfile)
    model = AutoModelForCausalLM.from_pretrained(gdir, gguf_file=gfile,
                                                 torch_dtype=torch.float32).eval()
    cases = []
    for messages in PROMPTS:
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tok(text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            g = model.generate(ids, do_sample=False, max_new_tokens=64)
        new = g[0, ids.shape[1]:].tolist()
        cases.append({"prompt": text, "prompt_ids": ids[0].tolist(), "generated_ids": new,
                      "text": tok.decode(new, skip_special_tokens=True)})
        print("smollm2:", repr(cases[-1]["text"]))
    with open(os.path.join(out, "smollm2.json"), "w") as f:
        json.dump({"eos_token_id": model.generation_config.eos_token_id, "cases": cases}, f,
                  indent=1, ensure_ascii=False)
    rng = np.random.default_rng(2)
    for name in ("gpt2-f32", "llama-f32", "qwen2-f32"):
        d = os.path.join(out_root, "hf", name)
        m = AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
        ids = torch.tensor([rng.integers(0, 128, size=7).tolist()])
        with torch.no_grad():
            g = m.generate(ids, do_sample=False, max_new_tokens=56, min_new_tokens=56,
                           pad_token_id=0)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"prompt_ids": ids[0].tolist(),
                       "generated_ids": g[0, ids.shape[1]:].tolist()}, f)
        print(name, g[0, ids.shape[1]:].tolist()[:10])


if __name__ == "__main__":
    if sys.argv[2:] == ["generation"]:  # only the generation references
        generation()
        sys.exit(0)
    minilm()
    smollm2()
    tiny_models()
    generation()
    with open(os.path.join(out_root, "versions.json"), "w") as f:
        json.dump(versions(), f, indent=1)
        f.write("\n")
    print(versions())
