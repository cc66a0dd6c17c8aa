#!/usr/bin/env bash
# Carries a build of tfc to a GPU machine that has the NVIDIA driver, the CUDA
# toolkit and PyTorch but not LLVM/MLIR 22 (the machines lent for GPU runs
# are such machines, and cannot reach Debian's mirrors).
#
#   scripts/gpu-bundle.sh pack OUT.tar.xz       # here, after ninja -C build:
#                                                # writes OUT.tar.xz.1 and .2
#   scripts/gpu-bundle.sh unpack OUT.tar.xz.N   # there, each part, in the
#                                                # checkout's root
#
# pack: the build's tools, libraries, unit tests and lit site configuration;
# LLVM's shared libraries (libLLVM, libMLIR) and the lit tools the tests use
# (lit, FileCheck, not, count, split-file); and the shared libraries they
# load, except the C and C++ runtimes (the GPU machine's newer ones serve).
# unpack: puts the LLVM files where this build looks for them
# (/usr/lib/llvm-22), the libraries that the machine lacks in
# /usr/local/lib/tfc-bundle, and links the build's absolute source path to
# the checkout, so that lit and bench/run-gpu.sh run unchanged.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22

pack() {
  local out=$1 stage
  out=$(realpath -m "$out")
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' RETURN
  # The build: tools (not the fuzzers), libraries, the runtime's unit tests,
  # lit's site files.
  mkdir -p "$stage/b/build"
  (cd "$build" && find bin lib -maxdepth 1 \( -type f -o -type l \) \
     \( -path 'bin/*' -o -name '*.so*' \) ! -name '*-fuzzer' -print0 |
     xargs -0 cp -a --parents -t "$stage/b/build")
  (cd "$build" && find test -type d -print0 | xargs -0 -I{} mkdir -p "$stage/b/build/{}")
  (cd "$build" && find test -name 'lit.site.cfg.py' -print0 |
     xargs -0 cp --parents -t "$stage/b/build")
  (cd "$build" && cp --parents -t "$stage/b/build" test/unit/TfcRuntimeTests)
  echo "$root" >"$stage/b/build/.source-root"
  # LLVM: its shared libraries (the files, not Debian's links) and lit's
  # tools, at their installed paths.
  mkdir -p "$stage/a/llvm/lib" "$stage/b/llvm/bin" "$stage/b/llvm/utils"
  cp -L "$llvm"/lib/libLLVM.so.22.1 "$llvm"/lib/libMLIR.so.22.1 "$stage/a/llvm/lib/"
  cp -a "$llvm"/bin/{lit,FileCheck,not,count,split-file} "$stage/b/llvm/bin/"
  cp -a "$llvm"/utils/lit "$stage/b/llvm/utils/"
  # The shared libraries all of it loads (resolved here), but not the C/C++
  # runtimes (the loader, libc, libm, libstdc++, libgcc_s) nor LLVM's own,
  # nor those the GPU machines have (TFC_BUNDLE_SKIP_LIBS, a regex; default:
  # ICU and libxml2, over 30 MiB that would not fit the 64 MiB a call takes).
  mkdir -p "$stage/b/syslib"
  find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
    { xargs -0 ldd 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)[.-]' |
    grep -v -E "/lib(LLVM|MLIR)\.so|^$build/" |
    grep -v -E "/(${TFC_BUNDLE_SKIP_LIBS:-libicu[a-z0-9]*|libxml2})\.so" |
    while read -r lib; do cp -L "$lib" "$stage/b/syslib/"; done
  # Two parts: each call to the GPU machine carries at most 64 MiB.
  # xz: the GPU machines have no zstd; Python's tarfile unpacks it.
  tar -C "$stage/a" -cf - . | xz -T0 -9 >"$out.1"
  tar -C "$stage/b" -cf - . | xz -T0 -9 >"$out.2"
  echo "gpu-bundle: $out.1 ($(du -h "$out.1" | cut -f1), LLVM), $out.2" \
    "($(du -h "$out.2" | cut -f1), tfc and the rest)"
}

unpack() { # a part; the build is ready when both are unpacked
  local in stage src
  in=$(realpath "$1")
  stage=$(mktemp -d)
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' \
    "$in" "$stage"
  mkdir -p "$llvm" "$root/build" "$stage/llvm" "$stage/build" "$stage/syslib"
  cp -a "$stage/llvm/." "$llvm/"
  cp -a "$stage/build/." "$root/build/"
  # Libraries this machine lacks (by soname), where the loader finds them.
  mkdir -p /usr/local/lib/tfc-bundle
  for lib in "$stage"/syslib/*; do
    [[ -e $lib ]] || continue
    ldconfig -p | grep -q -F "$(basename "$lib") " ||
      cp "$lib" /usr/local/lib/tfc-bundle/
  done
  echo /usr/local/lib/tfc-bundle >/etc/ld.so.conf.d/tfc-bundle.conf
  ldconfig
  # The build knows its sources by absolute path (lit.site.cfg.py).
  src=$(cat "$root/build/.source-root" 2>/dev/null || echo "$root")
  if [[ $src != "$root" && ! -e $src ]]; then
    mkdir -p "$(dirname "$src")"
    ln -s "$root" "$src"
  fi
  rm -rf "$stage"
  echo "gpu-bundle: unpacked; missing libraries copied:" \
    "$(ls /usr/local/lib/tfc-bundle | tr '\n' ' ')"
}

case ${1:-} in
pack) pack "${2:?usage: gpu-bundle.sh pack OUT.tar.xz}" ;;
unpack) unpack "${2:?usage: gpu-bundle.sh unpack IN.tar.xz}" ;;
*)
  echo "usage: scripts/gpu-bundle.sh pack OUT.tar.xz | unpack IN.tar.xz" >&2
  exit 2
  ;;
esac
