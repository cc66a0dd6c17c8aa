"""Greedy generation through tfc vs transformers' generate(do_sample=False).

    check_generate.py MODEL.so WEIGHTS REFERENCE.json [--batch]

REFERENCE (scripts/make-references.py) holds either one case or "cases",
each with prompt_ids and generated_ids, and optionally eos_token_id.
tfc-generate (from PATH) runs each prompt with the KV cache; its ids must
equal transformers' token for token. With --batch, every prompt runs in one
tfc-generate call as one batch (left-padded to the longest prompt).
"""
import json
import subprocess
import sys

model, weights, ref_path = sys.argv[1:4]
ref = json.load(open(ref_path, encoding="utf-8"))
cases = ref.get("cases", [ref])
eos = ref.get("eos_token_id")
if isinstance(eos, int):
    eos = [eos]
ok = True
if sys.argv[4:] == ["--batch"]:
    cmd = ["tfc-generate", model, "--weights", weights, "--quiet", "--print-ids",
           "-n", str(max(len(c["generated_ids"]) for c in cases))]
    for case in cases:
        cmd += ["--ids", ",".join(map(str, case["prompt_ids"]))]
    if eos:
        cmd += ["--eos", ",".join(map(str, eos))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"batch: tfc-generate failed: {p.stderr.strip()}: MISMATCH")
        sys.exit(1)
    lines = [l for l in p.stdout.splitlines() if l.startswith("ids")]
    for i, case in enumerate(cases):
        want = case["generated_ids"]
        prefix = f"ids[{i}]:" if len(cases) > 1 else "ids:"
        line = [l for l in lines if l.startswith(prefix)][-1]
        got = [int(x) for x in line[len(prefix):].strip().split(",") if x]
        status = "" if got == want else f": MISMATCH (got {got})"
        print(f"batch case {i}: {len(case['prompt_ids'])} prompt tokens, "
              f"{len(want)} tokens{status}")
        ok = ok and got == want
    print("  " + p.stderr.strip().splitlines()[-1])
    sys.exit(0 if ok else 1)
for i, case in enumerate(cases):
    want = case["generated_ids"]
    cmd = ["tfc-generate", model, "--weights", weights, "--quiet", "--print-ids",
           "--ids", ",".join(map(str, case["prompt_ids"])), "-n", str(len(want))]
    if eos:
        cmd += ["--eos", ",".join(map(str, eos))]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"case {i}: tfc-generate failed: {p.stderr.strip()}: MISMATCH")
        ok = False
        continue
    line = [l for l in p.stdout.splitlines() if l.startswith("ids:")][-1]
    got = [int(x) for x in line[4:].strip().split(",") if x]
    same = 0
    while same < min(len(got), len(want)) and got[same] == want[same]:
        same += 1
    status = "" if got == want else ": MISMATCH"
    print(f"case {i}: {len(want)} tokens, {same} equal before the first "
          f"difference{status}")
    stats = p.stderr.strip().splitlines()[-1]
    print("  " + stats)
    ok = ok and got == want
sys.exit(0 if ok else 1)
