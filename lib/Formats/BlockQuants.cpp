//===- BlockQuants.cpp - GGUF's block formats: dequantise and quantise ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Dequantisation is the shared definition of include/tfc/Schemas/
// BlockFormats.h (the layouts are there), which computes the values as the
// `gguf` package does, bit for bit (test/Runtime/block-quants.test checks
// every format against gguf.quants on random blocks). The quantisers are
// ggml's reference ones (quantize_row_*_ref) for the formats that have a
// closed form; the K-quants' search-based quantisers are not here yet
// (canQuantize).
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

void quantizeBlock(DType dtype, const float *x, uint8_t *p) {
  switch (dtype) {
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
