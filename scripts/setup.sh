#!/usr/bin/env bash
# Installs what tfc needs on Debian 12 (bookworm) and configures the build.
# Idempotent: when everything is installed and configured it only checks.
#
#   scripts/setup.sh            # build directory ./build
#   TFC_BUILD_DIR=out scripts/setup.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
llvm_prefix=/usr/lib/llvm-22

packages=(
  cmake ninja-build ccache python3
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  liblld-22-dev libclang-rt-22-dev libgtest-dev zlib1g-dev libzstd-dev
  nlohmann-json3-dev libpcre2-dev libutf8proc-dev libcli11-dev python3-venv
  libcpp-httplib-dev
  pkg-config
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || {
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

for tool in clang++-22 ld.lld-22; do
  command -v "$tool" >/dev/null || { echo "setup: $tool not found" >&2; exit 1; }
done

if [[ ! -f $build_dir/build.ninja ]]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
              -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -G Ninja -S "$root" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$llvm_prefix/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm_prefix/bin/lit" \
    "${launcher[@]}" >/dev/null
  echo "setup: configured $build_dir"
fi
