#!/usr/bin/env python3
"""Tokenizer throughput: tfc's tokenizers against Hugging Face `tokenizers`.

    tokenizer_bench.py [--lib build/lib/libtfcrt.so] [--minilm DIR]
                       [--gguf SmolLM2-135M-Instruct.Q4_1.gguf] [--mb 4]
                       [--repeat 3] [--out FILE]

Both sides encode the same few MB of mixed text (Python source with its
comments and docstrings, English prose, numbers, multilingual text and
emoji), split into documents of about 2 KB, one `encode` call per document,
with special tokens and without padding or truncation, on ONE thread each:
tfc through the C API of libtfcrt.so (tfc_tokenizer_encode, via ctypes),
Hugging Face through `Tokenizer.encode` (which uses a single thread; the
batch API, which would use several, is not called). Prints MB/s (input
bytes per second, the best of --repeat passes), the ratio, whether every
document got the same ids, and the CPU (lscpu's Model name).

Tokenizers: all-MiniLM-L6-v2's WordPiece tokenizer.json, and SmolLM2's
byte-level BPE built from the GGUF metadata (as the conformance test does;
both sides load it as tokenizer.json). Needs the venv of
scripts/setup-test-data.sh (tokenizers, gguf).
"""
import argparse
import ctypes
import datetime
import glob
import os
import random
import subprocess
import sys
import tempfile
import time

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.environ.get("TFC_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tfc")

sys.path.insert(0, os.path.join(ROOT, "test", "Runtime", "Inputs"))
from tokenizer_conformance import gguf_reference  # noqa: E402


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def corpus(megabytes):
    """Deterministic mixed text of about `megabytes` MB, in documents."""
    rng = random.Random(7)
    sources = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__),
                                            "*.py")))
    prose = []
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")) +
                       [os.path.join(ROOT, "README.md")]):
        with open(path, encoding="utf-8") as f:
            prose.append(f.read())
    multilingual = [
        "東京は日本の首都です。今日はいい天気ですね。",
        "我爱自然语言处理，机器学习很有趣。", "한국어 텍스트 처리는 재미있다. ",
        "Привет, мир! Как у тебя дела сегодня? ", "Ελληνικά κείμενα και λέξεις. ",
        "مرحبا بالعالم، كيف حالك اليوم؟ ", "שלום עולם, מה שלומך? ",
        "Café, naïve, résumé, Zürich, São Paulo, Kraków. ",
        "🤗 🚀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ✨ ", "Prices: $1,234.56, €99, 3.14159, 2026-11-24. "]
    target = int(megabytes * 1e6)
    docs, size = [], 0
    while size < target:
        k = rng.random()
        if k < 0.55:
            with open(rng.choice(sources), encoding="utf-8",
                      errors="replace") as f:
                text = f.read()
        elif k < 0.85:
            text = rng.choice(prose)
        else:
            text = "".join(rng.choice(multilingual) for _ in range(60))
        start = rng.randrange(max(1, len(text) - 2000))
        doc = text[start:start + 2000]
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    return docs, size


class TfcTokenizer:
    def __init__(self, lib, path):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        if lib.tfc_tokenizer_load(path.encode(), ctypes.byref(self.handle)):
            raise RuntimeError(lib.tfc_last_error().decode())
        lib.tfc_tokenizer_set_padding(self.handle, 0)
        lib.tfc_tokenizer_set_truncation(self.handle, 0)
        self.cap = 1 << 16
        self.buffer = (ctypes.c_int64 * self.cap)()
        self.n = ctypes.c_size_t()

    def encode(self, data):
        status = self.lib.tfc_tokenizer_encode(
            self.handle, data, len(data), 1, self.buffer, self.cap,
            ctypes.byref(self.n))
        if status:
            raise RuntimeError(self.lib.tfc_last_error().decode())
        return self.n.value

    def ids(self, data):
        n = self.encode(data)
        return list(self.buffer[:n])


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.tfc_last_error.restype = ctypes.c_char_p
    lib.tfc_tokenizer_load.argtypes = [ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_void_p)]
    lib.tfc_tokenizer_encode.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
        ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_size_t)]
    lib.tfc_tokenizer_set_padding.argtypes = [ctypes.c_void_p,
                                              ctypes.c_size_t]
    lib.tfc_tokenizer_set_truncation.argtypes = [ctypes.c_void_p,
                                                 ctypes.c_size_t]
    return lib


def best_of(repeat, fn):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "lib",
                                                  "libtfcrt.so"))
    ap.add_argument("--minilm", default=os.path.join(CACHE, "models",
                                                     "minilm"))
    ap.add_argument("--gguf", default=os.path.join(
        CACHE, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--mb", type=float, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()

    lib = load_lib(args.lib)
    docs, size = corpus(args.mb)
    encoded = [d.encode("utf-8") for d in docs]
    tmp = tempfile.mkdtemp()
    ref, _, _ = gguf_reference(args.gguf)
    smol_json = os.path.join(tmp, "smollm2-tokenizer.json")
    ref.save(smol_json)
    minilm_json = os.path.join(args.minilm, "tokenizer.json")

    cpu = cpu_model()
    lines = [f"# tfc tokenizer benchmark, {datetime.date.today()}, "
             f"single thread each (tfc: the C API through ctypes; Hugging "
             f"Face: Tokenizer.encode, tokenizers "
             f"{__import__('tokenizers').__version__})",
             f"# CPU: {cpu}",
             f"# input: {len(docs)} documents, {size / 1e6:.2f} MB of mixed "
             f"text (Python source, English prose, multilingual, emoji); "
             f"MB/s = input bytes / best of {args.repeat} passes"]
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                 "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        lines.insert(1, f"# tfc {commit}")
    except OSError:
        pass
    for line in lines:
        print(line, flush=True)

    for name, path in [("minilm wordpiece", minilm_json),
                       ("smollm2 byte-level bpe", smol_json)]:
        hf = Tokenizer.from_file(path)
        hf.no_padding()
        hf.no_truncation()
        tfc = TfcTokenizer(lib, path)
        same = sum(hf.encode(d).ids == tfc.ids(e)
                   for d, e in zip(docs, encoded))
        t_hf = best_of(args.repeat, lambda: [hf.encode(d) for d in docs])
        t_tfc = best_of(args.repeat, lambda: [tfc.encode(e) for e in encoded])
        line = (f"{name}: tfc {size / t_tfc / 1e6:7.2f} MB/s | Hugging Face "
                f"{size / t_hf / 1e6:7.2f} MB/s | tfc/HF {t_hf / t_tfc:.2f}x"
                f" | same ids for {same}/{len(docs)} documents")
        print(line, flush=True)
        lines.append(line)
    lines.append("# command: " + " ".join(["bench/tokenizer_bench.py"] +
                                          sys.argv[1:]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
