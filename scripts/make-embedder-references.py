#!/usr/bin/env python3
"""Makes the references of the full-size tier's embedders
(test/Import/large-embedders.test) for the files of
scripts/setup-test-data.sh --large:

  all-mpnet-base-v2 (sentence-transformers directory, model_type mpnet):
      sentence-transformers' embeddings of SENTENCES, and HF tokenizers' ids
      (tokenizer.json, special tokens added) for the 2,500 strings of the
      tokenizer conformance corpus;
  nomic-embed-text-v1.5 F16 (.gguf, nomic-bert): llama.cpp's embeddings
      (llama-cpp-python, mean pooling as the file says, normalised) of
      SENTENCES, and llama.cpp's ids (its own WordPiece tokenizer of the
      file, [CLS] and [SEP] added, special tokens parsed) for the corpus.

    /tmp/ref/bin/python scripts/make-embedder-references.py [TFC_CACHE_DIR]

(the venv of scripts/make-references.py plus sentence-transformers and
llama-cpp-python 0.3.36). Writes test/Import/Inputs/large/<model>/
sentences.txt, embeddings.npy, tokens.jsonl and versions-embedders.json.
"""
import json
import os
import sys

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "bench"))
sys.path.insert(0, os.path.join(root, "test", "Runtime", "Inputs"))
import llamacpp_compat  # noqa: E402,F401
import llama_cpp  # noqa: E402
import sentence_transformers  # noqa: E402
import tokenizers  # noqa: E402
from tokenizer_conformance import generate  # noqa: E402

cache = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "TFC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "tfc"))
out_root = os.path.join(root, "test", "Import", "Inputs", "large")

# Accents, CJK, emoji, scripts, code and numbers; one per line (no newlines).
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A man is playing a guitar on the street corner.",
    "Café au lait, s'il vous plaît — naïve résumé of the crème brûlée.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein.",
    "¿Dónde está la biblioteca? Está cerca de la estación.",
    "東京は日本の首都で、世界で最も人口の多い都市圏です。",
    "我喜欢在周末去公园散步，呼吸新鲜空气。",
    "서울은 대한민국의 수도입니다.",
    "Москва — столица России и крупнейший город страны.",
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "I love pizza 🍕 and sushi 🍣! 😀👍🏽",
    "The meeting is at 10:30 on 2024-05-17; bring $25.50 for lunch.",
    "def fibonacci(n): return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)",
    "search_query: what is the boiling point of water at sea level?",
    "search_document: Water boils at 100 °C (212 °F) at standard pressure.",
    "Machine learning models can be compressed with quantization.",
    "Transformers use self-attention to relate tokens across a sequence.",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "नमस्ते, आप कैसे हैं?",
    "Ça va très bien, merci ! Et toi ?",
    "A woman is slicing an onion in the kitchen.",
    "Two dogs are running through a field of tall grass.",
    "Stock prices fell sharply after the announcement.",
    "Ñandú, pingüino, acción, corazón: ¡qué bonito!",
]


def save_tokens(path, ids_of):
    texts = generate(2500)
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "ids": ids_of(t)},
                               ensure_ascii=False) + "\n")
    print(path, len(texts), "strings")


def write_sentences(d):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "sentences.txt"), "w", encoding="utf-8") as f:
        for s in SENTENCES:
            f.write(s + "\n")


mpnet_dir = os.path.join(cache, "models", "all-mpnet-base-v2")
d = os.path.join(out_root, "all-mpnet-base-v2")
write_sentences(d)
st = sentence_transformers.SentenceTransformer(mpnet_dir, device="cpu")
np.save(os.path.join(d, "embeddings.npy"),
        st.encode(SENTENCES, batch_size=1).astype(np.float32))
tok = tokenizers.Tokenizer.from_file(os.path.join(mpnet_dir, "tokenizer.json"))
save_tokens(os.path.join(d, "tokens.jsonl"), lambda t: tok.encode(t).ids)

nomic = os.path.join(cache, "models", "nomic-embed-text-v1.5",
                     "nomic-embed-text-v1.5.f16.gguf")
d = os.path.join(out_root, "nomic-embed-text-v1.5")
write_sentences(d)
llm = llama_cpp.Llama(model_path=nomic, embedding=True, n_ctx=2048,
                      n_threads=2, verbose=False)
np.save(os.path.join(d, "embeddings.npy"),
        np.array([llm.embed(s, normalize=True) for s in SENTENCES],
                 dtype=np.float32))
save_tokens(os.path.join(d, "tokens.jsonl"),
            lambda t: llm.tokenize(t.encode("utf-8"), add_bos=True,
                                   special=True))

import torch  # noqa: E402
import transformers  # noqa: E402

with open(os.path.join(out_root, "versions-embedders.json"), "w") as f:
    json.dump({"sentence-transformers": sentence_transformers.__version__,
               "transformers": transformers.__version__,
               "torch": torch.__version__,
               "tokenizers": tokenizers.__version__,
               "llama-cpp-python": llama_cpp.__version__}, f, indent=1)
    f.write("\n")
