/*===- BlockFormats.h - GGUF's block formats, decoded once for all --*- C -*-===//
 *
 * Part of tfc, a transformer compiler on MLIR.
 *
 * The values of one block of every GGUF block format tfc reads, as the
 * `gguf` package computes them (f32 operations in its order, no fused
 * multiply-adds): the one definition that the runtime (BlockQuants.cpp:
 * binding, tfc-quantize, tfc-weights) and the CPU micro-kernels linked into
 * models (QuantGemm.c: dequantised tables and embedding rows) share, in
 * the manner of CpuLevels.h. C and C++, on <stdint.h> and <string.h> only.
 * Formats are named by their ggml type number (DType.h's `ggml` column).
 *
 * Layouts, per block (little-endian; f16 = IEEE half):
 *   Q8_0 (8)   d, qs[32] int8                          x = d q
 *   Q4_0 (2)   d, qs[16]                               x = d (q - 8)
 *   Q4_1 (3)   d, m, qs[16]                            x = d q + m
 *   Q5_0 (6)   d, qh (u32), qs[16]                     x = d (q - 16)
 *   Q5_1 (7)   d, m, qh (u32), qs[16]                  x = d q + m
 *     (byte j of qs: element j in its low nibble, j + 16 in its high one;
 *      bit i of qh: the fifth bit of element i)
 *   Q2_K (10)  scales[16], qs[64], d, dmin     256 in 16 sub-blocks of 16:
 *              x = d sc q - dmin m (sc, m: the low and high nibble of a scale)
 *   Q3_K (11)  hmask[32], qs[64], scales[12], d    16 of 16: x = d (sc - 32) q,
 *              q = 2 bits of qs minus 4 where the hmask bit is clear
 *   Q4_K (12)  d, dmin, scales[12], qs[128]    8 of 32: x = d sc q - dmin m
 *              (6-bit sc and m packed in 12 bytes)
 *   Q5_K (13)  d, dmin, scales[12], qh[32], qs[128]  as Q4_K, fifth bit in qh
 *   Q6_K (14)  ql[128], qh[64], scales[16] int8, d  16 of 16:
 *              x = d sc (q - 32), q = 4 bits of ql + 2 of qh
 *
 *===----------------------------------------------------------------------===*/

#ifndef TFC_SCHEMAS_BLOCKFORMATS_H
#define TFC_SCHEMAS_BLOCKFORMATS_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An IEEE half as a float, exactly (subnormals, infinities and NaNs too). */
static inline float tfc_half_bits_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
  if (exp == 0) {
    float v = (float)man * 5.9604644775390625e-08f; /* 2^-24, exact */
    return sign ? -v : v;
  }
  if (exp == 31)
    bits = sign | 0x7F800000u | (man << 13);
  else
    bits = sign | ((exp + 112) << 23) | (man << 13);
  float v;
  memcpy(&v, &bits, 4);
  return v;
}

static inline float tfc_block_half(const uint8_t *p) {
  return tfc_half_bits_to_float((uint16_t)(p[0] | (p[1] << 8)));
}

/* Sub-block j's 6-bit scale and minimum of a Q4_K / Q5_K super-block. */
static inline void tfc_block_scale_min_k4(const uint8_t *scales, int j,
                                          int *sc, int *m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

/* Sub-block j's scale of a Q3_K super-block (6 bits, minus 32). */
static inline int tfc_block_scale_q3k(const uint8_t *scales, int j) {
  int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
  int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

/* Elements of one block of ggml type `type` (32 or 256); 0 if tfc does not
 * read it. */
static inline int tfc_block_elements(int type) {
  switch (type) {
  case 2: case 3: case 6: case 7: case 8: return 32;
  case 10: case 11: case 12: case 13: case 14: return 256;
  default: return 0;
  }
}

/* The values of the block at p into y (tfc_block_elements(type) floats).
 * Products and differences are separate statements: no contraction into
 * fused multiply-adds, whatever the including file's flags. */
static inline void tfc_block_dequantize(int type, const uint8_t *p,
                                        float *y) {
#pragma STDC FP_CONTRACT OFF
  switch (type) {
  case 8: { /* Q8_0 */
    float d = tfc_block_half(p);
    for (int j = 0; j < 32; ++j)
      y[j] = d * (float)(int8_t)p[2 + j];
    return;
  }
  case 2: { /* Q4_0 */
    float d = tfc_block_half(p);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * (float)((p[2 + j] & 0xF) - 8);
      y[j + 16] = d * (float)((p[2 + j] >> 4) - 8);
    }
    return;
  }
  case 3: { /* Q4_1 */
    float d = tfc_block_half(p), m = tfc_block_half(p + 2);
    for (int j = 0; j < 16; ++j) {
      float lo = d * (float)(p[4 + j] & 0xF);
      float hi = d * (float)(p[4 + j] >> 4);
      y[j] = lo + m;
      y[j + 16] = hi + m;
    }
    return;
  }
  case 6:   /* Q5_0 */
  case 7: { /* Q5_1 */
    int hasMin = type == 7;
    float d = tfc_block_half(p), m = hasMin ? tfc_block_half(p + 2) : 0.0f;
    uint32_t qh;
    memcpy(&qh, p + (hasMin ? 4 : 2), 4);
    const uint8_t *qs = p + (hasMin ? 8 : 6);
    for (int j = 0; j < 32; ++j) {
      int q = (j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4) |
              (int)(((qh >> j) & 1) << 4);
      if (hasMin) {
        float v = d * (float)q;
        y[j] = v + m;
      } else {
        y[j] = d * (float)(q - 16);
      }
    }
    return;
  }
  case 10: { /* Q2_K */
    const uint8_t *scales = p, *qs = p + 16;
    float d = tfc_block_half(p + 80), dmin = tfc_block_half(p + 82);
    for (int e = 0; e < 256; ++e) {
      int h = e / 128, s = (e % 128) / 32, l = e % 32;
      int q = (qs[h * 32 + l] >> (2 * s)) & 3;
      uint8_t sc = scales[e / 16];
      float dl = d * (float)(sc & 0xF);
      float ml = dmin * (float)(sc >> 4);
      float v = dl * (float)q;
      y[e] = v - ml;
    }
    return;
  }
  case 11: { /* Q3_K */
    const uint8_t *hmask = p, *qs = p + 32, *scales = p + 96;
    float d = tfc_block_half(p + 108);
    for (int e = 0; e < 256; ++e) {
      int h = e / 128, s = (e % 128) / 32, l = e % 32;
      int low = (qs[h * 32 + l] >> (2 * s)) & 3;
      int high = (hmask[l] >> (e / 32)) & 1;
      int q = low - ((high ^ 1) << 2);
      float dl = d * (float)tfc_block_scale_q3k(scales, e / 16);
      y[e] = dl * (float)q;
    }
    return;
  }
  case 12:   /* Q4_K */
  case 13: { /* Q5_K */
    int five = type == 13;
    float d = tfc_block_half(p), dmin = tfc_block_half(p + 2);
    const uint8_t *scales = p + 4, *qh = p + 16, *qs = p + (five ? 48 : 16);
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      tfc_block_scale_min_k4(scales, j, &sc, &m);
      float dl = d * (float)sc;
      float ml = dmin * (float)m;
      for (int l = 0; l < 32; ++l) {
        int q = (qs[(j / 2) * 32 + l] >> (4 * (j % 2))) & 0xF;
        if (five)
          q |= ((qh[l] >> j) & 1) << 4;
        float v = dl * (float)q;
        y[j * 32 + l] = v - ml;
      }
    }
    return;
  }
  case 14: { /* Q6_K */
    const uint8_t *ql = p, *qh = p + 128, *scales = p + 192;
    float d = tfc_block_half(p + 208);
    for (int e = 0; e < 256; ++e) {
      int h = e / 128, s = (e % 128) / 64, i = e % 64;
      int t = (e % 128) / 32, l = e % 32;
      int low = (ql[h * 64 + i] >> (4 * s)) & 0xF;
      int high = (qh[h * 32 + l] >> (2 * t)) & 3;
      int q = (low | (high << 4)) - 32;
      float dl = d * (float)(int8_t)scales[e / 16];
      y[e] = dl * (float)q;
    }
    return;
  }
  default:
    return;
  }
}

#ifdef __cplusplus
}
#endif

#endif /* TFC_SCHEMAS_BLOCKFORMATS_H */
