/*===- MicroKernels.h - C micro-kernels linked into CPU models -----*- C -*-===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * Kernels written once in C (the .c files of lib/Target/CPU/MicroKernels), compiled at
 * build time to LLVM bitcode for each instruction set they have a path for,
 * and linked into a model's LLVM module by the CPU backend (Emit.cpp), which
 * picks the bitcode for the target's features. The code the compiler emits
 * calls them with plain pointers; after linking they are internal to the
 * model and inlined or not as LLVM sees fit. This header is the contract
 * between the emitters (lib/Conversion/TfcToCPU/QuantGemm.cpp) and the C
 * sources: names, argument lists and the layouts below.
 *
 * Block-quantised weights (GGUF's formats; blocks of 32 values along a row
 * of K):
 *   q8_0: f16 d, int8 q[32]               x = d * q              34 bytes
 *   q4_0: f16 d, u8 nibbles[16]           x = d * (q - 8)        18 bytes
 *   q4_1: f16 d, f16 m, u8 nibbles[16]    x = d * q + m          20 bytes
 * byte j of the nibbles holds element j (low) and element j + 16 (high).
 *
 * Activations are quantised per block of 32 on the fly into
 *   struct { float d; float s; int8_t q[32]; }                   40 bytes
 * with d = max|x| / 127, q = round-to-nearest-even(x / d) and s = d * sum(q)
 * (the term the zero points of q4_0 and q4_1 multiply).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TFC_TARGET_CPU_MICROKERNELS_H
#define TFC_TARGET_CPU_MICROKERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Weight formats, as the kernels' `format` argument. */
enum {
  TFC_UK_Q8_0 = 0,
  TFC_UK_Q4_0 = 1,
  TFC_UK_Q4_1 = 2,
};

/* Bytes of one quantised activation block. */
#define TFC_UK_ACT_BLOCK_BYTES 40

/* Quantises rows [row0, row1) of x ([rows, k], row stride ldx floats; k a
 * multiple of 32) into activation blocks: row r's k / 32 blocks start at
 * out + r * (k / 32) * 40. */
void tfc_uk_quantize_rows(const float *x, int64_t ldx, int64_t row0,
                          int64_t row1, int64_t k, void *out);

/* c[i, n] = sum over k of a[i, k] * w[n, k] (+ bias[n] when bias is not
 * null) for rows i in [0, m) and weight rows n in [n0, n1): a holds the
 * quantised activations of m rows (tfc_uk_quantize_rows), w the weight's
 * rows of kBlocks blocks of `format`, c has row stride ldc floats. */
void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t n0, int64_t n1, int64_t kBlocks, const float *bias,
                  float *c, int64_t ldc);

/* Dequantises `blocks` blocks of `format` from w into out (32 floats per
 * block). */
void tfc_uk_dequantize(int32_t format, const void *w, int64_t blocks,
                       float *out);

#ifdef __cplusplus
}
#endif

#endif /* TFC_TARGET_CPU_MICROKERNELS_H */
