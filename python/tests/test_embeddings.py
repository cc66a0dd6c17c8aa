"""all-MiniLM-L6-v2 through the package vs sentence-transformers' embeddings
(test/Import/Inputs/minilm, made by scripts/make-references.py)."""
import json
import os

import numpy as np
import pytest

from conftest import INPUTS

REF = os.path.join(INPUTS, "minilm")
# Per element, relative to max(|ref|, rms(ref)) as test/Import/Inputs/
# tolerance.py: the bound minilm.test uses (measured there 4.3e-6).
TOL = 5e-5


def relative_errors(out, ref):
    out = out.astype(np.float64)
    ref = ref.astype(np.float64)
    rms = np.sqrt((ref ** 2).mean(axis=-1, keepdims=True))
    return np.abs(out - ref) / np.maximum(np.abs(ref), rms)


def test_embed_matches_sentence_transformers(minilm):
    sentences = json.load(open(os.path.join(REF, "sentences.json"), encoding="utf-8"))
    ref = np.load(os.path.join(REF, "sentence_embedding.npy"))
    emb = minilm.embed(sentences)
    assert emb.shape == ref.shape and emb.dtype == np.float32
    assert np.isfinite(emb).all()
    assert relative_errors(emb, ref).max() <= TOL
    cos = (emb * ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.99999
    # Batches of any size compute the same rows.
    small = minilm.embed(sentences, batch_size=5)
    assert relative_errors(small, ref).max() <= TOL
    one = minilm.embed(sentences[3])
    assert one.shape == ref.shape[1:]
    assert relative_errors(one[None], ref[3:4]).max() <= TOL


def test_tokenizer_ids_match_transformers(minilm):
    """The padded batch of ids, type ids and mask transformers made."""
    sentences = json.load(open(os.path.join(REF, "sentences.json"), encoding="utf-8"))
    ids = np.load(os.path.join(REF, "input_ids.npy"))
    mask = np.load(os.path.join(REF, "attention_mask.npy"))
    types = np.load(os.path.join(REF, "token_type_ids.npy"))
    got = minilm.tokenizer(sentences, padding=True, return_tensors="np")
    np.testing.assert_array_equal(got["input_ids"], ids)
    np.testing.assert_array_equal(got["attention_mask"], mask)
    np.testing.assert_array_equal(got["token_type_ids"], types)
    # One text: lists without padding, as transformers returns them.
    hello = minilm.tokenizer("Hello world")
    assert hello == {"input_ids": [101, 7592, 2088, 102], "token_type_ids": [0] * 4,
                     "attention_mask": [1] * 4}
    assert minilm.tokenizer.decode(hello["input_ids"], skip_special_tokens=True) == "hello world"
    cut = minilm.tokenizer("one two three four five", truncation=True, max_length=4)
    assert cut["input_ids"][0] == 101 and cut["input_ids"][-1] == 102 and len(cut["input_ids"]) == 4


def test_run_zero_copy_and_dlpack(minilm):
    """Outputs are the runtime's buffers (no copy) or the caller's (out=)."""
    batch = minilm.tokenizer(["Hello world", "zero copy"], padding=True, return_tensors="np")
    out = minilm.run("encode", **batch)
    emb = out["sentence_embedding"]
    assert not emb.flags.owndata  # owned by the runtime's buffer, not copied
    assert emb.ctypes.data % 64 == 0
    into = {"sentence_embedding": np.empty_like(emb)}
    again = minilm.run("encode", out=into, **batch)
    assert again["sentence_embedding"] is into["sentence_embedding"]
    assert again["sentence_embedding"].ctypes.data == into["sentence_embedding"].ctypes.data
    np.testing.assert_array_equal(again["sentence_embedding"], emb)
    # An out= array that cannot be written in place is refused, not copied.
    wide = np.empty((emb.shape[0], emb.shape[1] * 2), np.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        minilm.run("encode", out={"sentence_embedding": wide[:, ::2]}, **batch)
    with pytest.raises(ValueError, match="C-contiguous"):
        minilm.run("encode", out={"sentence_embedding": np.empty(emb.shape, np.float64)}, **batch)


def test_embed_truncates_as_sentence_transformers(minilm):
    """Texts past max_seq_length (256 in sentence_bert_config.json) are cut
    there, as sentence-transformers cuts them, not at the 512 positions."""
    long = " ".join(["word"] * 600)
    cut = minilm.tokenizer(long, truncation=True, max_length=256, return_tensors="np")
    direct = minilm.run("encode", **cut)["sentence_embedding"][0]
    np.testing.assert_allclose(minilm.embed(long), direct, rtol=0, atol=1e-6)
    assert minilm.tokenizer([], padding=True)["input_ids"] == []
