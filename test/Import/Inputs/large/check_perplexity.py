"""check_perplexity.py LLAMACPP.json TFC.txt LIMIT [LLAMACPP.npy TFC.npy]:
tfc-perplexity's output against llama.cpp's perplexity of the same file and
text (the same token and scored counts, the perplexity within LIMIT
relative).

With the two .npy files (llama.cpp's NLL of every scored token, from
bench/perplexity_llamacpp.py --nll-out, and tfc-perplexity --nll-out's),
also token by token: the log of the perplexity ratio is the mean of the
per-token differences d, and where both compute the same thing up to
rounding that mean is zero up to the noise of the roundings, whose standard
error std(d) / sqrt(n) the tokens measure (as
test/Import/Inputs/perplexity/check.py does for SmolLM2): |mean(d)| within
4 standard errors."""
import json
import math
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
line = (f"perplexity {ppl:.4f} vs llama.cpp {ref['perplexity']:.4f}: "
        f"{rel * 100:.2f} % (limit {limit * 100:.1f} %), {tokens} tokens, "
        f"{scored} scored")
if len(sys.argv) > 4:
    import numpy as np

    theirs = np.load(sys.argv[4]).astype(np.float64)
    ours = np.load(sys.argv[5]).astype(np.float64)
    if theirs.shape != (scored,) or ours.shape != (scored,) or \
            not np.isfinite(ours).all():
        ok = False
        line += f"; NLLs {ours.shape} against llama.cpp's {theirs.shape}"
    else:
        d = ours - theirs
        se = d.std(ddof=1) / math.sqrt(len(d))
        ok &= abs(d.mean()) <= 4 * se
        line += (f"; {abs(d.mean()) / se:.1f} standard errors of the "
                 f"per-token differences (bound 4: {4 * se * 100:.2f} %)")
print(line, "OK" if ok else "MISMATCH")
