//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Header-only conversions between double/float and the 16-bit formats
// (IEEE binary16 "f16" and bfloat16 "bf16"), rounding to nearest with ties
// to even in one step from double, as LLVM's APFloat does (so a value
// rounded here equals the reference interpreter's). Overflow gives infinity,
// NaN stays NaN. No dependency beyond <cmath>.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_FLOAT16_H
#define TFC_FORMATS_FLOAT16_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tfc::rt {

namespace detail {

/// `x` rounded to a binary format with `expBits` exponent and `mantBits`
/// fraction bits (at most 16 bits in all), as its bit pattern.
inline uint16_t roundToBits(double x, int expBits, int mantBits) {
  uint32_t sign = std::signbit(x) ? 1u << (expBits + mantBits) : 0u;
  uint32_t expMask = ((1u << expBits) - 1) << mantBits;
  if (std::isnan(x))
    return static_cast<uint16_t>(sign | expMask | (1u << (mantBits - 1)));
  double a = std::fabs(x);
  if (std::isinf(a))
    return static_cast<uint16_t>(sign | expMask);
  int bias = (1 << (expBits - 1)) - 1;
  int minExp = 1 - bias;
  if (a < std::ldexp(1.0, minExp)) {
    // Subnormal (or zero): a multiple of 2^(minExp - mantBits). A result of
    // 2^mantBits is the smallest normal number, whose encoding it also is.
    double m = std::nearbyint(std::ldexp(a, mantBits - minExp));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(m));
  }
  int e;
  std::frexp(a, &e);
  e -= 1; // a in [2^e, 2^(e+1))
  double m = std::nearbyint(std::ldexp(a, mantBits - e));
  if (m == std::ldexp(1.0, mantBits + 1)) {
    m = std::ldexp(1.0, mantBits);
    e += 1;
  }
  if (e + bias >= (1 << expBits) - 1)
    return static_cast<uint16_t>(sign | expMask);
  return static_cast<uint16_t>(sign |
                               (static_cast<uint32_t>(e + bias) << mantBits) |
                               (static_cast<uint32_t>(m) - (1u << mantBits)));
}

} // namespace detail

inline uint16_t doubleToHalf(double x) { return detail::roundToBits(x, 5, 10); }
inline uint16_t doubleToBFloat16(double x) {
  return detail::roundToBits(x, 8, 7);
}
inline uint16_t floatToHalf(float x) { return doubleToHalf(x); }
inline uint16_t floatToBFloat16(float x) { return doubleToBFloat16(x); }

inline float halfToFloat(uint16_t h) {
  int exponent = (h >> 10) & 0x1F;
  int mantissa = h & 0x3FF;
  float v;
  if (exponent == 0)
    v = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    v = mantissa ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  return (h & 0x8000) ? -v : v;
}

inline float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

} // namespace tfc::rt

#endif // TFC_FORMATS_FLOAT16_H
