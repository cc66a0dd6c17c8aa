"""Encoder-decoder generation through tfc vs transformers' generate().

    check_seq2seq.py MODEL.so CHECKPOINT REFERENCE.json [--batch]

REFERENCE (scripts/make-marian-references.py) holds cases of source_ids
with transformers' beam search (4 beams) and greedy ids. tfc-generate (from
PATH) runs each source through the encoder once, fills the cross-attention
caches once, and decodes with the self-attention cache; its ids must equal
transformers' token for token. With --batch, all sources run in one
tfc-generate call (the encoder over right-padded sources with their mask,
one decoder row per source, or per beam of each source).
"""
import json
import subprocess
import sys

model, weights, ref_path = sys.argv[1:4]
ref = json.load(open(ref_path, encoding="utf-8"))
ok = True
if sys.argv[4:] == ["--batch"]:
    cases = ref["cases"]
    for name, beams in (("beam4", 4), ("greedy", 1)):
        cmd = ["tfc-generate", model, "--weights", weights, "--quiet",
               "--print-ids", "-n", str(ref["max_new_tokens"]), "--eos",
               str(ref["eos_token_id"]), "--beams", str(beams)]
        for case in cases:
            cmd += ["--ids", ",".join(map(str, case["source_ids"]))]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"batch {name}: tfc-generate failed: {p.stderr.strip()}: "
                  "MISMATCH")
            ok = False
            continue
        for i, case in enumerate(cases):
            want = case[name]
            line = [l for l in p.stdout.splitlines()
                    if l.startswith(f"ids[{i}]:")][-1]
            got = [int(x) for x in line.split(":", 1)[1].strip().split(",") if x]
            status = "same" if got == want else f"MISMATCH: got {got}, want {want}"
            print(f"batch case {i} {name}: {len(want)} tokens, {status}")
            ok = ok and got == want
    sys.exit(0 if ok else 1)
for i, case in enumerate(ref["cases"]):
    for name, beams in (("beam4", 4), ("greedy", 1)):
        want = case[name]
        cmd = ["tfc-generate", model, "--weights", weights, "--quiet",
               "--print-ids", "--ids", ",".join(map(str, case["source_ids"])),
               "-n", str(ref["max_new_tokens"]), "--eos",
               str(ref["eos_token_id"]), "--beams", str(beams)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"case {i} {name}: tfc-generate failed: {p.stderr.strip()}: "
                  "MISMATCH")
            ok = False
            continue
        line = [l for l in p.stdout.splitlines() if l.startswith("ids:")][-1]
        got = [int(x) for x in line[4:].strip().split(",") if x]
        status = "same" if got == want else f"MISMATCH: got {got}, want {want}"
        print(f"case {i} {name}: {len(want)} tokens, {status}")
        ok = ok and got == want
sys.exit(0 if ok else 1)
