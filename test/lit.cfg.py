# -*- Python -*-
# lit configuration of the tfc test suite.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TFC"


# The test format (test/lit_format.py): ShTest that deletes a passing test's
# %t files; TFC_LIT_KEEP_OUTPUT=1 keeps them.
sys.path.insert(0, os.path.dirname(__file__))
from lit_format import ShTestThatCleansUp  # noqa: E402

config.test_format = ShTestThatCleansUp(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tfm", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "unit", "Inputs"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tfc_src_root", config.tfc_src_root))
config.substitutions.append(("%tfc_engine_check", os.path.join(config.tfc_obj_root, "test", "Serving", "tfc-engine-check")))
config.substitutions.append(("%tfc_obj_root", config.tfc_obj_root))
config.substitutions.append(("%tfc_c_compiler", config.tfc_c_compiler))
# The shared libtfcrt and a C compiler, for programs that use the C API.
config.substitutions.append(("%tfc_lib_dir", os.path.join(config.tfc_obj_root, "lib")))
# In a sanitizer build (TFC_SANITIZE, scripts/test-sanitizers.sh) libtfcrt.so
# needs the sanitizer runtime: C programs get the same -fsanitize.
_sanitize = getattr(config, "tfc_sanitize", "")
if _sanitize:
    config.available_features.add("sanitizer")
config.substitutions.append(
    ("%cc", config.tfc_c_compiler +
     (" -fsanitize=" + _sanitize if _sanitize else "")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# Scripts under test/ (e.g. test/E2E/Inputs/compare.sh) find the tools on PATH.
llvm_config.with_environment("PATH", config.tfc_tools_dir, append_path=True)

tool_dirs = [config.tfc_tools_dir, config.llvm_tools_dir]
# TFC_HOST_CPU=LEVEL (x86-64-v3, ...; include/tfc/Schemas/CpuLevels.h) masks
# the host's CPU down to an x86-64 level for every tool of the suite: the
# compiler compiles for that level where it would for the host, the runtime
# runs only what such a host could. scripts/test.sh runs the suite again so
# on AVX-512 hosts, so that they also prove an AVX2 host's expectations.
_host_cpu = os.environ.get("TFC_HOST_CPU", "")
if _host_cpu:
    config.environment["TFC_HOST_CPU"] = _host_cpu
# Tuning records (tfc-tune) change the GEMM's blocking of every compile for
# the host: the suite runs without them (TFC_TUNE_FILE=none), so that the
# user's ~/.cache/tfc/tuning.json does not change what the tests see, unless
# TFC_TUNE_FILE names a file, to run the suite under that tuning (its tests
# of kernel names and IR then differ; its numerical tests must not).
config.environment["TFC_TUNE_FILE"] = os.environ.get("TFC_TUNE_FILE", "") or "none"
tools = ["tfc-opt", "tfc-compile", "tfc-tune", "tfc-interpret", "tfc-run", "tfc-weights",
         "tfc-import", "tfc-generate", "tfc-serve",
         "tfc-tokenize", "tfc-pack", "tfc-perplexity", "tfc-quantize"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.add_tool_substitutions(["not", "split-file", "count"],
                                   [config.llvm_tools_dir])

# The host's instruction sets as the runtime sees them (tfc-run --host-cpu,
# after TFC_HOST_CPU's mask), as lit features: "cpu-<feature>" for each, and
# "x86-64-v3" (AVX2 + FMA + F16C: the AVX2 kernels) and "x86-64-v4"
# (AVX-512 F/BW/CD/DQ/VL: the AVX-512 kernels) for the levels. A test whose
# point is a kernel of one ISA says REQUIRES: x86-64-v4 (or cpu-avx512vnni)
# and has a twin for the other ISA where the fallback path matters.
def _host_cpu_features():
    import subprocess
    tfc_run = os.path.join(config.tfc_tools_dir, "tfc-run")
    if not os.path.exists(tfc_run):
        return set()
    result = subprocess.run([tfc_run, "--host-cpu"], capture_output=True,
                            text=True)
    if result.returncode != 0:
        lit_config.fatal("tfc-run --host-cpu: " + result.stderr.strip())
    for line in result.stdout.splitlines():
        if line.startswith("features:"):
            return set(line[len("features:"):].split())
    return set()

_cpu = _host_cpu_features()
for _f in sorted(_cpu):
    config.available_features.add("cpu-" + _f)
if {"avx2", "fma", "f16c", "bmi2"} <= _cpu:
    config.available_features.add("x86-64-v3")
    if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= _cpu:
        config.available_features.add("x86-64-v4")

# The fuzz target is only built with clang (TFC_ENABLE_FUZZERS).
if os.path.exists(os.path.join(config.tfc_tools_dir, "tfc-frontend-fuzzer")):
    config.available_features.add("fuzzer")
    llvm_config.add_tool_substitutions(["tfc-frontend-fuzzer"], [config.tfc_tools_dir])
# Every fuzz target in the tools dir (tools/tfc-*-fuzzer, built with the
# frontend's): a substitution and a feature named after it (the smoke tests
# say REQUIRES: fuzzer).
if os.path.isdir(config.tfc_tools_dir):
    for _fuzzer in sorted(os.listdir(config.tfc_tools_dir)):
        if _fuzzer.startswith("tfc-") and _fuzzer.endswith("-fuzzer"):
            config.available_features.add(_fuzzer)
            llvm_config.add_tool_substitutions([_fuzzer], [config.tfc_tools_dir])

# ptxas assembles the PTX of every GPU-lowered test (CUDA toolkit; CUDA_HOME
# or /usr/local/cuda, else PATH). Tests that need it say REQUIRES: ptxas.
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if not os.path.exists(ptxas):
    ptxas = shutil.which("ptxas") or ""
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(
    ("%check_ptx", "bash " + os.path.join(config.tfc_src_root, "test", "Target",
                                          "NVPTX", "Inputs", "ptxas-all.sh")
     + " " + (ptxas or "ptxas")))
# Pass CUDA_HOME through so that tfc-compile finds libdevice where lit does.
if "CUDA_HOME" in os.environ:
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]
if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")

# The SASS checks (scripts/sass-report.py: ptxas -v and nvdisasm per
# kernel) need nvdisasm: PyPI's nvidia-cuda-nvdisasm in the test venv
# (scripts/setup-test-data.sh), else the toolkit's, else PATH; TFC_NVDISASM
# overrides. Tests that need it say REQUIRES: nvdisasm.
def _find_nvdisasm():
    if os.environ.get("TFC_NVDISASM"):
        return os.environ["TFC_NVDISASM"]
    cache = os.environ.get("TFC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "tfc")
    import glob
    for candidate in sorted(glob.glob(os.path.join(
            cache, "venv", "lib", "python3*", "site-packages", "nvidia", "cu*",
            "bin", "nvdisasm"))) + [os.path.join(cuda_home, "bin", "nvdisasm")]:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("nvdisasm") or ""
nvdisasm = _find_nvdisasm()
if nvdisasm and ptxas:
    config.available_features.add("nvdisasm")
    config.substitutions.append(
        ("%sass_report", "python3 " + os.path.join(config.tfc_src_root, "scripts",
                                                   "sass-report.py")
         + " --ptxas " + ptxas + " --nvdisasm " + nvdisasm))
# GPU execution tests (test/E2E/GPU, REQUIRES: cuda-gpu) run only where a
# CUDA driver loads and sees a device; elsewhere lit reports them UNSUPPORTED.
def _cuda_device_present():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    try:
        return (cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0
                and count.value > 0)
    except AttributeError:
        return False

if "TFC_CUDA_DRIVER" not in os.environ and _cuda_device_present():
    config.available_features.add("cuda-gpu")

# The stand-in CUDA driver (test/unit/FakeCuda.cpp), built with the unit tests.
fake_cuda = os.path.join(config.tfc_obj_root, "lib", "libtfc_fake_cuda.so")
if os.path.exists(fake_cuda):
    config.available_features.add("fake-cuda")
    config.substitutions.append(("%fake_cuda", fake_cuda))

# The CUDA emulator (lib/Runtime/CudaEmulator): models compiled with
# --gpu-emulate run their kernels on the CPU through the runtime's CUDA path
# (TFC_CUDA_DRIVER=%cuda_emulator). Built with the runtime, so always here.
cuda_emulator = os.path.join(config.tfc_obj_root, "lib", "libtfc_cuda_emulator.so")
if os.path.exists(cuda_emulator):
    config.available_features.add("cuda-emulator")
    config.substitutions.append(("%cuda_emulator", cuda_emulator))

# Real checkpoints and light Python references (scripts/setup-test-data.sh,
# which scripts/test.sh runs): all-MiniLM-L6-v2 (a Hugging Face directory),
# SmolLM2-135M-Instruct (a Q4_1 .gguf) and a venv with numpy, tokenizers,
# safetensors and gguf. Tests that need them say REQUIRES: real-models; CI
# always has them (scripts/test.sh fails when they cannot be installed).
tfc_cache = os.environ.get("TFC_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
    "tfc")
_ref_python = os.path.join(tfc_cache, "venv", "bin", "python")
_minilm = os.path.join(tfc_cache, "models", "minilm")
_smollm2 = os.path.join(tfc_cache, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
if os.path.exists(_ref_python):
    config.available_features.add("ref-python")
    config.substitutions.append(("%ref_python", _ref_python))
if os.path.exists(_ref_python) and os.path.exists(os.path.join(_minilm, "config.json")) \
        and os.path.exists(_smollm2):
    config.available_features.add("real-models")
    config.substitutions.append(("%minilm_dir", _minilm))
    config.substitutions.append(("%smollm2_gguf", _smollm2))
# The full-size tier (docs/testing.md): the Q4_K_M downloads of
# scripts/setup-test-data.sh --large. Tests that need them say REQUIRES:
# large-models; the README test command does not fetch them.
_qwen = os.path.join(tfc_cache, "models", "qwen2.5-coder-0.5b",
                     "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
_gemma3 = os.path.join(tfc_cache, "models", "gemma3-270m", "gemma-3-270m-q4_k_m.gguf")
if "real-models" in config.available_features and os.path.exists(_qwen) \
        and os.path.exists(_gemma3):
    config.available_features.add("large-models")
    config.substitutions.append(("%qwen_gguf", _qwen))
    config.substitutions.append(("%gemma3_gguf", _gemma3))
# The embedders of the full-size tier (same script): nomic-embed-text-v1.5
# (GGUF nomic-bert, F16) and all-mpnet-base-v2 (sentence-transformers).
_nomic = os.path.join(tfc_cache, "models", "nomic-embed-text-v1.5",
                      "nomic-embed-text-v1.5.f16.gguf")
_mpnet = os.path.join(tfc_cache, "models", "all-mpnet-base-v2")
if "real-models" in config.available_features and os.path.exists(_nomic) \
        and os.path.exists(os.path.join(_mpnet, "model.safetensors")):
    config.available_features.add("large-embedders")
    config.substitutions.append(("%nomic_gguf", _nomic))
    config.substitutions.append(("%mpnet_dir", _mpnet))
# The larger decoder (scripts/setup-test-data.sh --larger): the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M download, 28 layers of 1536.
_qwen15 = os.path.join(tfc_cache, "models", "qwen2.5-coder-1.5b",
                       "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
if "real-models" in config.available_features and os.path.exists(_qwen15):
    config.available_features.add("larger-models")
    config.substitutions.append(("%qwen15_gguf", _qwen15))
