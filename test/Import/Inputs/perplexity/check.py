"""check.py LLAMACPP.json F32.txt Q8_0.txt Q4_1.txt: the outputs of
tfc-perplexity for the three formats against each other (Q8_0 within 0.5 %
of f32, Q4_1 within 5 %) and against llama.cpp's perplexity of the same
weights in the same format (within 1 %), and the token counts agree."""
import json
import re
import sys

ref = json.load(open(sys.argv[1]))
ours = {}
for fmt, path in zip(("f32", "q8_0", "q4_1"), sys.argv[2:5]):
    text = open(path).read()
    m = re.search(r"perplexity: ([0-9.]+) \+/- [0-9.]+ over (\d+) scored", text)
    tokens = re.search(r"tfc-perplexity: (\d+) tokens", text)
    ours[fmt] = (float(m.group(1)), int(m.group(2)), int(tokens.group(1)))
ok = True


def report(what, value, limit):
    global ok
    good = value <= limit
    ok &= good
    print(f"{what}: {value * 100:.2f} % (limit {limit * 100:.1f} %)",
          "OK" if good else "MISMATCH")


f32 = ours["f32"][0]
for fmt, limit in (("q8_0", 0.005), ("q4_1", 0.05)):
    report(f"{fmt} vs f32 {ours[fmt][0]:.4f} / {f32:.4f}",
           abs(ours[fmt][0] / f32 - 1), limit)
for fmt in ("f32", "q8_0", "q4_1"):
    ppl, scored, tokens = ours[fmt]
    r = ref[fmt]
    if (tokens, scored) != (r["tokens"], r["scored"]):
        print(f"{fmt}: {tokens} tokens, {scored} scored; llama.cpp "
              f"{r['tokens']}, {r['scored']}: MISMATCH")
        ok = False
    report(f"{fmt} vs llama.cpp {ppl:.4f} / {r['perplexity']:.4f}",
           abs(ppl / r["perplexity"] - 1), 0.01)
print("all OK" if ok else "FAILED")
