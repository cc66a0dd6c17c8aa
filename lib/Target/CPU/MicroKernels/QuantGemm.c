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
 * a 4 x 8 ymm tile; a single activation row (decoding) keeps the 1 x 8 ymm
 * tiles (qgemm has the figures).
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
  int32_t sum, sum_lo;
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
 * spills (tfc_uk_quantize_rows was a noticeable share of SmolLM2's
 * 128-token forward; figures: commit 698fd80). */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int8_t v8b __attribute__((vector_size(8)));

/* max |x| over `vectors` x 8 floats: lanes that are greater replace the
 * maximum (a NaN never is, as in a scalar a > amax ? a : amax from 0). */
INLINE float max_magnitude(const float *x, int vectors) {
  const v8i magnitude = (v8i){0, 0, 0, 0, 0, 0, 0, 0} + 0x7FFFFFFF;
  v8f amax = (v8f){0};
  for (int u = 0; u < vectors; ++u) {
    v8f v;
    memcpy(&v, x + 8 * u, sizeof v);
    v8f a = (v8f)((v8i)v & magnitude);
    v8i gt = a > amax;
    amax = (v8f)(((v8i)a & gt) | ((v8i)amax & ~gt));
  }
  float m = 0;
  for (int t = 0; t < 8; ++t)
    m = amax[t] > m ? amax[t] : m;
  return m;
}

/* 32 activations scaled by `is` into a block's quants (at most 127) and
 * sums, with scale d. */
INLINE void quantize_block(const float *x, float is, float d, act_block *y) {
  v8f v[4];
  memcpy(v, x, sizeof v);
  v8i sum = (v8i){0}, lo = (v8i){0};
  const v8i top = (v8i){0} + 127;
  for (int u = 0; u < 4; ++u) {
    /* round to nearest, ties to even, for |x| < 2^22 (here <= 127), in
     * the default rounding mode and without a libm call (built without
     * -ffast-math, which would fold it away): + 1.5 * 2^23 */
    v8f scaled = v[u] * is;
    v8i q = __builtin_convertvector((scaled + 12582912.0f) - 12582912.0f, v8i);
    v8i over = q > top;
    q = (top & over) | (q & ~over);
    v8b bytes = __builtin_convertvector(q, v8b);
    memcpy(y->q + 8 * u, &bytes, 8);
    sum += q;
    if (u == 1)
      lo = sum;
  }
  int total = 0, first = 0;
  for (int t = 0; t < 8; ++t) {
    total += sum[t];
    first += lo[t];
  }
  y->d = d;
  y->s = d * (float)total;
  y->sum = total;
  y->sum_lo = first;
}

void tfc_uk_quantize_rows(const float *x, int64_t ldx, int64_t row0,
                          int64_t row1, int64_t k, void *out) {
  int64_t kb = k / 32;
  for (int64_t r = row0; r < row1; ++r) {
    const float *xr = x + r * ldx;
    act_block *y = (act_block *)out + r * kb;
    for (int64_t b = 0; b < kb; ++b) {
      /* d = max |x| / 127: |x| / d is at most 127 (to rounding), so the
       * block's cap never applies here. */
      float d = max_magnitude(xr + 32 * b, 4) / 127.0f;
      quantize_block(xr + 32 * b, d != 0 ? 1.0f / d : 0.0f, d, y + b);
    }
  }
}

void tfc_uk_quantize_rows_256(const float *x, int64_t ldx, int64_t row0,
                              int64_t row1, int64_t k, void *out) {
  int64_t kb = k / 32;
  for (int64_t r = row0; r < row1; ++r) {
    const float *xr = x + r * ldx;
    act_block *y = (act_block *)out + r * kb;
    for (int64_t b = 0; b < k / 256; ++b) {
      const float *xs = xr + 256 * b;
      /* The largest magnitude, then the first element that has it: its
       * sign is the scale's. */
      float m = max_magnitude(xs, 32);
      float extreme = 0;
      for (int j = 0; j < 256 && m > 0; ++j)
        if (xs[j] == m || xs[j] == -m) {
          extreme = xs[j];
          break;
        }
      /* llama.cpp's Q8_K: the extreme maps to -127 (d negative when it is
       * positive); an all-zero block has d = 0 and zero quants. */
      float is = extreme != 0 ? -127.0f / extreme : 0.0f;
      float d = extreme != 0 ? 1.0f / is : 0.0f;
      for (int s = 0; s < 8; ++s)
        quantize_block(xs + 32 * s, is, d, y + 8 * b + s);
    }
  }
}

/* Bytes of one stored block by ggml type, for the formats BlockFormats.h
 * decodes (0: not one). */
static const int16_t kBlockBytes[15] = {0, 0, 18, 20, 0, 0, 22, 24, 34, 0,
                                        84, 110, 144, 176, 210};

void tfc_uk_dequantize(int32_t format, const void *w, int64_t blocks,
                       float *out) {
  if (format < 0 || format >= 15 || !kBlockBytes[format])
    return;
  const uint8_t *p = (const uint8_t *)w;
  int64_t elements = tfc_block_elements(format);
  for (int64_t b = 0; b < blocks; ++b, p += kBlockBytes[format],
                                        out += elements)
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

/* The formats with more than 4 bits or with super-blocks (q5_0, q5_1, q2_k,
 * q4_k, q5_k, q6_k; q3_k as q6_k) are packed per group of 8 rows and block
 * (super-block) as
 *
 *   q5_0  d[8] f16 | 1 x sub                                      176 bytes
 *   q5_1  d[8] f16 | m[8] f16 | 1 x sub                           192
 *   q4_k  d[8] f16 | dmin[8] f16 | sc[8][8] u8 | mn[8][8] u8 | 8 x sub  1184
 *   q5_k  the same, with 5-bit subs                              1440
 *   q6_k  d[8] f16 | sc[16][8] i8 | 8 x sub                      1680
 *   q2_k  d[8] f16 | dmin[8] f16 | sc[16][8] u8 | mn[16][8] u8 | 8 x sub
 *         (its 2-bit quants as 4-bit ones)                        1312
 *
 * (sc[j][r], mn[j][r]: sub-block j's scale and minimum of row r; q6_k has
 * two scales per 32 elements, of the halves), each `sub` the quants of 32
 * elements of the 8 rows as unsigned integers (0..15, 0..31 or 0..63):
 * first their fifth (and sixth) bits, then their low nibbles as q4's
 * layout (load u: bytes j = 4u..4u+3 of each row, element j in the low
 * nibble, j + 16 in the high one). The high bits of a load's 32 byte lanes
 * (lane 4r + t: elements 4u + t and 16 + 4u + t of row r):
 *
 *   5-bit  32 bytes: bit 2u of lane l is the fifth bit of the low-nibble
 *          element of load u, bit 2u + 1 that of the high-nibble one
 *   6-bit  64 bytes, two vectors of 32 (loads 0-1, 2-3): bits 4(u % 2)
 *          and 4(u % 2) + 2 hold the two high bits of the low and of the
 *          high element of load u
 *
 * so that one shift and one mask put them in place (hbits below). */
INLINE int has_sub_blocks(int32_t format) {
  return format == TFC_UK_Q4_K || format == TFC_UK_Q5_K ||
         format == TFC_UK_Q6_K || format == TFC_UK_Q2_K;
}

INLINE int quant_bits(int32_t format) {
  return format == TFC_UK_Q4_K || format == TFC_UK_Q2_K ? 4
         : format == TFC_UK_Q6_K                        ? 6
                                                        : 5;
}

/* Bytes of one packed sub (32 elements of 8 rows). */
INLINE int64_t sub_bytes(int32_t format) {
  return 128 + (quant_bits(format) - 4) * 32;
}

/* Where a packed group-block's subs start. */
INLINE int64_t subs_offset(int32_t format) {
  switch (format) {
  case TFC_UK_Q5_0: return 16;
  case TFC_UK_Q5_1: return 32;
  case TFC_UK_Q6_K: return 144;
  case TFC_UK_Q2_K:
    return 288;
  default: return 160; /* q4_k, q5_k */
  }
}

/* The 32 unsigned quants of sub-block `s` of one stored block, and its
 * scale/minimum integers (q4_k, q5_k: sc[0], mn[0]; q6_k, q3_k: sc[0..1]
 * of its halves; q2_k: sc[0..1] and mn[0..1] of its halves). */
static void unpack_sub(int32_t format, const uint8_t *blk, int s, uint8_t *q,
                       int *sc, int *mn) {
  switch (format) {
  case TFC_UK_Q5_0:
  case TFC_UK_Q5_1: {
    int off = format == TFC_UK_Q5_1 ? 4 : 2;
    uint32_t qh;
    memcpy(&qh, blk + off, 4);
    const uint8_t *qs = blk + off + 4;
    for (int j = 0; j < 32; ++j)
      q[j] = (uint8_t)((j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4) |
                       (((qh >> j) & 1) << 4));
    return;
  }
  case TFC_UK_Q4_K:
  case TFC_UK_Q5_K: {
    int five = format == TFC_UK_Q5_K;
    const uint8_t *qh = blk + 16, *qs = blk + (five ? 48 : 16);
    tfc_block_scale_min_k4(blk + 4, s, &sc[0], &mn[0]);
    for (int l = 0; l < 32; ++l) {
      int v = (qs[(s / 2) * 32 + l] >> (4 * (s % 2))) & 0xF;
      if (five)
        v |= ((qh[l] >> s) & 1) << 4;
      q[l] = (uint8_t)v;
    }
    return;
  }
  case TFC_UK_Q2_K: {
    const uint8_t *scales = blk, *qs = blk + 16;
    for (int h = 0; h < 2; ++h) {
      sc[h] = scales[2 * s + h] & 0xF;
      mn[h] = scales[2 * s + h] >> 4;
    }
    for (int l = 0; l < 32; ++l) {
      int e = 32 * s + l;
      int h = e / 128, t = (e % 128) / 32, ll = e % 32;
      q[l] = (uint8_t)((qs[h * 32 + ll] >> (2 * t)) & 3);
    }
    return;
  }
  case TFC_UK_Q3_K: { /* as q6_k: q + 32 and sc - 32 of each 16 */
    const uint8_t *hmask = blk, *qs = blk + 32, *scales = blk + 96;
    sc[0] = tfc_block_scale_q3k(scales, 2 * s);
    sc[1] = tfc_block_scale_q3k(scales, 2 * s + 1);
    for (int l = 0; l < 32; ++l) {
      int e = 32 * s + l;
      int h = e / 128, t = (e % 128) / 32, ll = e % 32;
      int low = (qs[h * 32 + ll] >> (2 * t)) & 3;
      int high = (hmask[ll] >> (e / 32)) & 1;
      q[l] = (uint8_t)(low - ((high ^ 1) << 2) + 32);
    }
    return;
  }
  case TFC_UK_Q6_K: {
    const uint8_t *ql = blk, *qh = blk + 128;
    sc[0] = (int8_t)blk[192 + 2 * s];
    sc[1] = (int8_t)blk[192 + 2 * s + 1];
    for (int l = 0; l < 32; ++l) {
      int e = 32 * s + l;
      int h = e / 128, hs = (e % 128) / 64, i = e % 64;
      int t = (e % 128) / 32, ll = e % 32;
      int low = (ql[h * 64 + i] >> (4 * hs)) & 0xF;
      int high = (qh[h * 32 + ll] >> (2 * t)) & 3;
      q[l] = (uint8_t)(low | (high << 4));
    }
    return;
  }
  default:
    return;
  }
}

/* Writes row r's 32 quants into a packed sub. */
static void pack_sub(int32_t format, uint8_t *sub, int r, const uint8_t *q) {
  int extra = quant_bits(format) - 4;
  uint8_t *nib = sub + extra * 32;
  for (int u = 0; u < 4; ++u)
    for (int t = 0; t < 4; ++t) {
      int lane = r * 4 + t;
      uint8_t lo = q[4 * u + t], hi = q[16 + 4 * u + t];
      nib[u * 32 + lane] = (uint8_t)((lo & 0xF) | ((hi & 0xF) << 4));
      if (extra == 1) {
        sub[lane] |= (uint8_t)(((lo >> 4) & 1) << (2 * u));
        sub[lane] |= (uint8_t)(((hi >> 4) & 1) << (2 * u + 1));
      } else if (extra == 2) {
        uint8_t *v = sub + 32 * (u / 2);
        v[lane] |= (uint8_t)(((lo >> 4) & 3) << (4 * (u % 2)));
        v[lane] |= (uint8_t)(((hi >> 4) & 3) << (4 * (u % 2) + 2));
      }
    }
}

/* The format whose packed layout and kernels `format` uses: q3_k q6_k's
 * (MicroKernels.h), the others their own. */
INLINE int32_t kernel_format(int32_t format) {
  return format == TFC_UK_Q3_K ? TFC_UK_Q6_K : format;
}

/* `src` blocks of `format` (as stored); the packed layout is
 * kernel_format(format)'s. */
static void qpack_wide(int32_t src_format, const uint8_t *src, int64_t n,
                       int64_t kBlocks, uint8_t *dst) {
  int32_t format = kernel_format(src_format);
  int64_t bb = kBlockBytes[src_format], gb = tfc_uk_group_block_bytes(format);
  int subs = has_sub_blocks(format) ? 8 : 1;
  int64_t groups = (n + TFC_UK_GROUP_ROWS - 1) / TFC_UK_GROUP_ROWS;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t b = 0; b < kBlocks; ++b) {
      uint8_t *p = dst + (g * kBlocks + b) * gb;
      memset(p, 0, (size_t)gb);
      for (int r = 0; r < TFC_UK_GROUP_ROWS; ++r) {
        int64_t row = g * TFC_UK_GROUP_ROWS + r;
        if (row >= n)
          continue; /* padding rows: scales 0, quants 0 */
        const uint8_t *blk = src + (row * kBlocks + b) * bb;
        if (src_format == TFC_UK_Q3_K) {
          memcpy(p + 2 * r, blk + 108, 2);
        } else if (format == TFC_UK_Q2_K) {
          memcpy(p + 2 * r, blk + 80, 2);
          memcpy(p + 16 + 2 * r, blk + 82, 2);
        } else if (format == TFC_UK_Q6_K) {
          memcpy(p + 2 * r, blk + 208, 2);
        } else {
          memcpy(p + 2 * r, blk, 2);
          if (format != TFC_UK_Q5_0)
            memcpy(p + 16 + 2 * r, blk + 2, 2); /* m, or dmin */
        }
        for (int s = 0; s < subs; ++s) {
          uint8_t q[32];
          int sc[2] = {0, 0}, mn[2] = {0, 0};
          unpack_sub(src_format, blk, s, q, sc, mn);
          if (format == TFC_UK_Q2_K) {
            for (int h = 0; h < 2; ++h) {
              p[32 + (2 * s + h) * 8 + r] = (uint8_t)sc[h];
              p[160 + (2 * s + h) * 8 + r] = (uint8_t)mn[h];
            }
          } else if (format == TFC_UK_Q6_K) {
            p[16 + (2 * s) * 8 + r] = (uint8_t)(int8_t)sc[0];
            p[16 + (2 * s + 1) * 8 + r] = (uint8_t)(int8_t)sc[1];
          } else if (subs > 1) {
            p[32 + s * 8 + r] = (uint8_t)sc[0];
            p[96 + s * 8 + r] = (uint8_t)mn[0];
          }
          pack_sub(format, p + subs_offset(format) + s * sub_bytes(format), r,
                   q);
        }
      }
    }
}

static void qpack_narrow(int32_t format, const void *w, int64_t n,
                         int64_t kBlocks, void *out);

void tfc_uk_qpack(int32_t format, const void *w, int64_t n, int64_t kBlocks,
                  void *out) {
  /* In chunks of 64 groups (512 rows). (Releasing each chunk's source here
   * with MADV_PAGEOUT evicted the file from the page cache too, so every
   * later load read it from disk again; init releases each weight once
   * packed through the runtime's release hook instead, ModelABI.h.) */
  const int64_t chunk = 64 * TFC_UK_GROUP_ROWS;
  const int64_t rowBytes = kBlocks * kBlockBytes[format];
  const int64_t gb = tfc_uk_group_block_bytes(format);
  for (int64_t r0 = 0; r0 < n; r0 += chunk) {
    int64_t rows = n - r0 < chunk ? n - r0 : chunk;
    const uint8_t *src = (const uint8_t *)w + r0 * rowBytes;
    uint8_t *dst = (uint8_t *)out + (r0 / TFC_UK_GROUP_ROWS) * kBlocks * gb;
    if (format != TFC_UK_Q8_0 && format != TFC_UK_Q4_0 &&
        format != TFC_UK_Q4_1)
      qpack_wide(format, src, rows, kBlocks, dst);
    else
      qpack_narrow(format, src, rows, kBlocks, dst);
  }
}

static void qpack_narrow(int32_t format, const void *w, int64_t n,
                         int64_t kBlocks, void *out) {
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

/* The wide formats (q5_0, q5_1, q2_k, q4_k, q5_k, q6_k). Per 32 elements:
 * the low-nibble and high-nibble halves of each load, with their high bits
 * moved in (hbits), are dotted with the activations' first and second 16
 * elements into int32 lanes (one sum; q6_k and q2_k keep the halves apart
 * for their two scales), then scaled in f32:
 *   q5_0  sum d da - 16 d s              q5_1  sum d da + m s
 *   q4_k, q5_k (sub-block j)  sum (d sc_j) da - (dmin mn_j) s
 *   q6_k  (sum_lo - 32 a_lo) (d sc_2j) da + (sum_hi - 32 a_hi) (d sc_2j+1) da
 *   q2_k  sum_lo (d sc_2j) da - (dmin mn_2j) da a_lo + the same for hi
 * (a_lo, a_hi: the integer sums of the activation halves). */

/* The high bits of load u's low (hi = 0) or high (hi = 1) elements, at bit
 * 4 (5-bit quants) or bits 4-5 (6-bit), from a packed high-bit vector. */
INLINE __m256i hbits(int bits, __m256i v, int u, int hi) {
  int src = bits == 5 ? 2 * u + hi : 4 * (u % 2) + 2 * hi;
  __m256i moved = src <= 4 ? _mm256_slli_epi16(v, 4 - src)
                           : _mm256_srli_epi16(v, src - 4);
  return _mm256_and_si256(moved, _mm256_set1_epi8(bits == 5 ? 0x10 : 0x30));
}

/* 8 bytes at p as 8 floats (unsigned or signed). */
INLINE __m256 bytes_to_ps(const uint8_t *p, int is_signed) {
  __m128i b = _mm_loadl_epi64((const __m128i *)p);
  return _mm256_cvtepi32_ps(is_signed ? _mm256_cvtepi8_epi32(b)
                                      : _mm256_cvtepu8_epi32(b));
}

/* group_tile for the wide formats: mr activation rows x 8 weight rows. */
INLINE void group_tile_wide(int32_t format, int mr, const act_block *a,
                            int64_t kb, const uint8_t *group, float *c,
                            int64_t ldc, int valid, const float *bias) {
  const int subs = has_sub_blocks(format) ? 8 : 1;
  const int bits = quant_bits(format);
  const int64_t gb = tfc_uk_group_block_bytes(format);
  const int64_t ka = kb * subs; /* activation blocks per row */
  const __m256i low = _mm256_set1_epi8(0x0F);
  __m256 acc[MR];
  for (int i = 0; i < mr; ++i)
    acc[i] = _mm256_setzero_ps();
  for (int64_t b = 0; b < kb; ++b) {
    const uint8_t *p = group + b * gb;
    __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    __m256 d2 = format == TFC_UK_Q6_K || format == TFC_UK_Q5_0
                    ? _mm256_setzero_ps()
                    : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 16)));
    for (int s = 0; s < subs; ++s) {
      const uint8_t *sub = p + subs_offset(format) + s * sub_bytes(format);
      const uint8_t *nib = sub + (bits - 4) * 32;
      __m256i sa[MR], sb[MR];
      for (int i = 0; i < mr; ++i)
        sa[i] = sb[i] = _mm256_setzero_si256();
      __m256i h5 = bits == 5 ? _mm256_loadu_si256((const __m256i *)sub)
                             : _mm256_setzero_si256();
      for (int u = 0; u < 4; ++u) {
        __m256i raw = _mm256_loadu_si256((const __m256i *)(nib + 32 * u));
        __m256i lo = _mm256_and_si256(raw, low);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low);
        if (bits == 5) {
          lo = _mm256_or_si256(lo, hbits(5, h5, u, 0));
          hi = _mm256_or_si256(hi, hbits(5, h5, u, 1));
        } else if (bits == 6) {
          __m256i h6 =
              _mm256_loadu_si256((const __m256i *)(sub + 32 * (u / 2)));
          lo = _mm256_or_si256(lo, hbits(6, h6, u, 0));
          hi = _mm256_or_si256(hi, hbits(6, h6, u, 1));
        }
        for (int i = 0; i < mr; ++i) {
          const int8_t *x = a[i * ka + b * subs + s].q;
          sa[i] = dot_u8s8(sa[i], lo, broadcast_dword(x + 4 * u));
          if (format == TFC_UK_Q6_K || format == TFC_UK_Q2_K)
            sb[i] = dot_u8s8(sb[i], hi, broadcast_dword(x + 16 + 4 * u));
          else
            sa[i] = dot_u8s8(sa[i], hi, broadcast_dword(x + 16 + 4 * u));
        }
      }
      if (format == TFC_UK_Q6_K) {
        __m256 scl = _mm256_mul_ps(d, bytes_to_ps(p + 16 + 16 * s, 1));
        __m256 sch = _mm256_mul_ps(d, bytes_to_ps(p + 24 + 16 * s, 1));
        for (int i = 0; i < mr; ++i) {
          const act_block *x = a + i * ka + b * subs + s;
          __m256 da = _mm256_set1_ps(x->d);
          __m256 vlo = _mm256_sub_ps(_mm256_cvtepi32_ps(sa[i]),
                                     _mm256_set1_ps(32.0f * (float)x->sum_lo));
          __m256 vhi = _mm256_sub_ps(
              _mm256_cvtepi32_ps(sb[i]),
              _mm256_set1_ps(32.0f * (float)(x->sum - x->sum_lo)));
          acc[i] = _mm256_fmadd_ps(vlo, _mm256_mul_ps(scl, da), acc[i]);
          acc[i] = _mm256_fmadd_ps(vhi, _mm256_mul_ps(sch, da), acc[i]);
        }
      } else if (format == TFC_UK_Q2_K) {
        /* Per half h: sum_h (d sc_h) da - (dmin mn_h) da a_h. */
        __m256 scl = _mm256_mul_ps(d, bytes_to_ps(p + 32 + 16 * s, 0));
        __m256 sch = _mm256_mul_ps(d, bytes_to_ps(p + 40 + 16 * s, 0));
        __m256 mnl = _mm256_mul_ps(d2, bytes_to_ps(p + 160 + 16 * s, 0));
        __m256 mnh = _mm256_mul_ps(d2, bytes_to_ps(p + 168 + 16 * s, 0));
        for (int i = 0; i < mr; ++i) {
          const act_block *x = a + i * ka + b * subs + s;
          __m256 da = _mm256_set1_ps(x->d);
          __m256 alo = _mm256_set1_ps(x->d * (float)x->sum_lo);
          __m256 ahi = _mm256_set1_ps(x->d * (float)(x->sum - x->sum_lo));
          acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sa[i]),
                                   _mm256_mul_ps(scl, da), acc[i]);
          acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sb[i]),
                                   _mm256_mul_ps(sch, da), acc[i]);
          acc[i] = _mm256_fnmadd_ps(mnl, alo, acc[i]);
          acc[i] = _mm256_fnmadd_ps(mnh, ahi, acc[i]);
        }
      } else {
        __m256 scale = d, zero;
        if (subs > 1) {
          scale = _mm256_mul_ps(d, bytes_to_ps(p + 32 + 8 * s, 0));
          zero = _mm256_mul_ps(d2, bytes_to_ps(p + 96 + 8 * s, 0));
          zero = _mm256_sub_ps(_mm256_setzero_ps(), zero);
        } else {
          zero = format == TFC_UK_Q5_1 ? d2
                                       : _mm256_mul_ps(d, _mm256_set1_ps(-16.0f));
        }
        for (int i = 0; i < mr; ++i) {
          const act_block *x = a + i * ka + b * subs + s;
          acc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sa[i]),
                                   _mm256_mul_ps(scale, _mm256_set1_ps(x->d)),
                                   acc[i]);
          acc[i] = _mm256_fmadd_ps(zero, _mm256_set1_ps(x->s), acc[i]);
        }
      }
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
INLINE __m512i hbits16(int bits, __m512i v, int u, int hi) {
  int src = bits == 5 ? 2 * u + hi : 4 * (u % 2) + 2 * hi;
  __m512i moved = src <= 4 ? _mm512_slli_epi16(v, 4 - src)
                           : _mm512_srli_epi16(v, src - 4);
  return _mm512_and_si512(moved, _mm512_set1_epi8(bits == 5 ? 0x10 : 0x30));
}

/* 8 bytes at p and 8 at p + stride as 16 floats. */
INLINE __m512 bytes_pair_to_ps(const uint8_t *p, int64_t stride,
                               int is_signed) {
  __m128i b = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)p),
                                 _mm_loadl_epi64((const __m128i *)(p + stride)));
  return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(b)
                                      : _mm512_cvtepu8_epi32(b));
}

/* group_tile_wide for two groups at once (group_pair_tile's scheme). */
INLINE void group_pair_tile_wide(int32_t format, int mr, const act_block *a,
                                 int64_t kb, const uint8_t *group, float *c,
                                 int64_t ldc, int valid, const float *bias) {
  const int subs = has_sub_blocks(format) ? 8 : 1;
  const int bits = quant_bits(format);
  const int64_t gb = tfc_uk_group_block_bytes(format), next = kb * gb;
  const int64_t ka = kb * subs;
  const __m512i low = _mm512_set1_epi8(0x0F);
  __m512 acc[PAIR_MR];
  for (int i = 0; i < mr; ++i)
    acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < kb; ++b) {
    const uint8_t *p = group + b * gb;
    __m512 d = halves_pair(p, next);
    __m512 d2 = format == TFC_UK_Q6_K || format == TFC_UK_Q5_0
                    ? _mm512_setzero_ps()
                    : halves_pair(p + 16, next);
    for (int s = 0; s < subs; ++s) {
      const uint8_t *sub = p + subs_offset(format) + s * sub_bytes(format);
      const uint8_t *nib = sub + (bits - 4) * 32;
      __m512i sa[PAIR_MR], sb[PAIR_MR];
      for (int i = 0; i < mr; ++i)
        sa[i] = sb[i] = _mm512_setzero_si512();
      __m512i h5 = bits == 5 ? load_pair(sub, next) : _mm512_setzero_si512();
      for (int u = 0; u < 4; ++u) {
        __m512i raw = load_pair(nib + 32 * u, next);
        __m512i lo = _mm512_and_si512(raw, low);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low);
        if (bits == 5) {
          lo = _mm512_or_si512(lo, hbits16(5, h5, u, 0));
          hi = _mm512_or_si512(hi, hbits16(5, h5, u, 1));
        } else if (bits == 6) {
          __m512i h6 = load_pair(sub + 32 * (u / 2), next);
          lo = _mm512_or_si512(lo, hbits16(6, h6, u, 0));
          hi = _mm512_or_si512(hi, hbits16(6, h6, u, 1));
        }
        for (int i = 0; i < mr; ++i) {
          const int8_t *x = a[i * ka + b * subs + s].q;
          sa[i] = _mm512_dpbusd_epi32(sa[i], lo, broadcast_dword16(x + 4 * u));
          if (format == TFC_UK_Q6_K)
            sb[i] = _mm512_dpbusd_epi32(sb[i], hi,
                                        broadcast_dword16(x + 16 + 4 * u));
          else
            sa[i] = _mm512_dpbusd_epi32(sa[i], hi,
                                        broadcast_dword16(x + 16 + 4 * u));
        }
      }
      if (format == TFC_UK_Q6_K) {
        __m512 scl = _mm512_mul_ps(d, bytes_pair_to_ps(p + 16 + 16 * s, next, 1));
        __m512 sch = _mm512_mul_ps(d, bytes_pair_to_ps(p + 24 + 16 * s, next, 1));
        for (int i = 0; i < mr; ++i) {
          const act_block *x = a + i * ka + b * subs + s;
          __m512 da = _mm512_set1_ps(x->d);
          __m512 vlo = _mm512_sub_ps(_mm512_cvtepi32_ps(sa[i]),
                                     _mm512_set1_ps(32.0f * (float)x->sum_lo));
          __m512 vhi = _mm512_sub_ps(
              _mm512_cvtepi32_ps(sb[i]),
              _mm512_set1_ps(32.0f * (float)(x->sum - x->sum_lo)));
          acc[i] = _mm512_fmadd_ps(vlo, _mm512_mul_ps(scl, da), acc[i]);
          acc[i] = _mm512_fmadd_ps(vhi, _mm512_mul_ps(sch, da), acc[i]);
        }
      } else {
        __m512 scale = d, zero;
        if (subs > 1) {
          scale = _mm512_mul_ps(d, bytes_pair_to_ps(p + 32 + 8 * s, next, 0));
          zero = _mm512_mul_ps(d2, bytes_pair_to_ps(p + 96 + 8 * s, next, 0));
          zero = _mm512_sub_ps(_mm512_setzero_ps(), zero);
        } else {
          zero = format == TFC_UK_Q5_1 ? d2
                                       : _mm512_mul_ps(d, _mm512_set1_ps(-16.0f));
        }
        for (int i = 0; i < mr; ++i) {
          const act_block *x = a + i * ka + b * subs + s;
          acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sa[i]),
                                   _mm512_mul_ps(scale, _mm512_set1_ps(x->d)),
                                   acc[i]);
          acc[i] = _mm512_fmadd_ps(zero, _mm512_set1_ps(x->s), acc[i]);
        }
      }
    }
  }
  __mmask16 lanes = (__mmask16)((1u << (TFC_UK_GROUP_ROWS + valid)) - 1);
  __m512 add = bias ? _mm512_maskz_loadu_ps(lanes, bias) : _mm512_setzero_ps();
  for (int i = 0; i < mr; ++i)
    _mm512_mask_storeu_ps(c + i * ldc, lanes, _mm512_add_ps(acc[i], add));
}
#endif

/* qgemm for the wide formats (the same walk over groups and tiles). */
INLINE void qgemm_wide(int32_t format, const act_block *a, int64_t m,
                       const uint8_t *packed, int64_t g0, int64_t g1,
                       int64_t n, int64_t kb, const float *bias, float *c,
                       int64_t ldc) {
  const int64_t gb = tfc_uk_group_block_bytes(format);
  const int64_t ka = kb * (has_sub_blocks(format) ? 8 : 1);
  int64_t g = g0;
#if defined(TFC_UK_VNNI)
  /* (q2_k has no 512-bit tile: its 256-bit one takes every group; nor has
   * a decode step's single row: see qgemm.) */
  for (; format != TFC_UK_Q2_K && m > 1 && g + 1 < g1; g += 2) {
    const uint8_t *group = packed + g * kb * gb;
    int64_t n0 = g * TFC_UK_GROUP_ROWS;
    int64_t rest = n - n0 - TFC_UK_GROUP_ROWS;
    int valid = (int)(rest < TFC_UK_GROUP_ROWS ? rest : TFC_UK_GROUP_ROWS);
    const float *bb = bias ? bias + n0 : 0;
    int64_t i = 0;
    for (; i + PAIR_MR <= m; i += PAIR_MR)
      group_pair_tile_wide(format, PAIR_MR, a + i * ka, kb, group,
                           c + i * ldc + n0, ldc, valid, bb);
    if (i + PAIR_MR / 2 <= m) {
      group_pair_tile_wide(format, PAIR_MR / 2, a + i * ka, kb, group,
                           c + i * ldc + n0, ldc, valid, bb);
      i += PAIR_MR / 2;
    }
    for (; i < m; ++i)
      group_pair_tile_wide(format, 1, a + i * ka, kb, group, c + i * ldc + n0,
                           ldc, valid, bb);
  }
#endif
  for (; g < g1; ++g) {
    const uint8_t *group = packed + g * kb * gb;
    int64_t n0 = g * TFC_UK_GROUP_ROWS;
    int valid = (int)(n - n0 < TFC_UK_GROUP_ROWS ? n - n0 : TFC_UK_GROUP_ROWS);
    const float *bb = bias ? bias + n0 : 0;
    int64_t i = 0;
    for (; i + MR <= m; i += MR)
      group_tile_wide(format, MR, a + i * ka, kb, group, c + i * ldc + n0,
                      ldc, valid, bb);
    for (; i < m; ++i)
      group_tile_wide(format, 1, a + i * ka, kb, group, c + i * ldc + n0, ldc,
                      valid, bb);
  }
}

INLINE void qgemm(int32_t format, const act_block *a, int64_t m,
                  const uint8_t *packed, int64_t g0, int64_t g1, int64_t n,
                  int64_t kb, const float *bias, float *c, int64_t ldc) {
  int64_t gb = tfc_uk_group_block_bytes(format);
  int64_t g = g0;
#if defined(TFC_UK_VNNI)
  /* Groups two at a time (16 rows per zmm), the last one alone if odd;
   * but one at a time for a single activation row (a decode step's GEMV),
   * where the pair's two streams of weights measured slower: on a 2-core
   * Zen 5, 2 threads, a [8960, 1536] GEMV over weights far larger than the
   * caches ran at 24-31 GB/s with pairs and 42-48 GB/s with single groups
   * (q4_k, q6_k; q8_0 and q5_0 1.3-1.6x), and Qwen2.5-Coder-1.5B Q4_K_M
   * decoded at 0.76x llama.cpp's tokens/s with pairs. */
  for (; m > 1 && g + 1 < g1; g += 2) {
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
  switch (kernel_format(format)) {
  case TFC_UK_Q8_0:
    qgemm(TFC_UK_Q8_0, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q4_0:
    qgemm(TFC_UK_Q4_0, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q4_1:
    qgemm(TFC_UK_Q4_1, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q5_0:
    qgemm_wide(TFC_UK_Q5_0, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q5_1:
    qgemm_wide(TFC_UK_Q5_1, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q4_K:
    qgemm_wide(TFC_UK_Q4_K, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q5_K:
    qgemm_wide(TFC_UK_Q5_K, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q6_K:
    qgemm_wide(TFC_UK_Q6_K, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  case TFC_UK_Q2_K:
    qgemm_wide(TFC_UK_Q2_K, ab, m, wb, g0, g1, n, kBlocks, bias, c, ldc);
    break;
  default:
    break;
  }
}

#else /* no SIMD: the same sums, element by element */

/* Quant k (0..31) of row r in a packed sub of a wide format. */
static int sub_quant(int32_t format, const uint8_t *sub, int r, int k) {
  int bits = quant_bits(format), hi = k >= 16, j = k % 16;
  int u = j / 4, lane = r * 4 + j % 4;
  const uint8_t *nib = sub + (bits - 4) * 32;
  int v = (nib[u * 32 + lane] >> (4 * hi)) & 0xF;
  if (bits == 5)
    v |= ((sub[lane] >> (2 * u + hi)) & 1) << 4;
  else if (bits == 6)
    v |= ((sub[32 * (u / 2) + lane] >> (4 * (u % 2) + 2 * hi)) & 3) << 4;
  return v;
}

static void qgemm_wide(int32_t format, const act_block *ab, int64_t m,
                       const uint8_t *w, int64_t g0, int64_t g1, int64_t n,
                       int64_t kb, const float *bias, float *c, int64_t ldc) {
  int64_t gb = tfc_uk_group_block_bytes(format);
  int subs = has_sub_blocks(format) ? 8 : 1;
  int64_t ka = kb * subs;
  for (int64_t g = g0; g < g1; ++g)
    for (int r = 0; r < TFC_UK_GROUP_ROWS; ++r) {
      int64_t row = g * TFC_UK_GROUP_ROWS + r;
      if (row >= n)
        break;
      for (int64_t i = 0; i < m; ++i) {
        float sum = 0;
        for (int64_t b = 0; b < kb; ++b) {
          const uint8_t *p = w + (g * kb + b) * gb;
          float d = tfc_block_half(p + 2 * r);
          for (int s = 0; s < subs; ++s) {
            const uint8_t *sub =
                p + subs_offset(format) + s * sub_bytes(format);
            const act_block *x = ab + i * ka + b * subs + s;
            int32_t lo = 0, hi = 0;
            for (int k = 0; k < 32; ++k) {
              int32_t t = sub_quant(format, sub, r, k) * x->q[k];
              if (k < 16)
                lo += t;
              else
                hi += t;
            }
            if (format == TFC_UK_Q6_K) {
              float scl = d * (float)(int8_t)p[16 + 16 * s + r];
              float sch = d * (float)(int8_t)p[24 + 16 * s + r];
              sum += ((float)lo - 32.0f * (float)x->sum_lo) * (scl * x->d);
              sum += ((float)hi - 32.0f * (float)(x->sum - x->sum_lo)) *
                     (sch * x->d);
              continue;
            }
            if (format == TFC_UK_Q2_K) {
              float dmin = tfc_block_half(p + 16 + 2 * r);
              for (int h = 0; h < 2; ++h) {
                int j = 2 * s + h;
                int32_t a = h ? x->sum - x->sum_lo : x->sum_lo;
                float scale = d * (float)p[32 + 8 * j + r];
                float mn = dmin * (float)p[160 + 8 * j + r];
                sum += (float)(h ? hi : lo) * (scale * x->d);
                sum -= mn * (x->d * (float)a);
              }
              continue;
            }
            float scale = d, zero;
            if (subs > 1) {
              scale = d * (float)p[32 + 8 * s + r];
              zero = -(tfc_block_half(p + 16 + 2 * r) * (float)p[96 + 8 * s + r]);
            } else {
              zero = format == TFC_UK_Q5_1 ? tfc_block_half(p + 16 + 2 * r)
                                           : d * -16.0f;
            }
            sum += (float)(lo + hi) * (scale * x->d) + zero * x->s;
          }
        }
        c[i * ldc + row] = sum + (bias ? bias[row] : 0.0f);
      }
    }
}

void tfc_uk_qgemm(int32_t format, const void *a, int64_t m, const void *w,
                  int64_t g0, int64_t g1, int64_t n, int64_t kBlocks,
                  const float *bias, float *c, int64_t ldc) {
  const act_block *ab = (const act_block *)a;
  format = kernel_format(format);
  if (format != TFC_UK_Q8_0 && format != TFC_UK_Q4_0 &&
      format != TFC_UK_Q4_1) {
    qgemm_wide(format, ab, m, (const uint8_t *)w, g0, g1, n, kBlocks, bias, c,
               ldc);
    return;
  }
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
