#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` (the peer of bench/run-serve.sh) from the
# llama.cpp sources inside llama-cpp-python's PyPI source package (its
# vendor/llama.cpp has tools/server), once, into the cache
# ($TFC_CACHE_DIR/llama-server, default ~/.cache/tfc/llama-server), and
# prints the binary's path. CPU only, native flags (-DGGML_NATIVE=ON: the
# instruction sets of this machine, as a user building it here gets), no
# libcurl. Reused while the version is the same.
#
#   bench/setup-llama-server.sh            # prints .../bin/llama-server
#   LLAMA_CPP_PYTHON_VERSION=0.3.36 bench/setup-llama-server.sh
set -euo pipefail
version=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
cache=${TFC_CACHE_DIR:-$HOME/.cache/tfc}/llama-server
out=$cache/$version
if [[ -x $out/bin/llama-server ]]; then
  echo "$out/bin/llama-server"
  exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --disable-pip-version-check --no-deps \
  --no-binary :all: "llama-cpp-python==$version" -d "$work" >&2
tar xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src=$work/llama_cpp_python-$version/vendor/llama.cpp
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
  >&2
cmake --build "$work/build" --target llama-server -j "$(nproc)" >&2
mkdir -p "$out.tmp/bin"
cp "$work/build/bin/llama-server" "$out.tmp/bin/"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out/bin/llama-server"
