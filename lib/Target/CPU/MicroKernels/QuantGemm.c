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
 * block's sum s, a scalar per block. vpmaddubsw takes unsigned x signed
 * bytes: q8_0 weights go in as |w| with the activation carrying w's sign.
 *
 * Register tiles of MR activation rows x NR weight rows: every unpacked
 * weight block serves MR rows, every activation block NR weight rows. The
 * AVX2 tile (2 x 4: 8 accumulators + 4 weight vectors + 1 activation fits
 * the 16 ymm registers) and the AVX-512 one (4 x 4 in 32 registers) differ;
 * decoding (one row) runs 1 x 4 tiles. Edges run 1-row or 1-column tiles.
 *
 *===----------------------------------------------------------------------===*/

#include "tfc/Target/CPU/MicroKernels.h"

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
#define NR 4
#endif

typedef struct {
  float d, s;
  int8_t q[32];
} act_block;

_Static_assert(sizeof(act_block) == TFC_UK_ACT_BLOCK_BYTES,
               "activation block layout");

#define INLINE static inline __attribute__((always_inline))

INLINE float half_to_float(const uint8_t *p) {
  uint16_t h;
  memcpy(&h, p, 2);
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
  if (exp == 0) {
    float v = (float)man * 5.9604644775390625e-08f; /* 2^-24 */
    return sign ? -v : v;
  }
  if (exp == 31)
    bits = sign | 0x7F800000u | (man << 13);
  else
    bits = sign | ((exp + 112) << 23) | (man << 13);
  float v;
  memcpy(&v, &bits, 4);
  return v;
#endif
}

INLINE int64_t block_bytes(int32_t format) {
  return format == TFC_UK_Q8_0 ? 34 : format == TFC_UK_Q4_0 ? 18 : 20;
}

/* Round to nearest, ties to even, for |x| < 2^22, in the default rounding
 * mode and without a libm call (built without -ffast-math, which would fold
 * it away). */
INLINE float round_even(float x) {
  const float magic = 12582912.0f; /* 1.5 * 2^23 */
  return (x + magic) - magic;
}

void tfc_uk_quantize_rows(const float *x, int64_t ldx, int64_t row0,
                          int64_t row1, int64_t k, void *out) {
  int64_t kb = k / 32;
  for (int64_t r = row0; r < row1; ++r) {
    const float *xr = x + r * ldx;
    act_block *y = (act_block *)out + r * kb;
    for (int64_t b = 0; b < kb; ++b) {
      const float *v = xr + 32 * b;
      float amax = 0;
      for (int j = 0; j < 32; ++j) {
        float a = v[j] < 0 ? -v[j] : v[j];
        amax = a > amax ? a : amax;
      }
      float d = amax / 127.0f;
      float id = d != 0 ? 1.0f / d : 0.0f;
      int sum = 0;
      for (int j = 0; j < 32; ++j) {
        int q = (int)round_even(v[j] * id);
        y[b].q[j] = (int8_t)q;
        sum += q;
      }
      y[b].d = d;
      y[b].s = d * (float)sum;
    }
  }
}

void tfc_uk_dequantize(int32_t format, const void *w, int64_t blocks,
                       float *out) {
  const uint8_t *p = (const uint8_t *)w;
  int64_t bb = block_bytes(format);
  for (int64_t b = 0; b < blocks; ++b, p += bb, out += 32) {
    float d = half_to_float(p);
    if (format == TFC_UK_Q8_0) {
      for (int j = 0; j < 32; ++j)
        out[j] = d * (float)(int8_t)p[2 + j];
    } else {
      float m = format == TFC_UK_Q4_1 ? half_to_float(p + 2) : -8 * d;
      const uint8_t *qs = p + (format == TFC_UK_Q4_1 ? 4 : 2);
      for (int j = 0; j < 16; ++j) {
        out[j] = d * (float)(qs[j] & 0xF) + m;
        out[j + 16] = d * (float)(qs[j] >> 4) + m;
      }
    }
  }
}

#if defined(TFC_UK_SIMD)

/* Sums of 4 adjacent u8 x s8 products in int32 lanes. */
INLINE __m256i dot_u8s8(__m256i u, __m256i s) {
#if defined(TFC_UK_VNNI)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

INLINE __m256i unpack_q4(const uint8_t *qs) {
  __m128i raw = _mm_loadu_si128((const __m128i *)qs);
  __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

INLINE float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* One mr x nr tile (constants after inlining): c[i, j] for activation rows
 * a + i * kb and weight rows w + j * rowBytes. */
INLINE void tile(int32_t format, int mr, int nr, const act_block *a,
                 int64_t kb, const uint8_t *w, int64_t rowBytes,
                 const float *bias, float *c, int64_t ldc) {
  __m256 acc[MR][NR];
  float zero[MR][NR];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      acc[i][j] = _mm256_setzero_ps();
      zero[i][j] = 0;
    }
  int64_t bb = block_bytes(format);
  for (int64_t b = 0; b < kb; ++b) {
    __m256i wq[NR], wabs[NR];
    float wd[NR], wm[NR];
    for (int j = 0; j < nr; ++j) {
      const uint8_t *p = w + j * rowBytes + b * bb;
      wd[j] = half_to_float(p);
      if (format == TFC_UK_Q8_0) {
        wq[j] = _mm256_loadu_si256((const __m256i *)(p + 2));
        wabs[j] = _mm256_sign_epi8(wq[j], wq[j]);
        wm[j] = 0;
      } else if (format == TFC_UK_Q4_0) {
        wq[j] = unpack_q4(p + 2);
        wm[j] = -8 * wd[j];
      } else {
        wm[j] = half_to_float(p + 2);
        wq[j] = unpack_q4(p + 4);
      }
    }
    for (int i = 0; i < mr; ++i) {
      const act_block *ab = a + i * kb + b;
      __m256i aq = _mm256_loadu_si256((const __m256i *)ab->q);
      for (int j = 0; j < nr; ++j) {
        __m256i p32 = format == TFC_UK_Q8_0
                          ? dot_u8s8(wabs[j], _mm256_sign_epi8(aq, wq[j]))
                          : dot_u8s8(wq[j], aq);
        acc[i][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32),
                                    _mm256_set1_ps(wd[j] * ab->d), acc[i][j]);
        if (format != TFC_UK_Q8_0)
          zero[i][j] += wm[j] * ab->s;
      }
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j)
      c[i * ldc + j] = hsum(acc[i][j]) + zero[i][j] + (bias ? bias[j] : 0.0f);
}

INLINE void qgemm(int32_t format, const act_block *a, int64_t m,
                  const uint8_t *w, int64_t n0, int64_t n1, int64_t kb,
                  const float *bias, float *c, int64_t ldc) {
  int64_t rowBytes = kb * block_bytes(format);
  int64_t n = n0;
#define TILE(R, C)                                                             \
  tile(format, R, C, a + i * kb, kb, w + n * rowBytes, rowBytes,               \
       bias ? bias + n : 0, c + i * ldc + n, ldc)
  for (; n + NR <= n1; n += NR) {
    int64_t i = 0;
    for (; i + MR <= m; i += MR)
      TILE(MR, NR);
    for (; i < m; ++i)
      TILE(1, NR);
  }
  for (; n < n1; ++n) {
    int64_t i = 0;
    for (; i + MR <= m; i += MR)
      TILE(MR, 1);
    for (; i < m; ++i)
      TILE(1, 1);
  }
#undef TILE
}

void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t n0, int64_t n1, int64_t kBlocks, const float *bias,
                  float *c, int64_t ldc) {
  const act_block *ab = (const act_block *)a;
  const uint8_t *wb = (const uint8_t *)w;
  switch (format) {
  case TFC_UK_Q8_0:
    qgemm(TFC_UK_Q8_0, ab, m, wb, n0, n1, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q4_0:
    qgemm(TFC_UK_Q4_0, ab, m, wb, n0, n1, kBlocks, bias, c, ldc);
    break;
  default:
    qgemm(TFC_UK_Q4_1, ab, m, wb, n0, n1, kBlocks, bias, c, ldc);
    break;
  }
}

#else /* no SIMD: the reference computation, block by block */

void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t n0, int64_t n1, int64_t kBlocks, const float *bias,
                  float *c, int64_t ldc) {
  const act_block *ab = (const act_block *)a;
  int64_t bb = block_bytes(format);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t n = n0; n < n1; ++n) {
      const uint8_t *row = (const uint8_t *)w + n * kBlocks * bb;
      float sum = 0;
      for (int64_t b = 0; b < kBlocks; ++b) {
        const uint8_t *p = row + b * bb;
        const act_block *x = ab + i * kBlocks + b;
        float d = half_to_float(p);
        int32_t dot = 0;
        if (format == TFC_UK_Q8_0) {
          for (int j = 0; j < 32; ++j)
            dot += (int8_t)p[2 + j] * x->q[j];
          sum += d * x->d * (float)dot;
          continue;
        }
        const uint8_t *qs = p + (format == TFC_UK_Q4_1 ? 4 : 2);
        for (int j = 0; j < 16; ++j)
          dot += (qs[j] & 0xF) * x->q[j] + (qs[j] >> 4) * x->q[j + 16];
        float zero = format == TFC_UK_Q4_1 ? half_to_float(p + 2) : -8 * d;
        sum += d * x->d * (float)dot + zero * x->s;
      }
      c[i * ldc + n] = sum + (bias ? bias[n] : 0.0f);
    }
}

#endif
