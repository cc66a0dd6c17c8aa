#!/usr/bin/env python3
"""Makes the checked-in PyTorch reference outputs of the bundled examples
(test/E2E/Inputs/torch, compared with compiled models by test/E2E/torch-*.test).

Each example is compiled at a reduced size (-D overrides), tfc-weights writes
its deterministic weights, and a plain PyTorch model written here from the
formulas of docs/language.md and the design brief (not from tfc's code) runs
on those weights in float64: torch.nn.functional's layer_norm, rms_norm,
gelu (both forms), silu, relu and scaled_dot_product_attention (GQA through
enable_gqa), rotary positions in both pairings (rotate-half as in Hugging
Face LLaMA, adjacent pairs as complex numbers as in Meta's LLaMA code) and
the sinusoidal table of Vaswani et al. GPT-2, BERT and the rotate-half LLaMA
are also run through transformers' own GPT2Model, BertModel and
LlamaForCausalLM loaded from the same weights, and must agree with the plain
model (the measured difference is recorded). Outputs are rounded to f32.

Needs torch and transformers, which the tests do not:

    /root/.cache/tfc/venv-ref/bin/python scripts/make-example-references.py \
        [BUILD_DIR]

(BUILD_DIR, default build/, provides tfc-compile and tfc-weights). Writes,
per model, test/E2E/Inputs/torch/<model>/model.json (the .tfm, the -D
options, the SHA-256 of the weights the references were made with, the
cases, the cross-check) and <case>/<name>.npy for every input and output,
and test/E2E/Inputs/torch/versions.json. Run it again after changing a
case, an example's math or tfc-weights' recipe.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
out_root = os.path.join(root, "test", "E2E", "Inputs", "torch")
torch.set_default_dtype(torch.float64)


def versions():
    import transformers
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "numpy": np.__version__, "python": sys.version.split()[0]}


#===------------------------------------------------------------------------===#
# The models, in float64, on a dict of weights (name -> tensor)
#===------------------------------------------------------------------------===#


def split_heads(x, heads):  # [B, T, H*D] -> [B, H, T, D]
    B, T, HD = x.shape
    return x.reshape(B, T, heads, HD // heads).transpose(1, 2)


def merge_heads(x):  # [B, H, T, D] -> [B, T, H*D]
    B, H, T, D = x.shape
    return x.transpose(1, 2).reshape(B, T, H * D)


def attention(q, k, v, causal=False, key_keep=None):
    """softmax(q kᵀ / sqrt(D) + mask) v on [B, H, T, D]; k, v may have fewer
    heads (GQA). Causal: query i of Tq sees keys j <= i + Tk - Tq.
    key_keep: [B, Tk] 1/0 (1 = token, 0 = padding)."""
    B, H, Tq, D = q.shape
    Tk = k.shape[2]
    keep = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
    if causal:
        keep &= torch.ones(Tq, Tk, dtype=torch.bool).tril(Tk - Tq)
    if key_keep is not None:
        keep &= key_keep.bool()[:, None, None, :]
    assert keep.any(-1).all(), "a fully masked query row (SDPA gives NaN)"
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep,
                                          enable_gqa=k.shape[1] != H)


def rope(x, mode, base):
    """Rotary positions on [B, H, T, D] at positions 0..T-1: pair p of
    dimensions rotates by t / base^(2p/D)."""
    T, D = x.shape[-2], x.shape[-1]
    inv_freq = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq  # [T, D/2]
    if mode == "rotate_half":  # pairs (p, p + D/2)
        cos, sin = torch.cos(angle), torch.sin(angle)
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    assert mode == "adjacent"  # pairs (2p, 2p + 1), as complex numbers
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], D // 2, 2).contiguous())
    rot = torch.polar(torch.ones_like(angle), angle)
    return torch.view_as_real(xc * rot).reshape(x.shape)


def sinusoidal(T, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos / 10000.0 ** (two_i / d))
    pe[:, 1::2] = torch.cos(pos / 10000.0 ** (two_i / d))
    return pe


def ln(x, w, p, eps):
    return F.layer_norm(x, (x.shape[-1],), w[p + ".weight"], w[p + ".bias"], eps)


def linear(x, w, p):  # nn.Linear layout [out, in]
    return F.linear(x, w[p + ".weight"], w[p + ".bias"])


def gpt2(w, c, input_ids):
    d, H, eps = c["d_model"], c["heads"], 1e-5
    T = input_ids.shape[1]
    x = w["wte.weight"][input_ids] + w["wpe.weight"][:T]
    for l in range(c["layers"]):
        p = f"h.{l}"
        h = ln(x, w, f"{p}.ln_1", eps)
        # Conv1D layout [in, out]: x @ W + b.
        qkv = h @ w[f"{p}.attn.c_attn.weight"] + w[f"{p}.attn.c_attn.bias"]
        q, k, v = (split_heads(t, H) for t in qkv.split(d, -1))
        a = merge_heads(attention(q, k, v, causal=True))
        x = x + a @ w[f"{p}.attn.c_proj.weight"] + w[f"{p}.attn.c_proj.bias"]
        h = ln(x, w, f"{p}.ln_2", eps)
        h = F.gelu(h @ w[f"{p}.mlp.c_fc.weight"] + w[f"{p}.mlp.c_fc.bias"],
                   approximate="tanh")
        x = x + h @ w[f"{p}.mlp.c_proj.weight"] + w[f"{p}.mlp.c_proj.bias"]
    x = ln(x, w, "ln_f", eps)
    return {"logits": x @ w["wte.weight"].T}


def bert(w, c, input_ids, token_type_ids, attention_mask):
    H, eps = c["heads"], 1e-12
    T = input_ids.shape[1]
    x = (w["embeddings.word_embeddings.weight"][input_ids]
         + w["embeddings.position_embeddings.weight"][:T]
         + w["embeddings.token_type_embeddings.weight"][token_type_ids])
    x = ln(x, w, "embeddings.LayerNorm", eps)
    for l in range(c["layers"]):
        p = f"encoder.layer.{l}"
        q, k, v = (split_heads(linear(x, w, f"{p}.attention.self.{n}"), H)
                   for n in ("query", "key", "value"))
        a = merge_heads(attention(q, k, v, key_keep=attention_mask))
        a = linear(a, w, f"{p}.attention.output.dense")
        x = ln(x + a, w, f"{p}.attention.output.LayerNorm", eps)
        h = F.gelu(linear(x, w, f"{p}.intermediate.dense"), approximate="none")
        h = linear(h, w, f"{p}.output.dense")
        x = ln(x + h, w, f"{p}.output.LayerNorm", eps)
    pooled = torch.tanh(linear(x[:, 0], w, "pooler.dense"))
    return {"hidden": x, "pooled": pooled}


def llama(w, c, input_ids):
    H, Hkv, eps, mode = c["heads"], c["kv_heads"], 1e-5, c["rope_mode"]
    x = w["model.embed_tokens.weight"][input_ids]
    d = x.shape[-1]
    for l in range(c["layers"]):
        p = f"model.layers.{l}"
        h = F.rms_norm(x, (d,), w[f"{p}.input_layernorm.weight"], eps)
        q = split_heads(h @ w[f"{p}.self_attn.q_proj.weight"].T, H)
        k = split_heads(h @ w[f"{p}.self_attn.k_proj.weight"].T, Hkv)
        v = split_heads(h @ w[f"{p}.self_attn.v_proj.weight"].T, Hkv)
        q, k = rope(q, mode, 10000.0), rope(k, mode, 10000.0)
        a = merge_heads(attention(q, k, v, causal=True))
        x = x + a @ w[f"{p}.self_attn.o_proj.weight"].T
        h = F.rms_norm(x, (d,), w[f"{p}.post_attention_layernorm.weight"], eps)
        g = F.silu(h @ w[f"{p}.mlp.gate_proj.weight"].T)
        u = h @ w[f"{p}.mlp.up_proj.weight"].T
        x = x + (g * u) @ w[f"{p}.mlp.down_proj.weight"].T
    x = F.rms_norm(x, (d,), w["model.norm.weight"], eps)
    return {"logits": x @ w["lm_head.weight"].T}


def tb_embed(w, ids, d):
    return w["embed.weight"][ids] * d ** 0.5 + sinusoidal(ids.shape[1], d)


def tb_mha(w, xq, xkv, keep, p, H, causal):
    q, k, v = (split_heads(linear(t, w, f"{p}.{n}_proj"), H)
               for t, n in ((xq, "q"), (xkv, "k"), (xkv, "v")))
    a = merge_heads(attention(q, k, v, causal=causal, key_keep=keep))
    return linear(a, w, f"{p}.out_proj")


def tb_ffn(w, x, p):
    return linear(F.relu(linear(x, w, f"{p}.fc1")), w, f"{p}.fc2")


def tb_encode(w, c, src_ids, src_mask):
    d, H, eps = c["d_model"], c["heads"], 1e-5
    x = tb_embed(w, src_ids, d)
    for l in range(c["encoder_layers"]):
        p = f"encoder.layers.{l}"
        x = ln(x + tb_mha(w, x, x, src_mask, f"{p}.self_attn", H, False), w,
               f"{p}.self_attn_layer_norm", eps)
        x = ln(x + tb_ffn(w, x, p), w, f"{p}.final_layer_norm", eps)
    return {"memory": x}


def tb_decode(w, c, tgt_ids, tgt_mask, memory, src_mask):
    d, H, eps = c["d_model"], c["heads"], 1e-5
    y = tb_embed(w, tgt_ids, d)
    for l in range(c["decoder_layers"]):
        p = f"decoder.layers.{l}"
        y = ln(y + tb_mha(w, y, y, tgt_mask, f"{p}.self_attn", H, True), w,
               f"{p}.self_attn_layer_norm", eps)
        y = ln(y + tb_mha(w, y, memory, src_mask, f"{p}.encoder_attn", H, False),
               w, f"{p}.encoder_attn_layer_norm", eps)
        y = ln(y + tb_ffn(w, y, p), w, f"{p}.final_layer_norm", eps)
    return {"logits": y @ w["embed.weight"].T}


def handwritten(w, c, input_ids, attention_mask):
    H, eps = c["heads"], 1e-5
    T = input_ids.shape[1]

    def dense(x, p):  # [in, out] layout
        return x @ w[f"{p}.weight"] + w[f"{p}.bias"]

    x = w["embed.tokens"][input_ids] + w["embed.positions"][:T]
    for l in range(c["layers"]):
        p = f"layers.{l}"
        h = ln(x, w, f"{p}.attn_norm", eps)
        q, k, v = (split_heads(dense(h, f"{p}.attn.{n}"), H)
                   for n in ("query", "key", "value"))
        a = merge_heads(attention(q, k, v, key_keep=attention_mask))
        x = x + dense(a, f"{p}.attn.output")
        h = F.relu(dense(ln(x, w, f"{p}.ffn_norm", eps), f"{p}.ffn.up"))
        x = x + dense(h, f"{p}.ffn.down")
    return {"hidden": ln(x, w, "final_norm", eps)}


#===------------------------------------------------------------------------===#
# The same models from transformers (cross-check of the plain ones)
#===------------------------------------------------------------------------===#


def load_hf(model, w):
    missing, unexpected = model.load_state_dict(
        {k: v for k, v in w.items()}, strict=False)
    params = {n for n, _ in model.named_parameters()}
    assert not unexpected, f"weights transformers does not know: {unexpected}"
    assert not set(missing) & params, f"parameters not loaded: {missing}"
    return model.eval()


def hf_gpt2(w, c):
    import transformers as tr
    cfg = tr.GPT2Config(vocab_size=c["vocab"], n_positions=c["n_ctx"],
                        n_embd=c["d_model"], n_layer=c["layers"], n_head=c["heads"],
                        activation_function="gelu_new", layer_norm_epsilon=1e-5,
                        bos_token_id=None, eos_token_id=None,
                        attn_implementation="eager")
    m = load_hf(tr.GPT2Model(cfg).double(), w)

    def run(input_ids):
        h = m(input_ids=input_ids).last_hidden_state
        return {"logits": h @ w["wte.weight"].T}
    return run


def hf_bert(w, c):
    import transformers as tr
    cfg = tr.BertConfig(vocab_size=c["vocab"], hidden_size=c["d_model"],
                        num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                        intermediate_size=c["d_ff"], hidden_act="gelu",
                        max_position_embeddings=c["max_positions"],
                        type_vocab_size=2, layer_norm_eps=1e-12,
                        attn_implementation="eager")
    m = load_hf(tr.BertModel(cfg).double(), w)

    def run(input_ids, token_type_ids, attention_mask):
        o = m(input_ids=input_ids, token_type_ids=token_type_ids,
              attention_mask=attention_mask)
        return {"hidden": o.last_hidden_state, "pooled": o.pooler_output}
    return run


def hf_llama(w, c):
    import transformers as tr
    cfg = tr.LlamaConfig(vocab_size=c["vocab"], hidden_size=c["d_model"],
                         intermediate_size=c["d_ff"], num_hidden_layers=c["layers"],
                         num_attention_heads=c["heads"],
                         num_key_value_heads=c["kv_heads"],
                         max_position_embeddings=c["n_ctx"], rms_norm_eps=1e-5,
                         rope_theta=10000.0, tie_word_embeddings=False,
                         attn_implementation="eager")
    m = load_hf(tr.LlamaForCausalLM(cfg).double(), w)

    def run(input_ids):
        return {"logits": m(input_ids=input_ids).logits}
    return run


#===------------------------------------------------------------------------===#
# Models, sizes and cases
#===------------------------------------------------------------------------===#

rng = np.random.default_rng(2024)


def ids(vocab, *shape):
    return rng.integers(0, vocab, size=shape).astype(np.int64)


def mask(lengths, T):
    """1/0 padding mask: row b keeps its first lengths[b] positions."""
    return (np.arange(T)[None, :] < np.array(lengths)[:, None]).astype(np.int64)


# name: (.tfm, hyper-parameters given with -D, the reference, the
#        transformers cross-check or None, entry points' cases)
MODELS = {}


def gpt2_cases(c):
    V = c["vocab"]
    return [
        ("b2s7", "forward", {"input_ids": ids(V, 2, 7)}, "batch 2, odd length"),
        ("b1s1", "forward", {"input_ids": ids(V, 1, 1)}, "one position"),
        ("b1s64", "forward", {"input_ids": ids(V, 1, 64)}, "the whole context"),
    ]


MODELS["gpt2"] = ("examples/gpt2.tfm",
                  dict(layers=2, d_model=64, heads=4, vocab=101, n_ctx=64),
                  {"forward": gpt2}, {"forward": hf_gpt2}, gpt2_cases)


def bert_cases(c):
    V = c["vocab"]
    return [
        ("b3s9", "forward", {"input_ids": ids(V, 3, 9),
                             "token_type_ids": (np.arange(9)[None, :] >= np.array([[5], [3], [9]])).astype(np.int64),
                             "attention_mask": mask([9, 6, 2], 9)},
         "batch 3 padded to 9, 6 and 2 tokens; token types 0 then 1"),
        ("b2s1", "forward", {"input_ids": ids(V, 2, 1),
                             "token_type_ids": np.array([[0], [1]], np.int64),
                             "attention_mask": np.ones((2, 1), np.int64)},
         "one position"),
    ]


MODELS["bert"] = ("examples/bert-base.tfm",
                  dict(layers=2, d_model=64, heads=4, d_ff=128, vocab=97,
                       max_positions=32),
                  {"forward": bert}, {"forward": hf_bert}, bert_cases)


def llama_cases(c):
    V = c["vocab"]
    return [
        ("b2s11", "forward", {"input_ids": ids(V, 2, 11)}, "batch 2, odd length"),
        ("b1s1", "forward", {"input_ids": ids(V, 1, 1)}, "one position"),
        ("b1s40", "forward", {"input_ids": ids(V, 1, 40)},
         "40 positions (angles up to 39 rad on the fastest pair)"),
    ]


LLAMA = dict(layers=2, d_model=128, heads=8, kv_heads=2, d_ff=176, vocab=103,
             n_ctx=64)
MODELS["llama"] = ("examples/llama.tfm", dict(LLAMA, rope_mode="rotate_half"),
                   {"forward": llama}, {"forward": hf_llama}, llama_cases)
MODELS["llama-adjacent"] = ("examples/llama.tfm",
                            dict(LLAMA, rope_mode="adjacent"),
                            {"forward": llama}, None, llama_cases)


def tb_cases(c):
    V = c["vocab"]
    src = {"src_ids": ids(V, 2, 9), "src_mask": mask([9, 4], 9)}
    src1 = {"src_ids": ids(V, 1, 3), "src_mask": mask([3], 3)}
    return [
        ("enc-b2s9", "encode", src, "batch 2 padded to 9 and 4 tokens"),
        ("enc-b1s3", "encode", src1, "3 tokens"),
        # The decoder reads the reference memory of the encoder cases.
        ("dec-b2t5s9", "decode", {"tgt_ids": ids(V, 2, 5), "tgt_mask": mask([5, 3], 5),
                                  "memory": "enc-b2s9", "src_mask": src["src_mask"]},
         "target 5 (padded to 5 and 3) over source 9 (padded to 9 and 4)"),
        ("dec-b1t12s3", "decode", {"tgt_ids": ids(V, 1, 12),
                                   "tgt_mask": np.ones((1, 12), np.int64),
                                   "memory": "enc-b1s3", "src_mask": src1["src_mask"]},
         "target 12 over source 3"),
    ]


MODELS["transformer-base"] = ("examples/transformer-base.tfm",
                              dict(encoder_layers=2, decoder_layers=2, d_model=64,
                                   heads=4, d_ff=128, vocab=89),
                              {"encode": tb_encode, "decode": tb_decode}, None,
                              tb_cases)


def hw_cases(c):
    V = c["vocab"]
    return [
        ("b3s13", "forward", {"input_ids": ids(V, 3, 13),
                              "attention_mask": mask([13, 8, 3], 13)},
         "batch 3 padded to 13, 8 and 3 tokens"),
        ("b1s5", "forward", {"input_ids": ids(V, 1, 5),
                             "attention_mask": np.ones((1, 5), np.int64)},
         "5 tokens, no padding"),
    ]


MODELS["handwritten-attention"] = ("examples/handwritten-attention.tfm",
                                   dict(vocab=97),
                                   {"forward": handwritten}, None, hw_cases)

# The constants the references need that the -D options do not set.
DEFAULTS = {"gpt2": {}, "bert": {}, "llama": {}, "llama-adjacent": {},
            "transformer-base": {}, "handwritten-attention": dict(heads=4, layers=2)}


#===------------------------------------------------------------------------===#
# Driver
#===------------------------------------------------------------------------===#


def rel_error(out, ref):
    """max_i |out_i - ref_i| / max(|ref_i|, rms(ref)): the tests' criterion."""
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    floor = np.sqrt(np.mean(ref * ref))
    return float((np.abs(out - ref) / np.maximum(np.abs(ref), floor)).max())


def weights_of(tmp, name, tfm, defines):
    so, st = os.path.join(tmp, name + ".so"), os.path.join(tmp, name + ".safetensors")
    bin_dir = os.path.join(build, "bin")
    subprocess.run([os.path.join(bin_dir, "tfc-compile"), os.path.join(root, tfm),
                    *defines, "-o", so], check=True)
    subprocess.run([os.path.join(bin_dir, "tfc-weights"), so, "-o", st], check=True,
                   stdout=subprocess.DEVNULL)
    from safetensors.numpy import load_file
    with open(st, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    w = {k: torch.from_numpy(v.astype(np.float64)) for k, v in load_file(st).items()}
    return w, sha


def main():
    shutil.rmtree(out_root, ignore_errors=True)
    os.makedirs(out_root)
    tmp = tempfile.mkdtemp(prefix="tfc-refs-")
    summary = {}
    for name, (tfm, hp, refs, hf, make_cases) in MODELS.items():
        defines = [f"-D{k}={v}" for k, v in hp.items()]
        w, sha = weights_of(tmp, name, tfm, defines)
        c = dict(DEFAULTS[name], **hp)
        hf_runs = {e: f(w, c) for e, f in hf.items()} if hf else {}
        d = os.path.join(out_root, name)
        manifest = {"tfm": tfm, "defines": [f"{k}={v}" for k, v in hp.items()],
                    "weights_sha256": sha, "cases": []}
        outputs_of = {}
        for case, entry, inputs, note in make_cases(c):
            cd = os.path.join(d, case)
            os.makedirs(cd)
            args = {}
            for k, v in inputs.items():
                if isinstance(v, str):  # an output of an earlier case (f32)
                    v = outputs_of[v][k]
                np.save(os.path.join(cd, k + ".npy"), v)
                args[k] = torch.from_numpy(v.astype(np.int64 if v.dtype.kind == "i"
                                                    else np.float64))
            with torch.no_grad():
                outs = refs[entry](w, c, **args)
                checks = {}
                if entry in hf_runs:
                    hf_outs = hf_runs[entry](**args)
                    checks = {k: rel_error(hf_outs[k], v) for k, v in outs.items()}
                    # transformers' LLaMA computes the rotary angles in f32
                    # (about 3e-7 here); the rest agrees to ~1e-15.
                    assert max(checks.values()) < 1e-6, (name, case, checks)
            saved = {}
            for k, v in outs.items():
                a = v.numpy().astype(np.float32)
                assert np.isfinite(a).all() and a.max() > a.min()
                np.save(os.path.join(cd, k + ".npy"), a)
                saved[k] = a
            outputs_of[case] = saved
            manifest["cases"].append({
                "name": case, "entry": entry, "note": note,
                "inputs": list(inputs), "outputs": list(outs),
                **({"transformers_vs_plain": {k: f"{v:.2g}" for k, v in checks.items()}}
                   if checks else {})})
            print(name, case, {k: v.shape for k, v in saved.items()},
                  f"transformers vs plain: {checks}" if checks else "")
        with open(os.path.join(d, "model.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        summary[name] = sha
    shutil.rmtree(tmp)
    with open(os.path.join(out_root, "versions.json"), "w") as f:
        json.dump(versions(), f, indent=1)
        f.write("\n")
    print(versions())


if __name__ == "__main__":
    main()
