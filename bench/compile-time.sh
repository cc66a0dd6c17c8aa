#!/usr/bin/env bash
# Compile time of real models, and what it costs at run time: the layers
# compiled once (tfc-outline-blocks, the default) against every layer
# compiled in place (--inline-blocks), in the same run, on this host.
#
#   * wall time and peak RSS of tfc-compile for SmolLM2-135M-Instruct's Q4_1
#     .gguf (--kv-cache --kv-cache-last, as tfc-generate compiles it; 30
#     layers, and -D layers=2), BERT-base and GPT-2 (examples/, 12 layers);
#   * the generated code's speed, outlined against inlined, alternating
#     builds, medians of 5: SmolLM2's prefill and decode (bench/generate_bench.c)
#     and BERT-base's forward pass over 128 tokens (tfc-run --time);
#   * the first token of `tfc-generate CHECKPOINT` on a compile-cache hit
#     against the precompiled .so path (whole command, 3 runs each);
#   * with TFC_BENCH_CALLGRIND=1 (valgrind; ~10 minutes), the instructions
#     SmolLM2's forward (128 tokens) and cached entry (a prompt and 31 decode
#     steps) execute, outlined against inlined: exact where this VM's times
#     drift (libraries for x86-64-v3, which valgrind runs; 1 thread).
#
#   bench/compile-time.sh [threads=2] [output file]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
cache=$("$root/scripts/setup-test-data.sh")
gguf=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfc-compile tfc-run tfc-weights tfc-generate tfcrt_shared >/dev/null
clang-22 -O2 -std=c11 -I"$root/include" "$root/bench/generate_bench.c" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -lpthread -o "$work/generate_bench"
bin=$build/bin
export TFC_NUM_THREADS=$threads TFC_TUNE_FILE=${TFC_TUNE_FILE:-none}
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"

# compile NAME OUTPUT ARGS...: "NAME: S s, R MiB peak" (the faster of 2).
compile() {
  local name=$1 so=$2 best= rss=
  shift 2
  for _ in 1 2; do
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin/tfc-compile" "$@" -o "$so" --quiet
    read -r s kb <"$work/time"
    if [[ -z $best ]] || awk "BEGIN { exit !($s < $best) }"; then best=$s rss=$kb; fi
  done
  printf '%-58s %6.2f s  %5d MiB\n' "$name" "$best" $((rss / 1024))
  echo "$best" >"$work/$(basename "$so").secs"
}
ratio() { awk "BEGIN { printf \"%.2f\", $(cat "$work/$1.secs") / $(cat "$work/$2.secs") }"; }

{
  echo "# tfc compile time, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD), $threads threads"
  echo "# host: $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p')), $(nproc) cores; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|amx_tile|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "### tfc-compile (the faster of 2 runs; peak RSS)"
  compile "SmolLM2-135M Q4_1 --kv-cache --kv-cache-last (30 layers)" "$work/s30.so" "$gguf" --kv-cache --kv-cache-last
  compile "  the same, -D layers=2" "$work/s2.so" "$gguf" --kv-cache --kv-cache-last -D layers=2
  compile "  the same, 30 layers, --inline-blocks" "$work/s30i.so" "$gguf" --kv-cache --kv-cache-last --inline-blocks
  compile "BERT-base (examples/bert-base.tfm, 12 layers)" "$work/bert.so" "$root/examples/bert-base.tfm"
  compile "  the same, --inline-blocks" "$work/berti.so" "$root/examples/bert-base.tfm" --inline-blocks
  compile "GPT-2 (examples/gpt2.tfm, 12 layers)" "$work/gpt2.so" "$root/examples/gpt2.tfm"
  compile "  the same, -D layers=1" "$work/gpt2-1.so" "$root/examples/gpt2.tfm" -D layers=1
  compile "  the same, 12 layers, --inline-blocks" "$work/gpt2i.so" "$root/examples/gpt2.tfm" --inline-blocks
  echo "SmolLM2: 30 layers / 2 layers $(ratio s30.so s2.so)x; inlined / outlined $(ratio s30i.so s30.so)x"
  echo "BERT-base: inlined / outlined $(ratio berti.so bert.so)x; GPT-2: inlined / outlined $(ratio gpt2i.so gpt2.so)x, 12 layers / 1 layer $(ratio gpt2.so gpt2-1.so)x"
  echo "library sizes: SmolLM2 $(stat -c %s "$work/s30.so") B outlined, $(stat -c %s "$work/s30i.so") B inlined; BERT-base $(stat -c %s "$work/bert.so") / $(stat -c %s "$work/berti.so") B"
} | report

"$bin/tfc-weights" "$work/bert.so" -o "$work/bert.safetensors"
{
  echo "### speed of the generated code: outlined (the default) / inlined, alternating, 5 runs each; medians"
  for run in 1 2 3 4 5; do
    "$work/generate_bench" "$work/s30.so" "$gguf" "$threads" | sed 's/^/outlined: /'
    "$work/generate_bench" "$work/s30i.so" "$gguf" "$threads" | sed 's/^/inlined: /'
    for v in outlined:bert.so inlined:berti.so; do
      "$bin/tfc-run" "$work/${v#*:}" --weights "$work/bert.safetensors" \
        -i input_ids=@zeros:1x128 -i token_type_ids=@zeros:1x128 \
        -i attention_mask=@ones:1x128 --time 10 2>/dev/null |
        sed -n "s/.*median \([0-9.]*\) ms.*/${v%%:*}: BERT-base forward 128 tokens: \1 ms/p"
    done
  done | python3 -c '
import re, statistics, sys
runs = {}
for line in sys.stdin:
    m = re.match(r"(\w+): (.*?): .*?([0-9.]+) (tokens/s|GB/s|ms)$", line.strip())
    if m:
        runs.setdefault((m.group(2), m.group(4)), {}).setdefault(m.group(1), []).append(float(m.group(3)))
for (what, unit), by in runs.items():
    if "outlined" not in by or "inlined" not in by:
        continue
    o, i = statistics.median(by["outlined"]), statistics.median(by["inlined"])
    # Time ratio outlined / inlined (< 1: outlined faster).
    r = o / i if unit == "ms" else i / o
    print(f"{what:32s} outlined {o:9.2f} {unit}, inlined {i:9.2f} {unit}: time outlined/inlined {r:.3f}")
'
  echo "### tfc-generate, one token of a 5-token prompt (whole command; 3 runs each, alternating; medians)"
  export TFC_CACHE_DIR=$work/cache
  "$bin/tfc-generate" "$gguf" -n 1 -p "Hello" >/dev/null 2>&1 # fills the cache
  for run in 1 2 3; do
    for v in hit precompiled; do
      start=$(date +%s.%N)
      if [[ $v == hit ]]; then
        "$bin/tfc-generate" "$gguf" -n 1 -p "Hello" >/dev/null 2>&1
      else
        "$bin/tfc-generate" "$work/s30.so" --weights "$gguf" -n 1 -p "Hello" >/dev/null 2>&1
      fi
      echo "$v $(awk "BEGIN { print $(date +%s.%N) - $start }")"
    done
  done | python3 -c '
import statistics, sys
t = {}
for line in sys.stdin:
    k, v = line.split()
    t.setdefault(k, []).append(float(v))
h, p = statistics.median(t["hit"]), statistics.median(t["precompiled"])
print(f"cache hit {h:.3f} s, precompiled .so {p:.3f} s: hit/precompiled {h / p:.2f}")
'
} | report

if [[ ${TFC_BENCH_CALLGRIND:-0} != 0 ]]; then
  {
    echo "### instructions executed (callgrind, 1 thread, --toggle-collect on the entry; x86-64-v3 libraries)"
    "$bin/tfc-compile" "$gguf" --kv-cache --kv-cache-last --cpu=x86-64-v3 -o "$work/v3.so" --quiet
    "$bin/tfc-compile" "$gguf" --kv-cache --kv-cache-last --cpu=x86-64-v3 --inline-blocks -o "$work/v3i.so" --quiet
    count() { # ENTRY COMMAND...: the instructions of ENTRY
      local entry=$1
      shift
      TFC_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --toggle-collect="$entry" "$@" >/dev/null 2>"$work/cg.log"
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/cg.log"
    }
    for what in prefill decode; do
      for v in v3 v3i; do
        if [[ $what == prefill ]]; then
          n=$(count tfc_entry_forward "$bin/tfc-run" "$work/$v.so" -e forward \
            --weights "$gguf" -i input_ids=@zeros:1x128)
        else
          n=$(count tfc_entry_forward_cached "$bin/tfc-generate" "$work/$v.so" \
            --weights "$gguf" --ids 1,2,3,4 -n 32)
        fi
        eval "n_$v=$n"
      done
      # shellcheck disable=SC2154
      echo "$what: outlined $n_v3, inlined $n_v3i instructions: outlined/inlined $(awk "BEGIN { printf \"%.5f\", $n_v3 / $n_v3i }")"
    done
  } | report
fi
