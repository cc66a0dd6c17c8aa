#!/usr/bin/env bash
# build-with-pkg-config.sh CC SOURCE OUT: compiles a C API program with the
# flags `pkg-config tfc` gives (PKG_CONFIG_PATH names the installed
# lib/pkgconfig), with an rpath to the installed library.
set -euo pipefail
cc=$1 src=$2 out=$3
libdir=$(pkg-config --variable=libdir tfc)
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Werror "$src" $(pkg-config --cflags --libs tfc) \
  -Wl,-rpath,"$libdir" -o "$out"
