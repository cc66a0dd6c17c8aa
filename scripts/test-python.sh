#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest, the Ray Serve test
# included: a local two-node Ray cluster on loopback): installs the package
# from ./python into a venv in the cache (TFC_CACHE_DIR, default
# ~/.cache/tfc/python-venv) against the build in TFC_BUILD_DIR (default
# build/), then runs pytest. Needs the build and scripts/setup-test-data.sh's
# checkpoints (test.sh runs both first). Exit status: pytest's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
cache=${TFC_CACHE_DIR:-$HOME/.cache/tfc}
venv=$cache/python-venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
# pytest; the openai client and Ray Serve for python/tests/test_ray_serve.py
# (about 500 MB, once).
"$venv/bin/pip" install -q --disable-pip-version-check pytest numpy \
  openai==3.57.0 "ray[serve]==2.60.0"
# A fresh build of the extension against this build's tfc package.
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall \
  --no-deps "$root/python" \
  -Ccmake.define.tfc_DIR="$build_dir/lib/cmake/tfc" \
  -Cbuild-dir="$build_dir/python"
cd "$root/python/tests"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
