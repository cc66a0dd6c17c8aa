"""check_perplexity.py LLAMACPP.json TFC.txt LIMIT: tfc-perplexity's output
against llama.cpp's perplexity of the same file and text (the same token
and scored counts, the perplexity within LIMIT relative)."""
import json
import re
import sys

ref = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
limit = float(sys.argv[3])
m = re.search(r"perplexity: ([0-9.]+) \+/- [0-9.]+ over (\d+) scored", text)
tokens = int(re.search(r"tfc-perplexity: (\d+) tokens", text).group(1))
ppl, scored = float(m.group(1)), int(m.group(2))
ok = (tokens, scored) == (ref["tokens"], ref["scored"])
rel = abs(ppl / ref["perplexity"] - 1)
ok &= rel <= limit
print(f"perplexity {ppl:.4f} vs llama.cpp {ref['perplexity']:.4f}: "
      f"{rel * 100:.2f} % (limit {limit * 100:.1f} %), {tokens} tokens, "
      f"{scored} scored", "OK" if ok else "MISMATCH")
