/*===- QuantGemm.c - GEMM and GEMV over block-quantised weights -----------===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * One source for every instruction set: the build compiles it once per ISA
 * to LLVM bitcode (-mavx2 -mfma -mf16c; the same plus AVX-512 VL/BW/VNNI;
 * and plain x86-64), and the CPU backend links the bitcode matching the
 * target (include/tfc/Target/CPU/MicroKernels.h has the contract).
 *
 * The products are integer: activations are quantised per block of 32 to
 * int8 (tfc_uk_quantize_rows), and each (weight block, activation block)
 * pair is 32 int8 x int8 (q8_0) or u4 x int8 (q4_0, q4_1) multiply-adds,
 * summed in int32 by vpmaddubsw + vpmaddwd (AVX2) or vpdpbusd (AVX-512 VNNI
 * on 256-bit vectors), then scaled by d_w * d_a into an f32 accumulator.
 * The zero points of q4_0 (-8 d) and q4_1 (m) multiply the activation
 * block's sum s. Both dot instructions take unsigned x signed bytes: with
 * VNNI, q8_0 weights go in as w + 128 and 128 times the activations'
 * integer sum comes off the int32 result (vpdpbusd does not saturate); with
 * AVX2 as |w| with the activation carrying w's sign (the 16-bit sums of
 * vpmaddubsw would saturate on w + 128).
 *
 * The weights are repacked once, at load (tfc_uk_qpack), so that a vector
 * of quants is a 4-element slice of 8 rows: each dot instruction then adds
 * to 8 rows' sums at once, and the 8 rows' scales are one vector (no
 * horizontal sums, one f16 conversion per 8 row-blocks). A tile is MR
 * activation rows x 8 weight rows: every loaded weight vector serves MR
 * rows (AVX2: 2, 16 ymm registers); decoding (one row) runs 1 x 8 tiles.
 * With AVX-512 VNNI a zmm holds two groups (group_pair_tile: 16 weight rows
 * per dot instruction, tiles of 8 activation rows), a task's odd last group
 * a 4 x 8 ymm tile.
 *
 *===----------------------------------------------------------------------===*/

#include "tfc/Target/CPU/MicroKernels.h"
#include "tfc/Schemas/BlockFormats.h"

#include <string.h>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define TFC_UK_SIMD 1
#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#define TFC_UK_VNNI 1
#define MR 4
#else
#define MR 2
#endif
#endif

typedef struct {
  float d, s;
  int32_t sum;
  int8_t q[32];
} act_block;

_Static_assert(sizeof(act_block) == TFC_UK_ACT_BLOCK_BYTES,
               "activation block layout");

#define INLINE static inline __attribute__((always_inline))

INLINE int64_t block_bytes(int32_t format) {
  return format == TFC_UK_Q8_0 ? 34 : format == TFC_UK_Q4_0 ? 18 : 20;
}

/* A block of 32 floats as 4 vectors of 8 (clang's vector extension: ymm
 * with AVX2 and AVX-512, pairs of xmm in the scalar build). Written out:
 * clang vectorised the element loops across blocks, with gathers and
 * spills (tfc_uk_quantize_rows was 9 % of SmolLM2's 128-token forward). */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int8_t v8b __attribute__((vector_size(8)));

void tfc_uk_quantize_rows(const float *x, int64_t ldx, int64_t row0,
                          int64_t row1, int64_t k, void *out) {
  int64_t kb = k / 32;
  const v8i magnitude = (v8i){0, 0, 0, 0, 0, 0, 0, 0} + 0x7FFFFFFF;
  for (int64_t r = row0; r < row1; ++r) {
    const float *xr = x + r * ldx;
    act_block *y = (act_block *)out + r * kb;
    for (int64_t b = 0; b < kb; ++b) {
      v8f v[4];
      memcpy(v, xr + 32 * b, sizeof v);
      /* max |v|: lanes that are greater replace the maximum (a NaN never
       * is, as in a scalar a > amax ? a : amax from 0) */
      v8f amax = (v8f){0};
      for (int u = 0; u < 4; ++u) {
        v8f a = (v8f)((v8i)v[u] & magnitude);
        v8i gt = a > amax;
        amax = (v8f)(((v8i)a & gt) | ((v8i)amax & ~gt));
      }
      float m = 0;
      for (int t = 0; t < 8; ++t)
        m = amax[t] > m ? amax[t] : m;
      float d = m / 127.0f;
      float id = d != 0 ? 1.0f / d : 0.0f;
      v8i sum = (v8i){0};
      for (int u = 0; u < 4; ++u) {
        /* round to nearest, ties to even, for |x| < 2^22 (here <= 127),
         * in the default rounding mode and without a libm call (built
         * without -ffast-math, which would fold it away): + 1.5 * 2^23 */
        v8f scaled = v[u] * id;
        v8i q = __builtin_convertvector(
            (scaled + 12582912.0f) - 12582912.0f, v8i);
        v8b bytes = __builtin_convertvector(q, v8b);
        memcpy(y[b].q + 8 * u, &bytes, 8);
        sum += q;
      }
      int total = 0;
      for (int t = 0; t < 8; ++t)
        total += sum[t];
      y[b].d = d;
      y[b].s = d * (float)total;
      y[b].sum = total;
    }
  }
}

void tfc_uk_dequantize(int32_t format, const void *w, int64_t blocks,
                       float *out) {
  /* Block bytes by ggml type, for the formats BlockFormats.h decodes. */
  static const int16_t bytes[15] = {0, 0, 18, 20, 0, 0, 22, 24, 34, 0,
                                    84, 110, 144, 176, 210};
  if (format < 0 || format >= 15 || !bytes[format])
    return;
  const uint8_t *p = (const uint8_t *)w;
  int64_t elements = tfc_block_elements(format);
  for (int64_t b = 0; b < blocks; ++b, p += bytes[format], out += elements)
    tfc_block_dequantize(format, p, out);
}

/* The packed layout (MicroKernels.h): per group of 8 rows and block, the 8
 * scales d (f16), for q4_1 the 8 minima m (f16), then the quants
 * interleaved by 4: q8_0 in 8 steps of 32 bytes, step t holding k = 4t..4t+3
 * of rows 0..7 (4 bytes each); q4 in 4 loads of 32 bytes, load u holding the
 * nibble bytes j = 4u..4u+3 of rows 0..7 (low nibbles: k = 4u..4u+3, high:
 * k = 16 + 4u..). A 32-byte vector of quants is then one 4-element slice of
 * 8 rows, and its dot product with one broadcast dword of activations gives
 * each row's partial sum in its own int32 lane. */
INLINE int64_t quant_offset(int32_t format) {
  return format == TFC_UK_Q4_1 ? 32 : 16;
}

int64_t tfc_uk_group_block_bytes(int32_t format) {
  return quant_offset(format) + (format == TFC_UK_Q8_0 ? 256 : 128);
}

void tfc_uk_qpack(int32_t format, const void *w, int64_t n, int64_t kBlocks,
                  void *out) {
  const uint8_t *src = (const uint8_t *)w;
  uint8_t *dst = (uint8_t *)out;
  int64_t bb = block_bytes(format), gb = tfc_uk_group_block_bytes(format);
  int64_t groups = (n + TFC_UK_GROUP_ROWS - 1) / TFC_UK_GROUP_ROWS;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t b = 0; b < kBlocks; ++b) {
      uint8_t *p = dst + (g * kBlocks + b) * gb;
      memset(p, 0, (size_t)gb);
      uint8_t *q = p + quant_offset(format);
      for (int r = 0; r < TFC_UK_GROUP_ROWS; ++r) {
        int64_t row = g * TFC_UK_GROUP_ROWS + r;
        if (row >= n)
          continue; /* padding rows: d = 0, quants 0 */
        const uint8_t *blk = src + (row * kBlocks + b) * bb;
        memcpy(p + 2 * r, blk, 2);
        if (format == TFC_UK_Q4_1)
          memcpy(p + 16 + 2 * r, blk + 2, 2);
        const uint8_t *qs = blk + (format == TFC_UK_Q4_1 ? 4 : 2);
        int count = format == TFC_UK_Q8_0 ? 32 : 16;
        for (int j = 0; j < count; ++j)
          q[(j / 4) * 32 + r * 4 + j % 4] = qs[j];
      }
    }
}

#if defined(TFC_UK_SIMD)

/* acc + the sums of 4 adjacent u8 x s8 products, in int32 lanes. */
INLINE __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if defined(TFC_UK_VNNI)
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  return _mm256_add_epi32(
      acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

INLINE __m256i broadcast_dword(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

/* out[i][r] = row r of the group times activation row i, for mr rows. */
INLINE void group_tile(int32_t format, int mr, const act_block *a, int64_t kb,
                       const uint8_t *group, float *c, int64_t ldc, int valid,
                       const float *bias) {
  int64_t gb = tfc_uk_group_block_bytes(format);
  __m256 acc[MR];
  for (int i = 0; i < mr; ++i)
    acc[i] = _mm256_setzero_ps();
  const __m256i low = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < kb; ++b) {
    const uint8_t *p = group + b * gb;
    __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    /* The zero points of the q4 formats; q8_0 has none (with VNNI the
     * + 128 of its weights is taken off in integers below). */
    __m256 zero = _mm256_setzero_ps();
    int hasZero = format != TFC_UK_Q8_0;
    if (format == TFC_UK_Q4_1)
      zero = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 16)));
    else if (format == TFC_UK_Q4_0)
      zero = _mm256_mul_ps(d, _mm256_set1_ps(-8.0f));
    const uint8_t *q = p + quant_offset(format);
    __m256i sum[MR];
    for (int i = 0; i < mr; ++i)
      sum[i] = _mm256_setzero_si256();
    if (format == TFC_UK_Q8_0) {
      for (int t = 0; t < 8; ++t) {
        __m256i w = _mm256_loadu_si256((const __m256i *)(q + 32 * t));
#if defined(TFC_UK_VNNI)
        __m256i u = _mm256_xor_si256(w, _mm256_set1_epi8((char)0x80));
        for (int i = 0; i < mr; ++i)
          sum[i] = dot_u8s8(sum[i], u, broadcast_dword(a[i * kb + b].q + 4 * t));
        if (t == 7) /* sum (w + 128) q - 128 sum q = sum w q, exactly */
          for (int i = 0; i < mr; ++i)
            sum[i] = _mm256_sub_epi32(
                sum[i], _mm256_set1_epi32(128 * a[i * kb + b].sum));
#else
        __m256i u = _mm256_sign_epi8(w, w);
        for (int i = 0; i < mr; ++i)
          sum[i] = dot_u8s8(
              sum[i], u,
              _mm256_sign_epi8(broadcast_dword(a[i * kb + b].q + 4 * t), w));
#endif
      }
    } else {
      for (int u = 0; u < 4; ++u) {
        __m256i raw = _mm256_loadu_si256((const __m256i *)(q + 32 * u));
        __m256i lo = _mm256_and_si256(raw, low);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low);
        for (int i = 0; i < mr; ++i) {
          const int8_t *x = a[i * kb + b].q;
          sum[i] = dot_u8s8(sum[i], lo, broadcast_dword(x + 4 * u));
          sum[i] = dot_u8s8(sum[i], hi, broadcast_dword(x + 16 + 4 * u));
        }
      }
    }
    for (int i = 0; i < mr; ++i) {
      const act_block *x = a + i * kb + b;
      acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[i]),
                               _mm256_mul_ps(d, _mm256_set1_ps(x->d)), acc[i]);
      if (hasZero)
        acc[i] = _mm256_fmadd_ps(zero, _mm256_set1_ps(x->s), acc[i]);
    }
  }
  __m256 add = bias && valid == TFC_UK_GROUP_ROWS ? _mm256_loadu_ps(bias)
                                                  : _mm256_setzero_ps();
  for (int i = 0; i < mr; ++i) {
    __m256 v = _mm256_add_ps(acc[i], add);
    if (valid == TFC_UK_GROUP_ROWS) {
      _mm256_storeu_ps(c + i * ldc, v);
    } else {
      float tmp[8];
      _mm256_storeu_ps(tmp, v);
      for (int r = 0; r < valid; ++r)
        c[i * ldc + r] = tmp[r] + (bias ? bias[r] : 0.0f);
    }
  }
}

#if defined(TFC_UK_VNNI)
/* Activation rows per tile of two groups (zmm): 8 x 2 accumulators. */
#define PAIR_MR 8

/* broadcast_dword for 16 lanes. */
INLINE __m512i broadcast_dword16(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

/* Two adjacent 32-byte pieces, at p and p + stride, as one zmm. */
INLINE __m512i load_pair(const uint8_t *p, int64_t stride) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)p)),
      _mm256_loadu_si256((const __m256i *)(p + stride)), 1);
}

/* Two adjacent 8 x f16, at p and p + stride, as 16 floats. */
INLINE __m512 halves_pair(const uint8_t *p, int64_t stride) {
  return _mm512_cvtph_ps(_mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
      _mm_loadu_si128((const __m128i *)(p + stride)), 1));
}

/* group_tile for two groups at once (16 weight rows in the 16 lanes of a
 * zmm: the low half group g, the high half group g + 1, whose packed blocks
 * are kb * gb bytes further): each broadcast activation dword and each
 * vpdpbusd serves 16 rows instead of 8, half the instructions per product
 * (the tile was bound by issuing them, not by the dot units). Per lane the
 * arithmetic is group_tile's, in the same order: the same results, bit for
 * bit. The low group is whole (a group follows it); the high one has
 * `valid` rows. */
INLINE void group_pair_tile(int32_t format, int mr, const act_block *a,
                            int64_t kb, const uint8_t *group, float *c,
                            int64_t ldc, int valid, const float *bias) {
  int64_t gb = tfc_uk_group_block_bytes(format), next = kb * gb;
  __m512 acc[PAIR_MR];
  for (int i = 0; i < mr; ++i)
    acc[i] = _mm512_setzero_ps();
  const __m512i low = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < kb; ++b) {
    const uint8_t *p = group + b * gb;
    __m512 d = halves_pair(p, next);
    __m512 zero = _mm512_setzero_ps();
    int hasZero = format != TFC_UK_Q8_0;
    if (format == TFC_UK_Q4_1)
      zero = halves_pair(p + 16, next);
    else if (format == TFC_UK_Q4_0)
      zero = _mm512_mul_ps(d, _mm512_set1_ps(-8.0f));
    const uint8_t *q = p + quant_offset(format);
    __m512i sum[PAIR_MR];
    for (int i = 0; i < mr; ++i)
      sum[i] = _mm512_setzero_si512();
    if (format == TFC_UK_Q8_0) {
      for (int t = 0; t < 8; ++t) {
        __m512i u = _mm512_xor_si512(load_pair(q + 32 * t, next),
                                     _mm512_set1_epi8((char)0x80));
        for (int i = 0; i < mr; ++i)
          sum[i] = _mm512_dpbusd_epi32(
              sum[i], u, broadcast_dword16(a[i * kb + b].q + 4 * t));
      }
      for (int i = 0; i < mr; ++i) /* sum (w + 128) q - 128 sum q */
        sum[i] = _mm512_sub_epi32(sum[i],
                                  _mm512_set1_epi32(128 * a[i * kb + b].sum));
    } else {
      for (int u = 0; u < 4; ++u) {
        __m512i raw = load_pair(q + 32 * u, next);
        __m512i lo = _mm512_and_si512(raw, low);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low);
        for (int i = 0; i < mr; ++i) {
          const int8_t *x = a[i * kb + b].q;
          sum[i] = _mm512_dpbusd_epi32(sum[i], lo, broadcast_dword16(x + 4 * u));
          sum[i] =
              _mm512_dpbusd_epi32(sum[i], hi, broadcast_dword16(x + 16 + 4 * u));
        }
      }
    }
    for (int i = 0; i < mr; ++i) {
      const act_block *x = a + i * kb + b;
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[i]),
                               _mm512_mul_ps(d, _mm512_set1_ps(x->d)), acc[i]);
      if (hasZero)
        acc[i] = _mm512_fmadd_ps(zero, _mm512_set1_ps(x->s), acc[i]);
    }
  }
  __mmask16 lanes = (__mmask16)((1u << (TFC_UK_GROUP_ROWS + valid)) - 1);
  __m512 add = bias ? _mm512_maskz_loadu_ps(lanes, bias) : _mm512_setzero_ps();
  for (int i = 0; i < mr; ++i)
    _mm512_mask_storeu_ps(c + i * ldc, lanes, _mm512_add_ps(acc[i], add));
}
#endif

INLINE void qgemm(int32_t format, const act_block *a, int64_t m,
                  const uint8_t *packed, int64_t g0, int64_t g1, int64_t n,
                  int64_t kb, const float *bias, float *c, int64_t ldc) {
  int64_t gb = tfc_uk_group_block_bytes(format);
  int64_t g = g0;
#if defined(TFC_UK_VNNI)
  /* Groups two at a time (16 rows per zmm), the last one alone if odd. */
  for (; g + 1 < g1; g += 2) {
    const uint8_t *group = packed + g * kb * gb;
    int64_t n0 = g * TFC_UK_GROUP_ROWS;
    int64_t rest = n - n0 - TFC_UK_GROUP_ROWS;
    int valid = (int)(rest < TFC_UK_GROUP_ROWS ? rest : TFC_UK_GROUP_ROWS);
    const float *b = bias ? bias + n0 : 0;
    int64_t i = 0;
    for (; i + PAIR_MR <= m; i += PAIR_MR)
      group_pair_tile(format, PAIR_MR, a + i * kb, kb, group, c + i * ldc + n0,
                      ldc, valid, b);
    if (i + PAIR_MR / 2 <= m) {
      group_pair_tile(format, PAIR_MR / 2, a + i * kb, kb, group,
                      c + i * ldc + n0, ldc, valid, b);
      i += PAIR_MR / 2;
    }
    for (; i < m; ++i)
      group_pair_tile(format, 1, a + i * kb, kb, group, c + i * ldc + n0, ldc,
                      valid, b);
  }
#endif
  for (; g < g1; ++g) {
    const uint8_t *group = packed + g * kb * gb;
    int64_t n0 = g * TFC_UK_GROUP_ROWS;
    int valid = (int)(n - n0 < TFC_UK_GROUP_ROWS ? n - n0 : TFC_UK_GROUP_ROWS);
    const float *b = bias ? bias + n0 : 0;
    int64_t i = 0;
    for (; i + MR <= m; i += MR)
      group_tile(format, MR, a + i * kb, kb, group, c + i * ldc + n0, ldc,
                 valid, b);
    for (; i < m; ++i)
      group_tile(format, 1, a + i * kb, kb, group, c + i * ldc + n0, ldc,
                 valid, b);
  }
}

void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t g0, int64_t g1, int64_t n, int64_t kBlocks,
                  const float *bias, float *c, int64_t ldc) {
  const act_block *ab = (const act_block *)a;
  const uint8_t *wb = (const uint8_t *)w;
  switch (format) {
  case TFC_UK_Q8_0:
    qgemm(TFC_UK_Q8_0, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q4_0:
    qgemm(TFC_UK_Q4_0, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  default:
    qgemm(TFC_UK_Q4_1, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  }
}

#else /* no SIMD: the same sums, element by element */

void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t g0, int64_t g1, int64_t n, int64_t kBlocks,
                  const float *bias, float *c, int64_t ldc) {
  const act_block *ab = (const act_block *)a;
  int64_t gb = tfc_uk_group_block_bytes(format);
  for (int64_t g = g0; g < g1; ++g)
    for (int r = 0; r < TFC_UK_GROUP_ROWS; ++r) {
      int64_t row = g * TFC_UK_GROUP_ROWS + r;
      if (row >= n)
        break;
      for (int64_t i = 0; i < m; ++i) {
        float sum = 0;
        for (int64_t b = 0; b < kBlocks; ++b) {
          const uint8_t *p = (const uint8_t *)w + (g * kBlocks + b) * gb;
          const uint8_t *q = p + quant_offset(format);
          const act_block *x = ab + i * kBlocks + b;
          float d = tfc_block_half(p + 2 * r);
          int32_t dot = 0;
          if (format == TFC_UK_Q8_0) {
            for (int k = 0; k < 32; ++k)
              dot += (int8_t)q[(k / 4) * 32 + r * 4 + k % 4] * x->q[k];
            sum += d * x->d * (float)dot;
            continue;
          }
          for (int j = 0; j < 16; ++j) {
            uint8_t byte = q[(j / 4) * 32 + r * 4 + j % 4];
            dot += (byte & 0xF) * x->q[j] + (byte >> 4) * x->q[j + 16];
          }
          float zero = format == TFC_UK_Q4_1 ? tfc_block_half(p + 16 + 2 * r)
                                             : -8 * d;
          sum += d * x->d * (float)dot + zero * x->s;
        }
        c[i * ldc + row] = sum + (bias ? bias[row] : 0.0f);
      }
    }
}

#endif
