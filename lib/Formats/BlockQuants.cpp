//===- BlockQuants.cpp - GGUF's block formats: dequantise and quantise ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Dequantisation is the shared definition of include/tfc/Schemas/
// BlockFormats.h (the layouts are there), which computes the values as the
// `gguf` package does, bit for bit (test/Runtime/block-quants.test checks
// every format against gguf.quants on random blocks). The quantisers are
// ggml's reference ones (quantize_row_*_ref): closed forms for the
// 32-element formats, searches for each sub-block's scale (and minimum) for
// the K-quants.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Float16.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Schemas/BlockFormats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tfc::rt;

namespace {

void putHalf(uint8_t *q, float v) {
  uint16_t h = floatToHalf(v);
  q[0] = static_cast<uint8_t>(h & 0xFF);
  q[1] = static_cast<uint8_t>(h >> 8);
}

/// The element of largest magnitude, with its sign (the first of equals).
float signedMax(const float *x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

// The K-quants' quantisers search for each sub-block's scale (and
// minimum) as ggml's reference ones do (quantize_row_q{2..6}_K_ref), with
// the same arithmetic in the same order, uncontracted, so that the blocks
// are llama.cpp's (test/Import/gguf-kquantize.test compares them byte for
// byte with llama.cpp's own quantisers).
#pragma STDC FP_CONTRACT OFF

/// round-to-nearest-even of v (|v| < 2^22), as ggml's nearest_int: by
/// adding 1.5 * 2^23 in float.
int nearestInt(float v) {
  float shifted = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007fffff) - 0x00400000;
}

float halfValue(float v) { return halfToFloat(floatToHalf(v)); }

/// Scale and minimum of one sub-block of n values for quants 0..nmax
/// minimising sum w (scale q + min - x)^2 (|scale q + min - x| with `mad`):
/// a first guess from the range,
/// then 1 + nstep candidate scales (nmax + rmin + rdelta k) / range, each
/// fitted by weighted least squares; the best wins. Returns the scale, sets
/// *negMin to -min (>= 0) and L to the quants.
float fitScaleMin(int n, int nmax, const float *x, const float *w, uint8_t *L,
                  float *negMin, float rmin, float rdelta, int nstep,
                  bool mad = false) {
  float lo = x[0], hi = x[0];
  float sumW = w[0];
  float sumX = sumW * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo)
      lo = x[i];
    if (x[i] > hi)
      hi = x[i];
    float wx = w[i] * x[i];
    sumW += w[i];
    sumX += wx;
  }
  if (lo > 0)
    lo = 0;
  if (hi == lo) {
    std::memset(L, 0, static_cast<size_t>(n));
    *negMin = -lo;
    return 0;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1 / iscale;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    float t = x[i] - lo;
    int l = nearestInt(iscale * t);
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float ql = scale * static_cast<float>(L[i]);
    float diff = ql + lo;
    diff = diff - x[i];
    float d2 = mad ? std::fabs(diff) : diff * diff;
    best += w[i] * d2;
  }
  uint8_t cand[32];
  for (int k = 0; k <= nstep; ++k) {
    // (lo is the best minimum so far: the candidates follow it.)
    float step = rdelta * static_cast<float>(k);
    float top = rmin + step;
    top = top + static_cast<float>(nmax);
    float range = hi - lo;
    iscale = top / range;
    float sumL = 0, sumL2 = 0, sumXL = 0;
    for (int i = 0; i < n; ++i) {
      float t = x[i] - lo;
      int l = std::max(0, std::min(nmax, nearestInt(iscale * t)));
      cand[i] = static_cast<uint8_t>(l);
      float fl = static_cast<float>(l);
      float wl = w[i] * fl;
      sumL += wl;
      float wll = wl * fl;
      sumL2 += wll;
      float wlx = wl * x[i];
      sumXL += wlx;
    }
    float det = sumW * sumL2;
    float ll = sumL * sumL;
    det = det - ll;
    if (!(det > 0))
      continue;
    float a = sumW * sumXL, b = sumX * sumL;
    float thisScale = (a - b) / det;
    float c = sumL2 * sumX, e = sumL * sumXL;
    float thisMin = (c - e) / det;
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = sumXL / sumL2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      float ql = thisScale * static_cast<float>(cand[i]);
      float diff = ql + thisMin;
      diff = diff - x[i];
      float d2 = mad ? std::fabs(diff) : diff * diff;
      err += w[i] * d2;
    }
    if (err < best) {
      std::memcpy(L, cand, static_cast<size_t>(n));
      best = err;
      scale = thisScale;
      lo = thisMin;
    }
  }
  *negMin = -lo;
  return scale;
}

/// Q6_K's sub-block fit: a symmetric scale for quants -nmax..nmax-1 (the
/// largest magnitude mapped to -nmax), refined over 18 nearby candidates by
/// least squares weighted by x^2. Returns the scale; L gets the chosen
/// candidate's quants plus nmax (what a sub-block whose final scale rounds
/// to 0 keeps).
float fitScaleSymmetric(int n, int nmax, const float *x, uint8_t *L) {
  float max = signedMax(x, n);
  if (std::fabs(max) < 1e-15f) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0;
  }
  auto quants = [&](float iscale) {
    for (int i = 0; i < n; ++i)
      L[i] = static_cast<uint8_t>(
          nmax +
          std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i]))));
  };
  auto sums = [&](float iscale, float &sumLX, float &sumL2) {
    sumLX = sumL2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i])));
      float fl = static_cast<float>(l);
      float w = x[i] * x[i];
      float wx = w * x[i];
      float wxl = wx * fl;
      sumLX += wxl;
      float wl = w * fl;
      float wll = wl * fl;
      sumL2 += wll;
    }
  };
  float iscale = -static_cast<float>(nmax) / max;
  float sumLX, sumL2;
  sums(iscale, sumLX, sumL2);
  quants(iscale);
  float scale = sumL2 != 0 ? sumLX / sumL2 : 0.0f;
  float best = scale * sumLX;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0)
      continue;
    float tenth = 0.1f * static_cast<float>(k);
    float top = static_cast<float>(nmax) + tenth;
    iscale = -top / max;
    sums(iscale, sumLX, sumL2);
    float lhs = sumLX * sumLX, rhs = best * sumL2;
    if (sumL2 > 0 && lhs > rhs) {
      quants(iscale);
      scale = sumLX / sumL2;
      best = scale * sumLX;
    }
  }
  return scale;
}

/// Q4_K and Q5_K (bits 4 or 5): eight sub-blocks of 32, each fitted with
/// weights rms + |x|; their scales and minima quantised to 6 bits against
/// the largest (d, dmin in f16), then every value to the nearest quant of
/// its sub-block's final scale and minimum.
void quantizeK45(int bits, const float *x, uint8_t *p) {
  int nmax = (1 << bits) - 1;
  float scales[8], mins[8], w[32];
  uint8_t L[256];
  float maxScale = 0, maxMin = 0;
  for (int j = 0; j < 8; ++j) {
    const float *xj = x + 32 * j;
    float sumX2 = 0;
    for (int l = 0; l < 32; ++l) {
      float sq = xj[l] * xj[l];
      sumX2 += sq;
    }
    float rms = std::sqrt(sumX2 / 32);
    for (int l = 0; l < 32; ++l)
      w[l] = rms + std::fabs(xj[l]);
    scales[j] = bits == 4 ? fitScaleMin(32, nmax, xj, w, L + 32 * j, &mins[j],
                                        -1.0f, 0.1f, 20)
                          : fitScaleMin(32, nmax, xj, w, L + 32 * j, &mins[j],
                                        -0.5f, 0.1f, 15);
    maxScale = std::max(maxScale, scales[j]);
    maxMin = std::max(maxMin, mins[j]);
  }
  float invScale = maxScale > 0 ? 63.0f / maxScale : 0.0f;
  float invMin = maxMin > 0 ? 63.0f / maxMin : 0.0f;
  uint8_t *packed = p + 4;
  std::memset(packed, 0, 12);
  for (int j = 0; j < 8; ++j) {
    // (uint8_t) as ggml: the integer's low byte, then at most 63.
    int ls = std::min(63, static_cast<int>(static_cast<uint8_t>(
                              nearestInt(invScale * scales[j]))));
    int lm = std::min(63, static_cast<int>(static_cast<uint8_t>(
                              nearestInt(invMin * mins[j]))));
    if (j < 4) {
      packed[j] = static_cast<uint8_t>(ls);
      packed[j + 4] = static_cast<uint8_t>(lm);
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      packed[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  putHalf(p, maxScale / 63.0f);
  putHalf(p + 2, maxMin / 63.0f);
  float d = halfValue(maxScale / 63.0f), dmin = halfValue(maxMin / 63.0f);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    tfc_block_scale_min_k4(packed, j, &sc, &m);
    float dj = d * static_cast<float>(sc);
    if (dj == 0)
      continue;
    float mj = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      float t = x[32 * j + l] + mj;
      L[32 * j + l] =
          static_cast<uint8_t>(std::max(0, std::min(nmax, nearestInt(t / dj))));
    }
  }
  // Quants: byte l of each 32-byte row of qs holds elements n + l (low
  // nibble) and n + 32 + l (high) of each 64; Q5_K's fifth bits in qh.
  uint8_t *qh = p + 16, *qs = p + (bits == 5 ? 48 : 16);
  if (bits == 5)
    std::memset(qh, 0, 32);
  for (int n = 0, pair = 0; n < 256; n += 64, ++pair)
    for (int l = 0; l < 32; ++l) {
      int a = L[n + l], b = L[n + 32 + l];
      if (bits == 5) {
        qh[l] |= static_cast<uint8_t>(((a >> 4) & 1) << (2 * pair));
        qh[l] |= static_cast<uint8_t>(((b >> 4) & 1) << (2 * pair + 1));
      }
      qs[pair * 32 + l] = static_cast<uint8_t>((a & 0xF) | ((b & 0xF) << 4));
    }
}

/// Q6_K: sixteen sub-blocks of 16 with signed scales, fitted symmetric,
/// quantised to 8 bits against the largest (d in f16); quants -32..31.
void quantizeQ6K(const float *x, uint8_t *p) {
  float scales[16];
  uint8_t L[256];
  float maxScale, maxAbs;
  for (int j = 0; j < 16; ++j)
    scales[j] = fitScaleSymmetric(16, 32, x + 16 * j, L + 16 * j);
  maxScale = signedMax(scales, 16);
  maxAbs = std::fabs(maxScale);
  std::memset(p, 0, 210);
  if (maxAbs < 1e-15f)
    return; // d = +0
  float iscale = -128.0f / maxScale;
  putHalf(p + 208, 1 / iscale);
  float d = halfValue(1 / iscale);
  int8_t *sc = reinterpret_cast<int8_t *>(p + 192);
  for (int j = 0; j < 16; ++j)
    sc[j] = static_cast<int8_t>(std::min(127, nearestInt(iscale * scales[j])));
  for (int j = 0; j < 16; ++j) {
    float dj = d * static_cast<float>(sc[j]);
    if (dj == 0)
      continue;
    for (int l = 0; l < 16; ++l) {
      int q = std::max(-32, std::min(31, nearestInt(x[16 * j + l] / dj)));
      L[16 * j + l] = static_cast<uint8_t>(q + 32);
    }
  }
  uint8_t *ql = p, *qh = p + 128;
  for (int n = 0; n < 256; n += 128, ql += 64, qh += 32)
    for (int l = 0; l < 32; ++l) {
      int a = L[n + l], b = L[n + l + 32], c = L[n + l + 64], e = L[n + l + 96];
      ql[l] = static_cast<uint8_t>((a & 0xF) | ((c & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((b & 0xF) | ((e & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((a >> 4) | ((b >> 4) << 2) |
                                   ((c >> 4) << 4) | ((e >> 4) << 6));
    }
}

/// Q2_K: sixteen sub-blocks of 16, each fitted with weights |x| (least
/// absolute error), scales and minima quantised to 4 bits against the
/// largest (d, dmin in f16), then the values to quants 0..3.
void quantizeQ2K(const float *x, uint8_t *p) {
  float scales[16], mins[16], w[16];
  uint8_t L[256];
  float maxScale = 0, maxMin = 0;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l)
      w[l] = std::fabs(x[16 * j + l]);
    scales[j] = fitScaleMin(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], -0.5f,
                            0.1f, 15, /*mad=*/true);
    maxScale = std::max(maxScale, scales[j]);
    maxMin = std::max(maxMin, mins[j]);
  }
  uint8_t *sc = p;
  std::memset(sc, 0, 16);
  if (maxScale > 0) {
    float iscale = 15.0f / maxScale;
    for (int j = 0; j < 16; ++j)
      sc[j] = static_cast<uint8_t>(nearestInt(iscale * scales[j]));
  }
  putHalf(p + 80, maxScale > 0 ? maxScale / 15.0f : 0.0f);
  if (maxMin > 0) {
    float iscale = 15.0f / maxMin;
    for (int j = 0; j < 16; ++j)
      sc[j] |= static_cast<uint8_t>(nearestInt(iscale * mins[j]) << 4);
  }
  putHalf(p + 82, maxMin > 0 ? maxMin / 15.0f : 0.0f);
  float d = halfValue(maxScale > 0 ? maxScale / 15.0f : 0.0f);
  float dmin = halfValue(maxMin > 0 ? maxMin / 15.0f : 0.0f);
  for (int j = 0; j < 16; ++j) {
    float dj = d * static_cast<float>(sc[j] & 0xF);
    if (dj == 0)
      continue;
    float mj = dmin * static_cast<float>(sc[j] >> 4);
    for (int l = 0; l < 16; ++l) {
      float t = x[16 * j + l] + mj;
      L[16 * j + l] =
          static_cast<uint8_t>(std::max(0, std::min(3, nearestInt(t / dj))));
    }
  }
  // Byte l of each 32 of qs: elements n + l, n + 32 + l, n + 64 + l and
  // n + 96 + l of each 128, two bits each.
  uint8_t *qs = p + 16;
  for (int n = 0; n < 256; n += 128)
    for (int l = 0; l < 32; ++l)
      qs[n / 4 + l] =
          static_cast<uint8_t>(L[n + l] | (L[n + l + 32] << 2) |
                               (L[n + l + 64] << 4) | (L[n + l + 96] << 6));
}

/// Q3_K's sub-block fit: quants -nmax..nmax-1 from the largest magnitude,
/// then up to 5 rounds of moving single quants where that improves the
/// x^2-weighted least-squares fit. Returns the scale; L gets quants + nmax.
float fitScaleQ3(int n, int nmax, const float *x, int8_t *L) {
  float max = signedMax(x, n);
  if (std::fabs(max) < 1e-15f) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0;
  }
  float iscale = -static_cast<float>(nmax) / max;
  float sumLX = 0, sumL2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i])));
    L[i] = static_cast<int8_t>(l);
    float fl = static_cast<float>(l);
    float w = x[i] * x[i];
    float wx = w * x[i];
    float wxl = wx * fl;
    sumLX += wxl;
    float wl = w * fl;
    float wll = wl * fl;
    sumL2 += wll;
  }
  for (int round = 0; round < 5; ++round) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      float w = x[i] * x[i];
      float fl = static_cast<float>(L[i]);
      float wx = w * x[i];
      float wxl = wx * fl;
      float slx = sumLX - wxl;
      if (!(slx > 0))
        continue;
      float wl = w * fl;
      float wll = wl * fl;
      float sl2 = sumL2 - wll;
      float t = x[i] * sl2;
      int nl = std::max(-nmax, std::min(nmax - 1, nearestInt(t / slx)));
      if (nl == L[i])
        continue;
      float fn = static_cast<float>(nl);
      float wxn = wx * fn;
      slx += wxn;
      float wn = w * fn;
      float wnn = wn * fn;
      sl2 += wnn;
      float lhs = slx * slx;
      lhs = lhs * sumL2;
      float rhs = sumLX * sumLX;
      rhs = rhs * sl2;
      if (sl2 > 0 && lhs > rhs) {
        L[i] = static_cast<int8_t>(nl);
        sumLX = slx;
        sumL2 = sl2;
        ++changed;
      }
    }
    if (!changed)
      break;
  }
  for (int i = 0; i < n; ++i)
    L[i] = static_cast<int8_t>(L[i] + nmax);
  return sumL2 > 0 ? sumLX / sumL2 : 0.0f;
}

/// Q3_K: sixteen sub-blocks of 16, signed scales quantised to 6 bits
/// against the largest (d in f16), quants -4..3 (two bits in qs, the third
/// in hmask).
void quantizeQ3K(const float *x, uint8_t *p) {
  float scales[16];
  int8_t L[256];
  float maxScale;
  for (int j = 0; j < 16; ++j)
    scales[j] = fitScaleQ3(16, 4, x + 16 * j, L + 16 * j);
  maxScale = signedMax(scales, 16);
  std::memset(p, 0, 110);
  uint8_t *hmask = p, *qs = p + 32, *packed = p + 96;
  if (maxScale != 0) {
    float iscale = -32.0f / maxScale;
    for (int j = 0; j < 16; ++j) {
      // (int8_t) as ggml: the integer's low byte, then clamped.
      int l = static_cast<int8_t>(nearestInt(iscale * scales[j]));
      l = std::max(-32, std::min(31, l)) + 32;
      if (j < 8)
        packed[j] = static_cast<uint8_t>(l & 0xF);
      else
        packed[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
      packed[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
    }
    putHalf(p + 108, 1 / iscale);
  }
  float d = tfc_block_half(p + 108);
  for (int j = 0; j < 16; ++j) {
    float dj = d * static_cast<float>(tfc_block_scale_q3k(packed, j));
    if (dj == 0)
      continue;
    for (int l = 0; l < 16; ++l)
      L[16 * j + l] = static_cast<int8_t>(
          std::max(-4, std::min(3, nearestInt(x[16 * j + l] / dj))) + 4);
  }
  // The third bit of element e in bit e / 32 of hmask[e % 32]; the low two
  // as Q2_K's.
  for (int e = 0; e < 256; ++e)
    if (L[e] > 3) {
      hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
      L[e] = static_cast<int8_t>(L[e] - 4);
    }
  for (int n = 0; n < 256; n += 128)
    for (int l = 0; l < 32; ++l)
      qs[n / 4 + l] =
          static_cast<uint8_t>(L[n + l] | (L[n + l + 32] << 2) |
                               (L[n + l + 64] << 4) | (L[n + l + 96] << 6));
}

void quantizeBlock(DType dtype, const float *x, uint8_t *p) {
  switch (dtype) {
  case DType::Q2_K:
    quantizeQ2K(x, p);
    return;
  case DType::Q3_K:
    quantizeQ3K(x, p);
    return;
  case DType::Q4_K:
    quantizeK45(4, x, p);
    return;
  case DType::Q5_K:
    quantizeK45(5, x, p);
    return;
  case DType::Q6_K:
    quantizeQ6K(x, p);
    return;
  case DType::Q8_0: {
    // d = max|x| / 127, q = round(x / d) (half away from zero).
    float amax = 0;
    for (int j = 0; j < 32; ++j)
      amax = std::max(amax, std::fabs(x[j]));
    float d = amax / 127;
    float id = d != 0 ? 1.0f / d : 0.0f;
    putHalf(p, d);
    for (int j = 0; j < 32; ++j)
      p[2 + j] =
          static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
    return;
  }
  case DType::Q4_0: {
    // d = (the element of largest magnitude, with its sign) / -8, so it
    // maps to q = 0; q = min(15, trunc(x / d + 8.5)).
    float d = signedMax(x, 32) / -8;
    float id = d != 0 ? 1.0f / d : 0.0f;
    putHalf(p, d);
    for (int j = 0; j < 16; ++j) {
      int lo = std::min(
          15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      int hi = std::min(
          15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      p[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
    }
    return;
  }
  case DType::Q5_0: {
    // As Q4_0 with 5 bits: d = max / -16, q = min(31, trunc(x / d + 16.5)).
    float d = signedMax(x, 32) / -16;
    float id = d != 0 ? 1.0f / d : 0.0f;
    putHalf(p, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      int lo = std::min(
          31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f)));
      int hi = std::min(
          31, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 16.5f)));
      p[6 + j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + 16);
    }
    std::memcpy(p + 2, &qh, 4);
    return;
  }
  case DType::Q4_1:
  case DType::Q5_1: {
    // d = (max - min) / (2^bits - 1), m = min,
    // q = min(2^bits - 1, trunc((x - m) / d + 0.5)).
    bool five = dtype == DType::Q5_1;
    int top = five ? 31 : 15;
    float min = x[0], max = x[0];
    for (int j = 1; j < 32; ++j) {
      min = std::min(min, x[j]);
      max = std::max(max, x[j]);
    }
    float d = (max - min) / static_cast<float>(top);
    float id = d != 0 ? 1.0f / d : 0.0f;
    putHalf(p, d);
    putHalf(p + 2, min);
    uint8_t *qs = p + (five ? 8 : 4);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      int lo = std::min(top, static_cast<int>(static_cast<int8_t>(
                                 (x[j] - min) * id + 0.5f)));
      int hi = std::min(top, static_cast<int>(static_cast<int8_t>(
                                 (x[j + 16] - min) * id + 0.5f)));
      qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
      qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + 16);
    }
    if (five)
      std::memcpy(p + 4, &qh, 4);
    return;
  }
  default:
    return;
  }
}

} // namespace

void tfc::rt::dequantize(DType dtype, const void *src, float *dst,
                         uint64_t elements) {
  const DTypeTraits &t = traitsOf(dtype);
  const uint8_t *p = static_cast<const uint8_t *>(src);
  for (uint64_t b = 0; b < elements / t.blockElements; ++b)
    tfc_block_dequantize(t.ggml, p + b * t.blockBytes,
                         dst + b * t.blockElements);
}

void tfc::rt::quantize(DType dtype, const float *src, void *dst,
                       uint64_t elements) {
  const DTypeTraits &t = traitsOf(dtype);
  uint8_t *p = static_cast<uint8_t *>(dst);
  if (!canQuantize(dtype))
    return;
  for (uint64_t b = 0; b < elements / t.blockElements; ++b)
    quantizeBlock(dtype, src + b * t.blockElements, p + b * t.blockBytes);
}
