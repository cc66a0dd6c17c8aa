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
 * Block-quantised weights: GGUF's formats (include/tfc/Schemas/
 * BlockFormats.h has their layouts), blocks of 32 values along a row of K
 * (q8_0, q4_0, q4_1, q5_0, q5_1) or super-blocks of 256 in sub-blocks of 32
 * or 16 (q2_k, q3_k, q4_k, q5_k, q6_k).
 *
 * Activations are quantised per block of 32 on the fly into
 *   struct { float d; float s; int32_t sum, sum_lo; int8_t q[32]; }  48 bytes
 * with d = max|x| / 127, q = round-to-nearest-even(x * (1 / d)), sum = the
 * sum of q, sum_lo that of its first 16 and s = d * sum (the term the zero
 * points and minima multiply; q6_k's sub-blocks of 16 take the halves).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TFC_TARGET_CPU_MICROKERNELS_H
#define TFC_TARGET_CPU_MICROKERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Weight formats, as the kernels' `format` argument: their ggml type
 * numbers (include/tfc/Schemas/BlockFormats.h). tfc_uk_dequantize takes
 * every format BlockFormats.h decodes; qpack and qgemm those below (those
 * tfc_uk_group_block_bytes knows). q3_k is packed as q6_k (the same
 * sub-blocks of 16 and signed 6-bit scales; its 3-bit quants q become
 * q + 32 of q6_k's 6 bits, exactly) and multiplied by q6_k's kernels; q2_k
 * keeps its 2-bit quants in 4-bit nibbles (q4_k's sub layout) with a scale
 * and a minimum per 16 elements. */
enum {
  TFC_UK_Q8_0 = 8,
  TFC_UK_Q4_0 = 2,
  TFC_UK_Q4_1 = 3,
  TFC_UK_Q5_0 = 6,
  TFC_UK_Q5_1 = 7,
  TFC_UK_Q2_K = 10,
  TFC_UK_Q3_K = 11,
  TFC_UK_Q4_K = 12,
  TFC_UK_Q5_K = 13,
  TFC_UK_Q6_K = 14,
};

/* Bytes of one quantised activation block. */
#define TFC_UK_ACT_BLOCK_BYTES 48

/* Quantises rows [row0, row1) of x ([rows, k], row stride ldx floats; k a
 * multiple of 32) into activation blocks: row r's k / 32 blocks start at
 * out + r * (k / 32) * TFC_UK_ACT_BLOCK_BYTES. */
void tfc_uk_quantize_rows(const float *x, int64_t ldx, int64_t row0,
                          int64_t row1, int64_t k, void *out);
/* The same blocks with one scale per 256 activations (k a multiple of 256),
 * as llama.cpp quantises the activations that multiply its K-quant weights
 * (Q8_K): the element of largest magnitude maps to -127, the others are
 * rounded to the nearest integer of x * (-127 / that element), at most 127;
 * each of the 8 blocks of 32 carries the shared scale. For weights of a
 * K-quant format only (256-element blocks), where the kernels see the same
 * block layout. */
void tfc_uk_quantize_rows_256(const float *x, int64_t ldx, int64_t row0,
                              int64_t row1, int64_t k, void *out);

/* Weights are repacked at load into groups of TFC_UK_GROUP_ROWS rows: per
 * group and block (super-block for the K-quants), the rows' scales, then
 * their quants interleaved so that one vector of quants is a 4-element
 * slice of every row of the group (QuantGemm.c has the byte order). A
 * packed [n, k] weight is ceil(n / 8) x (k / block elements) group-blocks of
 * tfc_uk_group_block_bytes(format) bytes: 8 times the block for the
 * 32-element formats (272 for q8_0, ...) and q6_k and q3_k (1680); 1184 for
 * q4_k and 1440 for q5_k, whose 6-bit scales and minima are unpacked to bytes
 * (2.8 % and 2.3 % more); 1312 for q2_k (its quants in nibbles: twice its
 * size); rows past n are zero. 0 for a format without kernels. */
#define TFC_UK_GROUP_ROWS 8
static inline int64_t tfc_uk_group_block_bytes(int32_t format) {
  switch (format) {
  case TFC_UK_Q8_0: return 272;
  case TFC_UK_Q4_0: return 144;
  case TFC_UK_Q4_1: return 160;
  case TFC_UK_Q5_0: return 176;
  case TFC_UK_Q5_1: return 192;
  case TFC_UK_Q4_K: return 1184;
  case TFC_UK_Q5_K: return 1440;
  case TFC_UK_Q2_K:
    return 1312;
  case TFC_UK_Q6_K:
  case TFC_UK_Q3_K:
    return 1680;
  default: return 0;
  }
}

/* Packs w (n rows of kBlocks blocks of `format`, as stored) into out. */
void tfc_uk_qpack(int32_t format, const void *w, int64_t n, int64_t kBlocks,
                  void *out);

/* c[i, r] = sum over k of a[i, k] * w[r, k] (+ bias[r] when bias is not
 * null) for rows i in [0, m) and the weight rows r of groups [g0, g1) that
 * are below n: a holds the quantised activations of m rows
 * (tfc_uk_quantize_rows: k / 32 blocks each), w the packed weight
 * (tfc_uk_qpack, kBlocks blocks of the format per row), c has row stride
 * ldc floats. */
void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t g0, int64_t g1, int64_t n, int64_t kBlocks,
                  const float *bias, float *c, int64_t ldc);

/* Dequantises `blocks` blocks of `format` from w into out (32 or 256
 * floats per block: tfc_block_elements), bit for bit as the runtime does. */
void tfc_uk_dequantize(int32_t format, const void *w, int64_t blocks,
                       float *out);

/* Attention for a few query rows over many keys (decoding; Attention.c):
 * softmax(cap(q . k * scale) + mask) . v for q [B, H, Tq, D], k [B, Hkv, Tk,
 * D], v [B, Hkv, Tk, Dv], mask an additive bias broadcasting to [B, H, Tq, Tk]
 * (or null), in tasks of (batch, key/value head, split of the keys), then a
 * combine per (batch, head). Query head h reads key/value head
 * min(h / max(H / Hkv, 1), Hkv - 1) (GQA; any run-time head counts, none
 * read past the last key/value head; no task without key/value heads). `shape`
 * is an array of TFC_UK_ATTENTION_SHAPE int64: batch, heads, kvHeads, tq, tk,
 * d, dv, splits, causal (0/1), window (0: none; else row i sees keys j > i + tk
 * - tq - window), R of the relative bias (0: none) and its rows, then the
 * strides in elements of q, k, v, the mask and the output as [B, H|Hkv, T, D]
 * (4 each; 0 where the mask broadcasts; the innermost of q, k, v and the output
 * is 1: the output [B, H, Tq, Dv] may be a transposed view of [B, Tq, H, Dv],
 * the heads merged in place). Position biases of the distance r = j - (i + tk -
 * tq) from query i to key j (tfc.attention): relBias (or null) is a dense
 * [rows, 2R + 1] and adds relBias[min(h, rows - 1), clamp(r, -R, R) + R];
 * slopes (or null) holds one ALiBi slope per head and adds slopes[h] * r.
 * softcap > 0 soft-caps each scaled score before those terms, cap(s) =
 * softcap tanh(s / softcap) (Gemma 2); 0: cap(s) = s.
 * rowPast (or null: tk for every row) puts each batch row at its own
 * position: row b attends to keys [0, rowPast[b] + tq) (clamped to [0, tk]),
 * its causal diagonal and window counted from there (r = j - (i +
 * rowPast[b])): rows at their own positions over one cache. With them, row b's
 * keys are split by the rule below applied to its own count (the grid's
 * `splits` is the rule for tk, the most), so that its result depends on its
 * keys alone, not on the other rows of the call. */
#define TFC_UK_ATTENTION_SHAPE 32
/* The decode kernel's splits of tk keys: ceil(tk / KEYS_PER_SPLIT), at least
 * 1 and at most MAX_SPLITS (the compiler and the kernel follow this rule). */
#define TFC_UK_ATTENTION_KEYS_PER_SPLIT 256
#define TFC_UK_ATTENTION_MAX_SPLITS 32
/* Floats of the partial results (max, sum, output per split and row). */
int64_t tfc_uk_attention_partial_floats(const int64_t *shape);
/* Task in [0, batch * kvHeads * splits). */
void tfc_uk_attention_split(const float *q, const float *k, const float *v,
                            const float *mask, const float *relBias,
                            const float *slopes, const int64_t *rowPast,
                            float *partial, const int64_t *shape, float scale,
                            float softcap, int64_t task);
/* The same with k and v of IEEE half precision (a KV cache of f16), widened
 * to f32 as they are read. */
void tfc_uk_attention_split_f16(const float *q, const uint16_t *k,
                                const uint16_t *v, const float *mask,
                                const float *relBias, const float *slopes,
                                const int64_t *rowPast, float *partial,
                                const int64_t *shape, float scale,
                                float softcap, int64_t task);
/* Task in [0, batch * heads): writes out[b, h, :, :] (a dense
 * [B, H, Tq, Dv] buffer). */
void tfc_uk_attention_combine(const float *partial, float *out,
                              const int64_t *shape, int64_t task);

/* Attention of many query rows (prefill; Attention.c), same operands and
 * shape array (its `splits` unused). K is first transposed, once per call,
 * into kt [B, Hkv, D, roundup(Tk, 32)]; then each task takes a block of
 * query rows of one (batch, head) and, per chunk of at most
 * TFC_UK_ATTENTION_PREFILL_KEYS keys, computes its scores (a
 * register-blocked product with kt), each row's softmax (exact for one
 * chunk, online across several) and the product with V, and writes
 * out[b, h, rows, :] (a dense [B, H, Tq, Dv] buffer). */
#define TFC_UK_ATTENTION_PREFILL_KEYS 1024
/* Floats of kt. */
int64_t tfc_uk_attention_kt_floats(const int64_t *shape);
/* Task in [0, batch * kvHeads). */
void tfc_uk_attention_transpose_k(const float *k, float *kt,
                                  const int64_t *shape, int64_t task);
void tfc_uk_attention_transpose_k_f16(const uint16_t *k, float *kt,
                                      const int64_t *shape, int64_t task);
/* Tasks of tfc_uk_attention_prefill. */
int64_t tfc_uk_attention_prefill_tasks(const int64_t *shape);
void tfc_uk_attention_prefill(const float *q, const float *kt, const float *v,
                              const float *mask, const float *relBias,
                              const float *slopes, const int64_t *rowPast,
                              float *out, const int64_t *shape, float scale,
                              float softcap, int64_t task);
/* The same with v of f16 (kt is f32: tfc_uk_attention_transpose_k_f16). */
void tfc_uk_attention_prefill_f16(const float *q, const float *kt,
                                  const uint16_t *v, const float *mask,
                                  const float *relBias, const float *slopes,
                                  const int64_t *rowPast, float *out,
                                  const int64_t *shape, float scale,
                                  float softcap, int64_t task);

#ifdef __cplusplus
}
#endif

#endif /* TFC_TARGET_CPU_MICROKERNELS_H */
