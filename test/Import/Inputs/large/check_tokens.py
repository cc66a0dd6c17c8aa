"""check_tokens.py TOKENIZER TOKENS.jsonl NAME [REFERENCE]: tfc-tokenize
(from PATH) on TOKENIZER (a .gguf, or a directory with tokenizer.json)
against the reference's ids (llama.cpp's unless REFERENCE names another)
for every line of TOKENS.jsonl ({"text", "ids"},
scripts/make-gguf-tokenizer-references.py, make-embedder-references.py):
the ids fed to the model must be equal; prints the count and up to 5
differences."""
import json
import subprocess
import sys

gguf, path, name = sys.argv[1:4]
reference = sys.argv[4] if len(sys.argv) > 4 else "llama.cpp"
ref = [json.loads(l) for l in open(path, encoding="utf-8")]
r = subprocess.run(["tfc-tokenize", gguf, "--jsonl", path, "--json"],
                   capture_output=True)
if r.returncode != 0:
    sys.exit(f"{name}: tfc-tokenize failed: {r.stderr.decode(errors='replace')}: MISMATCH")
got = json.loads(r.stdout)["encodings"]
bad = [(e["text"], e["ids"], g["ids"]) for e, g in zip(ref, got) if e["ids"] != g["ids"]]
if len(got) != len(ref):
    bad.append(("(count)", len(ref), len(got)))
print(f"{name}: {len(ref)} strings, {len(ref) - len(bad)} equal to ids of {reference}"
      + (": MISMATCH" if bad else ""))
for text, want, have in bad[:5]:
    print(f"  {json.dumps(text)[:100]}\n    {reference:9} {want}\n    tfc       {have}")
sys.exit(1 if bad else 0)
