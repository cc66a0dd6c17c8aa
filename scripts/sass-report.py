#!/usr/bin/env python3
"""What ptxas makes of tfc's CUDA kernels, per kernel, and checks on it.

Assembles every module of a `tfc-compile --target=cuda --emit=ptx` output
(one per `// tfc: arch sm_XX` header) with `ptxas -v`, disassembles the cubin
with `nvdisasm` and prints one line per kernel:

  sm_90 tfc_attention_f32: regs 56 spill_stores 0 spill_loads 0 stack 0
    smem 20608 barriers 1 instructions 1530 | HMMA 0 HGMMA 0 LDSM 0 ...

(on one line). `--expect 'GLOB: COND, COND'` checks every kernel whose name
matches GLOB (fnmatch; at least one must) on every module; a COND is
`NAME OP NUMBER` with OP one of == != >= <= > <, and NAME a property above,
`spills` (stores + loads), or an instruction: `HMMA` counts every HMMA.*,
`MUFU.EX2` the MUFU.EX2.*, `LDS` not LDSM (whole dot-separated components).
`libdevice_expf` counts libdevice's expf (its range reduction: an FFMA.RM
with the constant 12582913, 0x4b400001), which the attention kernels are to
replace by ex2 with log2(e) folded into the scale. A failed check is printed
and the exit status is 1.

  sass-report.py --ptxas PTXAS --nvdisasm NVDISASM FILE.ptx \\
      [--arch sm_90] [--expect 'tfc_*: spills == 0, LDL == 0'] ...

nvdisasm comes from PyPI's nvidia-cuda-nvdisasm (scripts/setup-test-data.sh
installs it into the test venv); ptxas from the CUDA toolkit.
"""

import argparse
import fnmatch
import operator
import os
import re
import subprocess
import sys
import tempfile

# The instructions every line reports (any other can be named in --expect).
REPORTED = ["HMMA", "HGMMA", "LDSM", "LDGSTS", "UTMALDG", "LDG", "STG", "LDS",
            "STS", "LDL", "STL", "FFMA", "SHFL", "BAR", "MUFU.EX2", "CALL",
            "libdevice_expf"]
PROPERTIES = ["regs", "spill_stores", "spill_loads", "stack", "smem",
              "barriers", "instructions"]
OPS = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge,
       "<=": operator.le, ">": operator.gt, "<": operator.lt}
INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)(.*?);")
COND = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|>=|<=|>|<)\s*(\d+)\s*$")


def fail(message):
    print(f"sass-report: {message}", file=sys.stderr)
    sys.exit(2)


def split_modules(path, arch):
    """[(arch, ptx text)] of a tfc --emit=ptx file (or plain PTX + --arch)."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    modules, current, lines = [], None, []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^// tfc: arch (\S+)", line)
        if m:
            if current:
                modules.append((current, "".join(lines)))
            current, lines = m.group(1), []
        else:
            lines.append(line)
    if current:
        modules.append((current, "".join(lines)))
    elif arch:
        modules.append((arch, text))
    else:
        fail(f"{path}: no '// tfc: arch' header: name the architecture "
             "with --arch")
    if arch:
        modules = [m for m in modules if m[0] == arch]
        if not modules:
            fail(f"{path}: no module for {arch}")
    return modules


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed ({result.returncode}):\n"
             + result.stderr.strip())
    return result.stdout + result.stderr


def ptxas_properties(log):
    """{kernel: {property: value}} from `ptxas -v`'s log."""
    kernels, name = {}, None
    for line in log.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            name = m.group(1)
            kernels.setdefault(name, {p: 0 for p in PROPERTIES})
            continue
        if name is None:
            continue
        props = kernels[name]
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            props["stack"], props["spill_stores"], props["spill_loads"] = (
                int(g) for g in m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            props["regs"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            s = re.search(r"(\d+) bytes smem", line)
            props["barriers"] = int(b.group(1)) if b else 0
            props["smem"] = int(s.group(1)) if s else 0
    return kernels


def instructions(sass):
    """{kernel: [(mnemonic, operands)]} from nvdisasm's listing."""
    kernels, name = {}, None
    for line in sass.splitlines():
        m = re.match(r"^\.text\.(\S+):\s*$", line)
        if m:
            name = m.group(1)
            kernels.setdefault(name, [])
            continue
        m = INSTRUCTION.match(line)
        if m and name is not None:
            kernels[name].append((m.group(1), m.group(2)))
    return kernels


def count(listing, what):
    if what == "libdevice_expf":
        return sum(1 for op, args in listing
                   if op.startswith("FFMA.RM") and "12582913" in args)
    want = what.split(".")
    return sum(1 for op, _ in listing if op.split(".")[:len(want)] == want)


def parse_expectation(text):
    glob, sep, conds = text.partition(":")
    if not sep or not glob.strip():
        fail(f"--expect '{text}': expected 'GLOB: NAME OP NUMBER, ...'")
    parsed = []
    for cond in conds.split(","):
        m = COND.match(cond)
        if not m:
            fail(f"--expect '{text}': '{cond.strip()}' is not NAME OP NUMBER "
                 "(e.g. 'spills == 0' or 'HMMA >= 1')")
        parsed.append((m.group(1), m.group(2), int(m.group(3))))
    return glob.strip(), parsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ptx")
    parser.add_argument("--ptxas", default="ptxas")
    parser.add_argument("--nvdisasm", default="nvdisasm")
    parser.add_argument("--arch", help="only this module (or: the "
                        "architecture of a plain PTX file)")
    parser.add_argument("--expect", action="append", default=[])
    args = parser.parse_args()
    expectations = [parse_expectation(e) for e in args.expect]

    failures = []
    matched = {glob: False for glob, _ in expectations}
    with tempfile.TemporaryDirectory() as work:
        for arch, ptx in split_modules(args.ptx, args.arch):
            source = os.path.join(work, arch + ".ptx")
            cubin = os.path.join(work, arch + ".cubin")
            with open(source, "w", encoding="utf-8") as f:
                f.write(ptx)
            props = ptxas_properties(
                run([args.ptxas, "-arch=" + arch, "-v", source, "-o", cubin]))
            listings = instructions(run([args.nvdisasm, "-c", cubin]))
            for kernel in sorted(props):
                p = dict(props[kernel])
                listing = listings.get(kernel, [])
                p["instructions"] = len(listing)
                p["spills"] = p["spill_stores"] + p["spill_loads"]
                counts = {what: count(listing, what) for what in REPORTED}
                print(f"{arch} {kernel}: "
                      + " ".join(f"{k} {p[k]}" for k in PROPERTIES) + " | "
                      + " ".join(f"{k} {v}" for k, v in counts.items()))
                for glob, conds in expectations:
                    if not fnmatch.fnmatchcase(kernel, glob):
                        continue
                    matched[glob] = True
                    for name, op, value in conds:
                        actual = (p[name] if name in p
                                  else count(listing, name))
                        if not OPS[op](actual, value):
                            failures.append(f"{arch} {kernel}: {name} {op} "
                                            f"{value} does not hold ({name} "
                                            f"is {actual})")
    for glob, seen in matched.items():
        if not seen:
            failures.append(f"no kernel matches '{glob}'")
    for f in failures:
        print(f"sass-report: FAILED {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
