#!/usr/bin/env bash
# Sets everything up, builds tfc and runs every test suite (lit + GoogleTest,
# through ctest). The last line is ctest's summary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
jobs=${TFC_JOBS:-2}

"$root/scripts/setup.sh"
# Real checkpoints and Python references for the conformance tests, in a
# cache outside the tree (TFC_CACHE_DIR) that later runs reuse.
"$root/scripts/setup-test-data.sh" >/dev/null
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
