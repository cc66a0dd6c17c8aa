#!/usr/bin/env python3
"""Conformance of tfc's tokenizers with Hugging Face `tokenizers`.

    tokenizer_conformance.py --tool tfc-tokenize --minilm DIR --gguf FILE
                             --gpt2-style FILE --tmp DIR

Generates a deterministic set of varied strings (prose, code, URLs, numbers
and digit runs, white space runs with tabs, newlines and CRLF, accents and
combining marks, CJK, emoji with ZWJ sequences, flags and modifiers,
right-to-left text, control characters, look-alikes of special tokens, very
long words, the empty string) plus a sweep of every character of the stable
Unicode repertoire (assigned in Unicode 3.2 and of the same general category
since, so that every library agrees on its properties), and compares, string by string:

  - all-MiniLM-L6-v2's WordPiece tokenizer.json: ids and type ids without
    padding and truncation, then ids and attention masks of the batch with
    the file's truncation (128) and fixed padding (128);
  - SmolLM2's byte-level BPE from the GGUF metadata: a reference built with
    `tokenizers` from the GGUF (BPE(vocab, merges), Sequence[Digits(
    individual_digits=True), ByteLevel(add_prefix_space=False)], ByteLevel
    decoder, control tokens as special added tokens) against tfc's fromGguf
    (the .gguf given to tfc-tokenize) and against tfc's tokenizer.json path
    on the reference written as tokenizer.json;
  - a small GPT-2 style tokenizer.json with ["a", "b"] merges and the
    Llama-3 Split regex, and two small SentencePiece-style BPEs (byte
    fallback, Prepend/Replace or Metaspace, the Strip decoder) from
    make_tokenizer_fixtures.py;

and decode(ids) with and without skip_special_tokens, and the incremental
decoder against decode. The other assigned characters (newer than Unicode
3.2, or recategorised since) are swept as well and reported separately, not
failing: Hugging Face's character tables (unicode_categories,
unicode-normalization-alignments, Oniguruma, Rust's std) are of other Unicode
versions than utf8proc's (15.0) and PCRE2's, and no table of ours may fix
that.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import unicodedata

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

SEED = 20240601


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------

def stable(cp):
    """Assigned in Unicode 3.2 with the same general category since (Python's
    unicodedata), and not a surrogate: the characters whose properties all
    the libraries' tables agree on."""
    if 0xD800 <= cp <= 0xDFFF:
        return False
    old = unicodedata.ucd_3_2_0.category(chr(cp))
    return old != "Cn" and old == unicodedata.category(chr(cp))


WORDS = ("the quick brown fox jumps over lazy dog tokenizer transformer "
         "compiler runtime model attention embedding layer norm softmax "
         "hello world python rust c++ gpu cpu memory batch sequence").split()
CODE = [
    'def f(x):\n    return x**2 + 1  # square\n',
    'for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }',
    '{"key": [1, 2.5, null, true], "nested": {"a": "b\\n"}}',
    '#include <vector>\nint main() { std::vector<int> v{1,2,3}; }\n',
    'SELECT id, name FROM users WHERE age >= 18 ORDER BY name;',
    'if [[ -f "$HOME/.bashrc" ]]; then source ~/.bashrc; fi',
    '    \tindented\twith\ttabs\n\t\t\tand more',
    'x = [i for i in range(10) if i % 2 == 0]  # even numbers',
    '<div class="main"><a href="/path?q=1&r=2">link</a></div>',
    'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }',
    '$ ./configure --prefix=/usr && make -j8 && sudo make install',
    '@decorator\nclass Foo(Base):\n    """Doc."""\n    pass\n',
]
URLS = ["https://example.com/path/to/page?query=1&lang=en#section",
        "http://user:pass@host.example.org:8080/a/b.c",
        "ftp://files.example.net/pub/archive.tar.gz",
        "mailto:someone@example.com", "www.example.co.uk/index.html",
        "file:///home/user/Documents/report%20final.pdf",
        "user.name+tag@sub.domain.example"]
SPECIALS = ["[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]", "[cls]", "[CLS",
            "CLS]", "[[CLS]]", "[CLS][SEP]", "<|im_start|>", "<|im_end|>",
            "<|endoftext|>", "<|im_start", "<|im_", "<|IM_START|>",
            "<|im_start|><|im_end|>", "<repo_name>", "<file_sep>",
            "<jupyter_code>", "<|begin_of_text|>", "<|eot|>", "<tool>",
            "hello world", "Ｍａｘ", "<|end_of_text|>", "<s>", "</s>"]
EMOJI = ["🤗", "🚀", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "1️⃣", "❤️",
         "🧑🏿‍💻", "👩‍❤️‍💋‍👨", "🫠", "🐈‍⬛", "✌🏻", "☕", "©️", "🔥🔥🔥"]
SCRIPTS = [
    "東京は日本の首都です。", "我爱自然语言处理，今天天气很好！",
    "한국어 텍스트 처리는 재미있다.", "カタカナとひらがなのテスト",
    "Привет, мир! Как дела?", "Ελληνικά: ΣΊΣΥΦΟΣ σίσυφος ς",
    "مرحبا بالعالم، كيف حالك؟", "שלום עולם! מה שלומך?",
    "हिन्दी पाठ का परीक्षण", "ภาษาไทยไม่มีช่องว่าง", "ქართული ენა",
    "Հայերեն լեզու", "Türkçe İstanbul ıı İI", "Straße GROSS ß ẞ",
    "Ǆemal ǅemal ǆemal", "Ωμέγα ΑΒΓ", "ﬁnance ﬂoat ﬀ", "ＡＢＣ１２３！？",
    "x² + y³ = z⁴, ½ ¼ ¾", "Ⅻ ⅻ ① ② ⑩", "𝐀𝐁𝐂 𝒳𝒴 𝔄𝔅", "café résumé naïve",
    "e\u0301 a\u0300 o\u0308 n\u0303 c\u0327", "Z\u0335\u0321a\u0336l\u0337g\u0338o\u0334",
    "\u1100\u1161\u11a8 \uac00", "A\u030a \u212b \u00c5",
]
CONTROLS = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1f",
            "\x7f", "\x80", "\x85", "\x9f", "\u200b", "\u200c", "\u200d",
            "\u200e", "\u200f", "\u202e", "\u2028", "\u2029", "\ufeff",
            "\ufffd", "\u00a0", "\u3000", "\u2009", "\u00ad", "\ue000"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\n\n", " \n ",
          "\t\t", "    ", "\u00a0", "\u3000", " \t \n", "\n   \n"]


def random_number(rng):
    k = rng.randrange(6)
    if k == 0:
        return str(rng.randrange(10 ** rng.randrange(1, 40)))
    if k == 1:
        return f"{rng.random() * 10 ** rng.randrange(6):.{rng.randrange(1, 8)}f}"
    if k == 2:
        return f"{rng.randrange(10**9):,}"
    if k == 3:
        return hex(rng.randrange(2**48))
    if k == 4:
        return f"{rng.randrange(1900, 2100)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    return f"+1 ({rng.randrange(100, 999)}) {rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}"


def random_word(rng):
    w = rng.choice(WORDS)
    k = rng.randrange(5)
    if k == 0:
        return w.upper()
    if k == 1:
        return w.capitalize()
    if k == 2:
        return w + rng.choice(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d",
                               "'S", "'LL", "n't", "’s"])
    return w


def random_stable_char(rng, pool):
    return chr(rng.choice(pool))


def piece(rng, pool):
    k = rng.randrange(14)
    if k == 0:
        return rng.choice(CODE)
    if k == 1:
        return rng.choice(URLS)
    if k == 2:
        return random_number(rng)
    if k == 3:
        return rng.choice(SPACES)
    if k == 4:
        return rng.choice(SPECIALS)
    if k == 5:
        return rng.choice(EMOJI)
    if k == 6:
        return rng.choice(SCRIPTS)
    if k == 7:
        return rng.choice(CONTROLS)
    if k == 8:
        return "".join(random_stable_char(rng, pool)
                       for _ in range(rng.randrange(1, 8)))
    if k == 9:
        base = rng.choice("aeiouAEIOUnNcC")
        marks = "".join(chr(rng.randrange(0x300, 0x370))
                        for _ in range(rng.randrange(1, 4)))
        return base + marks
    if k == 10:
        return rng.choice(string_punct)
    return random_word(rng)


string_punct = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + [
    "...", "--", "—", "–", "«»", "“quoted”", "‘single’", "¿", "¡", "§", "¶",
    "†", "•", "…", "‰", "€", "£", "¥", "₹", "°", "±", "×", "÷", "→", "∑", "√"]


def generate(count):
    rng = random.Random(SEED)
    pool = [cp for cp in range(0x20, 0x30000) if stable(cp)
            and unicodedata.ucd_3_2_0.category(chr(cp)) not in ("Cs",)]
    out = ["", " ", "\n", "\r\n", "\t", "  \t\n  \r\n ", "a", "Hello, world!",
           "[CLS]", "[CLS] [SEP]", "<|im_start|>user\nHi!<|im_end|>\n",
           "<|im_start|>assistant\n", "don't DON'T I'M we'LL", "0" * 64,
           "1234567890" * 5, "a" * 100, "a" * 101, "b" * 5000,
           "supercalifragilisticexpialidocious" * 8,
           "x" + "\u0301" * 50, "🤗" * 40, "\u00e9" * 300, "e\u0301" * 200,
           "hello world", "say hello world!", "hellohello world", "Ｍａｘ",
           " <|eot|>  next", "<tool>   call", "a<|eot|>b"]
    while len(out) < count:
        n = rng.randrange(1, 12)
        parts = []
        for _ in range(n):
            parts.append(piece(rng, pool))
            if rng.random() < 0.6:
                parts.append(rng.choice([" ", " ", " ", "", "\n", "  "]))
        out.append("".join(parts))
    return out


def sweep(predicate, rng):
    """Every code point satisfying `predicate`, in strings of about 40
    characters with spaces between groups of one to three."""
    cps = [cp for cp in range(0x110000) if predicate(cp)]
    out, cur, group = [], [], 0
    for cp in cps:
        cur.append(chr(cp))
        group += 1
        if group >= rng.randrange(1, 4):
            cur.append(" ")
            group = 0
        if len(cur) >= 40:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


# --------------------------------------------------------------------------
# Running both sides
# --------------------------------------------------------------------------

def run_tfc(tool, tokenizer, texts, path, extra=()):
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps(t) + "\n")
    cmd = [tool, tokenizer, "--jsonl", path, "--json", "--roundtrip", *extra]
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0:
        sys.exit("tfc-tokenize failed: " + r.stderr.decode(errors="replace"))
    return json.loads(r.stdout)["encodings"]


def show(s):
    return json.dumps(s if len(s) < 120 else s[:120] + "...")


class Report:
    def __init__(self, name):
        self.name = name
        self.failures = []
        self.checked = 0

    def fail(self, what, text, expected, got):
        self.failures.append((what, text, expected, got))

    def done(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} mismatches")
            for what, text, expected, got in self.failures[:10]:
                print(f"  {what} on {show(text)}:\n    hf:  {expected}\n"
                      f"    tfc: {got}")
        return len(self.failures)


def compare(name, hf, tfc_out, texts, decode=True, type_ids=True,
            masks=False, add_special_tokens=True):
    rep = Report(name)
    hf_enc = hf.encode_batch(texts, add_special_tokens=add_special_tokens)
    rt = 0
    for text, h, t in zip(texts, hf_enc, tfc_out):
        rep.checked += 1
        if h.ids != t["ids"]:
            rep.fail("ids", text, h.ids[:40], t["ids"][:40])
            continue
        if type_ids and h.type_ids != t["type_ids"]:
            rep.fail("type_ids", text, h.type_ids, t["type_ids"])
        if masks and h.attention_mask != t["attention_mask"]:
            rep.fail("attention_mask", text, h.attention_mask,
                     t["attention_mask"])
        if decode:
            d = hf.decode(h.ids, skip_special_tokens=False)
            ds = hf.decode(h.ids, skip_special_tokens=True)
            if d != t["decoded"]:
                rep.fail("decode", text, show(d), show(t["decoded"]))
            if ds != t["decoded_skip_special"]:
                rep.fail("decode(skip_special_tokens)", text, show(ds),
                         show(t["decoded_skip_special"]))
            rt += ds == text
    extra = (f", decode(skip_special_tokens) == text for {rt}"
             if decode else "")
    print(f"{name}: {rep.checked} strings, "
          f"{rep.checked - len(rep.failures)} exact{extra}")
    return rep.done()


def check_stream(tool, tokenizer, hf, texts, report_name):
    bad = 0
    for text in texts:
        ids = hf.encode(text).ids
        r = subprocess.run([tool, tokenizer, "--ids",
                            ",".join(map(str, ids)), "--stream", "--json"],
                           capture_output=True)
        if r.returncode:
            print(f"{report_name}: tfc-tokenize --stream failed: "
                  + r.stderr.decode(errors="replace"))
            bad += 1
            continue
        out = json.loads(r.stdout)
        pieces = out["stream"]
        full = hf.decode(ids, skip_special_tokens=False)
        if "".join(pieces) != full:
            print(f"{report_name}: stream {pieces!r} != decode {full!r}")
            bad += 1
        # No piece but the last may end inside a character (U+FFFD at the
        # end of a piece means bytes were emitted too early).
        if any(p.endswith("\ufffd") for p in pieces[:-1]) and \
                not full.count("\ufffd"):
            print(f"{report_name}: a stream piece splits a character: "
                  f"{pieces!r}")
            bad += 1
    print(f"{report_name}: {len(texts)} streams, {len(texts) - bad} exact")
    return bad


def compare_pairs(tool, tokenizers, texts):
    """Pairs of sequences: ids and type ids of the pair template."""
    bad = 0
    pairs = list(zip(texts[0::2], texts[1::2]))
    for name, path, hf in tokenizers:
        for a, b in pairs:
            r = subprocess.run([tool, path, "--text", a, "--pair", b, "--json",
                                "--no-padding", "--no-truncation"],
                               capture_output=True)
            if r.returncode:
                sys.exit("tfc-tokenize failed: " +
                         r.stderr.decode(errors="replace"))
            t = json.loads(r.stdout)["encodings"][0]
            h = hf.encode(a, b)
            if h.ids != t["ids"] or h.type_ids != t["type_ids"]:
                print(f"{name} pair mismatch on {show(a)}, {show(b)}:\n"
                      f"    hf:  {h.ids[:30]} {h.type_ids[:30]}\n"
                      f"    tfc: {t['ids'][:30]} {t['type_ids'][:30]}")
                bad += 1
        print(f"{name} (pairs): {len(pairs)} pairs, {len(pairs) - bad} exact")
    return bad


# --------------------------------------------------------------------------
# The SmolLM2 reference from the GGUF
# --------------------------------------------------------------------------

def gguf_reference(path):
    from gguf import GGUFReader
    r = GGUFReader(path)

    def field(name):
        return r.fields[name].contents()

    assert field("tokenizer.ggml.model") == "gpt2"
    assert field("tokenizer.ggml.pre") == "smollm"
    tokens = field("tokenizer.ggml.tokens")
    types = field("tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field("tokenizer.ggml.merges")]
    vocab = {t: i for i, t in enumerate(tokens)}
    assert len(vocab) == len(tokens), "duplicate tokens in the GGUF"
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(tokens[i], special=True,
                                       normalized=False)
                            for i, t in enumerate(types) if t == 3])
    return tok, len(tokens), len(merges)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--minilm", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--gpt2-style", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--count", type=int, default=2500)
    args = ap.parse_args()
    os.makedirs(args.tmp, exist_ok=True)

    texts = generate(args.count)
    rng = random.Random(SEED + 1)
    swept = sweep(stable, rng)
    newer = sweep(lambda cp: not stable(cp) and not 0xD800 <= cp <= 0xDFFF
                  and unicodedata.category(chr(cp)) not in ("Cn", "Co"), rng)
    main_set = texts + swept
    print(f"inputs: {len(texts)} generated strings, {len(swept)} sweep "
          f"strings (Unicode 3.2 repertoire), {len(newer)} newer-character "
          f"strings (informational)")
    j = lambda name: os.path.join(args.tmp, name)
    failures = 0

    # MiniLM WordPiece, without and with the file's truncation and padding.
    minilm_json = os.path.join(args.minilm, "tokenizer.json")
    hf = Tokenizer.from_file(minilm_json)
    hf.no_padding()
    hf.no_truncation()
    out = run_tfc(args.tool, args.minilm, main_set, j("minilm.jsonl"),
                  ["--no-padding", "--no-truncation"])
    failures += compare("minilm wordpiece", hf, out, main_set)
    hf_fixed = Tokenizer.from_file(minilm_json)
    out = run_tfc(args.tool, args.minilm, texts, j("minilm-fixed.jsonl"))
    failures += compare("minilm wordpiece (truncation 128, padding 128)",
                        hf_fixed, out, texts, decode=False, masks=True)
    # A batch padded to its longest encoding, truncated to 32.
    hf_batch = Tokenizer.from_file(minilm_json)
    hf_batch.enable_padding(pad_id=0, pad_token="[PAD]")
    hf_batch.enable_truncation(max_length=32)
    sample = texts[:300]
    out = run_tfc(args.tool, args.minilm, sample, j("minilm-batch.jsonl"),
                  ["--pad-longest", "--max-length", "32"])
    failures += compare("minilm wordpiece (truncation 32, batch padding)",
                        hf_batch, out, sample, decode=False, masks=True)

    # SmolLM2 BPE: the reference from the GGUF, tfc from the GGUF and from
    # the reference written as tokenizer.json.
    ref, ntok, nmerge = gguf_reference(args.gguf)
    ref_path = j("smollm2-tokenizer.json")
    ref.save(ref_path)
    print(f"smollm2 reference: {ntok} tokens, {nmerge} merges")
    out = run_tfc(args.tool, args.gguf, main_set, j("smollm2-gguf.jsonl"))
    failures += compare("smollm2 bpe (gguf)", ref, out, main_set)
    out = run_tfc(args.tool, ref_path, main_set, j("smollm2-json.jsonl"))
    failures += compare("smollm2 bpe (tokenizer.json)", ref, out, main_set)
    failures += check_stream(args.tool, args.gguf, ref, texts[:60],
                             "smollm2 incremental decode")

    # The GPT-2 style file with pair merges and the Llama-3 regex.
    small = Tokenizer.from_file(args.gpt2_style)
    out = run_tfc(args.tool, args.gpt2_style, main_set, j("gpt2-style.jsonl"))
    failures += compare("gpt2-style bpe (pair merges, llama-3 split)", small,
                        out, main_set)

    # SentencePiece-style BPEs (byte fallback, "\u2581" for spaces), next to
    # the GPT-2 style file.
    inputs = os.path.dirname(os.path.abspath(args.gpt2_style))
    def compare_file(name, file):
        """The ids of Inputs/`file` against tokenizers' on the main set."""
        path = os.path.join(inputs, file)
        ref = Tokenizer.from_file(path)
        out = run_tfc(args.tool, path, main_set, j(file + ".jsonl"))
        return compare(name, ref, out, main_set), path, ref

    for name, file in [("sentencepiece bpe (prepend/replace, byte fallback)",
                        "tokenizer_sentencepiece_bpe.json"),
                       ("sentencepiece bpe (metaspace, byte fallback)",
                        "tokenizer_metaspace_bpe.json")]:
        fails, path, sp = compare_file(name, file)
        failures += fails
    failures += check_stream(args.tool, path, sp, texts[:40],
                             "sentencepiece incremental decode")
    # SentencePiece unigram models (T5's kind).
    for name, file in [("sentencepiece unigram (nfkc, metaspace, unk)",
                        "tokenizer_unigram.json"),
                       ("sentencepiece unigram (byte fallback)",
                        "tokenizer_unigram_bytes.json")]:
        failures += compare_file(name, file)[0]

    out = run_tfc(args.tool, args.gpt2_style, texts, j("gpt2-nospecial.jsonl"),
                  ["--no-special"])
    failures += compare("gpt2-style bpe (no special tokens)", small, out,
                        texts, add_special_tokens=False)
    failures += compare_pairs(args.tool, [
        ("minilm wordpiece", args.minilm, hf),
        ("gpt2-style bpe", args.gpt2_style, small)], texts[:25])

    # Newer characters: reported, not failing (Unicode version skew).
    for name, path, hf_tok, extra in [
            ("minilm", args.minilm, hf, ["--no-padding", "--no-truncation"]),
            ("smollm2", args.gguf, ref, [])]:
        out = run_tfc(args.tool, path, newer, j(f"{name}-newer.jsonl"), extra)
        hf_enc = hf_tok.encode_batch(newer)
        differ = sum(h.ids != t["ids"] for h, t in zip(hf_enc, out))
        print(f"informational: {name} on characters newer than Unicode 3.2: "
              f"{len(newer) - differ} of {len(newer)} strings equal")

    print("FAILURES:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
