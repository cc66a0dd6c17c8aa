"""tfc-generate's sampler end to end, against the distribution it must draw from.

    check_draws.py DRAWS.json LOGITS.npy [--temperature T] [--top-k K]
        [--top-p P] [--min-p P] [--repetition-penalty R]

DRAWS.json is what `tfc-generate --draws N` printed (the counts, and the
prompt's ids: the repetition penalty's history), LOGITS.npy the raw logits
it drew from (--logits-out). The expected distribution is
computed here, independently of tfc, with transformers' logits processors in
transformers' order (RepetitionPenaltyLogitsProcessor, then
TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
MinPLogitsWarper, then the softmax). Fails unless
  - every drawn id has non-zero expected probability (a truncation that keeps
    the wrong tokens draws outside the support), and
  - Pearson's chi-squared test of the counts against the expected
    frequencies (bins with an expected count under 5 merged) does not reject
    at significance 0.001.
The draws come from a fixed seed, so the outcome is deterministic; a correct
sampler fails it for one seed in a thousand.
"""
import json
import math
import sys

import numpy as np


def upper_gamma_regularized(a, x):
    """Q(a, x) = Gamma(a, x) / Gamma(a): the chi-squared survival function is
    Q(dof / 2, chi2 / 2). Series for x < a + 1, else a continued fraction
    (modified Lentz)."""
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(log_prefix) * h


def expected(logits, prompt, temperature, top_k, top_p, min_p, penalty):
    s = logits.astype(np.float64).copy()
    if penalty != 1:
        seen = np.unique(np.array(prompt, dtype=np.int64))
        seen = seen[(seen >= 0) & (seen < s.size)]
        v = s[seen]
        s[seen] = np.where(v > 0, v / penalty, v * penalty)
    s /= temperature
    if top_k > 0:
        kth = np.sort(s)[-min(top_k, s.size)]
        s[s < kth] = -np.inf
    if top_p < 1:
        order = np.argsort(s, kind="stable")  # ascending
        p = np.exp(s[order] - s.max())
        p /= p.sum()
        remove = np.cumsum(p) <= 1 - top_p
        remove[-1] = False  # at least one
        s[order[remove]] = -np.inf
    if min_p > 0:
        p = np.exp(s - s.max())
        p /= p.sum()
        s[p < min_p * p.max()] = -np.inf
    p = np.exp(s - s.max())
    return p / p.sum()


def main():
    args = sys.argv[1:]
    draws = json.load(open(args[0]))
    logits = np.load(args[1]).reshape(-1)
    prompt = [int(t) for t in draws["prompt_ids"]]
    opts = {"--temperature": 1.0, "--top-k": 0, "--top-p": 1.0, "--min-p": 0.0,
            "--repetition-penalty": 1.0}
    for i in range(2, len(args), 2):
        if args[i] not in opts:
            sys.exit(f"unknown option {args[i]}")
        opts[args[i]] = float(args[i + 1])
    p = expected(logits, prompt, opts["--temperature"], int(opts["--top-k"]),
                 opts["--top-p"], opts["--min-p"], opts["--repetition-penalty"])
    n = int(draws["draws"])
    counts = np.zeros(p.size)
    for k, c in draws["counts"].items():
        counts[int(k)] = c
    ok = True
    if counts.sum() != n:
        print(f"counts sum to {counts.sum():.0f}, not {n}: MISMATCH")
        ok = False
    outside = np.nonzero((counts > 0) & (p == 0))[0]
    if outside.size:
        print(f"{outside.size} drawn ids have probability 0 "
              f"(e.g. {outside[:5].tolist()}): MISMATCH")
        ok = False
    support = np.nonzero(p > 0)[0]
    order = support[np.argsort(-p[support], kind="stable")]
    exp_counts = n * p[order]
    obs = counts[order]
    # Bins: each id with an expected count >= 5, the rest merged into one.
    big = exp_counts >= 5
    e = list(exp_counts[big])
    o = list(obs[big])
    if (~big).any():
        e.append(exp_counts[~big].sum())
        o.append(obs[~big].sum())
    e, o = np.array(e), np.array(o)
    if e.size < 2:
        print(f"only {e.size} bin: the settings leave nothing to test")
        sys.exit(1)
    chi2 = float(((o - e) ** 2 / e).sum())
    dof = e.size - 1
    pvalue = upper_gamma_regularized(dof / 2, chi2 / 2)
    line = (f"{n} draws over {support.size} ids with non-zero probability "
            f"({dof + 1} bins): chi2 {chi2:.1f}, dof {dof}, p-value {pvalue:.3g}")
    if pvalue < 0.001:
        line += ": MISMATCH"
        ok = False
    print(line)
    sys.exit(0 if ok else 1)


main()
