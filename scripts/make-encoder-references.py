#!/usr/bin/env python3
"""Makes the tiny encoder checkpoints of test/Import/encoders.test and their
references, so that the default test command covers the encoder families of
the full-size tier (test/Import/large-embedders.test) without downloads:

  test/Import/Inputs/hf/mpnet-f32/   a random-weight MPNetModel written by
      transformers' save_pretrained, with sentence-transformers' modules.json,
      1_Pooling (mean) and Normalize; reference: transformers' hidden states
      and pooler output on a padded batch of two, and the sentence embedding
      computed from them as sentence-transformers' Pooling + Normalize do.
  test/Import/Inputs/hf/bert-dense/   a random-weight BertModel with a small
      WordPiece tokenizer.json, saved by sentence-transformers with mean
      pooling, a Dense module (64 -> 48, tanh; 2_Dense/model.safetensors) and
      Normalize; reference: SentenceTransformer.encode of SENTENCES.
  test/Import/Inputs/gguf-archs/{nomic-bert,bert}.gguf   random-weight
      nomic-bert and bert models written by gguf's GGUFWriter (F32, fused
      QKV or q/k/v with biases, llama.cpp's tensor names and keys) with a small WordPiece vocabulary in llama.cpp's form
      (word-initial tokens behind U+2581); reference: llama.cpp's own ids
      and normalised mean-pooled embeddings of SENTENCES (llama-cpp-python).

    /tmp/ref/bin/python scripts/make-encoder-references.py

(the venv of scripts/make-references.py plus llama-cpp-python 0.3.36).
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bench"))
import llamacpp_compat  # noqa: E402,F401
import gguf  # noqa: E402
import llama_cpp  # noqa: E402
import transformers  # noqa: E402

inputs = os.path.join(root, "test", "Import", "Inputs")


def save(d, name, a):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(a))


def mpnet():
    config = transformers.MPNetConfig(
        vocab_size=128, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=96,
        max_position_embeddings=40, relative_attention_num_buckets=32,
        pad_token_id=1, layer_norm_eps=1e-5)
    torch.manual_seed(0)
    model = transformers.MPNetModel(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.2)
    d = os.path.join(inputs, "hf", "mpnet-f32")
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d, safe_serialization=True)
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "",
                    "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling",
                    "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize",
                    "type": "sentence_transformers.models.Normalize"}], f, indent=1)
    os.makedirs(os.path.join(d, "1_Pooling"))
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 64, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f, indent=1)
    ref = transformers.MPNetModel.from_pretrained(d, torch_dtype=torch.float32).eval()
    # 38 tokens: distances past the exact buckets (8 per direction) into the
    # logarithmic ones. The second row is padded: masked out, but its ids
    # are not the pad id, whose position transformers would skip
    # (tfc numbers positions by index; docs/models.md).
    rng = np.random.default_rng(3)
    ids = torch.tensor(rng.integers(2, 128, size=(2, 38)), dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 25:] = 0
    with torch.no_grad():
        o = ref(input_ids=ids, attention_mask=mask)
    hidden = o.last_hidden_state
    m = mask.unsqueeze(-1).float()
    sentence = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    sentence = torch.nn.functional.normalize(sentence, p=2, dim=1)
    r = os.path.join(d, "reference")
    save(r, "input_ids", ids.numpy().astype(np.int64))
    save(r, "attention_mask", mask.numpy().astype(np.int64))
    save(r, "hidden", hidden.numpy().astype(np.float32))
    save(r, "pooled", o.pooler_output.numpy().astype(np.float32))
    save(r, "sentence_embedding", sentence.numpy().astype(np.float32))
    print("mpnet", tuple(ids.shape))


WORDS = ["the", "a", "quick", "brown", "fox", "jump", "over", "lazy", "dog",
         "cafe", "au", "lait", "resume", "naive", "water", "boil", "at",
         "sea", "level", "search", "query", "document", "what", "is", "of"]
PIECES = ["s", "ed", "ing", "er", "y", "e", "o", "i"]
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Café au lait, naïve résumé!",
    "search_query: what is the boiling level of water at sea level?",
    "The dog jumped, the fox jumping: QUICK, lazy, brown.",
    "search_document: water boils at sea level; 東京 😀",
]


def gguf_encoder(arch):
    """A tiny `arch` ("nomic-bert" or "bert") .gguf as llama.cpp's converter
    lays them out, and llama.cpp's ids and embeddings for SENTENCES."""
    nomic = arch == "nomic-bert"
    d, heads, layers, ff, ctx = 64, 4, 2, 96, 128
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("0123456789")
    punct = list(".,!?;:'\"-_()")
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    types = [3, 2, 3, 3, 3]
    for w in ["\u2581" + w for w in WORDS + letters + punct] + PIECES + letters:
        if w not in tokens:
            tokens.append(w)
            types.append(1)
    vocab = len(tokens)
    rng = np.random.default_rng(4)

    def rand(*shape, scale=0.2):
        return rng.normal(0.0, scale, size=shape).astype(np.float32)

    path = os.path.join(inputs, "gguf-archs", arch + ".gguf")
    w = gguf.GGUFWriter(path, arch)
    w.add_name("tiny " + arch)
    w.add_block_count(layers)
    w.add_context_length(ctx)
    w.add_embedding_length(d)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_layer_norm_eps(1e-12)
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    if nomic:
        w.add_rope_freq_base(1000.0)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("bert")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_type_count(2)
    w.add_bos_token_id(2)
    w.add_sep_token_id(3)
    w.add_unk_token_id(1)
    w.add_pad_token_id(0)
    w.add_mask_token_id(4)
    w.add_tensor("token_embd.weight", rand(vocab, d, scale=0.5))
    w.add_tensor("token_types.weight", rand(2, d))
    if not nomic:
        w.add_tensor("position_embd.weight", rand(ctx, d))
    w.add_tensor("token_embd_norm.weight", 1 + rand(d))
    w.add_tensor("token_embd_norm.bias", rand(d))
    for l in range(layers):
        p = f"blk.{l}."
        if nomic:  # fused, no biases, SwiGLU
            w.add_tensor(p + "attn_qkv.weight", rand(3 * d, d))
            w.add_tensor(p + "attn_output.weight", rand(d, d))
            w.add_tensor(p + "ffn_up.weight", rand(ff, d))
            w.add_tensor(p + "ffn_gate.weight", rand(ff, d))
            w.add_tensor(p + "ffn_down.weight", rand(d, ff))
        else:  # q, k, v and every linear layer with a bias, GELU
            for n, shape in [("attn_q", (d, d)), ("attn_k", (d, d)), ("attn_v", (d, d)),
                             ("attn_output", (d, d)), ("ffn_up", (ff, d)),
                             ("ffn_down", (d, ff))]:
                w.add_tensor(p + n + ".weight", rand(*shape))
                w.add_tensor(p + n + ".bias", rand(shape[0]))
        w.add_tensor(p + "attn_output_norm.weight", 1 + rand(d))
        w.add_tensor(p + "attn_output_norm.bias", rand(d))
        w.add_tensor(p + "layer_output_norm.weight", 1 + rand(d))
        w.add_tensor(p + "layer_output_norm.bias", rand(d))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    out = os.path.join(inputs, "gguf-archs", arch)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    llm = llama_cpp.Llama(model_path=path, embedding=True, n_ctx=ctx,
                          n_threads=2, verbose=False)
    with open(os.path.join(out, "sentences.txt"), "w", encoding="utf-8") as f:
        for s in SENTENCES:
            f.write(s + "\n")
    with open(os.path.join(out, "tokens.jsonl"), "w", encoding="utf-8") as f:
        for s in SENTENCES:
            f.write(json.dumps({"text": s, "ids": llm.tokenize(
                s.encode("utf-8"), add_bos=True, special=True)},
                ensure_ascii=False) + "\n")
    np.save(os.path.join(out, "embeddings.npy"),
            np.array([llm.embed(s, normalize=True) for s in SENTENCES],
                     dtype=np.float32))
    print(arch, vocab, "tokens")


def bert_dense():
    import sentence_transformers as stm
    import sentence_transformers.models  # noqa: F401 (stm.models)
    from tokenizers import Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers, processors
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + \
        ["##" + p for p in PIECES] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + \
        ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)] + list(".,!?;:'\"-_()")
    vocab = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.decoder = decoders.WordPiece()
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=96, max_position_embeddings=64)
    torch.manual_seed(0)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.2)
    d = os.path.join(inputs, "hf", "bert-dense")
    shutil.rmtree(d, ignore_errors=True)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        transformers.PreTrainedTokenizerFast(
            tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
            cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
            model_max_length=64).save_pretrained(tmp)
        word = stm.models.Transformer(tmp, max_seq_length=64)
        pool = stm.models.Pooling(64, pooling_mode="mean")
        dense = stm.models.Dense(64, 48, activation_function=torch.nn.Tanh())
        with torch.no_grad():
            for p in dense.parameters():
                p.normal_(0.0, 0.2)
        st = stm.SentenceTransformer(modules=[word, pool, dense, stm.models.Normalize()],
                                     device="cpu")
        st.save(d, safe_serialization=True)
    os.remove(os.path.join(d, "README.md"))  # the model card
    st = stm.SentenceTransformer(d, device="cpu")
    r = os.path.join(d, "reference")
    os.makedirs(r)
    with open(os.path.join(r, "sentences.txt"), "w", encoding="utf-8") as f:
        for s in SENTENCES:
            f.write(s + "\n")
    np.save(os.path.join(r, "embeddings.npy"),
            st.encode(SENTENCES, batch_size=8).astype(np.float32))
    print("bert-dense", sorted(os.listdir(d)))


mpnet()
bert_dense()
gguf_encoder("nomic-bert")
gguf_encoder("bert")
with open(os.path.join(inputs, "gguf-archs", "versions-encoders.json"), "w") as f:
    import sentence_transformers
    json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
               "sentence-transformers": sentence_transformers.__version__,
               "gguf": getattr(gguf, "__version__", "?"),
               "llama-cpp-python": llama_cpp.__version__}, f, indent=1)
    f.write("\n")
