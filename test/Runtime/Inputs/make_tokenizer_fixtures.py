#!/usr/bin/env python3
"""Writes the small tokenizer.json fixtures of the tokenizer tests.

    make_tokenizer_fixtures.py OUT_DIR      (needs the `tokenizers` package)

tokenizer_gpt2_pairs.json: a byte-level BPE trained on a fixed text, saved
with merges as ["a", "b"] pairs, the Llama-3 pre-tokenizer (a Split regex
with (?i:...) contractions, then ByteLevel without its own regex),
ignore_merges, a BOS template, and added tokens that exercise lstrip, rstrip,
single_word and normalized.

tokenizer_sentencepiece_bpe.json and tokenizer_metaspace_bpe.json: BPEs in
the SentencePiece style of Llama-2 and Mistral files: "▁" for spaces
(a Prepend and Replace normalizer, or the Metaspace pre-tokenizer with
prepend_scheme "first"), byte_fallback to <0xAB> tokens, fuse_unk, a BOS
template and the Replace/ByteFallback/Fuse/Strip decoder.

tokenizer_unigram.json and tokenizer_unigram_bytes.json: SentencePiece
unigram models (T5's, ALBERT's and XLNet's kind) trained on the same text,
NFKC + Metaspace ("▁" for spaces), "<unk>" for what no piece covers (fused
when consecutive), and in the second byte_fallback to <0xAB> tokens.

Deterministic: the same files on every run.
"""
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

TEXT = """The quick brown fox jumps over the lazy dog. It's 2024 and we've
been tokenizing text for years; don't you think they'll stop? I'm not sure.
def hello(name):\n    return f"Hello, {name}!"\n
Numbers: 1234567890, 3.14159, 2,718,281. Café, naïve, résumé, Zürich.
東京は日本の首都です。 Привет, мир! مرحبا بالعالم 🤗🚀 emoji!
"""


def sentencepiece_bpe(out_dir, name, metaspace):
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True,
                               byte_fallback=True))
    if metaspace:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="\u2581", prepend_scheme="first", split=False)
    else:
        tok.normalizer = normalizers.Sequence([
            normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    trainer = trainers.BpeTrainer(
        vocab_size=400, min_frequency=1, show_progress=False,
        special_tokens=["<unk>", "<s>", "</s>"])
    tok.train_from_iterator([TEXT] * 4, trainer=trainer)
    tok.decoder = decoders.Sequence([
        decoders.Replace("\u2581", " "), decoders.ByteFallback(),
        decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1",
        special_tokens=[("<s>", tok.token_to_id("<s>"))])
    data = json.loads(tok.to_str())
    # The 256 byte tokens of SentencePiece vocabularies, after the others.
    vocab = data["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    data["model"]["merges"] = [m.split(" ", 1) if isinstance(m, str) else m
                               for m in data["model"]["merges"]]
    path = os.path.join(out_dir, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    Tokenizer.from_file(path)


def sentencepiece_unigram(out_dir, name, byte_fallback):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="\u2581", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(
        vocab_size=300, show_progress=False, unk_token="<unk>",
        special_tokens=["<pad>", "</s>", "<unk>"], max_piece_length=8)
    # Without CJK and emoji, so that the model has unknown characters.
    text = "\n".join(l for l in TEXT.splitlines() if l.isascii())
    tok.train_from_iterator([text] * 4, trainer=trainer)
    tok.decoder = decoders.Metaspace(replacement="\u2581",
                                     prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B:1 </s>",
        special_tokens=[("</s>", tok.token_to_id("</s>"))])
    data = json.loads(tok.to_str())
    if byte_fallback:
        data["model"]["byte_fallback"] = True
        pieces = {p for p, _ in data["model"]["vocab"]}
        # Byte pieces score low, as the others are preferred to them.
        data["model"]["vocab"] += [[f"<0x{b:02X}>", -100.0] for b in range(256)
                                   if f"<0x{b:02X}>" not in pieces]
        data["decoder"] = {"type": "Sequence", "decoders": [
            data["decoder"], {"type": "ByteFallback"}, {"type": "Fuse"}]}
    path = os.path.join(out_dir, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    Tokenizer.from_file(path)


def main(out_dir):
    sentencepiece_unigram(out_dir, "tokenizer_unigram.json", False)
    sentencepiece_unigram(out_dir, "tokenizer_unigram_bytes.json", True)
    sentencepiece_bpe(out_dir, "tokenizer_sentencepiece_bpe.json", False)
    sentencepiece_bpe(out_dir, "tokenizer_metaspace_bpe.json", True)
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, min_frequency=1, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"])
    tok.train_from_iterator([TEXT] * 4, trainer=trainer)
    tok.add_special_tokens([
        AddedToken("<|eot|>", special=True, normalized=False, lstrip=True,
                   rstrip=True),
    ])
    tok.add_tokens([
        AddedToken("hello world", single_word=True, normalized=True),
        AddedToken("Ｍａｘ", normalized=True),
        AddedToken("<tool>", special=False, normalized=False, rstrip=True),
    ])
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
        special_tokens=[("<|begin_of_text|>",
                         tok.token_to_id("<|begin_of_text|>"))])
    data = json.loads(tok.to_str())
    # Pairs, as recent versions of `tokenizers` write them.
    data["model"]["merges"] = [m.split(" ", 1) if isinstance(m, str) else m
                               for m in data["model"]["merges"]]
    path = os.path.join(out_dir, "tokenizer_gpt2_pairs.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    Tokenizer.from_file(path)  # loads back


if __name__ == "__main__":
    main(sys.argv[1])
