#!/usr/bin/env bash
# Assembles every PTX module of a `tfc-compile --emit=ptx` output with
# ptxas for the architecture its `// tfc: arch sm_XX` header names, and
# prints one "ptxas sm_XX ok (N entries)" line per module.
#
#   ptxas-all.sh PTXAS FILE.ptx
set -euo pipefail
ptxas=$1
file=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '
  /^\/\/ tfc: arch / { n++; arch[n] = $4; out = dir "/" n "_" $4 ".ptx"; next }
  n { print > out }' "$file"
count=0
for ptx in "$work"/*.ptx; do
  [[ -e $ptx ]] || break
  arch=$(basename "$ptx" .ptx); arch=${arch#*_}
  "$ptxas" -arch="$arch" "$ptx" -o "$work/out.cubin"
  echo "ptxas $arch ok ($(grep -c '^\.visible \.entry' "$ptx") entries)"
  count=$((count + 1))
done
if ((count == 0)); then
  echo "ptxas-all: no '// tfc: arch' module in $file" >&2
  exit 1
fi
