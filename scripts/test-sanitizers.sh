#!/usr/bin/env bash
# The sanitizer job (scripts/test.sh runs it last; TFC_SANITIZERS=0 skips it):
#
#  1. ASan + UBSan (build-asan, TFC_SANITIZE=address,undefined): libtfcrt,
#     tfc-run, tfc-weights, the runtime's tests (TfcRuntimeTests), the
#     attention C micro-kernels' tests (TfcMicroKernelTests) and the test
#     model libraries; then those unit tests and the lit tests
#     of the runtime and tools (test/Runtime, the end-to-end tests of bad
#     inputs, out of memory, the C API and sessions, the importer's errors,
#     generation, the fake CUDA driver) with the instrumented tools. The compiler
#     (tfc-compile, tfc-opt, tfc-interpret, MLIR) is not instrumented: its
#     binaries come from the main build, which must be built first. Leaks
#     are errors (LeakSanitizer), and so is any UB (no recovery).
#  2. TSan (build-tsan, TFC_SANITIZE=thread): libtfcrt and TfcRuntimeTests;
#     every runtime test runs, among them the thread pool's, the planner's
#     parallel path and 4 threads running one model concurrently; then 4
#     sessions of one model on 4 threads (test/E2E/sessions.test) and the C
#     API test.
#
# Both build directories are configured on first use and rebuilt
# incrementally (with ccache when installed). The last line says what the
# job cost.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
main_build=${TFC_BUILD_DIR:-$root/build}
asan_build=${TFC_ASAN_BUILD_DIR:-$root/build-asan}
tsan_build=${TFC_TSAN_BUILD_DIR:-$root/build-tsan}
jobs=${TFC_JOBS:-2}
llvm_prefix=/usr/lib/llvm-22
start=$SECONDS
# On a machine shared by several builds, TFC_BUILD_LOCK names a lock file that
# serialises them (flock).
lock=()
[[ -n ${TFC_BUILD_LOCK:-} ]] && lock=(flock "$TFC_BUILD_LOCK")

configure() { # dir sanitizers
  [[ -f $1/build.ninja ]] && return
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
              -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  # -O1 -g: the usual sanitizer setting (readable reports, not too slow).
  cmake -G Ninja -S "$root" -B "$1" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$llvm_prefix/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm_prefix/bin/lit" \
    -DTFC_SANITIZE="$2" -DTFC_ENABLE_FUZZERS=OFF \
    "${launcher[@]}" >/dev/null
  echo "test-sanitizers: configured $1 (TFC_SANITIZE=$2)"
}

# The runtime side only: nothing here builds MLIR code.
runtime_targets=(tfcrt tfcrt_shared TfcRuntimeTests tfc_fake_model
                 tfc_fake_model_abi2 tfc_fake_model_ghost)

# --- ASan + UBSan ------------------------------------------------------------
t0=$SECONDS
configure "$asan_build" address,undefined
tools=(tfc-run tfc-weights)
# Runtime-only tools of other components join when they exist.
for tool in tfc-tokenize tfc-generate tfc-pack tfc-serve; do
  [[ -d $root/tools/$tool ]] && tools+=("$tool")
done
"${lock[@]}" cmake --build "$asan_build" -j "$jobs" --target "${runtime_targets[@]}" \
  tfc_fake_cuda "${tools[@]}" TfcMicroKernelTests TfcServingTests \
  tfc-engine-check
asan_build_s=$((SECONDS - t0))

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
t0=$SECONDS
"$asan_build/test/unit/TfcRuntimeTests" --gtest_brief=1
"$asan_build/test/unit/TfcServingTests" --gtest_brief=1
# The attention C micro-kernels, instrumented, on every instruction set
# the host runs (head counts that do not divide, rows without keys).
"$asan_build/test/unit/TfcMicroKernelTests" --gtest_brief=1
# The compiler's tools are the main build's (not instrumented).
for tool in tfc-compile tfc-opt tfc-interpret tfc-import; do
  if [[ ! -e $asan_build/bin/$tool && -x $main_build/bin/$tool ]]; then
    ln -sf "$main_build/bin/$tool" "$asan_build/bin/$tool"
  fi
done
# The lit tests whose work is the runtime's and the tools' (the compiler's
# share of them, uninstrumented, already ran in the main job): every test of
# test/Runtime (files, tokenizers, chat templates), the end-to-end tests of
# bad inputs, out of memory, the C API and sessions (4 threads), the
# importer's error paths, generation flags and the fake CUDA driver, the
# serving engine and tfc-serve (a leak at its exit fails serve.test).
"$llvm_prefix/bin/lit" -sv -j "$jobs" "$asan_build/test/Runtime" \
  "$asan_build"/test/E2E/{bad-inputs,reliability,c-api,sessions}.test \
  "$asan_build/test/Serving" \
  "$asan_build"/test/Import/{checkpoint-errors,sampling-flags,generate}.test \
  "$asan_build/test/Target/NVPTX/fake-driver.test"
asan_test_s=$((SECONDS - t0))

# --- TSan --------------------------------------------------------------------
t0=$SECONDS
configure "$tsan_build" thread
"${lock[@]}" cmake --build "$tsan_build" -j "$jobs" --target "${runtime_targets[@]}" \
  tfc-weights tfc-run tfc-serve tfc-engine-check
tsan_build_s=$((SECONDS - t0))
t0=$SECONDS
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan-suppressions.txt
"$tsan_build/test/unit/TfcRuntimeTests" --gtest_brief=1
for tool in tfc-compile tfc-opt tfc-interpret; do
  if [[ ! -e $tsan_build/bin/$tool && -x $main_build/bin/$tool ]]; then
    ln -sf "$main_build/bin/$tool" "$tsan_build/bin/$tool"
  fi
done
# 4 sessions of one model on 4 threads (GPT-2 and LLaMA style), each
# against a solo run, and the C API program (a C program built with
# -fsanitize=thread against the instrumented libtfcrt).
# The serving engine's thread against the threads that submit and cancel,
# and tfc-serve's HTTP threads against it.
"$llvm_prefix/bin/lit" -sv -j "$jobs" "$tsan_build"/test/E2E/{sessions,c-api}.test \
  "$tsan_build/test/Serving"
tsan_test_s=$((SECONDS - t0))

echo "test-sanitizers: passed in $((SECONDS - start)) s (ASan+UBSan: build" \
     "${asan_build_s} s, tests ${asan_test_s} s; TSan: build ${tsan_build_s} s," \
     "tests ${tsan_test_s} s)"
