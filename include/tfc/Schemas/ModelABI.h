/*===- ModelABI.h - The contract between a compiled model and libtfcrt ---*- C -*-===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * What a model shared library produced by `tfc-compile -o model.so` exports,
 * and what the runtime provides to it. Users do not call these symbols
 * directly: they use the C API in tfc/Runtime/tfc.h. This header is the one
 * place both sides (the compiler's CPU backend and libtfcrt) agree on; see
 * docs/abi.md for the prose version.
 *
 * Exported symbols (all with C linkage, default visibility):
 *
 *   const char tfc_model_metadata[];
 *       NUL-terminated JSON describing the model (format version
 *       TFC_ABI_VERSION): model name, target, weights, derived constants,
 *       entries with their inputs and outputs. See docs/abi.md.
 *
 *   const tfc_rt_hooks *tfc_model_hooks;
 *       A pointer the runtime sets after dlopen, before any call. Null means
 *       "no runtime": the model then uses malloc/free and runs serially.
 *
 *   void tfc_model_init(void *const *table);
 *       Computes the derived constants (packed or transposed weights, merged
 *       projections) from the weights. Called once after the weights are
 *       bound and the constant buffers are allocated.
 *
 *   void tfc_entry_<name>(void *const *table, tfc_memref *const *inputs,
 *                         tfc_memref *const *outputs);
 *       Runs entry point <name>. `inputs[i]` points to a descriptor of the
 *       i-th input of the rank given in the metadata (contiguous, row-major).
 *       `outputs[i]` points to a descriptor the entry fills in: the output is
 *       allocated through the hooks' alloc and belongs to the caller, who
 *       releases `allocated` with the hooks' free.
 *
 * A model compiled with --target=cuda (metadata target.device "cuda")
 * also exports
 *
 *   const char tfc_cuda_archs[];      "sm_80,sm_90": the PTX it carries;
 *   const char tfc_cuda_ptx_sm_XX[];  the PTX module for each of them;
 *   const char tfc_cuda_kernels[];    kernel names, one per line, in the
 *                                     order of the launch hook's indices.
 *
 * Its table, inputs, outputs and hook allocations are device pointers; its
 * host code only computes sizes and calls the launch hook.
 *
 * `table` holds, in metadata order, one pointer per weight (its data, in the
 * dtype and shape of the metadata, 64-byte aligned where possible) followed by
 * one pointer per derived constant (a buffer of the metadata's byte size and
 * alignment, owned by the runtime).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TFC_SCHEMAS_MODELABI_H
#define TFC_SCHEMAS_MODELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_ABI_VERSION 1

/* A strided memref descriptor of rank R, the layout MLIR's LLVM lowering uses:
 *   { void *allocated; void *aligned; int64_t offset;
 *     int64_t sizes[R]; int64_t strides[R]; }
 * The element at (i0, ..., iR-1) is aligned[offset + sum_k ik * strides[k]].
 * Declared with the maximum rank; a descriptor of rank R only uses the first
 * 3 + 2R words, with strides starting right after sizes[R-1]. Use the helpers
 * below rather than the fields when R < TFC_MAX_RANK. */
#define TFC_MAX_RANK 8
typedef struct tfc_memref {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes_and_strides[2 * TFC_MAX_RANK];
} tfc_memref;

static inline int64_t *tfc_memref_sizes(tfc_memref *m) {
  return m->sizes_and_strides;
}
static inline int64_t *tfc_memref_strides(tfc_memref *m, int rank) {
  return m->sizes_and_strides + rank;
}

/* What the runtime gives the model. All members are required. */
typedef struct tfc_rt_hooks {
  /* Allocates `size` bytes aligned to `alignment` (a power of two). Never
   * returns null for size > 0 unless memory is exhausted. */
  void *(*alloc)(int64_t size, int64_t alignment);
  /* Releases memory from `alloc` (null is allowed). */
  void (*free)(void *ptr);
  /* Calls fn(ctx, begin, end) on disjoint ranges covering [0, n), possibly
   * concurrently, and returns when all calls have returned. */
  void (*parallel_for)(int64_t n,
                       void (*fn)(void *ctx, int64_t begin, int64_t end),
                       void *ctx);
  /* CUDA models only (CPU models never call it): launches kernel `kernel`
   * (an index into tfc_cuda_kernels) on `grid` x `block` threads with
   * `shared_bytes` of dynamic shared memory; `args[i]` points to the i-th
   * kernel parameter. Launches are ordered; a failure is recorded by the
   * runtime and reported when the entry returns. */
  void (*launch)(int64_t kernel, int64_t grid_x, int64_t grid_y,
                 int64_t grid_z, int64_t block_x, int64_t block_y,
                 int64_t block_z, int32_t shared_bytes, void **args,
                 int64_t num_args);
  /* May be null. tfc_model_init calls it (through the model's internal
   * TFC_RT_RELEASE_SYMBOL) with a weight it has consumed, right after
   * computing a derived constant from it (a block-quantised matrix once
   * packed): where [data, data + bytes) lies in a read-only file mapping the
   * runtime drops its pages from the process, so that the weights and
   * their packed forms are not resident together while init runs; a later
   * read maps them again. */
  void (*release)(const void *data, int64_t bytes);
} tfc_rt_hooks;

/* The model library's internal function `void f(const void *, int64_t)`
 * that calls the release hook when the runtime set one (the hooks' order:
 * alloc 0, free 1, parallel_for 2, launch 3, release 4). */
#define TFC_RT_RELEASE_SYMBOL "tfc_rt_release"

#ifdef __cplusplus
}
#endif

#endif /* TFC_SCHEMAS_MODELABI_H */
